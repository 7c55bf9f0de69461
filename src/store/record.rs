//! The record envelope, its signature, and the verdict a reader gives each record in a chain.
//!
//! A record is `{"schema":1,"kind":…,"agent":…,"seq":…,"payload":…,"sig":…}` in canonical JSON
//! ([`super::canonical`]). The signature is ed25519 over `SIGNING_DOMAIN` followed by the canonical
//! bytes of the envelope without its `sig` field, hex-encoded. The domain prefix keeps a record
//! signature from ever being valid as a signature over anything else an agent's key signs.
//!
//! `seq` is per agent and per chain: along a chain, each agent's verified records must have strictly
//! increasing `seq`. Writers use one more than the chain tip's `seq`, which increases for every writer
//! at once and makes a replayed (copied) record show up as a sequence that went backwards.
//!
//! Verification is a pure fold ([`verify_chain`]) over the records oldest first. A record that does
//! not verify is kept and reported — never applied — with one of the named verdicts of [`Verdict`].

use super::canonical::to_canonical_bytes;
use crate::identity::key::{AgentKey, decode_hex, hex, public_from_did, verify};
use ed25519_dalek::VerifyingKey;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The schema version this build writes and reads.
pub const SCHEMA_VERSION: u64 = 1;

/// The file inside a record commit's tree that holds the record.
pub const RECORD_FILE: &str = "record.json";

/// Prefix of every signed message.
pub const SIGNING_DOMAIN: &[u8] = b"git-mas record v1\n";

/// A parsed record envelope.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Record {
    /// Schema version.
    pub schema: u64,
    /// What the record is (`note`, `focus`, `frame`, …).
    pub kind: String,
    /// The agent that claims to have written it.
    pub agent: String,
    /// Per-agent sequence number in its chain.
    pub seq: u64,
    /// Kind-specific content.
    pub payload: Value,
    /// Hex ed25519 signature, absent on an unsigned record.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sig: Option<String>,
}

/// Why record bytes could not be read as a record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// Not JSON at all.
    #[error("record is not JSON: {0}")]
    NotJson(String),
    /// JSON, but written by a schema this build does not know.
    #[error("record has unknown schema version {0} (this build reads {SCHEMA_VERSION})")]
    UnknownSchema(String),
    /// JSON with a missing or mistyped field.
    #[error("record field {field:?} is missing or has the wrong type")]
    Field { field: &'static str },
}

impl Record {
    /// A new unsigned record.
    pub fn new(kind: &str, agent: &str, seq: u64, payload: Value) -> Self {
        Record { schema: SCHEMA_VERSION, kind: kind.into(), agent: agent.into(), seq, payload, sig: None }
    }

    fn unsigned_value(&self) -> Value {
        let mut map = Map::new();
        map.insert("schema".into(), Value::from(self.schema));
        map.insert("kind".into(), Value::from(self.kind.clone()));
        map.insert("agent".into(), Value::from(self.agent.clone()));
        map.insert("seq".into(), Value::from(self.seq));
        map.insert("payload".into(), self.payload.clone());
        Value::Object(map)
    }

    /// The bytes a signature covers.
    pub fn signing_message(&self) -> Vec<u8> {
        let mut msg = SIGNING_DOMAIN.to_vec();
        msg.extend_from_slice(&to_canonical_bytes(&self.unsigned_value()));
        msg
    }

    /// Signs the record with `key`.
    pub fn sign(mut self, key: &AgentKey) -> Self {
        self.sig = Some(hex(&key.sign(&self.signing_message())));
        self
    }

    /// The canonical bytes stored in git.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut value = self.unsigned_value();
        if let (Some(sig), Value::Object(map)) = (&self.sig, &mut value) {
            map.insert("sig".into(), Value::from(sig.clone()));
        }
        to_canonical_bytes(&value)
    }

    /// Parses stored bytes.
    pub fn parse(bytes: &[u8]) -> Result<Self, ParseError> {
        let value: Value = serde_json::from_slice(bytes).map_err(|e| ParseError::NotJson(e.to_string()))?;
        let Value::Object(map) = value else {
            return Err(ParseError::NotJson("the top level is not an object".into()));
        };
        let schema = match map.get("schema") {
            Some(Value::Number(n)) if n.as_u64() == Some(SCHEMA_VERSION) => SCHEMA_VERSION,
            Some(other) => return Err(ParseError::UnknownSchema(other.to_string())),
            None => return Err(ParseError::Field { field: "schema" }),
        };
        let string = |field: &'static str| -> Result<String, ParseError> {
            map.get(field).and_then(Value::as_str).map(str::to_owned).ok_or(ParseError::Field { field })
        };
        let kind = string("kind")?;
        let agent = string("agent")?;
        let seq = map.get("seq").and_then(Value::as_u64).ok_or(ParseError::Field { field: "seq" })?;
        let payload = map.get("payload").cloned().ok_or(ParseError::Field { field: "payload" })?;
        let sig = match map.get("sig") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err(ParseError::Field { field: "sig" }),
        };
        Ok(Record { schema, kind, agent, seq, payload, sig })
    }

    /// Whether the signature verifies under `did`.
    pub fn signature_valid(&self, did: &str) -> bool {
        public_from_did(did).is_ok_and(|key| self.signature_valid_under(&key))
    }

    /// Whether the signature verifies under an already decoded public key.
    pub fn signature_valid_under(&self, key: &VerifyingKey) -> bool {
        let Some(sig) = &self.sig else {
            return false;
        };
        match decode_hex(sig) {
            Some(bytes) => verify(key, &self.signing_message(), &bytes),
            None => false,
        }
    }
}

/// What a reader concludes about one record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Verdict {
    /// Signed by the roster's key for its agent, in sequence, in the right chain.
    Verified,
    /// No signature: parked, reported, never applied.
    AuthRequired,
    /// The agent is not on the roster.
    UnknownParticipant,
    /// The signature does not verify under the roster's key for the claimed agent.
    Spoof,
    /// The agent's sequence number did not increase.
    Replay { seq: u64, last: u64 },
    /// A verified record by one agent in another agent's chain.
    Misplaced { owner: String },
    /// The blob is not a readable record.
    Malformed { reason: String },
}

impl Verdict {
    /// The upper-case name used in human output (`AUTH_REQUIRED`, `SPOOF`, …).
    pub fn label(&self) -> &'static str {
        match self {
            Verdict::Verified => "VERIFIED",
            Verdict::AuthRequired => "AUTH_REQUIRED",
            Verdict::UnknownParticipant => "UNKNOWN_PARTICIPANT",
            Verdict::Spoof => "SPOOF",
            Verdict::Replay { .. } => "REPLAY",
            Verdict::Misplaced { .. } => "MISPLACED",
            Verdict::Malformed { .. } => "MALFORMED",
        }
    }

    /// Whether the record may be applied.
    pub fn is_verified(&self) -> bool {
        matches!(self, Verdict::Verified)
    }
}

/// Verifies a chain's records, oldest first. `did_of` looks a name up in the roster; `owner` is the
/// agent a per-writer chain belongs to (`None` for a shared chain).
pub fn verify_chain<'a, F>(records: &[Result<Record, ParseError>], did_of: F, owner: Option<&str>) -> Vec<Verdict>
where
    F: Fn(&str) -> Option<&'a str>,
{
    let records: Vec<&Result<Record, ParseError>> = records.iter().collect();
    verify_chain_with(&records, did_of, owner, &mut |_, record, _, key| {
        key().is_some_and(|key| record.signature_valid_under(&key))
    })
}

/// Decodes a signer's key on demand (`None` when its did:key does not decode).
pub type KeyFn<'a> = dyn FnMut() -> Option<VerifyingKey> + 'a;

/// [`verify_chain`] with the signature check supplied by the caller: `sig_ok(index, record, did,
/// key)` — so a store can answer from a cache of signatures it verified before. `key()` decodes
/// the did's key (`None` when it does not decode), once per chain and only when called: a cache hit
/// needs no key.
pub fn verify_chain_with<'a, F>(
    records: &[&Result<Record, ParseError>],
    did_of: F,
    owner: Option<&str>,
    sig_ok: &mut dyn FnMut(usize, &Record, &str, &mut KeyFn<'_>) -> bool,
) -> Vec<Verdict>
where
    F: Fn(&str) -> Option<&'a str>,
{
    let mut last_seq: BTreeMap<String, u64> = BTreeMap::new();
    // Decoding a did:key (base58 and point decompression) costs about as much as verifying, so
    // each roster key is decoded once per chain.
    let mut keys: BTreeMap<&str, Option<VerifyingKey>> = BTreeMap::new();
    records
        .iter()
        .enumerate()
        .map(|(index, parsed)| {
            let record = match parsed {
                Ok(r) => r,
                Err(e) => return Verdict::Malformed { reason: e.to_string() },
            };
            if record.sig.is_none() {
                return Verdict::AuthRequired;
            }
            let Some(did) = did_of(&record.agent) else {
                return Verdict::UnknownParticipant;
            };
            let mut key = || *keys.entry(did).or_insert_with(|| public_from_did(did).ok());
            if !sig_ok(index, record, did, &mut key) {
                return Verdict::Spoof;
            }
            if let Some(owner) = owner
                && owner != record.agent
            {
                return Verdict::Misplaced { owner: owner.into() };
            }
            if let Some(&last) = last_seq.get(&record.agent)
                && record.seq <= last
            {
                return Verdict::Replay { seq: record.seq, last };
            }
            last_seq.insert(record.agent.clone(), record.seq);
            Verdict::Verified
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key(seed: u8) -> AgentKey {
        AgentKey::from_seed([seed; 32])
    }

    #[test]
    fn bytes_round_trip_and_signature_verifies() {
        let k = key(1);
        let r = Record::new("note", "alice", 1, json!({"text": "hi", "x": 0.5})).sign(&k);
        let bytes = r.to_bytes();
        assert!(bytes.starts_with(b"{\"agent\":\"alice\",\"kind\":\"note\""));
        let back = Record::parse(&bytes).unwrap();
        assert_eq!(back, r);
        assert!(back.signature_valid(&k.did()));
        assert!(!back.signature_valid(&key(2).did()));
    }

    #[test]
    fn tampered_payload_breaks_the_signature() {
        let k = key(1);
        let mut r = Record::new("note", "alice", 1, json!({"n": 1})).sign(&k);
        r.payload = json!({"n": 2});
        assert!(!r.signature_valid(&k.did()));
    }

    #[test]
    fn parse_errors_are_named() {
        assert!(matches!(Record::parse(b"not json"), Err(ParseError::NotJson(_))));
        assert!(matches!(Record::parse(b"[1]"), Err(ParseError::NotJson(_))));
        let v2 = br#"{"schema":2,"kind":"note","agent":"a","seq":1,"payload":null}"#;
        assert!(matches!(Record::parse(v2), Err(ParseError::UnknownSchema(s)) if s == "2"));
        let no_seq = br#"{"schema":1,"kind":"note","agent":"a","payload":null}"#;
        assert!(matches!(Record::parse(no_seq), Err(ParseError::Field { field: "seq" })));
    }

    #[test]
    fn verdict_table() {
        let (a, b) = (key(1), key(2));
        let (a_did, b_did) = (a.did(), b.did());
        let did_of = |n: &str| match n {
            "alice" => Some(a_did.as_str()),
            "bob" => Some(b_did.as_str()),
            _ => None,
        };
        let rec = |agent: &str, seq: u64, k: Option<&AgentKey>| {
            let r = Record::new("note", agent, seq, json!(seq));
            Ok(match k {
                Some(k) => r.sign(k),
                None => r,
            })
        };
        let chain = vec![
            rec("alice", 1, Some(&a)),
            rec("alice", 2, None),
            rec("alice", 3, Some(&b)),
            rec("zed", 4, Some(&b)),
            rec("alice", 1, Some(&a)),
            rec("bob", 6, Some(&b)),
            Err(ParseError::NotJson("x".into())),
            rec("alice", 8, Some(&a)),
        ];
        let verdicts = verify_chain(&chain, did_of, Some("alice"));
        let labels: Vec<_> = verdicts.iter().map(Verdict::label).collect();
        assert_eq!(
            labels,
            [
                "VERIFIED",
                "AUTH_REQUIRED",
                "SPOOF",
                "UNKNOWN_PARTICIPANT",
                "REPLAY",
                "MISPLACED",
                "MALFORMED",
                "VERIFIED"
            ]
        );
        // A shared chain accepts every roster agent, each with its own sequence.
        let shared = vec![rec("alice", 1, Some(&a)), rec("bob", 1, Some(&b)), rec("alice", 2, Some(&a))];
        assert!(verify_chain(&shared, did_of, None).iter().all(Verdict::is_verified));
    }
}
