//! Agents' linked worktrees: one per agent and run, detached at the run's base, with per-worktree
//! configuration naming the agent and the run (`mas.agent`, `mas.run`), so that every command run
//! inside it knows who is calling and for which run.
//!
//! Per-worktree configuration needs `extensions.worktreeConfig`, which `add` enables (it is one of
//! the extensions git honours in repository format 0). Worktrees are found again through
//! `git worktree list --porcelain` and each one's own configuration, so a worktree moved with
//! `git worktree move` is still found.

use super::{PoolError, git, proposal};
use crate::devrun::{RunMeta, proposal_ref};
use crate::store::Store;
use gix::ObjectId;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// One linked or main worktree as `git worktree list` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Listed {
    /// Its directory.
    pub path: PathBuf,
    /// The commit checked out.
    pub head: Option<String>,
    /// The branch checked out (full ref name), when not detached.
    pub branch: Option<String>,
    /// Whether it is the bare repository entry.
    pub bare: bool,
    /// Whether its directory is gone.
    pub prunable: bool,
}

/// Every worktree of the repository `dir` belongs to.
pub fn list(dir: &Path) -> Result<Vec<Listed>, PoolError> {
    let out = git(dir, &["worktree", "list", "--porcelain"])?;
    let mut all = Vec::new();
    let mut current: Option<Listed> = None;
    for line in out.lines() {
        if let Some(path) = line.strip_prefix("worktree ") {
            all.extend(current.take());
            current =
                Some(Listed { path: PathBuf::from(path), head: None, branch: None, bare: false, prunable: false });
        } else if let Some(w) = current.as_mut() {
            if let Some(head) = line.strip_prefix("HEAD ") {
                w.head = Some(head.to_string());
            } else if let Some(branch) = line.strip_prefix("branch ") {
                w.branch = Some(branch.to_string());
            } else if line == "bare" {
                w.bare = true;
            } else if line.starts_with("prunable") {
                w.prunable = true;
            }
        }
    }
    all.extend(current);
    Ok(all)
}

/// An agent's worktree of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AgentWorktree {
    /// The agent.
    pub agent: String,
    /// The run.
    pub run: String,
    /// Its directory.
    pub path: PathBuf,
}

fn worktree_setting(path: &Path, key: &str) -> Option<String> {
    git(path, &["config", "--worktree", "--get", key]).ok().filter(|s| !s.is_empty())
}

/// Finds the worktree configured for `agent` in `run`.
pub fn find(dir: &Path, run: &str, agent: &str) -> Result<Option<AgentWorktree>, PoolError> {
    for w in list(dir)? {
        if w.bare || w.prunable || !w.path.is_dir() {
            continue;
        }
        if worktree_setting(&w.path, "mas.run").as_deref() == Some(run)
            && worktree_setting(&w.path, "mas.agent").as_deref() == Some(agent)
        {
            return Ok(Some(AgentWorktree { agent: agent.into(), run: run.into(), path: w.path }));
        }
    }
    Ok(None)
}

/// The default place for an agent's worktree: beside the main worktree, in
/// `<repo>-mas/<run>/<agent>`.
pub fn default_path(store: &Store, run: &str, agent: &str) -> PathBuf {
    let common = store.common_dir();
    let (parent, name) = match common.file_name().and_then(|n| n.to_str()) {
        // A normal clone: the main worktree is the git dir's parent.
        Some(".git") => {
            let top = common.parent().unwrap_or(common);
            (
                top.parent().unwrap_or(top).to_path_buf(),
                top.file_name().and_then(|n| n.to_str()).unwrap_or("repo").to_string(),
            )
        }
        // A bare repository: beside it.
        Some(n) => (common.parent().unwrap_or(common).to_path_buf(), n.trim_end_matches(".git").to_string()),
        None => (common.to_path_buf(), "repo".to_string()),
    };
    parent.join(format!("{name}-mas")).join(run).join(agent)
}

/// Creates `agent`'s worktree for `run` at `path`, detached at the run's base, and configures it.
pub fn add(store: &Store, meta: &RunMeta, agent: &str, path: &Path) -> Result<AgentWorktree, PoolError> {
    let run = &meta.def.id;
    let here = store.common_dir();
    if let Some(existing) = find(here, run, agent)? {
        return Err(PoolError::WorktreeExists { agent: agent.into(), run: run.clone(), path: existing.path });
    }
    if path.exists() && std::fs::read_dir(path).map(|mut d| d.next().is_some()).unwrap_or(true) {
        return Err(PoolError::PathNotEmpty { path: path.to_path_buf() });
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(super::io_err(parent))?;
    }
    let path_text = path.to_str().ok_or_else(|| PoolError::PathNotUtf8 { path: path.to_path_buf() })?;
    if git(here, &["config", "--bool", "--get", "extensions.worktreeConfig"]).ok().as_deref() != Some("true") {
        git(here, &["config", "extensions.worktreeConfig", "true"])?;
    }
    git(here, &["worktree", "add", "--quiet", "--detach", path_text, &meta.def.base])?;
    let configure = || -> Result<(), PoolError> {
        git(path, &["config", "--worktree", "mas.agent", agent])?;
        git(path, &["config", "--worktree", "mas.run", run])?;
        Ok(())
    };
    if let Err(e) = configure() {
        // Do not leave a worktree that would act as someone else.
        let _ = git(here, &["worktree", "remove", "--force", path_text]);
        return Err(e);
    }
    let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    Ok(AgentWorktree { agent: agent.into(), run: run.clone(), path })
}

/// What removing a worktree would discard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unproposed {
    /// The worktree's content now.
    pub tree: String,
    /// What it was compared with: the agent's proposal, or the run's base when it has none.
    pub against: String,
    /// The paths that differ.
    pub paths: Vec<String>,
}

/// The changes in a worktree that the agent's current proposal does not hold (`None`: nothing would
/// be lost). Nothing would be lost only when the worktree's content is exactly the agent's
/// proposal, the tree the run landed, or — with no proposal — the run's base; the content is read
/// as a proposal reads it ([`proposal::worktree_tree`], which misses no racily clean edit).
pub fn unproposed(store: &Store, meta: &RunMeta, w: &AgentWorktree) -> Result<Option<Unproposed>, PoolError> {
    let now = proposal::worktree_tree(&w.path)?;
    if let crate::devrun::Phase::Landed { landing, .. } = &meta.phase
        && parse_id(&landing.tree) == Some(now)
    {
        return Ok(None);
    }
    let (against_name, against) = match store.tip(&proposal_ref(&meta.def.id, &w.agent))? {
        Some(commit) => (format!("{}'s proposal", w.agent), proposal::tree_of(store, commit)?),
        None => ("the run's base".to_string(), proposal::tree_of(store, meta.def.base_id()?)?),
    };
    if now == against {
        return Ok(None);
    }
    let paths = proposal::changed_paths(store.common_dir(), against, now)?;
    Ok(Some(Unproposed { tree: now.to_string(), against: against_name, paths }))
}

/// Removes an agent's worktree (after the caller decided nothing would be lost, or was told to
/// discard it).
pub fn remove(store: &Store, w: &AgentWorktree) -> Result<(), PoolError> {
    let path = w.path.to_str().ok_or_else(|| PoolError::PathNotUtf8 { path: w.path.clone() })?;
    git(store.common_dir(), &["worktree", "remove", "--force", path])?;
    Ok(())
}

/// Whether `id` is a full object id.
pub fn parse_id(text: &str) -> Option<ObjectId> {
    ObjectId::from_hex(text.trim().as_bytes()).ok()
}
