//! `git mas doctor --json`.

use git_mas::doctor::chains::ChainRepair;
use git_mas::doctor::{Completed, Debris, Findings};
use serde::{Deserialize, Serialize};

/// What doctor found, removed and completed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DoctorOut {
    /// Locks, temporary files and half-finished operations, as found at the end.
    #[serde(flatten)]
    pub findings: Findings,
    /// Stale files and interrupted operations still present.
    pub problems: usize,
    /// Whether --fix ran.
    pub fixed: bool,
    /// What --fix removed.
    pub removed: Vec<Debris>,
    /// What --fix could not remove.
    pub failed: Vec<FailedRemoval>,
    /// Interrupted operations --fix completed.
    pub completed: Completed,
    /// Damaged chains --fix repaired (or failed to).
    #[serde(default)]
    pub repaired_chains: Vec<ChainRepair>,
}

/// A stale file that could not be removed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FailedRemoval {
    /// The file.
    #[serde(flatten)]
    pub debris: Debris,
    /// Why not.
    pub error: String,
}
