//! Choosing a focus's targets from a frame's snapshot.
//!
//! A focus is derived from the snapshot, never free-typed: every target it holds is one the
//! snapshot ranks. A user names targets by exact id or by a glob over ids (`src/pricing/*`,
//! `**/*#Ledger.*`, `/` matched literally), or takes the snapshot's K highest; whatever order they
//! were given in, the focus lists them in the snapshot's order, so its first target — the one the
//! pure rule serializes on — is the most salient of them.

use std::collections::BTreeSet;

/// Why a pattern selects nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectError {
    /// Not an id in the snapshot, not a glob, and not a path inside the repository.
    #[error("target {pattern:?} escapes the repository")]
    Escapes {
        /// The pattern as given.
        pattern: String,
    },
    /// Not an id in the snapshot, and not a valid glob either.
    #[error("{pattern:?} is neither a target nor a valid glob: {detail}")]
    BadGlob {
        /// The pattern as given.
        pattern: String,
        /// What the glob parser said.
        detail: String,
    },
    /// A valid pattern that names no target of the snapshot.
    #[error("target {pattern:?} is not in the current frame's snapshot")]
    NotInFrame {
        /// The pattern as given.
        pattern: String,
    },
}

/// The targets `patterns` and `top` select from `ids` (the snapshot's targets, highest saliency
/// first), in that order and without duplicates.
pub fn select_targets(ids: &[&str], patterns: &[String], top: Option<usize>) -> Result<Vec<String>, SelectError> {
    let mut chosen: BTreeSet<&str> = BTreeSet::new();
    for p in patterns {
        if let Some(id) = ids.iter().find(|id| **id == p.as_str()) {
            chosen.insert(id);
            continue;
        }
        if !super::board::target_path_ok(p) && !p.contains('*') {
            return Err(SelectError::Escapes { pattern: p.clone() });
        }
        let glob = globset::GlobBuilder::new(p)
            .literal_separator(true)
            .build()
            .map_err(|e| SelectError::BadGlob { pattern: p.clone(), detail: e.to_string() })?
            .compile_matcher();
        let mut matched = false;
        for id in ids.iter().filter(|id| glob.is_match(id)) {
            matched = true;
            chosen.insert(id);
        }
        if !matched {
            return Err(SelectError::NotInFrame { pattern: p.clone() });
        }
    }
    if let Some(k) = top {
        chosen.extend(ids.iter().take(k));
    }
    Ok(ids.iter().filter(|id| chosen.contains(**id)).map(|s| s.to_string()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const IDS: [&str; 6] = [
        "src/report.rs",
        "src/pricing/tax.rs",
        "src/lib.rs",
        "src/pricing/mod.rs",
        "src/ledger.rs#Ledger.reserve",
        "a.rs",
    ];

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn selection_table() {
        let ok: Vec<(&[&str], Option<usize>, &[&str])> = vec![
            // Exact ids, listed in the snapshot's order whatever order they were given in.
            (&["src/lib.rs", "src/report.rs"], None, &["src/report.rs", "src/lib.rs"]),
            // Globs; `*` does not cross `/`.
            (&["src/pricing/*"], None, &["src/pricing/tax.rs", "src/pricing/mod.rs"]),
            (&["src/*"], None, &["src/report.rs", "src/lib.rs", "src/ledger.rs#Ledger.reserve"]),
            (&["**/*#Ledger.*"], None, &["src/ledger.rs#Ledger.reserve"]),
            // --top K, alone or with names, without duplicates.
            (&[], Some(2), &["src/report.rs", "src/pricing/tax.rs"]),
            (&["a.rs", "src/report.rs"], Some(1), &["src/report.rs", "a.rs"]),
            (&[], Some(0), &[]),
            (&[], Some(99), &IDS),
            (&["a.rs", "a.rs"], None, &["a.rs"]),
        ];
        for (patterns, top, want) in ok {
            assert_eq!(select_targets(&IDS, &strings(patterns), top), Ok(strings(want)), "{patterns:?} {top:?}");
        }
        let refused: Vec<(&str, SelectError)> = vec![
            ("../outside.rs", SelectError::Escapes { pattern: "../outside.rs".into() }),
            ("/etc/passwd", SelectError::Escapes { pattern: "/etc/passwd".into() }),
            ("src/nope.rs", SelectError::NotInFrame { pattern: "src/nope.rs".into() }),
            ("docs/*", SelectError::NotInFrame { pattern: "docs/*".into() }),
            // `**` joined to more than `/` is a plain `*`: it stays within one component.
            ("**#Ledger.*", SelectError::NotInFrame { pattern: "**#Ledger.*".into() }),
        ];
        for (pattern, want) in refused {
            assert_eq!(select_targets(&IDS, &strings(&["a.rs", pattern]), Some(3)), Err(want), "{pattern}");
        }
        let bad = select_targets(&IDS, &strings(&["src/[a"]), None);
        assert!(matches!(&bad, Err(SelectError::BadGlob { pattern, .. }) if pattern == "src/[a"), "{bad:?}");
    }
}
