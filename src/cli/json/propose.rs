//! `git mas propose --json`.

use serde::{Deserialize, Serialize};

/// The proposal just recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProposedOut {
    /// The run.
    pub run: String,
    /// The proposer.
    pub agent: String,
    /// The proposal's commit (its parent is the run's base).
    pub commit: String,
    /// Its tree: what endorsements bind to.
    pub tree: String,
    /// Which round of the proposer's this is.
    pub round: u64,
    /// The tree of the proposal it replaces, if any.
    pub previous_tree: Option<String>,
    /// Endorsements of the previous proposal that still count (identical content).
    pub endorsements_kept: Vec<String>,
    /// Endorsements of the previous proposal that no longer count (changed content).
    pub endorsements_voided: Vec<String>,
}
