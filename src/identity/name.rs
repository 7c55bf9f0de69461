//! Agent names: the part of every per-agent ref name, so they must be ref-safe and unambiguous.
//!
//! `[a-z0-9][a-z0-9._-]{0,62}` and never `..`. Upper case is refused rather than folded, so that two
//! spellings can never name one agent on a case-insensitive file system.

use thiserror::Error;

/// Why a string is not an agent name.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum NameError {
    /// The empty string.
    #[error("agent name is empty")]
    Empty,
    /// More than 63 bytes.
    #[error("agent name {name:?} is {len} characters long; the limit is 63")]
    TooLong { name: String, len: usize },
    /// A character outside `[a-z0-9._-]`, or a first character that is not `[a-z0-9]`.
    #[error(
        "agent name {name:?} contains {found:?} at position {pos}; use lower-case letters, digits, '.', '_' and '-' (starting with a letter or digit)"
    )]
    BadChar { name: String, found: char, pos: usize },
    /// Contains `..`.
    #[error("agent name {name:?} contains '..'")]
    DotDot { name: String },
    /// Ends with `.lock`, which git reserves for lock files.
    #[error("agent name {name:?} ends with '.lock', which git reserves")]
    LockSuffix { name: String },
}

/// Checks that `name` is a valid agent name.
pub fn validate_name(name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    let len = name.chars().count();
    if name.len() > 63 {
        return Err(NameError::TooLong { name: name.into(), len });
    }
    for (pos, ch) in name.chars().enumerate() {
        let ok = ch.is_ascii_lowercase() || ch.is_ascii_digit() || (pos > 0 && matches!(ch, '.' | '_' | '-'));
        if !ok {
            return Err(NameError::BadChar { name: name.into(), found: ch, pos });
        }
    }
    if name.contains("..") {
        return Err(NameError::DotDot { name: name.into() });
    }
    if name.ends_with(".lock") {
        return Err(NameError::LockSuffix { name: name.into() });
    }
    Ok(())
}

/// An agent name made from `text` (a login name such as `$USER`): lower case, every character
/// outside `[a-z0-9._-]` (and a leading `.`, `_` or `-`) dropped or made `-`, `..` made `.`,
/// cut to 63 characters, without a trailing `.lock`; `None` when nothing is left.
pub fn name_from(text: &str) -> Option<String> {
    let mut name = String::new();
    for ch in text.trim().chars().flat_map(char::to_lowercase) {
        let ch = if ch.is_ascii_lowercase() || ch.is_ascii_digit() || matches!(ch, '.' | '_' | '-') { ch } else { '-' };
        if name.is_empty() && !(ch.is_ascii_lowercase() || ch.is_ascii_digit()) {
            continue;
        }
        if ch == '.' && name.ends_with('.') {
            continue;
        }
        name.push(ch);
    }
    name.truncate(63);
    while let Some(rest) = name.strip_suffix(".lock") {
        name = rest.to_string();
    }
    let name = name.trim_end_matches(['.', '-', '_']).to_string();
    validate_name(&name).ok().map(|()| name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_login_name_becomes_an_agent_name() {
        let long = "b".repeat(80);
        let cases: &[(&str, Option<&str>)] = &[
            ("alice", Some("alice")),
            ("Alice Smith", Some("alice-smith")),
            ("  bob  ", Some("bob")),
            ("_build", Some("build")),
            ("j.doe", Some("j.doe")),
            ("a..b", Some("a.b")),
            ("ci.lock", Some("ci")),
            ("DOMAIN\\user", Some("domain-user")),
            ("émile", Some("mile")),
            (&long, Some(&long[..63])),
            ("", None),
            ("---", None),
            ("ééé", None),
        ];
        for (text, want) in cases {
            assert_eq!(name_from(text).as_deref(), *want, "{text:?}");
            if let Some(name) = name_from(text) {
                assert!(validate_name(&name).is_ok(), "{name}");
            }
        }
    }

    #[test]
    fn name_table() {
        let long = "a".repeat(64);
        let max = "a".repeat(63);
        let cases: &[(&str, bool)] = &[
            ("alice", true),
            ("a", true),
            ("agent-7.b_c", true),
            ("0day", true),
            (&max, true),
            ("", false),
            (&long, false),
            ("Alice", false),
            ("al/ice", false),
            ("a..b", false),
            ("al ice", false),
            ("-alice", false),
            (".alice", false),
            ("alice.lock", false),
            ("ålice", false),
        ];
        for (name, ok) in cases {
            assert_eq!(validate_name(name).is_ok(), *ok, "{name:?}");
        }
    }
}
