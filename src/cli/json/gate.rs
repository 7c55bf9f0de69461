//! `git mas gate --json`.

use git_mas::attention::gate::Verdict;
use serde::{Deserialize, Serialize};

/// The gate's verdict on a change, and what the change touches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateOut {
    /// The calling agent (empty when it has no identity).
    pub agent: String,
    /// What the change touches (empty when it could not be read).
    pub touched: Vec<TouchedOut>,
    /// The verdict: `{"verdict": "allow"|"block"|"fail_closed", …}`.
    pub verdict: Verdict,
}

/// One file the change touches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TouchedOut {
    /// Changed line ranges (1-based, inclusive, old side), where they were needed and known.
    pub lines: Option<Vec<[u32; 2]>>,
    /// Repo-relative path.
    pub path: String,
}
