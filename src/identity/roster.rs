//! The roster: which agent name belongs to which `did:key`.
//!
//! `.mas/roster` holds one `name did:key` a line (blank lines and `#` comments allowed). It is reviewed
//! and committed like code. So that every worktree and clone verifies against the same list, the
//! authoritative roster is the one committed on the integration branch; an entry present only in a
//! worktree's file counts in that worktree alone, and every use of it carries a warning. Where the
//! two disagree about a name, the committed entry wins (and a warning says so): a worktree cannot
//! re-key an agent that the team already knows.

use super::key::public_from_did;
use super::name::{NameError, validate_name};
use std::collections::BTreeMap;
use thiserror::Error;

/// Where the roster lives in a working tree.
pub const ROSTER_PATH: &str = ".mas/roster";

/// The first lines of a roster `git mas init` creates.
pub const ROSTER_HEADER: &str = "# git-mas roster: one `name did:key` per line. Review and commit it like code;\n# records are verified against the roster committed on the integration branch.\n";

/// `text` (a roster file's bytes, `None`: none yet) with `name did` appended on a line of its own:
/// what [`append_to_roster`] writes, a new file starting with [`ROSTER_HEADER`].
pub fn with_entry(text: Option<&[u8]>, name: &str, did: &str) -> Vec<u8> {
    let mut out = text.map_or_else(|| ROSTER_HEADER.as_bytes().to_vec(), <[u8]>::to_vec);
    if !out.is_empty() && !out.ends_with(b"\n") {
        out.push(b'\n');
    }
    out.extend_from_slice(format!("{name} {did}\n").as_bytes());
    out
}

/// A roster line that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RosterError {
    /// Not two fields.
    #[error("{origin} line {line}: expected `name did:key`, found {text:?}")]
    Shape { origin: String, line: usize, text: String },
    /// The name is not a valid agent name.
    #[error("{origin} line {line}: {reason}")]
    Name { origin: String, line: usize, reason: NameError },
    /// The second field is not an ed25519 `did:key`.
    #[error("{origin} line {line}: {did:?} is not an ed25519 did:key")]
    Did { origin: String, line: usize, did: String },
    /// The same name twice.
    #[error("{origin} line {line}: agent '{name}' is already listed on line {first}")]
    Duplicate { origin: String, line: usize, name: String, first: usize },
    /// Not UTF-8.
    #[error("{origin} is not UTF-8 text")]
    Encoding { origin: String },
}

/// Where an entry came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntrySource {
    /// Committed on the integration branch.
    Committed,
    /// Only in this worktree's `.mas/roster`.
    WorktreeOnly,
}

/// One roster entry.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RosterEntry {
    /// Agent name.
    pub name: String,
    /// Its `did:key`.
    pub did: String,
    /// Where it came from.
    pub source: EntrySource,
}

/// Appends `name did` as one line to the roster file at `path` (creating it and its folder), on a
/// line of its own even when the file does not end with a newline.
pub fn append_to_roster(path: &std::path::Path, name: &str, did: &str) -> std::io::Result<()> {
    use std::io::Write;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let needs_newline = std::fs::read(path).map(|b| !b.is_empty() && !b.ends_with(b"\n")).unwrap_or(false);
    let line = format!("{}{name} {did}\n", if needs_newline { "\n" } else { "" });
    std::fs::OpenOptions::new().create(true).append(true).open(path)?.write_all(line.as_bytes())
}

/// Parses roster text into (name, did) pairs in file order. `origin` names the file in errors.
pub fn parse_roster(text: &[u8], origin: &str) -> Result<Vec<(String, String)>, RosterError> {
    let text = std::str::from_utf8(text).map_err(|_| RosterError::Encoding { origin: origin.into() })?;
    let mut out: Vec<(String, String)> = Vec::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = trimmed.split_whitespace().collect();
        if fields.len() != 2 {
            return Err(RosterError::Shape { origin: origin.into(), line, text: trimmed.into() });
        }
        let (name, did) = (fields[0], fields[1]);
        validate_name(name).map_err(|e| RosterError::Name { origin: origin.into(), line, reason: e })?;
        if public_from_did(did).is_err() {
            return Err(RosterError::Did { origin: origin.into(), line, did: did.into() });
        }
        if let Some(first) = seen.insert(name.to_string(), line) {
            return Err(RosterError::Duplicate { origin: origin.into(), line, name: name.into(), first });
        }
        out.push((name.into(), did.into()));
    }
    Ok(out)
}

/// The effective roster of one worktree.
#[derive(Debug, Clone, Default)]
pub struct Roster {
    entries: BTreeMap<String, RosterEntry>,
    /// Human-readable warnings about worktree-only or conflicting entries.
    pub warnings: Vec<String>,
}

impl Roster {
    /// Merges the committed entries with a worktree's entries (either may be absent).
    pub fn merge(committed: Vec<(String, String)>, worktree: Vec<(String, String)>, branch: &str) -> Self {
        let mut roster = Roster::default();
        for (name, did) in committed {
            roster.entries.insert(name.clone(), RosterEntry { name, did, source: EntrySource::Committed });
        }
        for (name, did) in worktree {
            match roster.entries.get(&name) {
                Some(existing) if existing.did == did => {}
                Some(_) => roster.warnings.push(format!(
                    "roster entry '{name}' in this worktree differs from the one committed on {branch}; the committed key is used"
                )),
                None => {
                    roster.warnings.push(format!(
                        "roster entry '{name}' is not committed on {branch}; it counts only in this worktree until it is"
                    ));
                    roster.entries.insert(name.clone(), RosterEntry { name, did, source: EntrySource::WorktreeOnly });
                }
            }
        }
        // A name shaped like a session of another entry is that entry's session's, signed with its
        // key: an entry of that name under another key would let its holder sign as the session.
        let impostors: Vec<(String, String)> = roster
            .entries
            .values()
            .filter_map(|e| {
                let principal = super::session::principal_of(&e.name)?;
                let owner = roster.entries.get(principal)?;
                (owner.did != e.did).then(|| (e.name.clone(), principal.to_string()))
            })
            .collect();
        for (name, principal) in impostors {
            roster.entries.remove(&name);
            roster.warnings.push(format!(
                "roster entry '{name}' is refused: the name is shaped like a session of '{principal}' but carries \
                 another key (records under that name verify against '{principal}''s key)"
            ));
        }
        roster
    }

    /// Whether `name` may be added to this roster with another key than its principal's: not when
    /// it has a session agent's shape and its principal is on the roster (`alice.claude-3f2a9c1b`
    /// is alice's session). Returns that principal.
    pub fn session_of_member<'a>(&self, name: &'a str) -> Option<&'a str> {
        super::session::principal_of(name).filter(|p| self.entries.contains_key(*p))
    }

    /// The entry for `name`.
    pub fn get(&self, name: &str) -> Option<&RosterEntry> {
        self.entries.get(name)
    }

    /// The entry whose key signs for `name`: its own entry, else, for a session agent's name
    /// ([`super::session`]) that is not on the roster, its principal's.
    pub fn signer(&self, name: &str) -> Option<&RosterEntry> {
        self.entries.get(name).or_else(|| super::session::principal_of(name).and_then(|p| self.entries.get(p)))
    }

    /// All entries, sorted by name.
    pub fn entries(&self) -> impl Iterator<Item = &RosterEntry> {
        self.entries.values()
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::key::AgentKey;

    #[test]
    fn an_entry_named_like_another_members_session_is_refused_and_the_session_stays_the_members() {
        let alice = AgentKey::generate().unwrap().did();
        let bob = AgentKey::generate().unwrap().did();
        let committed = vec![("alice".to_string(), alice.clone()), ("bob".to_string(), bob.clone())];
        let impostor = vec![("alice.claude-3f2a9c1b".to_string(), bob.clone())];
        let r = Roster::merge(committed.clone(), impostor.clone(), "main");
        assert_eq!(r.signer("alice.claude-3f2a9c1b").map(|e| e.did.as_str()), Some(alice.as_str()));
        assert!(r.warnings.iter().any(|w| w.contains("shaped like a session of 'alice'")), "{:?}", r.warnings);
        // Committed too.
        let mut all = committed.clone();
        all.extend(impostor);
        let r = Roster::merge(all, Vec::new(), "main");
        assert_eq!(r.signer("alice.claude-3f2a9c1b").map(|e| e.did.as_str()), Some(alice.as_str()));
        // With the member's own key it is the member's (an exact entry wins, as before).
        let own = vec![("alice.claude-3f2a9c1b".to_string(), alice.clone())];
        let r = Roster::merge(committed, own, "main");
        assert!(r.get("alice.claude-3f2a9c1b").is_some());
        assert_eq!(r.session_of_member("alice.claude-3f2a9c1b"), Some("alice"));
        assert_eq!(r.session_of_member("carol.claude-3f2a9c1b"), None);
    }

    #[test]
    fn a_session_agent_signs_with_its_principals_entry_and_an_exact_entry_wins() {
        let roster = Roster::merge(
            vec![("alice".into(), did(1)), ("bob".into(), did(2)), ("alice.codex-00000000".into(), did(3))],
            vec![],
            "main",
        );
        assert_eq!(roster.signer("alice.claude-3f2a9c1b").map(|e| e.name.as_str()), Some("alice"));
        assert_eq!(roster.signer("bob.gemini-0123abcd").unwrap().did, did(2));
        // An entry shaped like alice's session under another key is refused: alice's key signs.
        assert_eq!(roster.signer("alice.codex-00000000").unwrap().did, did(1), "not the impostor's key");
        assert!(roster.signer("carol.claude-3f2a9c1b").is_none(), "no principal carol");
        assert!(roster.signer("alice.claude").is_none(), "not a session's shape");
        assert!(roster.get("alice.claude-3f2a9c1b").is_none(), "a session is no roster entry");
    }

    fn did(seed: u8) -> String {
        AgentKey::from_seed([seed; 32]).did()
    }

    #[test]
    fn parses_entries_comments_and_blank_lines() {
        let text = format!("# team\n\nalice {}\n  bob   {}  \n", did(1), did(2));
        let parsed = parse_roster(text.as_bytes(), ROSTER_PATH).unwrap();
        assert_eq!(parsed, vec![("alice".into(), did(1)), ("bob".into(), did(2))]);
    }

    #[test]
    fn bad_lines_are_named_with_their_line_number() {
        let cases = [
            ("alice\n".to_string(), "line 1: expected `name did:key`"),
            (format!("alice {} extra\n", did(1)), "line 1: expected"),
            (format!("# c\nAlice {}\n", did(1)), "line 2:"),
            ("alice did:key:zzz\n".to_string(), "is not an ed25519 did:key"),
            (format!("alice {}\nalice {}\n", did(1), did(2)), "already listed on line 1"),
        ];
        for (text, want) in cases {
            let err = parse_roster(text.as_bytes(), ROSTER_PATH).unwrap_err().to_string();
            assert!(err.contains(want), "{err:?} should contain {want:?}");
        }
    }

    #[test]
    fn committed_entries_win_and_worktree_only_entries_warn() {
        let roster = Roster::merge(
            vec![("alice".into(), did(1))],
            vec![("alice".into(), did(9)), ("bob".into(), did(2))],
            "main",
        );
        assert_eq!(roster.get("alice").unwrap().did, did(1));
        assert_eq!(roster.get("bob").unwrap().source, EntrySource::WorktreeOnly);
        assert_eq!(roster.warnings.len(), 2);
    }
}
