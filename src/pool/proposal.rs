//! Turning a working tree into a proposal: a tree of everything `git add -A` would take, built in a
//! temporary index, and a commit of it whose parent is the run's base.
//!
//! A proposal is two refs, and git cannot move two loose refs atomically across a crash, so
//! `propose` moves them one at a time, the record first:
//!
//! | step | what moves | a SIGKILL before this step completes leaves | completed by |
//! |------|------------|---------------------------------------------|--------------|
//! | 0 | the tree (temporary index `mas-snapshot-<pid>-<random>.index`) and the proposal commit are written | unreferenced objects (and, killed inside `git add`, the temporary index: swept by the next `propose`, see [`sweep_snapshots`]) | nothing to do: `propose` again |
//! | 1 | the proposal event appended to the agent's event chain (it names the commit and its tree) | the chain as it was | as 0 |
//! | 2 | `refs/mas/runs/<run>/proposals/<agent>` → the commit | the event names a commit the proposal ref does not hold | `devrun::settle::settle`, which `propose` runs as its last step and every read of the run (`devrun::view::load`) runs too: it points the ref at the commit of the agent's latest accepted proposal event, when that commit exists, holds the event's tree and rests on the run's base |
//!
//! The ref follows the events, never the other way round, so two `propose` of one agent racing
//! each other also end with the ref at the proposal the tally counts.

use super::{PoolError, git, io_err, run_git};
use crate::store::Store;
use gix::ObjectId;
use std::path::{Path, PathBuf};

/// Removes a file when dropped (the temporary index, whatever happens).
struct TempFile(PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// How temporary snapshot indexes' names begin (in the worktree's git dir).
pub const SNAPSHOT_PREFIX: &str = "mas-snapshot-";

/// Removes the temporary indexes in `git_dir` that killed processes left (named by
/// `pool::owned_name`, so a live one is never touched); returns them.
pub fn sweep_snapshots(git_dir: &Path) -> Vec<PathBuf> {
    super::sweep_dead(git_dir, SNAPSHOT_PREFIX)
}

/// The tree of `workdir` as `git add -A` sees it — tracked files as they are on disk, untracked
/// files that are not ignored, deletions — written to the object database without touching the
/// worktree's index: the index is copied to a temporary file (so unchanged files are not hashed
/// again), `git add -A` and `git write-tree` run against the copy, and the copy is removed.
///
/// The copy keeps the index's modification time ([`copy_index`]). git trusts an entry whose file
/// still has the size and modification time recorded in the index, except a *racily clean* one: a
/// file modified in the same second as the index was written (or later) may have changed again
/// within that second without its stat data showing it, so git compares such a file's content.
/// Which entries are racy is judged against the index file's own modification time; a copy with
/// a fresh time would make every one of them look safely old, and an edit that kept a file's size,
/// made in the second the worktree was checked out, would be missing from the tree.
pub fn worktree_tree(workdir: &Path) -> Result<ObjectId, PoolError> {
    let git_dir = PathBuf::from(git(workdir, &["rev-parse", "--absolute-git-dir"])?);
    sweep_snapshots(&git_dir);
    let temp = TempFile(git_dir.join(format!("{}.index", super::owned_name(SNAPSHOT_PREFIX))));
    let real = git_dir.join("index");
    if real.exists() {
        copy_index(&real, &temp.0)?;
    }
    let with_temp_index = crate::git::Git::new(workdir).env("GIT_INDEX_FILE", &temp.0);
    run_git(&with_temp_index, &["add", "-A", "--", "."])?;
    let tree = run_git(&with_temp_index, &["write-tree"])?;
    ObjectId::from_hex(tree.trim().as_bytes()).map_err(|_| PoolError::WriteTreeOutput { printed: tree.clone() })
}

/// Copies the index `from` to `to` with `from`'s access and modification times (to the
/// nanosecond), read before the copy: were the index rewritten in between, the copy would carry an
/// older time than its content, which only makes git compare more files, never fewer.
pub fn copy_index(from: &Path, to: &Path) -> Result<(), PoolError> {
    let meta = std::fs::metadata(from).map_err(io_err(from))?;
    std::fs::copy(from, to).map_err(io_err(from))?;
    let mut times = std::fs::FileTimes::new().set_modified(meta.modified().map_err(io_err(from))?);
    if let Ok(accessed) = meta.accessed() {
        times = times.set_accessed(accessed);
    }
    let file = std::fs::OpenOptions::new().write(true).open(to).map_err(io_err(to))?;
    file.set_times(times).map_err(io_err(to))?;
    Ok(())
}

/// The total size in bytes of the blobs in `tree` (recursively).
pub fn tree_size(dir: &Path, tree: ObjectId) -> Result<u64, PoolError> {
    let listing = git(dir, &["ls-tree", "-r", "-l", "--full-tree", &tree.to_string()])?;
    Ok(listing.lines().filter_map(|line| line.split('\t').next()?.split_whitespace().nth(3)?.parse::<u64>().ok()).sum())
}

/// The paths that differ between two trees.
pub fn changed_paths(dir: &Path, a: ObjectId, b: ObjectId) -> Result<Vec<String>, PoolError> {
    let out = git(dir, &["diff-tree", "-r", "--name-only", "--no-renames", &a.to_string(), &b.to_string()])?;
    Ok(out.lines().filter(|l| !l.is_empty()).map(str::to_string).collect())
}

/// Writes the proposal commit: `tree` on top of `base`, authored by `agent`.
pub fn write_commit(
    store: &Store,
    tree: ObjectId,
    base: ObjectId,
    agent: &str,
    message: &str,
) -> Result<ObjectId, PoolError> {
    let who = crate::store::signature(agent, agent);
    let mut message = message.trim_end().to_string();
    message.push('\n');
    let commit = gix::objs::Commit {
        tree,
        parents: std::iter::once(base).collect(),
        author: who.clone(),
        committer: who,
        encoding: None,
        message: message.into(),
        extra_headers: Vec::new(),
    };
    let id = store.repo().write_object(&commit).map_err(|e| crate::store::StoreError::Git {
        context: "writing a proposal commit".into(),
        source: Box::new(e),
    })?;
    Ok(id.detach())
}

/// The tree of a commit.
pub fn tree_of(store: &Store, commit: ObjectId) -> Result<ObjectId, PoolError> {
    let c = store
        .repo()
        .find_commit(commit)
        .map_err(|e| crate::store::StoreError::Git { context: format!("reading {commit}"), source: Box::new(e) })?;
    let tree = c.tree_id().map_err(|e| crate::store::StoreError::Git {
        context: format!("reading the tree of {commit}"),
        source: Box::new(e),
    })?;
    Ok(tree.detach())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt as _;
    use std::time::Duration;

    fn run(dir: &Path, args: &[&str]) -> String {
        let out = crate::git::command(dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// The issue's reproduction, a hundred times: a worktree checked out, a file edited to new
    /// content of the same size in the second the checkout wrote its index, the snapshot taken
    /// once that second has passed. A copy of the index with a fresh time missed such edits.
    #[test]
    fn an_edit_that_keeps_the_size_in_the_checkouts_second_is_in_the_snapshot_every_time() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        std::fs::create_dir(&repo).unwrap();
        run(&repo, &["init", "-q", "-b", "main"]);
        std::fs::write(repo.join("f.txt"), "version 0\n").unwrap();
        std::fs::write(repo.join("g.txt"), "unchanged\n").unwrap();
        run(&repo, &["add", "."]);
        run(&repo, &["commit", "-qm", "base"]);
        let mut racy = Vec::new();
        let mut attempts = 0;
        while racy.len() < 100 {
            attempts += 1;
            assert!(attempts < 400, "only {} of {attempts} checkouts were edited in their own second", racy.len());
            let w = tmp.path().join(format!("w{attempts}"));
            run(&repo, &["worktree", "add", "-q", "--detach", w.to_str().unwrap()]);
            std::fs::write(w.join("f.txt"), "version 1\n").unwrap();
            let index = repo.join(".git/worktrees").join(format!("w{attempts}")).join("index");
            let (index, file) = (std::fs::metadata(index).unwrap(), std::fs::metadata(w.join("f.txt")).unwrap());
            // Only an edit in the index's own second is racy; one that fell into the next second
            // shows in its stat data anyway.
            if index.mtime() == file.mtime() {
                racy.push(w);
            }
        }
        std::thread::sleep(Duration::from_millis(1500));
        std::fs::write(tmp.path().join("edited"), "version 1\n").unwrap();
        let want = run(&repo, &["hash-object", tmp.path().join("edited").to_str().unwrap()]);
        let mut missed = Vec::new();
        for w in &racy {
            let tree = worktree_tree(w).unwrap();
            let blob = run(w, &["rev-parse", &format!("{tree}:f.txt")]);
            if blob != want {
                missed.push(format!("{} {blob} != {want}", w.display()));
            }
            // The worktree's own index is left as it was.
            assert_eq!(run(w, &["diff", "--cached", "--name-only"]), "", "{}", w.display());
        }
        assert!(missed.is_empty(), "{} of {} snapshots missed the edit: {missed:?}", missed.len(), racy.len());
    }
}
