//! A run's events: proposals and endorsements as signed records in per-agent chains, and their
//! replay through the development engine.
//!
//! Each record's payload wraps one [`SemanticEvent`] — the unit the runtime applies — with the
//! context a person reading the chain needs (the proposal commit, whose proposal was endorsed, the
//! check's output tail). The engine sees only the event.
//!
//! Replay order: the events of all chains sorted by (recorded time, agent, sequence). Within one
//! chain that is the chain's own order (time stamps are taken when appending and never decrease
//! within a chain… unless the clock does; the sequence number breaks such ties). Across chains the
//! engine's state does not depend on the order — endorsements bind to trees, and each agent's latest
//! proposal and each endorser's latest verdict on a tree win whatever the interleaving — so only
//! *when* quorum was first reached can differ, which is what the time stamps decide.

use super::{Problem, RunDef, RunError, events_prefix, events_ref, now_ms};
use crate::engines::{DevelopmentConfig, DevelopmentEngine, EngineError};
use crate::identity::{AgentKey, Roster};
use crate::runtime::{EventMetadata, MasRuntime, PatternKind, SemanticEvent, SemanticPayload, Vote};
use crate::store::record::Verdict;
use crate::store::{Append, MoveTo, RefMove, Store, StoreError};
use gix::ObjectId;
use serde::{Deserialize, Serialize};

/// Record kind of a proposal.
pub const PROPOSAL_KIND: &str = "proposal";
/// Record kind of an endorsement.
pub const ENDORSEMENT_KIND: &str = "endorsement";

/// The payload of a proposal or endorsement record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventRecord {
    /// The event the engine applies.
    pub event: SemanticEvent,
    /// When it was recorded, in milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// For a proposal, its commit; for an endorsement, the commit of the proposal it judged.
    pub commit: String,
    /// For an endorsement, whose proposal it judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposer: Option<String>,
    /// For a proposal, its message; for a failed check, the tail of its output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A random event id: sixteen hex digits.
pub fn new_event_id() -> String {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_err() {
        bytes = now_ms().to_be_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Builds an event of the development class.
pub fn event(run: &str, source: &str, epoch: u64, payload: SemanticPayload) -> SemanticEvent {
    SemanticEvent {
        pattern: PatternKind::Development,
        metadata: EventMetadata { event_id: new_event_id(), correlation_id: run.into(), epoch, source: source.into() },
        payload,
    }
}

fn encode(record: &EventRecord) -> Result<serde_json::Value, StoreError> {
    serde_json::to_value(record).map_err(|e| StoreError::Encode { what: "an event".into(), source: e })
}

/// Appends `record` to its source's event chain of its run (both named by the event), moving the
/// refs `prepare` returns in the same transaction. `prepare` runs before every attempt, re-reading
/// whatever it needs, and may refuse.
pub fn append<F>(
    store: &Store,
    key: &AgentKey,
    kind: &str,
    record: &EventRecord,
    extra: &[(String, ObjectId)],
    mut prepare: F,
) -> Result<ObjectId, RunError>
where
    F: FnMut() -> Result<Vec<RefMove>, RunError>,
{
    let value = encode(record)?;
    let (run, agent) = (&record.event.metadata.correlation_id, &record.event.metadata.source);
    let refname = events_ref(run, agent);
    let appended = store.append_with(&refname, agent, key, kind, extra, |_tip| {
        let also = prepare()?;
        Ok::<_, RunError>(Some(Append { payload: value.clone(), also }))
    })?;
    appended.map(|a| a.commit).ok_or_else(|| RunError::Store(StoreError::TooManyRetries { refname, attempts: 0 }))
}

/// A ref move for [`append`]: point `name` at `new`, expecting it at `expected`.
pub fn move_ref(name: String, expected: Option<ObjectId>, new: ObjectId) -> RefMove {
    RefMove { name, expected, new: MoveTo::Commit(new) }
}

/// One verified event record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stamped {
    /// The signer (the chain's owner).
    pub agent: String,
    /// Its sequence number.
    pub seq: u64,
    /// The record's commit.
    pub record_commit: String,
    /// The record kind.
    pub kind: String,
    /// The payload.
    pub record: EventRecord,
}

/// A run's events, verified and ordered, and the records that did not count.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RunEvents {
    /// Verified events in replay order.
    pub events: Vec<Stamped>,
    /// Records that were not applied, and why.
    pub problems: Vec<Problem>,
}

/// Where verified chains are cached, under the common git dir.
pub const CACHE_DIR: &str = "mas-cache/events-v2";

/// A chain as read and verified once: valid for exactly this tip and this roster.
#[derive(Serialize, Deserialize)]
struct CachedChain {
    /// The build that wrote it (a different build re-reads the chain).
    build: String,
    tip: String,
    roster: String,
    events: Vec<CachedStamped>,
    problems: Vec<Problem>,
}

// The cache's own form of an event. A record's payload is internally tagged (`"kind": …` among
// its fields, as the signed records have it), which serde can only read by first collecting every
// field into an untyped buffer; in the cache the variant is the key around its fields
// (externally tagged), so a chain is read straight into its typed structs. The forms are serde
// "remote" definitions of the same types: a variant or field added there and not here fails to
// compile.

/// One cached event in the cache's form.
#[derive(Serialize, Deserialize)]
struct CachedStamped(#[serde(with = "StampedForm")] Stamped);

#[derive(Serialize, Deserialize)]
#[serde(remote = "Stamped")]
struct StampedForm {
    agent: String,
    seq: u64,
    record_commit: String,
    kind: String,
    #[serde(with = "RecordForm")]
    record: EventRecord,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "EventRecord")]
struct RecordForm {
    #[serde(with = "EventForm")]
    event: SemanticEvent,
    at_ms: u64,
    commit: String,
    proposer: Option<String>,
    note: Option<String>,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "SemanticEvent")]
struct EventForm {
    pattern: PatternKind,
    metadata: EventMetadata,
    #[serde(with = "PayloadForm")]
    payload: SemanticPayload,
}

#[derive(Serialize, Deserialize)]
#[serde(remote = "SemanticPayload")]
enum PayloadForm {
    ScalarProposal {
        value: f64,
    },
    Ballot {
        vote: Vote,
    },
    ExternalBytes {
        digest: String,
        len: u64,
    },
    ToolResult {
        command: String,
        exit_status: Option<i32>,
        duration_ms: u64,
        output_digest: String,
        subject: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        differential: Option<crate::runtime::TestDelta>,
    },
    Review {
        subject: String,
        accept: bool,
        reason: String,
    },
}

/// A digest of the roster's names and keys: verdicts depend on nothing else.
fn roster_fingerprint(roster: &Roster) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for e in roster.entries() {
        h.update(e.name.as_bytes());
        h.update(b" ");
        h.update(e.did.as_bytes());
        h.update(b"\n");
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

fn cache_path(store: &Store, refname: &str) -> std::path::PathBuf {
    use sha2::{Digest, Sha256};
    let key: String = Sha256::digest(refname.as_bytes()).iter().take(16).map(|b| format!("{b:02x}")).collect();
    store.common_dir().join(CACHE_DIR).join(key)
}

fn read_cache(path: &std::path::Path) -> Option<CachedChain> {
    // Read as text, checked once: parsing from a `str`, serde_json does not check every string
    // it meets again.
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}

/// Writes a cache file atomically (a temporary file renamed over it); failures only cost speed.
fn write_cache(path: &std::path::Path, chain: &CachedChain) {
    let Some(dir) = path.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let Ok(bytes) = serde_json::to_vec(chain) else { return };
    let _ = crate::fsx::write_atomic(path, &bytes, None);
}

/// Reads every event chain of `run`, verifies each record against the roster, and orders them.
///
/// A chain read once is cached (in [`CACHE_DIR`] under the common git dir) keyed by its tip and
/// the roster's fingerprint: a commit id fixes the whole chain below it, so the same tip read
/// against the same roster gives the same verdicts, and its signatures need not be checked again.
/// A chain that moved, or a changed roster, is read and verified afresh. The cache is as trusted
/// as the git dir it lives in (whoever can write there can also install hooks).
pub fn load(store: &Store, roster: &Roster, run: &str) -> Result<RunEvents, RunError> {
    let mut out = RunEvents::default();
    let fingerprint = roster_fingerprint(roster);
    let build = env!("CARGO_PKG_VERSION").to_string();
    for info in store.list(&events_prefix(run))? {
        let Some(owner) = crate::store::owner_of(&info.name).map(str::to_string) else {
            continue;
        };
        let Some(tip) = info.target.clone() else { continue };
        let path = cache_path(store, &info.name);
        if let Some(cached) = read_cache(&path)
            && cached.tip == tip
            && cached.roster == fingerprint
            && cached.build == build
        {
            out.events.extend(cached.events.into_iter().map(|c| c.0));
            out.problems.extend(cached.problems);
            continue;
        }
        let (events, problems) = read_chain(store, roster, run, &info.name, &owner)?;
        let chain = CachedChain {
            build: build.clone(),
            tip,
            roster: fingerprint.clone(),
            events: events.into_iter().map(CachedStamped).collect(),
            problems,
        };
        write_cache(&path, &chain);
        out.events.extend(chain.events.into_iter().map(|c| c.0));
        out.problems.extend(chain.problems);
    }
    out.events.sort_by(|a, b| (a.record.at_ms, &a.agent, a.seq).cmp(&(b.record.at_ms, &b.agent, b.seq)));
    Ok(out)
}

/// Reads and verifies one agent's event chain.
fn read_chain(
    store: &Store,
    roster: &Roster,
    run: &str,
    refname: &str,
    owner: &str,
) -> Result<(Vec<Stamped>, Vec<Problem>), RunError> {
    let mut events = Vec::new();
    let mut problems = Vec::new();
    for (entry, verdict) in store.verified_chain(refname, roster)? {
        let problem =
            |what: String| Problem { refname: refname.to_string(), commit: entry.commit.to_string(), problem: what };
        let record = match (&entry.record, &verdict) {
            (Ok(r), Verdict::Verified) => r,
            (_, v) => {
                problems.push(problem(v.label().to_string()));
                continue;
            }
        };
        if record.kind != PROPOSAL_KIND && record.kind != ENDORSEMENT_KIND {
            problems.push(problem(format!("unknown record kind {:?} (ignored)", record.kind)));
            continue;
        }
        let parsed: EventRecord = match serde_json::from_value(record.payload.clone()) {
            Ok(p) => p,
            Err(e) => {
                problems.push(problem(format!("unreadable event: {e}")));
                continue;
            }
        };
        if parsed.event.metadata.source != owner {
            problems.push(problem(format!(
                "the event claims source {:?} but {owner:?} signed it (not applied)",
                parsed.event.metadata.source
            )));
            continue;
        }
        if parsed.event.metadata.correlation_id != run {
            problems.push(problem(format!(
                "the event belongs to run {:?} (not applied)",
                parsed.event.metadata.correlation_id
            )));
            continue;
        }
        events.push(Stamped {
            agent: owner.to_string(),
            seq: record.seq,
            record_commit: entry.commit.to_string(),
            kind: record.kind.clone(),
            record: parsed,
        });
    }
    Ok((events, problems))
}

/// The engine configuration for a run. Self-endorsement is the repository's policy
/// (`git config mas.allowSelfEndorse`), applied when tallying.
pub fn engine_config(def: &RunDef, allow_self_endorse: bool) -> DevelopmentConfig {
    DevelopmentConfig {
        roster: def.roster.clone(),
        quorum: def.quorum,
        max_rounds: def.max_rounds,
        allow_self_endorse,
        parts: def.slices.is_some(),
    }
}

/// Replays a run's events through a fresh development engine.
pub fn replay(
    def: &RunDef,
    allow_self_endorse: bool,
    events: &RunEvents,
) -> Result<MasRuntime<DevelopmentEngine>, EngineError> {
    let engine = DevelopmentEngine::new(engine_config(def, allow_self_endorse))?;
    Ok(MasRuntime::replay(engine, events.events.iter().map(|s| s.record.event.clone())))
}

/// The latest proposal record of `agent` that the engine accepted, if any: the proposal the
/// tally counts, with its commit.
pub fn accepted_proposal<'a>(
    runtime: &MasRuntime<DevelopmentEngine>,
    events: &'a RunEvents,
    agent: &str,
) -> Option<&'a Stamped> {
    let id = &runtime.engine().proposals().get(agent)?.event_id;
    events.events.iter().find(|s| s.record.event.metadata.event_id == *id)
}

/// Whether self-endorsement is allowed by the repository's configuration.
pub fn self_endorse_allowed(store: &Store) -> bool {
    store
        .config_string("mas.allowSelfEndorse")
        .is_some_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "true" | "yes" | "on" | "1"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamped(seq: u64, payload: SemanticPayload) -> Stamped {
        Stamped {
            agent: "alice".into(),
            seq,
            record_commit: format!("{seq:040x}"),
            kind: if matches!(payload, SemanticPayload::ExternalBytes { .. }) {
                PROPOSAL_KIND
            } else {
                ENDORSEMENT_KIND
            }
            .into(),
            record: EventRecord {
                event: event("r1", "alice", seq, payload),
                at_ms: 1_000 + seq,
                commit: "c".repeat(40),
                proposer: seq.is_multiple_of(2).then(|| "bob".to_string()),
                note: seq.is_multiple_of(3).then(|| "a \"quoted\"\nnote".to_string()),
            },
        }
    }

    #[test]
    fn the_cache_form_reads_back_every_payload_exactly() {
        let tree = "ab".repeat(20);
        let events = vec![
            stamped(1, SemanticPayload::ExternalBytes { digest: tree.clone(), len: 12 }),
            stamped(
                2,
                SemanticPayload::ToolResult {
                    command: "cargo test".into(),
                    exit_status: None,
                    duration_ms: 7,
                    output_digest: "sha256:00".into(),
                    subject: tree.clone(),
                    differential: Some(crate::runtime::TestDelta {
                        format: "unittest".into(),
                        fixed: vec!["t.T.test_a".into()],
                        broken: Vec::new(),
                        lost: vec!["the suite: 3 of 4 tests ran".into()],
                        still_failing: 2,
                    }),
                },
            ),
            stamped(3, SemanticPayload::Review { subject: tree, accept: false, reason: "no tests".into() }),
            stamped(4, SemanticPayload::ScalarProposal { value: 0.25 }),
            stamped(5, SemanticPayload::Ballot { vote: Vote::Stop }),
        ];
        let problems = vec![Problem { refname: "refs/x".into(), commit: "d".repeat(40), problem: "SPOOF".into() }];
        let chain = CachedChain {
            build: "0".into(),
            tip: "e".repeat(40),
            roster: "f".repeat(64),
            events: events.clone().into_iter().map(CachedStamped).collect(),
            problems: problems.clone(),
        };
        let bytes = serde_json::to_vec(&chain).unwrap();
        let back: CachedChain = serde_json::from_slice(&bytes).unwrap();
        let back_events: Vec<Stamped> = back.events.into_iter().map(|c| c.0).collect();
        assert_eq!(back_events, events);
        assert_eq!(back.problems, problems);
        assert_eq!((back.build, back.tip, back.roster), (chain.build, chain.tip, chain.roster));
        // The records' own form (internally tagged) is not what the cache reads: a file in that
        // form is a miss, not a misreading.
        let old = serde_json::json!({"build": "0", "tip": "e", "roster": "f", "problems": [], "events": [events[0]]});
        assert!(serde_json::from_value::<CachedChain>(old).is_err());
    }
}
