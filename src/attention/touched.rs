//! What a change touches: paths and, where they matter, the changed line ranges.
//!
//! Line ranges are only needed for files in which someone holds a symbol target, so they are
//! computed for those files alone (most commits touch none). Ranges are taken on the old side of
//! the diff (the version the frame's symbol ranges describe); a pure insertion counts as touching
//! the line before and the line after it.
//!
//! Staged paths come from [`super::staged`] (in-process, through the cache-tree) and, for the index
//! states that leaves to git (unborn HEAD, intent-to-add, unmerged, sparse or split index), from
//! [`staged_paths`] here: `git diff --cached --name-only -z`, which handles every index state git
//! itself does.

use super::gate::Touched;
use std::collections::BTreeSet;
use std::path::Path;

/// Errors from running git.
#[derive(Debug, thiserror::Error)]
pub enum TouchedError {
    /// git could not be run or failed.
    #[error("git {args} failed: {reason}")]
    Git { args: String, reason: String },
}

fn git(dir: &Path, args: &[&str]) -> Result<Vec<u8>, TouchedError> {
    crate::git::run(dir, args).map_err(|e| TouchedError::Git { args: e.args().to_string(), reason: e.reason() })
}

/// Paths staged for commit (relative to the top of the working tree).
pub fn staged_paths(workdir: &Path) -> Result<Vec<String>, TouchedError> {
    let out = git(workdir, &["diff", "--cached", "--name-only", "-z", "--no-renames", "--no-ext-diff"])?;
    Ok(out.split(|b| *b == 0).filter(|p| !p.is_empty()).map(|p| String::from_utf8_lossy(p).into_owned()).collect())
}

/// Paths changed by `commit` against its first parent (all paths for a root commit).
pub fn commit_paths(workdir: &Path, commit: &str) -> Result<Vec<String>, TouchedError> {
    let out =
        git(workdir, &["diff-tree", "--root", "--no-commit-id", "--name-only", "-r", "-z", "--no-renames", commit])?;
    Ok(out.split(|b| *b == 0).filter(|p| !p.is_empty()).map(|p| String::from_utf8_lossy(p).into_owned()).collect())
}

/// Parses `@@ -a,b +c,d @@` hunk headers of a `-U0` diff into old-side line ranges.
pub fn hunk_ranges(diff: &[u8]) -> Vec<[u32; 2]> {
    let text = String::from_utf8_lossy(diff);
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("@@ -") else { continue };
        let old = rest.split_whitespace().next().unwrap_or("");
        let mut parts = old.splitn(2, ',');
        let start: u32 = parts.next().and_then(|s| s.parse().ok()).unwrap_or(0);
        let count: u32 = parts.next().and_then(|s| s.parse().ok()).unwrap_or(1);
        if count == 0 {
            // An insertion after line `start`: it touches its neighbours.
            out.push([start.max(1), start + 1]);
        } else {
            out.push([start, start + count - 1]);
        }
    }
    out
}

/// Builds the touched list, computing line ranges for the `detailed` paths with `diff_args`
/// (`["diff", "--cached"]` for the index, `["diff", "<parent>", "<commit>"]` for a commit).
pub fn touched(workdir: &Path, paths: Vec<String>, detailed: &BTreeSet<String>, diff_args: &[&str]) -> Vec<Touched> {
    paths
        .into_iter()
        .map(|path| {
            let lines = if detailed.contains(&path) {
                let mut args: Vec<&str> = diff_args.to_vec();
                args.extend(["-U0", "--no-color", "--no-ext-diff", "--no-renames", "--", path.as_str()]);
                git(workdir, &args).ok().map(|d| hunk_ranges(&d))
            } else {
                None
            };
            Touched { path, lines }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunk_headers_give_old_side_ranges() {
        let diff = b"diff --git a/x b/x\n@@ -3 +3 @@\n-a\n+b\n@@ -10,4 +10,0 @@\n@@ -20,0 +21,2 @@ fn f() {\n+x\n";
        assert_eq!(hunk_ranges(diff), vec![[3, 3], [10, 13], [20, 21]]);
        assert_eq!(hunk_ranges(b"@@ -0,0 +1,5 @@\n"), vec![[1, 1]]);
    }
}
