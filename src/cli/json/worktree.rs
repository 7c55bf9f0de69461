//! `git mas worktree add|remove --json`.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// An agent's worktree of a run (`worktree add`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorktreeOut {
    /// The agent.
    pub agent: String,
    /// The run.
    pub run: String,
    /// Its directory.
    pub path: PathBuf,
}

/// What removing it discarded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiscardedOut {
    /// The worktree's content when it was removed.
    pub tree: String,
    /// What it was compared with: the agent's proposal, or the run's base.
    pub against: String,
    /// The paths that differed.
    pub paths: Vec<String>,
}

/// `worktree remove`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemovedOut {
    /// The worktree removed.
    pub removed: WorktreeOut,
    /// The unproposed changes it held (only with --force).
    pub discarded: Option<DiscardedOut>,
}
