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

use super::{PoolError, git, git_command, io_err, run_git};
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
pub fn worktree_tree(workdir: &Path) -> Result<ObjectId, PoolError> {
    let git_dir = PathBuf::from(git(workdir, &["rev-parse", "--absolute-git-dir"])?);
    sweep_snapshots(&git_dir);
    let temp = TempFile(git_dir.join(format!("{}.index", super::owned_name(SNAPSHOT_PREFIX))));
    let real = git_dir.join("index");
    if real.exists() {
        std::fs::copy(&real, &temp.0).map_err(io_err(&real))?;
    }
    let with_temp_index = || {
        let mut cmd = git_command(workdir);
        cmd.env("GIT_INDEX_FILE", &temp.0);
        cmd
    };
    run_git(with_temp_index(), &["add", "-A", "--", "."])?;
    let tree = run_git(with_temp_index(), &["write-tree"])?;
    ObjectId::from_hex(tree.trim().as_bytes()).map_err(|_| PoolError::WriteTreeOutput { printed: tree.clone() })
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
