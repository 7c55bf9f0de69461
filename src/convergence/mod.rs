//! The convergence report: why a run ended, as a pure function of its state (seed 001).
//!
//! [`evaluate`] takes a [`RunState`] — plain data: the tally, the run's outcome, recorded blocked
//! landings, dependency problems found in the pool, budget and rounds — and returns a
//! [`ConvergenceReport`]. It does no I/O; the caller gathers the state and stores the report.
//!
//! **Status and termination reason** follow the seed's precedence, first match wins (§3), mapped
//! onto a development run, where "work pending" means the run has neither landed nor been
//! aborted:
//!
//! 0. an abort the driver recorded as `max-rounds-reached` or `budget-exhausted` → `failed` + that
//!    reason, whatever else holds (hard conflicts left unresolved are listed as risks): the
//!    reason names the driver's halt, one name for one ending ([`Ending`], whose docs map every
//!    ending to its halt, status, reason and phase);
//! 1. not ended, no blocked landing in force → `running`, no reason;
//! 2. a blocking risk — a landing attempt blocked on the current proposals and main, an abort
//!    given as a risk, or an abort that leaves a hard conflict unresolved → `blocked` +
//!    `risk_blocked`;
//! 3. (the seed's "only blocked tasks" rule has no counterpart: a run has no sub-task states);
//! 4. aborted → `failed` + `budget_exhausted`, else `max_rounds_reached`, else `tasks_completed`;
//! 5. landed and the budget was exhausted → `converged` + `budget_exhausted`;
//! 6. landed and the rounds reached their limit → `converged` + `max_rounds_reached`;
//! 7. landed and the quality gate was met → `converged` + `quality_reached`;
//! 8. landed otherwise → `converged` + `tasks_completed`, the honest fallback.
//!
//! Every terminal status carries exactly one reason; `running` carries none.
//!
//! **Missing signals are never filled in.** No check ever ran on the content → quality is
//! unknown (`pass_rate` and `reached` are null), never 0 or 100, and never `quality_reached`. No
//! budget → `exhausted` is null ("no budget" is not "enough budget"). No proposals → the consensus
//! score is null.
//!
//! **Conflicts** (§2.2), detected from the state:
//!
//! - `test_failure`: an endorser's latest check of a proposal's content failed (or a landing's
//!   check of a merged tree failed);
//! - `review_disagreement`: an endorser rejected a proposal's content;
//! - `artifact_mismatch`: proposals that must land together — an aggregate's members, or the
//!   winner and what main gained since the base — change the same paths differently (recorded
//!   when a landing is blocked by a merge conflict). Competing alternatives in a best-of-N run are
//!   not a mismatch: only one of them lands;
//! - `dependency_inconsistency`: an artifact in the pool does not rest on what the run recorded
//!   (a proposal ref whose content is not its latest proposal event's, or whose parent is not the
//!   run's base).
//!
//! test_failure, artifact_mismatch and dependency_inconsistency are hard (they block landing the
//! content they touch); review_disagreement is soft. **Resolution** (§3.2, conservative): a
//! conflict on content its proposer has since replaced is resolved ("voided by a re-proposal" —
//! the team acted on it); once the run lands, conflicts on proposals that did not land are
//! resolved by selection, a rejection of a winner is resolved as outvoted by the quorum, and a
//! blocked landing the landing superseded is resolved; a blocked landing whose inputs (main's tip,
//! the members' trees) have changed since is resolved as superseded. Nothing else is resolved
//! automatically.
//!
//! **Consensus score** (§3.1) = 100 × proposals implicated in no conflict (resolved or not) /
//! proposals.

mod changes;
mod ending;

pub use ending::Ending;

pub use changes::{Denied, OutsidePath, ProposalChanges, SliceRefusal, proposal_changes, slice_refusals};

use crate::engines::Tally;
use crate::engines::development::{Judgement, VerdictView};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Where a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Work is still going on.
    Running,
    /// The run landed.
    Converged,
    /// The run was stopped without landing.
    Failed,
    /// A risk or an unresolved hard conflict stops the run.
    Blocked,
}

/// Why a run ended: exactly one for every terminal status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TerminationReason {
    /// The quality gate was met: every check of the landed content passed.
    QualityReached,
    /// The run's budget was used up.
    BudgetExhausted,
    /// The rounds reached their limit.
    MaxRoundsReached,
    /// A blocking risk or an unresolved hard conflict.
    RiskBlocked,
    /// The honest fallback: the work was done, and no stronger signal says more.
    TasksCompleted,
}

impl TerminationReason {
    /// The snake_case name (as in trailers and JSON).
    pub fn name(self) -> &'static str {
        match self {
            TerminationReason::QualityReached => "quality_reached",
            TerminationReason::BudgetExhausted => "budget_exhausted",
            TerminationReason::MaxRoundsReached => "max_rounds_reached",
            TerminationReason::RiskBlocked => "risk_blocked",
            TerminationReason::TasksCompleted => "tasks_completed",
        }
    }
}

impl Status {
    /// The snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Converged => "converged",
            Status::Failed => "failed",
            Status::Blocked => "blocked",
        }
    }
}

/// The four conflict types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConflictType {
    /// Artifacts that must land together disagree on a path.
    ArtifactMismatch,
    /// A check failed.
    TestFailure,
    /// A reviewer rejected a proposal.
    ReviewDisagreement,
    /// An artifact does not rest on what the run recorded.
    DependencyInconsistency,
}

impl ConflictType {
    /// Whether the type blocks landing the content it touches.
    pub fn is_hard(self) -> bool {
        !matches!(self, ConflictType::ReviewDisagreement)
    }

    /// The snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            ConflictType::ArtifactMismatch => "artifact_mismatch",
            ConflictType::TestFailure => "test_failure",
            ConflictType::ReviewDisagreement => "review_disagreement",
            ConflictType::DependencyInconsistency => "dependency_inconsistency",
        }
    }
}

/// One detected conflict, with how it was resolved or why it is not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conflict {
    /// Its type.
    #[serde(rename = "type")]
    pub kind: ConflictType,
    /// The proposals it implicates (their agents).
    pub proposals: Vec<String>,
    /// Everyone involved (proposers, endorsers, `main`).
    pub parties: Vec<String>,
    /// The content concerned, when one tree is.
    pub tree: Option<String>,
    /// Paths involved (merge conflicts).
    pub paths: Vec<String>,
    /// What happened.
    pub detail: String,
    /// Whether it is resolved.
    pub resolved: bool,
    /// How it was resolved, or why it is not.
    pub resolution: String,
}

/// A conflict as a blocked landing records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedConflict {
    /// Its type (`artifact_mismatch`, or `test_failure` of a merged tree).
    #[serde(rename = "type")]
    pub kind: ConflictType,
    /// The proposals it implicates.
    pub proposals: Vec<String>,
    /// Everyone involved (proposers, `main`, `merged`).
    pub parties: Vec<String>,
    /// Paths involved.
    #[serde(default)]
    pub paths: Vec<String>,
    /// What happened.
    pub detail: String,
}

/// A recorded landing attempt that was blocked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockedAttempt {
    /// Its conflicts.
    pub conflicts: Vec<RecordedConflict>,
    /// Whether main's tip and the members' trees are still what the attempt saw.
    pub current: bool,
}

/// A proposal whose artifact does not match the run's record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DependencyIssue {
    /// The proposer.
    pub agent: String,
    /// What is wrong.
    pub detail: String,
}

/// How the run ended, if it did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// Neither landed nor aborted.
    Open,
    /// Landed.
    Landed {
        /// The proposals that landed, in merge order.
        winners: Vec<String>,
        /// The commit on main.
        commit: String,
        /// The result of a check of the landed tree itself, when it was a merge and one ran.
        merged_check_passed: Option<bool>,
        /// How many tests still fail on the landed tree, when a check's report said.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        still_failing: Option<u64>,
    },
    /// Aborted.
    Aborted {
        /// Why.
        reason: String,
        /// Whether the reason is a blocking risk.
        risk: bool,
        /// The driver's halt, when a driver aborted the run (`max-rounds-reached`, …).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        halt: Option<String>,
    },
}

/// Everything the report is computed from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunState {
    /// The run.
    pub run: String,
    /// The tally (proposals, verdicts, quorum, leader).
    pub tally: Tally,
    /// How the run ended.
    pub outcome: Outcome,
    /// Blocked landing attempts, oldest first.
    pub blocked: Vec<BlockedAttempt>,
    /// Artifacts that do not match the record.
    pub dependency_issues: Vec<DependencyIssue>,
    /// The budget, in milliseconds.
    pub budget_ms: Option<u64>,
    /// Time used: from the start to the end (or to now, while running).
    pub used_ms: u64,
    /// The pass rate the quality gate needs (1.0: every check).
    pub quality_threshold: f64,
    /// An aggregate run's slices, in merge order: (agent, targets). Empty for best-of-N.
    pub slices: Vec<(String, Vec<String>)>,
    /// The slices whose agent abstained (its slice needs no change), with why.
    pub abstained: Vec<(String, String)>,
    /// The rounds a driver held, when it recorded them: the rounds used are the more of these
    /// and the highest proposal round (agents that never proposed still held their rounds).
    pub rounds_held: Option<u64>,
    /// The paths each current proposal changed against the run's base: (agent, paths), in the
    /// tally's order. A proposal whose tree could not be read is left out.
    pub changed: Vec<(String, Vec<String>)>,
    /// The gate's refusals of slice files while the run was open (aggregate runs).
    pub slice_refusals: Vec<SliceRefusal>,
    /// An aggregate run's reviewers: agents the plan gave no slice (fewer groups of concerned
    /// files than agents), who endorse the others' slices: (agent, why).
    pub reviewers: Vec<(String, String)>,
}

/// Where one slice of an aggregate run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SliceStatus {
    /// Its proposal landed.
    Landed,
    /// Its proposal has its quorum.
    AtQuorum,
    /// Its proposal was judged against (a failed check or a rejection).
    JudgedAgainst,
    /// Its proposal waits for endorsements.
    Waiting,
    /// No proposal.
    Missing,
    /// Its agent abstained: the slice needs no change (`git mas propose --abstain`). Nothing to
    /// merge, nothing to wait for.
    Abstained,
    /// Its proposal landed or has its quorum, but changed only files outside its slice: its
    /// agent is not credited with the slice ([`ProposalChanges::slice_untouched`]).
    Untouched,
}

impl SliceStatus {
    /// The status as the report spells it.
    pub fn name(self) -> &'static str {
        match self {
            SliceStatus::Landed => "landed",
            SliceStatus::AtQuorum => "at_quorum",
            SliceStatus::JudgedAgainst => "judged_against",
            SliceStatus::Waiting => "waiting",
            SliceStatus::Missing => "missing",
            SliceStatus::Abstained => "abstained",
            SliceStatus::Untouched => "untouched",
        }
    }
}

/// One slice in the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SliceReport {
    /// The agent.
    pub agent: String,
    /// Its targets.
    pub targets: Vec<String>,
    /// Where it stands.
    pub status: SliceStatus,
    /// Its proposal's valid endorsers.
    pub endorsers: Vec<String>,
    /// Implicated in a conflict of the report.
    pub conflicted: bool,
}

/// An aggregate run's agent with no slice of its own: it reviews (endorses the slices).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewerReport {
    /// The agent.
    pub agent: String,
    /// Why it has no slice.
    pub why: String,
    /// Whose slices it endorsed (valid endorsements of current proposals).
    pub endorsed: Vec<String>,
}

/// The budget's state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BudgetState {
    /// The budget (null: none was set).
    pub limit_ms: Option<u64>,
    /// Time used.
    pub used_ms: u64,
    /// Whether it is used up (null: no budget).
    pub exhausted: Option<bool>,
}

/// The rounds' state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundsState {
    /// The highest round any agent reached.
    pub used: u64,
    /// The limit (null: none).
    pub max: Option<u64>,
    /// Whether the limit was reached (null: no limit).
    pub reached: Option<bool>,
}

/// The quality gate's state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QualityState {
    /// What the signal is measured on.
    pub basis: String,
    /// Checks that passed.
    pub passed: u64,
    /// Checks that ran.
    pub total: u64,
    /// passed / total (null: no check ran — unknown, not 0).
    pub pass_rate: Option<f64>,
    /// The pass rate needed.
    pub threshold: f64,
    /// Whether it was met (null: unknown).
    pub reached: Option<bool>,
}

/// The report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConvergenceReport {
    /// The run.
    pub run: String,
    /// Its status.
    pub status: Status,
    /// Why it ended (null while running).
    pub termination_reason: Option<TerminationReason>,
    /// How it ended, or that it has not: the one name every form uses ([`Ending`]; absent in
    /// reports stored before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ending: Option<Ending>,
    /// 100 × unimplicated proposals / proposals (null: no proposals).
    pub consensus_score: Option<f64>,
    /// Proposals counted for the score.
    pub proposals: u64,
    /// Of those, implicated in a conflict.
    pub implicated: u64,
    /// The proposals that landed, or the leader while the run is open.
    pub winners: Vec<String>,
    /// Every detected conflict.
    pub conflicts: Vec<Conflict>,
    /// What stops the run, in words (blocking risks and unresolved hard conflicts).
    pub unresolved_risks: Vec<String>,
    /// The budget.
    pub budget_state: BudgetState,
    /// The rounds.
    pub rounds_state: RoundsState,
    /// The quality gate.
    pub quality_state: QualityState,
    /// An aggregate run's slices, each with where it stands (absent for best-of-N).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slices: Vec<SliceReport>,
    /// What each current proposal changed against the run's base, and, in an aggregate run,
    /// which of those paths lie outside its slice (absent in reports stored before it was kept).
    #[serde(default)]
    pub changes: Vec<ProposalChanges>,
    /// The gate's refusals of an agent's edits of a file in another agent's slice, while the run
    /// was open (aggregate runs; read from this machine's denial log).
    #[serde(default)]
    pub slice_refusals: Vec<SliceRefusal>,
    /// An aggregate run's reviewers: the agents its plan gave no slice, who endorse the others'
    /// (absent when every agent held a slice).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reviewers: Vec<ReviewerReport>,
    /// Whether the check passed on the merged tree that landed (absent when no merged tree was
    /// checked: a proposal landed as endorsed, or the run did not land).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_check_passed: Option<bool>,
    /// A partial landing: how many tests still fail on what landed (it improved on main, fixing
    /// at least one test and breaking none, without passing). Absent when everything passed, when
    /// no check's report said, or when the run did not land.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub still_failing: Option<u64>,
}

impl ConvergenceReport {
    /// The conflicts that are resolved.
    pub fn resolved(&self) -> impl Iterator<Item = &Conflict> {
        self.conflicts.iter().filter(|c| c.resolved)
    }
}

fn verdict_conflict(proposer: &str, v: &VerdictView) -> Option<(ConflictType, String)> {
    match &v.judgement {
        Judgement::Failed { command, exit_status, delta, .. } => Some((
            ConflictType::TestFailure,
            format!(
                "{}'s check `{command}` of {proposer}'s proposal {}{}",
                v.endorser,
                crate::runtime::exit::exited(*exit_status),
                delta.as_ref().and_then(|d| d.shortfall()).map(|why| format!(": {why}")).unwrap_or_default()
            ),
        )),
        Judgement::Rejected { reason } => {
            Some((ConflictType::ReviewDisagreement, format!("{} rejected {proposer}'s proposal: {reason}", v.endorser)))
        }
        _ => None,
    }
}

/// How the run stands, as the resolution texts speak of it.
struct Standing<'a> {
    /// Whether the run landed.
    landed: bool,
    /// The run's state in words: "open", "the run was aborted" or "landed".
    note: &'static str,
    /// The proposals that landed, or the leader while the run is open.
    winners: &'a [String],
}

impl Standing<'_> {
    fn not_landed(&self) -> String {
        format!("not landed: the team landed {}", self.winners.join(", "))
    }
}

/// The proposals that landed, or the leader while the run is open.
fn winners_of(state: &RunState) -> Vec<String> {
    match &state.outcome {
        Outcome::Landed { winners, .. } => winners.clone(),
        _ => state.tally.leader.iter().cloned().collect(),
    }
}

/// Whether a conflict found by a verdict on a proposal's current content is resolved, and how or
/// why not.
fn verdict_resolution(
    standing: &Standing<'_>,
    kind: ConflictType,
    proposer: &str,
    endorser: &str,
    quorum: u32,
) -> (bool, String) {
    let is_winner = standing.winners.iter().any(|w| w == proposer);
    let note = standing.note;
    match (standing.landed, is_winner, kind) {
        (true, false, _) => (true, standing.not_landed()),
        (true, true, ConflictType::ReviewDisagreement) => {
            (true, format!("outvoted: {proposer}'s proposal reached the quorum of {quorum}"))
        }
        (true, true, _) => (false, "found on content that landed".to_string()),
        (false, _, ConflictType::TestFailure) => {
            (false, format!("{note}: needs a re-proposal by {proposer} or a passing re-check by {endorser}"))
        }
        (false, _, _) => (false, format!("{note}: {proposer} has not re-proposed since")),
    }
}

/// Conflicts from the verdicts on the proposals' current content.
fn current_verdict_conflicts(tally: &Tally, standing: &Standing<'_>) -> Vec<Conflict> {
    let mut conflicts = Vec::new();
    for p in &tally.proposals {
        for v in &p.verdicts {
            let Some((kind, detail)) = verdict_conflict(&p.agent, v) else { continue };
            let (resolved, resolution) = verdict_resolution(standing, kind, &p.agent, &v.endorser, tally.quorum);
            conflicts.push(Conflict {
                kind,
                proposals: vec![p.agent.clone()],
                parties: vec![p.agent.clone(), v.endorser.clone()],
                tree: Some(v.tree.clone()),
                paths: Vec::new(),
                detail,
                resolved,
                resolution,
            });
        }
    }
    conflicts
}

/// Conflicts from verdicts on content its proposer has since replaced: all resolved.
fn voided_verdict_conflicts(tally: &Tally) -> Vec<Conflict> {
    tally
        .voided
        .iter()
        .filter_map(|voided| {
            let (kind, detail) = verdict_conflict(&voided.proposer, &voided.verdict)?;
            Some(Conflict {
                kind,
                proposals: vec![voided.proposer.clone()],
                parties: vec![voided.proposer.clone(), voided.verdict.endorser.clone()],
                tree: Some(voided.verdict.tree.clone()),
                paths: Vec::new(),
                detail,
                resolved: true,
                resolution: format!("voided: {} re-proposed changed content", voided.proposer),
            })
        })
        .collect()
}

/// Whether a conflict a blocked landing recorded is resolved, and how or why not.
fn blocked_resolution(outcome: &Outcome, current: bool, standing: &Standing<'_>) -> (bool, String) {
    match (outcome, current) {
        (Outcome::Landed { commit, .. }, _) => {
            (true, format!("superseded: the run landed {} as {commit}", standing.winners.join(", ")))
        }
        (_, false) => (true, "superseded: the proposals or main changed since the attempt".to_string()),
        (_, true) => (false, format!("{}: blocks the landing until a proposal or main changes", standing.note)),
    }
}

/// Conflicts recorded by blocked landings.
fn blocked_landing_conflicts(state: &RunState, standing: &Standing<'_>) -> Vec<Conflict> {
    let mut conflicts = Vec::new();
    for attempt in &state.blocked {
        for recorded in &attempt.conflicts {
            let (resolved, resolution) = blocked_resolution(&state.outcome, attempt.current, standing);
            conflicts.push(Conflict {
                kind: recorded.kind,
                proposals: recorded.proposals.clone(),
                parties: recorded.parties.clone(),
                tree: None,
                paths: recorded.paths.clone(),
                detail: recorded.detail.clone(),
                resolved,
                resolution,
            });
        }
    }
    conflicts
}

/// Conflicts from artifacts that do not match the run's record.
fn dependency_conflicts(issues: &[DependencyIssue], standing: &Standing<'_>) -> Vec<Conflict> {
    issues
        .iter()
        .map(|issue| {
            let (resolved, resolution) = if standing.landed && !standing.winners.contains(&issue.agent) {
                (true, standing.not_landed())
            } else {
                (false, format!("{}: {} must re-propose", standing.note, issue.agent))
            };
            Conflict {
                kind: ConflictType::DependencyInconsistency,
                proposals: vec![issue.agent.clone()],
                parties: vec![issue.agent.clone()],
                tree: None,
                paths: Vec::new(),
                detail: issue.detail.clone(),
                resolved,
                resolution,
            }
        })
        .collect()
}

/// The quality gate, measured on the winners' checks (and the merged tree's, once landed; an
/// aggregate landing's merged whole alone, its parts being parts); with
/// no winner, on every proposal's checks (so that checks that ran and failed are never reported
/// as no check at all), and never reached.
fn quality_state(state: &RunState, winners: &[String], changes: &[ProposalChanges]) -> QualityState {
    let (mut passed, mut total) = (0u64, 0u64);
    let everyone: Vec<String>;
    let measured: &[String] = if winners.is_empty() {
        everyone = state.tally.proposals.iter().map(|p| p.agent.clone()).collect();
        &everyone
    } else {
        winners
    };
    // The merged whole of an aggregate landing was checked as one tree: that check is the
    // landed content's, and its parts' own checks (each a part, expected to fail the whole suite
    // alone) say nothing more about it.
    let whole = match &state.outcome {
        Outcome::Landed { merged_check_passed: Some(ok), .. } => Some(*ok),
        _ => None,
    };
    match whole {
        Some(ok) if !state.slices.is_empty() => {
            total = 1;
            passed = u64::from(ok);
        }
        _ => {
            for agent in measured {
                if let Some(p) = state.tally.proposal(agent) {
                    let (a, b) = p.checks();
                    passed += a;
                    total += b;
                }
            }
            if let Some(ok) = whole {
                total += 1;
                passed += u64::from(ok);
            }
        }
    }
    let pass_rate = (total > 0).then(|| passed as f64 / total as f64);
    // A landing that leaves a slice out did not reach the team's goal, whatever its checks say.
    let abstained = |a: &str| state.abstained.iter().any(|(x, _)| x == a);
    let missing: Vec<&str> = state
        .slices
        .iter()
        .map(|(a, _)| a.as_str())
        .filter(|a| (!winners.iter().any(|w| w == a) || untouched(changes, a)) && !abstained(a))
        .collect();
    let basis = match (&state.outcome, winners.is_empty()) {
        (Outcome::Landed { .. }, _) if whole.is_some() && !state.slices.is_empty() => {
            format!("the check of the merged whole that landed ({})", winners.join(", "))
        }
        (Outcome::Landed { .. }, _) => format!("checks of the landed content ({})", winners.join(", ")),
        (_, false) => format!("checks of the leading proposal ({})", winners.join(", ")),
        (_, true) if measured.is_empty() => "no proposal yet".to_string(),
        (_, true) => format!("checks of every proposal, none leading ({})", measured.join(", ")),
    };
    let basis = if state.slices.is_empty() || missing.is_empty() {
        basis
    } else {
        format!("{basis}; slices not in it: {}", missing.join(", "))
    };
    QualityState {
        basis,
        passed,
        total,
        pass_rate,
        threshold: state.quality_threshold,
        reached: pass_rate.map(|r| !winners.is_empty() && r >= state.quality_threshold && missing.is_empty()),
    }
}

/// Where each slice of an aggregate run stands.
fn slice_reports(state: &RunState, conflicts: &[Conflict], changes: &[ProposalChanges]) -> Vec<SliceReport> {
    let landed = match &state.outcome {
        Outcome::Landed { winners, .. } => Some(winners),
        _ => None,
    };
    state
        .slices
        .iter()
        .map(|(agent, targets)| {
            let p = state.tally.proposal(agent);
            // A slice a landing left out says why: judged against, or still waiting; "missing"
            // only when it was never proposed.
            let abstained = state.abstained.iter().any(|(a, _)| a == agent);
            let status = match (landed, p) {
                // Landed or at quorum without a change in the slice: not credited with it.
                (Some(w), _) if w.contains(agent) && untouched(changes, agent) => SliceStatus::Untouched,
                (Some(w), _) if w.contains(agent) => SliceStatus::Landed,
                (_, Some(p)) if p.at_quorum && untouched(changes, agent) => SliceStatus::Untouched,
                _ if abstained => SliceStatus::Abstained,
                (_, None) => SliceStatus::Missing,
                (_, Some(p)) if p.at_quorum => SliceStatus::AtQuorum,
                (_, Some(p)) if p.failures().next().is_some() || p.rejections().next().is_some() => {
                    SliceStatus::JudgedAgainst
                }
                (_, Some(_)) => SliceStatus::Waiting,
            };
            SliceReport {
                agent: agent.clone(),
                targets: targets.clone(),
                status,
                endorsers: p.map(|p| p.endorsers.clone()).unwrap_or_default(),
                conflicted: conflicts.iter().any(|c| c.proposals.contains(agent)),
            }
        })
        .collect()
}

/// Whether `agent`'s proposal changed only files outside its slice.
fn untouched(changes: &[ProposalChanges], agent: &str) -> bool {
    changes.iter().any(|c| c.agent == agent && c.slice_untouched)
}

/// What stops the run, in words: blocked landings in force, a risk abort, and unresolved hard
/// conflicts once aborted.
fn unresolved_risks(state: &RunState, blocked_now: bool, conflicts: &[Conflict]) -> Vec<String> {
    let landed = matches!(state.outcome, Outcome::Landed { .. });
    fn push_once(risks: &mut Vec<String>, line: String) {
        if !risks.contains(&line) {
            risks.push(line);
        }
    }
    let mut risks: Vec<String> = Vec::new();
    for attempt in state.blocked.iter().filter(|b| b.current && !landed) {
        for recorded in &attempt.conflicts {
            push_once(&mut risks, format!("{}: {}", recorded.kind.name(), recorded.detail));
        }
    }
    if blocked_now && risks.is_empty() {
        risks.push("a landing attempt is blocked".into());
    }
    if let Outcome::Aborted { reason, risk: true, .. } = &state.outcome {
        risks.push(format!("aborted as a risk: {reason}"));
    }
    if let Outcome::Aborted { .. } = &state.outcome {
        for c in conflicts.iter().filter(|c| !c.resolved && c.kind.is_hard()) {
            push_once(&mut risks, format!("{}: {}", c.kind.name(), c.detail));
        }
    }
    risks
}

/// The signals the termination function reads, each already decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Signals {
    /// A blocked landing attempt is in force.
    blocked_now: bool,
    /// Something stops the run (see [`unresolved_risks`]).
    risks: bool,
    /// The budget is known to be used up.
    budget_out: bool,
    /// The rounds are known to have reached their limit.
    rounds_out: bool,
    /// The quality gate is known to be met.
    quality_reached: bool,
}

/// The termination function: status and reason by the seed's precedence, first match wins (see
/// the module docs).
fn terminate(outcome: &Outcome, s: Signals) -> (Status, Option<TerminationReason>) {
    let ended = |converged: bool| {
        if s.budget_out {
            TerminationReason::BudgetExhausted
        } else if s.rounds_out {
            TerminationReason::MaxRoundsReached
        } else if converged && s.quality_reached {
            TerminationReason::QualityReached
        } else {
            TerminationReason::TasksCompleted
        }
    };
    match outcome {
        Outcome::Open if !s.blocked_now => (Status::Running, None),
        _ if s.risks => (Status::Blocked, Some(TerminationReason::RiskBlocked)),
        Outcome::Open => (Status::Running, None),
        Outcome::Aborted { .. } => (Status::Failed, Some(ended(false))),
        Outcome::Landed { .. } => (Status::Converged, Some(ended(true))),
    }
}

/// The consensus score, the proposals counted and those implicated in a conflict.
fn consensus(tally: &Tally, conflicts: &[Conflict]) -> (Option<f64>, u64, u64) {
    let all: BTreeSet<&str> = tally.proposals.iter().map(|p| p.agent.as_str()).collect();
    let implicated: BTreeSet<&str> =
        conflicts.iter().flat_map(|c| c.proposals.iter().map(String::as_str)).filter(|a| all.contains(a)).collect();
    let n = all.len() as u64;
    let k = implicated.len() as u64;
    ((n > 0).then(|| 100.0 * (n - k) as f64 / n as f64), n, k)
}

/// Computes the report (pure).
pub fn evaluate(state: &RunState) -> ConvergenceReport {
    let tally = &state.tally;
    let winners = winners_of(state);
    let landed = matches!(state.outcome, Outcome::Landed { .. });
    let note = match &state.outcome {
        Outcome::Open => "open",
        Outcome::Aborted { .. } => "the run was aborted",
        Outcome::Landed { .. } => "landed",
    };
    let standing = Standing { landed, note, winners: &winners };

    let mut conflicts = current_verdict_conflicts(tally, &standing);
    conflicts.extend(voided_verdict_conflicts(tally));
    conflicts.extend(blocked_landing_conflicts(state, &standing));
    conflicts.extend(dependency_conflicts(&state.dependency_issues, &standing));

    let budget_state = BudgetState {
        limit_ms: state.budget_ms,
        used_ms: state.used_ms,
        exhausted: state.budget_ms.map(|limit| state.used_ms >= limit),
    };
    let used = tally.rounds.max(state.rounds_held.unwrap_or(0));
    let rounds_state = RoundsState { used, max: tally.max_rounds, reached: tally.max_rounds.map(|max| used >= max) };
    let changes = proposal_changes(&state.changed, &state.slices);
    let quality_state = quality_state(state, &winners, &changes);

    let blocked_now = !landed && state.blocked.iter().any(|b| b.current);
    let unresolved_risks = unresolved_risks(state, blocked_now, &conflicts);
    let ending = match &state.outcome {
        Outcome::Open if blocked_now => Ending::LandBlocked,
        Outcome::Open => Ending::Open,
        Outcome::Landed { .. } => Ending::Landed,
        Outcome::Aborted { halt, risk, .. } => Ending::of_abort(halt.as_deref(), *risk),
    };
    let (status, reason) = match ending {
        // The driver's halt is the reason (rule 0 of the module docs).
        Ending::MaxRoundsReached => (Status::Failed, Some(TerminationReason::MaxRoundsReached)),
        Ending::BudgetExhausted => (Status::Failed, Some(TerminationReason::BudgetExhausted)),
        _ => terminate(
            &state.outcome,
            Signals {
                blocked_now,
                risks: !unresolved_risks.is_empty(),
                budget_out: budget_state.exhausted == Some(true),
                rounds_out: rounds_state.reached == Some(true),
                quality_reached: quality_state.reached == Some(true),
            },
        ),
    };
    let (consensus_score, proposals, implicated) = consensus(tally, &conflicts);
    let slices = slice_reports(state, &conflicts, &changes);
    let reviewers = reviewer_reports(state);
    let merged_check_passed = match &state.outcome {
        Outcome::Landed { merged_check_passed, .. } => *merged_check_passed,
        _ => None,
    };
    let still_failing = match &state.outcome {
        Outcome::Landed { still_failing: Some(n), .. } if *n > 0 => Some(*n),
        _ => None,
    };

    ConvergenceReport {
        run: state.run.clone(),
        status,
        termination_reason: reason,
        ending: Some(ending),
        consensus_score,
        proposals,
        implicated,
        winners,
        conflicts,
        unresolved_risks,
        budget_state,
        rounds_state,
        quality_state,
        slices,
        changes,
        slice_refusals: state.slice_refusals.clone(),
        reviewers,
        merged_check_passed,
        still_failing,
    }
}

/// What each reviewer (an agent dealt no slice) endorsed.
fn reviewer_reports(state: &RunState) -> Vec<ReviewerReport> {
    let tally = &state.tally;
    state
        .reviewers
        .iter()
        .map(|(agent, why)| ReviewerReport {
            agent: agent.clone(),
            why: why.clone(),
            endorsed: tally
                .proposals
                .iter()
                .filter(|p| p.endorsers.iter().any(|e| e == agent))
                .map(|p| p.agent.clone())
                .collect(),
        })
        .collect()
}

/// The type of a convergence event ([`events`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EventKind {
    /// The run's proposals, at the start.
    #[serde(rename = "convergence.started")]
    Started,
    /// A conflict found.
    #[serde(rename = "conflict.detected")]
    ConflictDetected,
    /// A conflict resolved, and how.
    #[serde(rename = "conflict.resolved")]
    ConflictResolved,
    /// The consensus score and the conflicts left.
    #[serde(rename = "consensus.updated")]
    ConsensusUpdated,
    /// The run converged.
    #[serde(rename = "convergence.reached")]
    Reached,
    /// The run failed or is blocked.
    #[serde(rename = "convergence.failed")]
    Failed,
}

impl EventKind {
    /// The type's name, as the event stream spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Started => "convergence.started",
            EventKind::ConflictDetected => "conflict.detected",
            EventKind::ConflictResolved => "conflict.resolved",
            EventKind::ConsensusUpdated => "consensus.updated",
            EventKind::Reached => "convergence.reached",
            EventKind::Failed => "convergence.failed",
        }
    }
}

/// The seed's six event types for a report, in order, as (type, payload) pairs: started, one
/// `conflict.detected` per conflict, one `conflict.resolved` per resolved conflict,
/// `consensus.updated`, then `convergence.reached` (converged) or `convergence.failed` (failed,
/// blocked); a running run gets no final event.
pub fn events(report: &ConvergenceReport) -> Vec<(EventKind, serde_json::Value)> {
    use serde_json::json;
    let mut out = vec![(EventKind::Started, json!({"run": report.run, "proposals": report.proposals}))];
    for c in &report.conflicts {
        out.push((EventKind::ConflictDetected, json!({"run": report.run, "conflict": c})));
    }
    for c in report.resolved() {
        out.push((EventKind::ConflictResolved, json!({"run": report.run, "conflict": c, "resolution": c.resolution})));
    }
    out.push((
        EventKind::ConsensusUpdated,
        json!({
            "run": report.run,
            "consensus_score": report.consensus_score,
            "conflicts": report.conflicts.len(),
            "unresolved": report.conflicts.iter().filter(|c| !c.resolved).count(),
        }),
    ));
    let end = json!({
        "run": report.run,
        "status": report.status,
        "termination_reason": report.termination_reason,
        "winners": report.winners,
    });
    match report.status {
        Status::Converged => out.push((EventKind::Reached, end)),
        Status::Failed | Status::Blocked => out.push((EventKind::Failed, end)),
        Status::Running => {}
    }
    out
}

#[cfg(test)]
mod tests;
