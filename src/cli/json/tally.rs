//! `git mas tally --json`.

use git_mas::convergence::Conflict;
use git_mas::devrun::Problem;
use git_mas::devrun::view::RefusedEvent;
use git_mas::engines::development::ProposalTally;
use git_mas::runtime::RuntimeCounters;
use serde::{Deserialize, Serialize};

/// Where a run stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TallyOut {
    /// The run.
    pub run: String,
    /// `open`, `aborted`, `landing` or `landed`.
    pub phase: super::PhaseName,
    /// Valid endorsements a proposal needs.
    pub quorum: u32,
    /// The highest round count.
    pub rounds: u64,
    /// The round limit.
    pub max_rounds: Option<u64>,
    /// Every proposal with its verdicts and valid endorsers, in agent order.
    pub proposals: Vec<ProposalTally>,
    /// The proposal with the most valid endorsements (ties: the smallest agent id).
    pub leader: Option<String>,
    /// Agents whose proposals are at quorum.
    pub at_quorum: Vec<String>,
    /// Whether the leader is at quorum.
    pub quorum_reached: bool,
    /// The conflicts the convergence report sees.
    pub conflicts: Vec<Conflict>,
    /// Events the engine refused (never counted).
    pub refused: Vec<RefusedEvent>,
    /// Records that did not verify (never counted).
    pub problems: Vec<Problem>,
    /// The runtime's outcome counters.
    pub counters: RuntimeCounters,
}
