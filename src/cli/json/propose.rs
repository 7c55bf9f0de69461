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
    /// What it cannot land together with: other proposals of the run, and the run's branch where
    /// it moved since the base, with the files each changes differently (empty: none).
    #[serde(default)]
    pub clashes: Vec<ClashOut>,
}

/// A side the proposal cannot land together with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClashOut {
    /// `proposal` (another agent's) or `branch` (the run's branch, moved since the base).
    pub kind: String,
    /// The agent, or the branch.
    pub with: String,
    /// Its commit: the proposal's, or the branch's tip.
    pub commit: String,
    /// The files both change differently, sorted.
    pub paths: Vec<String>,
}
