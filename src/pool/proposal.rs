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
//! | 2 | `refs/mas/runs/<run>/proposals/<agent>` → the commit | the event names a commit the proposal ref does not hold | [`settle`], which `propose` runs as its last step and every read of the run (`run::view::load`) runs too: it points the ref at the commit of the agent's latest accepted proposal event, when that commit exists, holds the event's tree and rests on the run's base |
//!
//! The ref follows the events, never the other way round, so two `propose` of one agent racing
//! each other also end with the ref at the proposal the tally counts.

use crate::engines::DevelopmentEngine;
use crate::run::RunDef;
use crate::run::events::{self, RunEvents};
use crate::runtime::MasRuntime;
use crate::store::CasOutcome;
use serde::{Deserialize, Serialize};

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

/// A proposal ref moved to what its agent's latest accepted proposal event names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settled {
    /// The agent.
    pub agent: String,
    /// The proposal ref.
    pub refname: String,
    /// Where it pointed before (`None`: it did not exist).
    pub from: Option<String>,
    /// The proposal commit it points at now.
    pub to: String,
}

/// Points each proposal ref of the run (only `agent`'s, when given) at the commit of that agent's
/// latest accepted proposal event, when it does not already: step 2 of a proposal, re-done after a
/// crash. Only a ref that lags behind its events is moved — absent, or at a commit an earlier
/// proposal event of the agent names — never one written outside `git mas propose`; and only to
/// a commit that exists, holds the event's tree and rests on the run's base. Anything else is left
/// alone (the run's view reports it as a dependency issue).
pub fn settle(
    store: &Store,
    def: &RunDef,
    loaded: &RunEvents,
    runtime: &MasRuntime<DevelopmentEngine>,
    agent: Option<&str>,
) -> Result<Vec<Settled>, PoolError> {
    let base = def.base_id()?;
    let mut out = Vec::new();
    for name in def.roster.iter().filter(|n| agent.is_none_or(|a| a == n.as_str())) {
        let Some(stamped) = events::accepted_proposal(runtime, loaded, name) else { continue };
        let crate::runtime::SemanticPayload::ExternalBytes { digest, .. } = &stamped.record.event.payload else {
            continue;
        };
        let Ok(commit) = ObjectId::from_hex(stamped.record.commit.as_bytes()) else { continue };
        let refname = crate::run::proposal_ref(&def.id, name);
        let earlier: Vec<&str> = loaded
            .events
            .iter()
            .filter(|e| e.agent == *name && e.kind == events::PROPOSAL_KIND)
            .map(|e| e.record.commit.as_str())
            .collect();
        for _ in 0..8 {
            let current = store.tip(&refname)?;
            if current == Some(commit) {
                break;
            }
            if let Some(c) = current
                && !earlier.contains(&c.to_string().as_str())
            {
                break;
            }
            let Ok(c) = store.repo().find_commit(commit) else { break };
            let parents: Vec<ObjectId> = c.parent_ids().map(|p| p.detach()).collect();
            let tree = c.tree_id().map(|t| t.detach().to_string()).unwrap_or_default();
            if parents != [base] || tree != *digest {
                break;
            }
            match store.cas(&refname, current, commit, &format!("git-mas: proposal by {name}"))? {
                CasOutcome::Updated => {
                    out.push(Settled {
                        agent: name.clone(),
                        refname: refname.clone(),
                        from: current.map(|c| c.to_string()),
                        to: commit.to_string(),
                    });
                    break;
                }
                CasOutcome::LostRace { .. } => continue,
            }
        }
    }
    Ok(out)
}

/// [`settle`] for a run named by id, reading its events: what `git mas doctor` calls.
pub fn settle_run(store: &Store, run: &str) -> Result<Vec<Settled>, PoolError> {
    let roster = store.roster()?;
    let meta = crate::run::load_meta(store, &roster, run)?;
    let loaded = events::load(store, &roster, run)?;
    let runtime = events::replay(&meta.def, events::self_endorse_allowed(store), &loaded)
        .map_err(|e| crate::run::RunError::Unreadable { id: run.into(), why: e.to_string() })?;
    settle(store, &meta.def, &loaded, &runtime, None)
}
