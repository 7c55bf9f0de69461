//! The roster's own signature trail: who let a change to `.mas/roster` in.
//!
//! The roster decides whose records verify, so a commit that changes it (adds an agent, re-keys or
//! removes one) must carry the signature of an agent the roster already trusted. Without it, any
//! agent that can commit could add its own key, or re-key a teammate, and be believed.
//!
//! **The trail.** A commit that changes `.mas/roster` carries the trailer
//!
//! ```text
//! Mas-Roster-Signed: <agent> <old blob> <new blob> <signature>
//! ```
//!
//! where the blobs are the roster's git blob ids in the commit's first parent and in the commit
//! (`none` when the file is absent), and the signature is `<agent>`'s ed25519 signature (128 hex
//! digits, [`AgentKey::sign`]) over the domain-separated message `git-mas roster v1 <old> <new>`
//! ([`message`]). The blob ids in the trailer are only a diagnosis: the signature is always
//! checked over the commit's *actual* blobs, so naming other blobs only changes which problem is
//! reported.
//!
//! **Valid** when some trailer's agent is on the roster *as it stood in the first parent*, and its
//! signature verifies under the key that roster gives that agent. Everything else is named
//! ([`TrailProblem`]): no trailer, a malformed one, an agent not on the parent's roster, an agent
//! this very change adds (self-added), a signature made with the key this change gives the signer
//! (self-re-keyed), a signature over another roster change (amended or rebased after signing), a
//! signature that does not verify (the wrong key).
//!
//! **Where one is required.** Not for the first roster: when the first parent has no
//! `.mas/roster` or one without entries, nobody could sign. A commit whose roster equals one of its
//! parents' (a merge that takes one side's roster) changes nothing of its own: the change was
//! judged in that parent's history. The repository setting `mas.rosterTrail=off` turns the check
//! off, for a team that reviews roster changes by other means (a protected branch); any other
//! value, and unset, requires the trail — a typo must not switch it off. The setting is local git
//! config, never committed, so only whoever runs the check (CI) can turn it off.

use super::key::{AgentKey, decode_hex, hex, public_from_did, verify};
use serde::{Deserialize, Serialize};
use std::fmt;

/// The trailer a roster change carries.
pub const TRAIL_TRAILER: &str = "Mas-Roster-Signed";
/// What the message names for an absent roster file.
pub const ABSENT: &str = "none";
/// The git config key that turns the check off (`off`); anything else requires the trail.
pub const CONFIG_KEY: &str = "mas.rosterTrail";

/// Whether a `mas.rosterTrail` value (`None`: unset) requires the trail: all but `off`/`false`.
pub fn required(value: Option<&str>) -> bool {
    !matches!(value.map(|v| v.trim().to_ascii_lowercase()).as_deref(), Some("off" | "false"))
}

/// The bytes a roster signature covers: `git-mas roster v1 <old> <new>`.
pub fn message(old: Option<&str>, new: Option<&str>) -> Vec<u8> {
    format!("git-mas roster v1 {} {}", old.unwrap_or(ABSENT), new.unwrap_or(ABSENT)).into_bytes()
}

/// A change to `.mas/roster` between a commit's first parent and the commit (or the index).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RosterChange {
    /// The parent's roster blob id; `None` when absent.
    pub old: Option<String>,
    /// The new roster blob id; `None` when the change deletes it.
    pub new: Option<String>,
    /// The parent's roster entries (empty when absent), or why they could not be read.
    pub before: Result<Vec<(String, String)>, String>,
    /// The new roster's entries (empty when absent or unreadable).
    pub after: Vec<(String, String)>,
}

impl RosterChange {
    /// Whether a trail is required: the parent's roster has entries (or cannot be read).
    pub fn needs_trail(&self) -> bool {
        self.before.as_ref().map_or(true, |b| !b.is_empty())
    }

    /// The parent roster's key for `agent`.
    fn trusted_did(&self, agent: &str) -> Option<&str> {
        self.before.as_ref().ok()?.iter().find(|(n, _)| n == agent).map(|(_, d)| d.as_str())
    }
}

/// One parsed `Mas-Roster-Signed` value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trail {
    /// Who signed.
    pub agent: String,
    /// The old blob it claims to sign.
    pub old: String,
    /// The new blob it claims to sign.
    pub new: String,
    /// The signature, hex.
    pub signature: String,
}

impl Trail {
    /// `agent`'s trail for `old` → `new`, signed with `key`.
    pub fn sign(agent: &str, key: &AgentKey, old: Option<&str>, new: Option<&str>) -> Trail {
        Trail {
            agent: agent.into(),
            old: old.unwrap_or(ABSENT).into(),
            new: new.unwrap_or(ABSENT).into(),
            signature: hex(&key.sign(&message(old, new))),
        }
    }

    /// The trailer's value: `<agent> <old> <new> <signature>`.
    pub fn value(&self) -> String {
        format!("{} {} {} {}", self.agent, self.old, self.new, self.signature)
    }

    /// The whole trailer line.
    pub fn line(&self) -> String {
        format!("{TRAIL_TRAILER}: {}", self.value())
    }

    /// Parses a trailer's value; `None` unless it has four fields and a 64-byte hex signature.
    pub fn parse(value: &str) -> Option<Trail> {
        let f: Vec<&str> = value.split_whitespace().collect();
        let [agent, old, new, signature] = f.as_slice() else { return None };
        (signature.len() == 128 && decode_hex(signature).is_some()).then(|| Trail {
            agent: (*agent).into(),
            old: (*old).into(),
            new: (*new).into(),
            signature: (*signature).into(),
        })
    }
}

/// The values of the `Mas-Roster-Signed` trailers in a commit message's last paragraph.
pub fn trailers_of(message: &str) -> Vec<String> {
    let Some(last) = message.trim_end().rsplit("\n\n").next() else { return Vec::new() };
    last.lines()
        .filter_map(|l| {
            let (key, value) = l.split_once(':')?;
            key.trim().eq_ignore_ascii_case(TRAIL_TRAILER).then(|| value.trim().to_string())
        })
        .collect()
}

/// Why a roster change's trail is not valid, each by name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "problem", rename_all = "kebab-case")]
pub enum TrailProblem {
    /// No `Mas-Roster-Signed` trailer.
    Missing,
    /// The parent's roster does not parse: nobody can be trusted to sign.
    UnreadableRoster {
        /// Why.
        detail: String,
    },
    /// A trailer that is not `<agent> <old> <new> <signature>`.
    Malformed {
        /// The trailer's value.
        value: String,
    },
    /// The signer is not on the parent's roster.
    NotOnRoster {
        /// The signer.
        agent: String,
    },
    /// The signer is an agent this very change adds.
    SelfAdded {
        /// The signer.
        agent: String,
    },
    /// Signed with the key this change gives the signer, not the one the roster trusted.
    SelfRekeyed {
        /// The signer.
        agent: String,
    },
    /// Signed over another roster change than this commit's (amended or rebased after signing).
    OtherChange {
        /// The signer.
        agent: String,
        /// The old blob the trailer names.
        signed_old: String,
        /// The new blob the trailer names.
        signed_new: String,
    },
    /// The signature does not verify under the signer's key on the parent's roster.
    WrongKey {
        /// The signer.
        agent: String,
    },
    /// The change adds an entry named like a session of another entry, with another key (its key
    /// would sign as that member's session): refused whoever signed.
    Impostor {
        /// The entry.
        name: String,
        /// The member whose session's shape it has.
        member: String,
    },
}

impl fmt::Display for TrailProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrailProblem::Missing => write!(f, "missing: no {TRAIL_TRAILER} trailer"),
            TrailProblem::UnreadableRoster { detail } => {
                write!(f, "unreadable-roster: the parent's roster does not parse ({detail})")
            }
            TrailProblem::Malformed { value } => {
                write!(f, "malformed: {value:?} is not `<agent> <old blob> <new blob> <signature>`")
            }
            TrailProblem::NotOnRoster { agent } => write!(f, "not-on-roster: '{agent}' is not on the parent's roster"),
            TrailProblem::SelfAdded { agent } => {
                write!(f, "self-added: '{agent}' is added by this very change, so it cannot sign it")
            }
            TrailProblem::SelfRekeyed { agent } => {
                write!(f, "self-rekeyed: '{agent}' signed with the key this change gives it, not the trusted one")
            }
            TrailProblem::OtherChange { agent, signed_old, signed_new } => write!(
                f,
                "other-change: '{agent}' signed {} -> {}, not this commit's roster change",
                short(signed_old),
                short(signed_new)
            ),
            TrailProblem::WrongKey { agent } => {
                write!(f, "wrong-key: the signature does not verify under '{agent}''s key on the parent's roster")
            }
            TrailProblem::Impostor { name, member } => {
                write!(f, "impostor: '{name}' is named like a session of '{member}' but carries another key")
            }
        }
    }
}

fn short(oid: &str) -> &str {
    &oid[..oid.len().min(12)]
}

/// How a commit's roster change is listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TrailStatus {
    /// The first roster: nobody could sign, none is required.
    FirstRoster,
    /// A valid trail.
    Signed,
    /// Not checked: `mas.rosterTrail=off`.
    Off,
    /// No valid trail.
    Unsigned,
    /// An entry named like another member's session ([`TrailProblem::Impostor`]).
    Refused,
}

/// The judgment of one commit's roster change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RosterTrail {
    /// The parent's roster blob (`None`: absent).
    pub old: Option<String>,
    /// The commit's roster blob (`None`: deleted).
    pub new: Option<String>,
    /// The verdict.
    pub status: TrailStatus,
    /// Who signed, when [`TrailStatus::Signed`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signed_by: Option<String>,
    /// Why not, when [`TrailStatus::Unsigned`]: one problem per trailer, or `missing`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<TrailProblem>,
}

impl RosterTrail {
    /// Whether the commit is listed for it.
    pub fn listed(&self) -> bool {
        matches!(self.status, TrailStatus::Unsigned | TrailStatus::Refused)
    }
}

/// Judges `change` against the `trailers` (values) its commit carries; `required` is
/// [`required`]'s answer for the repository.
pub fn judge(change: &RosterChange, trailers: &[String], required: bool) -> RosterTrail {
    let mut out = RosterTrail {
        old: change.old.clone(),
        new: change.new.clone(),
        status: TrailStatus::Unsigned,
        signed_by: None,
        problems: Vec::new(),
    };
    // Whatever the trail: an entry named like another entry's session under another key.
    let impostors: Vec<TrailProblem> = change
        .after
        .iter()
        .filter_map(|(name, did)| {
            let member = super::session::principal_of(name)?;
            let (_, owner) = change.after.iter().find(|(n, _)| n == member)?;
            (owner != did).then(|| TrailProblem::Impostor { name: name.clone(), member: member.to_string() })
        })
        .collect();
    if !impostors.is_empty() {
        out.status = TrailStatus::Refused;
        out.problems = impostors;
        return out;
    }
    if !required {
        out.status = TrailStatus::Off;
        return out;
    }
    if !change.needs_trail() {
        out.status = TrailStatus::FirstRoster;
        return out;
    }
    if let Err(detail) = &change.before {
        out.problems.push(TrailProblem::UnreadableRoster { detail: detail.clone() });
        return out;
    }
    for value in trailers {
        match check_one(change, value) {
            Ok(agent) => {
                out.status = TrailStatus::Signed;
                out.signed_by = Some(agent);
                out.problems.clear();
                return out;
            }
            Err(problem) => out.problems.push(problem),
        }
    }
    if out.problems.is_empty() {
        out.problems.push(TrailProblem::Missing);
    }
    out
}

/// One trailer: the signer when it is valid for `change`, else what is wrong with it.
fn check_one(change: &RosterChange, value: &str) -> Result<String, TrailProblem> {
    let trail = Trail::parse(value).ok_or_else(|| TrailProblem::Malformed { value: value.into() })?;
    let agent = trail.agent.clone();
    let new_did = change.after.iter().find(|(n, _)| *n == agent).map(|(_, d)| d.as_str());
    let Some(did) = change.trusted_did(&agent) else {
        return Err(match new_did {
            Some(_) => TrailProblem::SelfAdded { agent },
            None => TrailProblem::NotOnRoster { agent },
        });
    };
    let msg = message(change.old.as_deref(), change.new.as_deref());
    let sig = decode_hex(&trail.signature).unwrap_or_default();
    if public_from_did(did).is_ok_and(|key| verify(&key, &msg, &sig)) {
        return Ok(agent);
    }
    let (old, new) = (change.old.as_deref().unwrap_or(ABSENT), change.new.as_deref().unwrap_or(ABSENT));
    if trail.old != old || trail.new != new {
        return Err(TrailProblem::OtherChange { agent, signed_old: trail.old, signed_new: trail.new });
    }
    if let Some(new_did) = new_did.filter(|d| *d != did)
        && public_from_did(new_did).is_ok_and(|key| verify(&key, &msg, &sig))
    {
        return Err(TrailProblem::SelfRekeyed { agent });
    }
    Err(TrailProblem::WrongKey { agent })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(seed: u8) -> AgentKey {
        AgentKey::from_seed([seed; 32])
    }

    fn entry(name: &str, seed: u8) -> (String, String) {
        (name.into(), key(seed).did())
    }

    const OLD: &str = "1111111111111111111111111111111111111111";
    const NEW: &str = "2222222222222222222222222222222222222222";

    fn change(before: Vec<(String, String)>, after: Vec<(String, String)>) -> RosterChange {
        RosterChange { old: Some(OLD.into()), new: Some(NEW.into()), before: Ok(before), after }
    }

    fn signed(agent: &str, seed: u8, old: &str, new: &str) -> String {
        Trail::sign(agent, &key(seed), Some(old), Some(new)).value()
    }

    #[test]
    fn the_message_is_domain_separated_and_names_both_blobs() {
        assert_eq!(message(Some("a"), Some("b")), b"git-mas roster v1 a b");
        assert_eq!(message(None, Some("b")), b"git-mas roster v1 none b");
        assert_eq!(message(Some("a"), None), b"git-mas roster v1 a none");
    }

    #[test]
    fn trailers_round_trip_and_are_read_from_the_last_paragraph() {
        let t = Trail::sign("alice", &key(1), Some(OLD), None);
        assert_eq!(Trail::parse(&t.value()), Some(t.clone()));
        assert_eq!(t.new, ABSENT);
        let msg =
            format!("Add bob\n\n{TRAIL_TRAILER}: not me\n\nBody\n\nMas-Agent: a\n{}\nmas-roster-signed: x\n", t.line());
        assert_eq!(trailers_of(&msg), vec![t.value(), "x".to_string()]);
        assert!(trailers_of("Add bob\n").is_empty());
        for bad in ["alice", "alice a b", "alice a b c d", &format!("alice a b {}", "zz".repeat(64))] {
            assert_eq!(Trail::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn required_unless_off() {
        let cases = [
            (None, true),
            (Some("required"), true),
            (Some("typo"), true),
            (Some(" OFF"), false),
            (Some("false"), false),
        ];
        for (value, want) in cases {
            assert_eq!(required(value), want, "{value:?}");
        }
    }

    #[test]
    fn judge_table() {
        let alice = entry("alice", 1);
        let bob = entry("bob", 2);
        let alice_rekeyed = entry("alice", 9);
        let team = vec![alice.clone()];
        let add_bob = change(team.clone(), vec![alice.clone(), bob.clone()]);
        let rekey_alice = change(vec![alice.clone(), bob.clone()], vec![alice_rekeyed.clone(), bob.clone()]);
        let first = RosterChange { old: None, new: Some(NEW.into()), before: Ok(vec![]), after: vec![alice.clone()] };
        let empty_before = change(vec![], vec![alice.clone()]);
        let broken = RosterChange { before: Err("line 1".into()), ..add_bob.clone() };
        let by_alice = signed("alice", 1, OLD, NEW);
        use TrailProblem::*;
        use TrailStatus::*;
        // (case, change, trailers, required, status, signed by, problems)
        type Case<'a> = (&'a str, &'a RosterChange, Vec<String>, bool, TrailStatus, Option<&'a str>, Vec<TrailProblem>);
        let cases: Vec<Case> = vec![
            ("first roster", &first, vec![], true, FirstRoster, None, vec![]),
            ("empty parent roster", &empty_before, vec![], true, FirstRoster, None, vec![]),
            ("off", &add_bob, vec![], false, Off, None, vec![]),
            ("signed by a trusted agent", &add_bob, vec![by_alice.clone()], true, Signed, Some("alice"), vec![]),
            ("no trailer", &add_bob, vec![], true, Unsigned, None, vec![Missing]),
            (
                "malformed",
                &add_bob,
                vec!["alice".into()],
                true,
                Unsigned,
                None,
                vec![Malformed { value: "alice".into() }],
            ),
            (
                "signed by the agent it adds",
                &add_bob,
                vec![signed("bob", 2, OLD, NEW)],
                true,
                Unsigned,
                None,
                vec![SelfAdded { agent: "bob".into() }],
            ),
            (
                "signed by a stranger",
                &add_bob,
                vec![signed("carol", 3, OLD, NEW)],
                true,
                Unsigned,
                None,
                vec![NotOnRoster { agent: "carol".into() }],
            ),
            (
                "signed by the wrong key",
                &add_bob,
                vec![signed("alice", 3, OLD, NEW)],
                true,
                Unsigned,
                None,
                vec![WrongKey { agent: "alice".into() }],
            ),
            (
                "signed over another blob",
                &add_bob,
                vec![signed("alice", 1, OLD, "3333")],
                true,
                Unsigned,
                None,
                vec![OtherChange { agent: "alice".into(), signed_old: OLD.into(), signed_new: "3333".into() }],
            ),
            (
                "lying about the blobs does not help",
                &add_bob,
                vec![format!("alice {OLD} {NEW} {}", signed("alice", 1, OLD, "3333").rsplit(' ').next().unwrap())],
                true,
                Unsigned,
                None,
                vec![WrongKey { agent: "alice".into() }],
            ),
            (
                "re-keyed by itself with the new key",
                &rekey_alice,
                vec![signed("alice", 9, OLD, NEW)],
                true,
                Unsigned,
                None,
                vec![SelfRekeyed { agent: "alice".into() }],
            ),
            (
                "re-keyed by a teammate",
                &rekey_alice,
                vec![signed("bob", 2, OLD, NEW)],
                true,
                Signed,
                Some("bob"),
                vec![],
            ),
            (
                "one valid trailer among bad ones is enough",
                &add_bob,
                vec![signed("bob", 2, OLD, NEW), by_alice.clone()],
                true,
                Signed,
                Some("alice"),
                vec![],
            ),
            (
                "an unreadable parent roster",
                &broken,
                vec![by_alice.clone()],
                true,
                Unsigned,
                None,
                vec![UnreadableRoster { detail: "line 1".into() }],
            ),
        ];
        for (name, change, trailers, required, status, by, problems) in cases {
            let got = judge(change, &trailers, required);
            assert_eq!((got.status, got.signed_by.as_deref(), &got.problems), (status, by, &problems), "{name}");
            assert_eq!(got.listed(), status == Unsigned, "{name}");
        }
    }

    #[test]
    fn a_deletion_is_signed_over_none() {
        let alice = entry("alice", 1);
        let delete = RosterChange { old: Some(OLD.into()), new: None, before: Ok(vec![alice]), after: vec![] };
        let trail = Trail::sign("alice", &key(1), Some(OLD), None);
        assert_eq!(judge(&delete, &[trail.value()], true).status, TrailStatus::Signed);
    }
}
