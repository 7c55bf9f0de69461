//! `git mas land --json`.

use git_mas::convergence::ConvergenceReport;
use git_mas::ops::land::commit::LandPlan;
use serde::{Deserialize, Serialize};

/// A landing: blocked, would land (dry run), or landed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LandOut {
    /// The run.
    pub run: String,
    /// `blocked`, `would-land` or `landed`.
    pub status: LandStatus,
    /// What lands; absent when the landing was found recorded already (a retry).
    pub plan: Option<LandPlan>,
    /// The landing commit on main.
    pub commit: Option<String>,
    /// The termination reason in the commit's trailers.
    pub termination: Option<String>,
    /// The frame the commit names.
    pub frame: Option<String>,
    /// Checkouts of main brought to the landing.
    pub updated_worktrees: Vec<String>,
    /// The convergence report stored with the landing (not on a dry run).
    pub report: Option<ConvergenceReport>,
}

names! {
    /// What `land` did.
    pub enum LandStatus {
        /// Blocked: a merge conflict or a failing check of the merged tree.
        Blocked = "blocked",
        /// `--dry-run`: what would land.
        WouldLand = "would-land",
        /// Landed.
        Landed = "landed",
    }
}
