//! What a workspace watcher (`git mas watch`) re-snapshots on, and what it reports about a new
//! frame.
//!
//! Never on a timer: a frame that changes without the workspace changing would strand every focus
//! for nothing. Everything inside the git dir is ignored except `HEAD` and `index` (a commit,
//! checkout or `git add` changes what the snapshot sees); the working tree and the snapshot's own
//! inputs count.

use super::focus_store::FOCUS_PREFIX;
use super::snapshot::Snapshot;
use crate::store::Store;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Whether a change at `path` can change the snapshot.
pub fn relevant(path: &Path) -> bool {
    let in_git = path.components().any(|c| c.as_os_str() == ".git");
    if !in_git {
        return true;
    }
    matches!(path.file_name().and_then(|n| n.to_str()), Some("HEAD" | "index"))
        && path.parent().and_then(Path::file_name).is_some_and(|p| p == ".git")
}

/// The targets whose saliency differs between `old` (none: every target of `new`) and `new`,
/// sorted: added, dropped and re-scored ones alike.
pub fn changed_targets(old: Option<&Snapshot>, new: &Snapshot) -> Vec<String> {
    let before: BTreeMap<&str, f64> =
        old.map(|s| s.targets.iter().map(|t| (t.id.as_str(), t.saliency)).collect()).unwrap_or_default();
    let after: BTreeMap<&str, f64> = new.targets.iter().map(|t| (t.id.as_str(), t.saliency)).collect();
    let ids: BTreeSet<&str> = before.keys().chain(after.keys()).copied().collect();
    ids.into_iter().filter(|id| before.get(id) != after.get(id)).map(String::from).collect()
}

/// Agents whose latest focus record names a frame other than `hash` (unreadable chains are
/// skipped: this is a report, not a verdict).
pub fn stale_foci(store: &Store, hash: &str) -> Vec<String> {
    let mut out = Vec::new();
    for r in store.list(FOCUS_PREFIX).unwrap_or_default() {
        let Some(agent) = crate::store::owner_of(&r.name) else { continue };
        let Ok(Some(tip)) = store.tip(&r.name) else { continue };
        let Ok(entry) = store.entry(tip) else { continue };
        let frame =
            entry.record.ok().and_then(|rec| rec.payload.get("frame").and_then(|f| f.as_str()).map(String::from));
        if frame.as_deref().is_some_and(|f| f != hash) {
            out.push(agent.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::saliency::Contributions;
    use crate::attention::snapshot::Target;

    #[test]
    fn git_internals_are_ignored_except_head_and_index() {
        let cases = [
            ("/r/src/lib.rs", true),
            ("/r/.git/HEAD", true),
            ("/r/.git/index", true),
            ("/r/.gitignore", true),
            ("/r/.git/objects/ab/cdef", false),
            ("/r/.git/refs/mas/frame", false),
            ("/r/.git/logs/HEAD", false),
            ("/r/.git/index.lock", false),
        ];
        for (path, want) in cases {
            assert_eq!(relevant(Path::new(path)), want, "{path}");
        }
    }

    fn snapshot(targets: &[(&str, f64)]) -> Snapshot {
        let targets = targets
            .iter()
            .map(|(id, saliency)| Target {
                id: id.to_string(),
                saliency: *saliency,
                signals: Contributions::default(),
                lines: None,
            })
            .collect();
        Snapshot::of_targets(targets)
    }

    #[test]
    fn changed_target_table() {
        let old = snapshot(&[("a.rs", 0.5), ("b.rs", 0.25), ("c.rs", 0.1)]);
        let cases: Vec<(Option<&Snapshot>, Snapshot, Vec<&str>)> = vec![
            (Some(&old), snapshot(&[("a.rs", 0.5), ("b.rs", 0.25), ("c.rs", 0.1)]), vec![]),
            (Some(&old), snapshot(&[("a.rs", 0.5), ("b.rs", 0.3), ("c.rs", 0.1)]), vec!["b.rs"]),
            (Some(&old), snapshot(&[("a.rs", 0.5), ("d.rs", 0.2)]), vec!["b.rs", "c.rs", "d.rs"]),
            (None, snapshot(&[("z.rs", 0.1), ("a.rs", 0.2)]), vec!["a.rs", "z.rs"]),
        ];
        for (i, (old, new, want)) in cases.into_iter().enumerate() {
            assert_eq!(changed_targets(old, &new), want, "case {i}");
        }
    }
}
