//! Session agents: a host session with no identity of its own is an agent of its own, named after
//! the principal whose key signs for it.
//!
//! The roster lists principals — a person's machine, a CI runner — each with its key. Sessions come
//! and go many times a day (a person opens a host, an agent team spawns teammates), so a session is
//! not a roster entry: it is named `<principal>.<host>-<8 hex>`, the hex the start of the SHA-256 of
//! the host's session id ([`session_agent`]), and its records are signed with the principal's key.
//! Verification accepts such a name as the principal's ([`crate::identity::Roster::signer`]): the
//! board counts it as an agent of its own, so two sessions of one principal hold files against each
//! other.
//!
//! What a signature proves: under one OS user nothing stops one process from using another's key,
//! so a session agent's signature attributes a record to its principal's machine, not to the
//! session. Agents are kept apart for real by one OS user (or container) each.
//!
//! Decision: **an exact roster entry wins, unless it impersonates a member's session.** A name on
//! the roster is that entry's; a name that is not on the roster and has a session agent's shape
//! ([`principal_of`]) is looked up as its principal's. An entry with a session's shape whose
//! principal is another entry with a different key would let its key sign as that member's
//! session (and make the session's own records fail as spoofs), so the roster refuses it with a
//! warning ([`crate::identity::Roster::merge`]) and `git mas agent new` refuses to create one. The
//! session part is strict (`[a-z0-9]+`, `-`, eight lower-case hex digits), so a dotted name
//! someone chose is never read as a session of another agent by accident.

use super::name::{NameError, validate_name};
use sha2::{Digest, Sha256};

/// The hex digits of the session id's hash a session agent's name carries.
pub const SESSION_HEX: usize = 8;

/// The name of `principal`'s session `session_id` of `host` (a short host name: `claude`,
/// `codex`, …): `<principal>.<host>-<first 8 hex of SHA-256(session id)>`.
pub fn session_agent(principal: &str, host: &str, session_id: &str) -> Result<String, NameError> {
    let digest = Sha256::digest(session_id.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    let name = format!("{principal}.{host}-{}", &hex[..SESSION_HEX]);
    validate_name(&name)?;
    match principal_of(&name) {
        Some(p) if p == principal => Ok(name),
        _ => Err(NameError::BadChar { name: name.clone(), found: '.', pos: principal.len() }),
    }
}

/// The principal a session agent's name belongs to: the part before its last `.`, when what
/// follows it is `<host>-<8 hex>`. `None` for any other name.
pub fn principal_of(name: &str) -> Option<&str> {
    let (principal, session) = name.rsplit_once('.')?;
    let (host, hex) = session.rsplit_once('-')?;
    let host_ok = !host.is_empty() && host.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    let hex_ok = hex.len() == SESSION_HEX && hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    (host_ok && hex_ok && validate_name(principal).is_ok()).then_some(principal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_is_named_after_its_principal_host_and_id() {
        let a = session_agent("alice", "claude", "3f2a9c1b-0000-4000-8000-000000000001").unwrap();
        assert!(a.starts_with("alice.claude-") && a.len() == "alice.claude-".len() + SESSION_HEX, "{a}");
        assert_eq!(session_agent("alice", "claude", "3f2a9c1b-0000-4000-8000-000000000001").unwrap(), a);
        assert_ne!(session_agent("alice", "claude", "another").unwrap(), a, "another session, another agent");
        assert_ne!(session_agent("alice", "codex", "3f2a9c1b-0000-4000-8000-000000000001").unwrap(), a);
        assert_eq!(principal_of(&a), Some("alice"));
        assert!(session_agent(&"a".repeat(60), "claude", "s").is_err(), "too long for a name");
        assert!(session_agent("alice", "Claude", "s").is_err(), "not a name");
    }

    #[test]
    fn only_a_session_shaped_name_has_a_principal() {
        let cases = [
            ("alice.claude-3f2a9c1b", Some("alice")),
            ("ci.runner.codex-00ff00ff", Some("ci.runner")),
            ("alice.gemini2-0123abcd", Some("alice")),
            ("alice", None),
            ("alice.claude", None),
            ("alice.claude-3f2a9c1", None),
            ("alice.claude-3f2a9c1bb", None),
            ("alice.claude-3F2A9C1B", None),
            ("alice.-3f2a9c1b", None),
            (".claude-3f2a9c1b", None),
            ("alice.cla_ude-3f2a9c1b", None),
            ("alice.claude-3f2a9c1g", None),
        ];
        for (name, want) in cases {
            assert_eq!(principal_of(name), want, "{name}");
        }
    }
}
