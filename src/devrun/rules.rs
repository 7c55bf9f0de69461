//! What a run allows before anything is written: who may propose and endorse, when a run refuses,
//! self-endorsement, round limits, the budget, and what an endorsement's verdict is.
//!
//! Every rule here is a pure function of values the caller has already read (the run, the engine's
//! round count, the clock), so each is tested as a table; the operations that write proposals and
//! endorsements (`ops::propose`, `ops::endorse`) ask them before they write. The records' own
//! checks (the engine refusing a self-endorsement or a round past the limit on replay) stay where
//! they are: these rules refuse early, with a message that says what to do, what the engine would
//! otherwise record and not count.

use super::{RunDef, RunError, RunMeta};
use crate::engines::development::{Judgement, ProposalTally};
use crate::runtime::SemanticPayload;
use thiserror::Error;

/// Why a proposal or an endorsement is refused before it is recorded.
#[derive(Debug, Error)]
pub enum Refusal {
    /// The run has ended (aborted or landed): what [`RunMeta::ensure_open`] says.
    #[error(transparent)]
    Ended(RunError),
    /// The caller is not on the run's roster.
    #[error("you ({agent}) are not on run {run}'s roster ({})", roster.join(", "))]
    CallerNotOnRoster {
        /// The caller.
        agent: String,
        /// The run.
        run: String,
        /// The run's roster.
        roster: Vec<String>,
    },
    /// An agent named in the command is not on the run's roster.
    #[error("'{agent}' is not on run {run}'s roster ({})", roster.join(", "))]
    NotOnRoster {
        /// The agent.
        agent: String,
        /// The run.
        run: String,
        /// The run's roster.
        roster: Vec<String>,
    },
    /// The run's wall-clock budget is spent.
    #[error("run {run}'s budget of {} is exhausted", humantime::format_duration(std::time::Duration::from_millis(*budget_ms)))]
    BudgetExhausted {
        /// The run.
        run: String,
        /// Its budget.
        budget_ms: u64,
        /// How much of it has passed.
        used_ms: u64,
    },
    /// The proposal would start a round past the run's limit.
    #[error("this would be your round {round} in run {run}, which allows {max}: your proposal stays as it is")]
    RoundLimit {
        /// The run.
        run: String,
        /// The round the proposal would be.
        round: u64,
        /// The run's limit.
        max: u64,
    },
    /// `--message` was given but is blank.
    #[error("the message is empty")]
    EmptyMessage,
    /// The caller endorses its own proposal and the repository does not allow it.
    #[error("you cannot endorse your own proposal: self-endorsement is off")]
    SelfEndorsement {
        /// The caller.
        agent: String,
    },
    /// A rejection without a reason.
    #[error("--reason is empty: say why you reject it")]
    EmptyReason,
    /// `--check` was given but is blank.
    #[error("--check is empty: give the command to run, or omit --check for the run's own")]
    EmptyCheck,
    /// No check command anywhere (flag, run, configuration).
    #[error("run {run} has no check command to endorse with")]
    NoCheck {
        /// The run.
        run: String,
    },
    /// The proposer has no proposal the engine accepted.
    #[error("{proposer} has no proposal in run {run}")]
    NoProposal {
        /// The proposer.
        proposer: String,
        /// The run.
        run: String,
    },
    /// A proposal in an aggregate run whose content is the run's base: a slice that changes
    /// nothing is not a proposal.
    #[error("your worktree holds run {run}'s base unchanged: a slice that changes nothing is not a proposal")]
    NothingToPropose {
        /// The run.
        run: String,
    },
    /// `--abstain` with changes in the worktree.
    #[error("you abstain, but your worktree changes {} path(s) from run {run}'s base: {}", paths.len(), paths.iter().take(5).cloned().collect::<Vec<_>>().join(", "))]
    AbstainWithChanges {
        /// The run.
        run: String,
        /// What the worktree changes.
        paths: Vec<String>,
    },
    /// `--abstain` in a run without slices.
    #[error(
        "run {run} is not an aggregate run: abstaining is a slice's answer (a best-of-N agent with nothing to propose proposes nothing)"
    )]
    AbstainWithoutSlices {
        /// The run.
        run: String,
    },
    /// An endorsement of an abstention.
    #[error("{proposer} abstained in run {run} (its slice needs no change): there is nothing to endorse")]
    Abstained {
        /// The abstaining agent.
        proposer: String,
        /// The run.
        run: String,
    },
    /// The proposal ref holds other content than the proposer's latest proposal event names.
    #[error(
        "{proposer}'s proposal ref does not hold the content its latest proposal event names (tree {}); it was changed outside `git mas propose`",
        tree.get(..12).unwrap_or(tree)
    )]
    ProposalRefChanged {
        /// The proposer.
        proposer: String,
        /// The tree the event names.
        tree: String,
        /// The tree the ref holds.
        found: String,
    },
}

/// Refuses when the run's budget is spent at `now_ms`.
pub fn ensure_budget(def: &RunDef, now_ms: u64) -> Result<(), Refusal> {
    let Some(budget_ms) = def.budget_ms else { return Ok(()) };
    let used_ms = now_ms.saturating_sub(def.created_at_ms);
    if used_ms >= budget_ms {
        return Err(Refusal::BudgetExhausted { run: def.id.clone(), budget_ms, used_ms });
    }
    Ok(())
}

fn ensure_open(meta: &RunMeta) -> Result<(), Refusal> {
    meta.ensure_open().map_err(Refusal::Ended)
}

/// Whether `agent` may propose in the run at `now_ms`: the run is open, `agent` is on its roster
/// and its budget is not spent.
pub fn may_propose(meta: &RunMeta, agent: &str, now_ms: u64) -> Result<(), Refusal> {
    ensure_open(meta)?;
    let def = &meta.def;
    if !def.has(agent) {
        return Err(Refusal::CallerNotOnRoster {
            agent: agent.into(),
            run: def.id.clone(),
            roster: def.roster.clone(),
        });
    }
    ensure_budget(def, now_ms)
}

/// Whether `agent` may work in the run (get a worktree for it): the run is open and `agent` is on
/// its roster.
pub fn may_work_in(meta: &RunMeta, agent: &str) -> Result<(), Refusal> {
    ensure_open(meta)?;
    let def = &meta.def;
    if !def.has(agent) {
        return Err(Refusal::NotOnRoster { agent: agent.into(), run: def.id.clone(), roster: def.roster.clone() });
    }
    Ok(())
}

/// Whether a proposal that would be the proposer's round `round` is within the run's limit.
pub fn ensure_round(def: &RunDef, round: u64) -> Result<(), Refusal> {
    match def.max_rounds {
        Some(max) if round > max => Err(Refusal::RoundLimit { run: def.id.clone(), round, max }),
        _ => Ok(()),
    }
}

/// The proposal's commit message: the one given (trimmed; blank is refused), else one that names
/// the proposer and the run's goal.
pub fn proposal_message(given: Option<&str>, agent: &str, def: &RunDef) -> Result<String, Refusal> {
    match given.map(str::trim) {
        Some("") => Err(Refusal::EmptyMessage),
        Some(m) => Ok(m.to_string()),
        None => Ok(format!("Proposal by {agent} for run {}\n\n{}", def.id, def.goal)),
    }
}

/// What a re-proposal does to the endorsements of the proposal it replaces.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Carried {
    /// The endorsements that still count (identical content).
    pub kept: Vec<String>,
    /// The endorsements that no longer count (changed content).
    pub voided: Vec<String>,
}

/// Identical content keeps the previous proposal's valid endorsements, changed content voids them.
pub fn carried_endorsements(previous: Option<&ProposalTally>, tree: &str) -> Carried {
    match previous {
        Some(p) if p.tree == tree => Carried { kept: p.endorsers.clone(), voided: Vec::new() },
        Some(p) => Carried { kept: Vec::new(), voided: p.endorsers.clone() },
        None => Carried::default(),
    }
}

/// Whether `endorser` may endorse `proposer`'s proposal at `now_ms`: the run is open, both are on
/// its roster, self-endorsement only when `allow_self`, and the budget is not spent — checked in
/// that order.
pub fn may_endorse(
    meta: &RunMeta,
    endorser: &str,
    proposer: &str,
    allow_self: bool,
    now_ms: u64,
) -> Result<(), Refusal> {
    ensure_open(meta)?;
    let def = &meta.def;
    for who in [endorser, proposer] {
        if !def.has(who) {
            return Err(Refusal::NotOnRoster { agent: who.into(), run: def.id.clone(), roster: def.roster.clone() });
        }
    }
    if endorser == proposer && !allow_self {
        return Err(Refusal::SelfEndorsement { agent: endorser.into() });
    }
    ensure_budget(def, now_ms)
}

/// How an endorsement judges, as the command was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndorseMode {
    /// Run a check command.
    Check {
        /// The command to run.
        command: String,
    },
    /// A review: accepted (no check run) or rejected, with its reason.
    Review {
        /// Whether it accepts.
        accept: bool,
        /// Why.
        reason: String,
    },
}

/// What `endorse` was asked: `--reject`, `--no-check`, `--reason`, `--check`.
#[derive(Debug, Clone, Copy, Default)]
pub struct EndorseAsk<'a> {
    /// `--reject`.
    pub reject: bool,
    /// `--no-check`.
    pub no_check: bool,
    /// `--reason`.
    pub reason: Option<&'a str>,
    /// `--check`.
    pub check: Option<&'a str>,
}

/// Decides how to endorse: a rejection needs a reason; a review alone accepts with the given note
/// (or a default); otherwise a blank `--check` is refused and the check is what `lookup` finds
/// (`pool::check::check_command`: `--check`, else the run's, else `git config mas.check`), asked
/// only when a check is to run.
pub fn endorse_mode(
    ask: EndorseAsk<'_>,
    def: &RunDef,
    lookup: impl FnOnce() -> Option<String>,
) -> Result<EndorseMode, Refusal> {
    if ask.reject {
        let reason = ask.reason.unwrap_or_default();
        if reason.trim().is_empty() {
            return Err(Refusal::EmptyReason);
        }
        return Ok(EndorseMode::Review { accept: false, reason: reason.into() });
    }
    if ask.no_check {
        let reason = ask.reason.unwrap_or("reviewed, no check run");
        return Ok(EndorseMode::Review { accept: true, reason: reason.into() });
    }
    if ask.check.is_some_and(|c| c.trim().is_empty()) {
        return Err(Refusal::EmptyCheck);
    }
    lookup().map(|command| EndorseMode::Check { command }).ok_or_else(|| Refusal::NoCheck { run: def.id.clone() })
}

/// The tree a proposal event names (`None`: the event is not a proposal of a tree).
pub fn proposed_tree(payload: &SemanticPayload) -> Option<&str> {
    match payload {
        SemanticPayload::ExternalBytes { digest, .. } => Some(digest),
        _ => None,
    }
}

/// Refuses an endorsement when the proposal ref holds another tree (`found`) than the proposal
/// event names (`tree`): the artifact was changed outside `git mas propose`.
pub fn ensure_artifact(proposer: &str, tree: &str, found: Option<&str>) -> Result<(), Refusal> {
    match found {
        Some(found) if found != tree => {
            Err(Refusal::ProposalRefChanged { proposer: proposer.into(), tree: tree.into(), found: found.into() })
        }
        _ => Ok(()),
    }
}

/// The epoch an endorsement of `proposer`'s proposal carries: the proposal's round, counted from 0.
pub fn endorsement_epoch(proposal: Option<&crate::engines::development::ProposalState>) -> u64 {
    proposal.map_or(0, |p| p.rounds.saturating_sub(1))
}

/// An endorsement's verdict as `endorse` reports it: the engine's judgement of its payload in
/// the run `def` (an aggregate run's proposals are parts of a whole).
pub fn verdict(def: &RunDef, payload: &SemanticPayload) -> Option<Judgement> {
    Judgement::of(payload, def.slices.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::devrun::{AbortPayload, Phase};
    use crate::runtime::PatternKind;

    fn def(budget_ms: Option<u64>, max_rounds: Option<u64>, check: Option<&str>) -> RunDef {
        RunDef {
            id: "r1".into(),
            goal: "fix it".into(),
            class: PatternKind::Development,
            roster: vec!["alice".into(), "bob".into()],
            quorum: 1,
            requested_quorum: None,
            branch: "main".into(),
            base: "0".repeat(40),
            max_rounds,
            budget_ms,
            check: check.map(Into::into),
            created_at_ms: 1_000,
            started_by: "alice".into(),
            slices: None,
            check_timeout_ms: None,
        }
    }

    fn meta(def: RunDef, phase: Phase) -> RunMeta {
        RunMeta { def, phase, blocked: Vec::new(), tip: "0".repeat(40), problems: Vec::new(), void_intents: Vec::new() }
    }

    fn aborted() -> Phase {
        Phase::Aborted {
            by: "bob".into(),
            abort: AbortPayload { reason: "no".into(), risk: false, rounds: None, halt: None, at_ms: 5 },
        }
    }

    fn name(r: Result<(), Refusal>) -> &'static str {
        match r {
            Ok(()) => "ok",
            Err(Refusal::Ended(RunError::Aborted { .. })) => "aborted",
            Err(Refusal::Ended(_)) => "landed",
            Err(Refusal::CallerNotOnRoster { .. }) => "caller-not-on-roster",
            Err(Refusal::NotOnRoster { .. }) => "not-on-roster",
            Err(Refusal::BudgetExhausted { .. }) => "budget",
            Err(Refusal::SelfEndorsement { .. }) => "self",
            Err(other) => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn the_budget_is_spent_from_its_last_millisecond_on() {
        let table = [
            (None, 1_000_000, true),
            (Some(500), 1_000, true),
            (Some(500), 1_499, true),
            (Some(500), 1_500, false),
            (Some(500), 9_999, false),
            // A clock before the run's start is no time used.
            (Some(500), 10, true),
        ];
        for (budget, now, ok) in table {
            let r = ensure_budget(&def(budget, None, None), now);
            assert_eq!(r.is_ok(), ok, "budget {budget:?} at {now}: {r:?}");
        }
        let err = ensure_budget(&def(Some(90_000), None, None), 100_000).unwrap_err();
        assert_eq!(err.to_string(), "run r1's budget of 1m 30s is exhausted");
    }

    #[test]
    fn who_may_propose() {
        let open = |budget| meta(def(budget, None, None), Phase::Open);
        let table = [
            (open(None), "alice", 2_000, "ok"),
            (open(None), "carol", 2_000, "caller-not-on-roster"),
            (open(Some(500)), "alice", 2_000, "budget"),
            // The run's end is said first, the roster before the budget.
            (meta(def(Some(500), None, None), aborted()), "carol", 2_000, "aborted"),
            (open(Some(500)), "carol", 2_000, "caller-not-on-roster"),
        ];
        for (m, agent, now, want) in table {
            assert_eq!(name(may_propose(&m, agent, now)), want, "{agent} at {now}");
        }
        let err = may_propose(&open(None), "carol", 0).unwrap_err();
        assert_eq!(err.to_string(), "you (carol) are not on run r1's roster (alice, bob)");
    }

    #[test]
    fn who_may_endorse() {
        let open = |budget| meta(def(budget, None, None), Phase::Open);
        let table = [
            (open(None), "bob", "alice", false, "ok"),
            (open(None), "alice", "alice", false, "self"),
            (open(None), "alice", "alice", true, "ok"),
            (open(None), "carol", "alice", false, "not-on-roster"),
            (open(None), "bob", "carol", false, "not-on-roster"),
            (open(Some(500)), "bob", "alice", false, "budget"),
            // Self-endorsement is refused before the budget is looked at.
            (open(Some(500)), "alice", "alice", false, "self"),
            (meta(def(None, None, None), aborted()), "alice", "alice", false, "aborted"),
        ];
        for (m, endorser, proposer, allow, want) in table {
            assert_eq!(name(may_endorse(&m, endorser, proposer, allow, 2_000)), want, "{endorser} → {proposer}");
        }
        let err = may_endorse(&open(None), "bob", "carol", false, 0).unwrap_err();
        assert_eq!(err.to_string(), "'carol' is not on run r1's roster (alice, bob)");
    }

    #[test]
    fn who_may_work_in_a_run() {
        let table = [
            (meta(def(Some(1), None, None), Phase::Open), "alice", "ok"),
            (meta(def(None, None, None), Phase::Open), "carol", "not-on-roster"),
            (meta(def(None, None, None), aborted()), "alice", "aborted"),
            (meta(def(None, None, None), aborted()), "carol", "aborted"),
        ];
        for (m, agent, want) in table {
            assert_eq!(name(may_work_in(&m, agent)), want, "{agent}");
        }
    }

    #[test]
    fn rounds_stop_at_the_limit() {
        let table =
            [(None, 99, true), (Some(2), 1, true), (Some(2), 2, true), (Some(2), 3, false), (Some(0), 1, false)];
        for (max, round, ok) in table {
            assert_eq!(ensure_round(&def(None, max, None), round).is_ok(), ok, "round {round} of {max:?}");
        }
        assert_eq!(
            ensure_round(&def(None, Some(2), None), 3).unwrap_err().to_string(),
            "this would be your round 3 in run r1, which allows 2: your proposal stays as it is"
        );
    }

    #[test]
    fn the_proposal_message() {
        let d = def(None, None, None);
        let table = [
            (Some("  mine  "), Ok("mine".to_string())),
            (Some("   "), Err("the message is empty".to_string())),
            (None, Ok("Proposal by alice for run r1\n\nfix it".to_string())),
        ];
        for (given, want) in table {
            assert_eq!(proposal_message(given, "alice", &d).map_err(|e| e.to_string()), want, "{given:?}");
        }
    }

    #[test]
    fn identical_content_keeps_endorsements_and_changed_content_voids_them() {
        let previous = ProposalTally {
            agent: "alice".into(),
            tree: "t1".into(),
            len: 1,
            rounds: 1,
            endorsers: vec!["bob".into()],
            verdicts: Vec::new(),
            at_quorum: true,
        };
        let table = [
            (Some(&previous), "t1", vec!["bob"], vec![]),
            (Some(&previous), "t2", vec![], vec!["bob"]),
            (None, "t1", vec![], vec![]),
        ];
        for (prev, tree, kept, voided) in table {
            let c = carried_endorsements(prev, tree);
            assert_eq!((c.kept, c.voided), (strings(&kept), strings(&voided)), "{tree}");
        }
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn how_an_endorsement_judges() {
        let review = |accept: bool, reason: &str| Ok(EndorseMode::Review { accept, reason: reason.into() });
        let check = |c: &str| Ok(EndorseMode::Check { command: c.into() });
        let ask = |reject, no_check, reason, check| EndorseAsk { reject, no_check, reason, check };
        let no_check = || Err(Refusal::NoCheck { run: "r1".into() });
        // (what was asked, what the lookup finds) → how to judge.
        let table = [
            (ask(true, false, Some("noise"), None), Some("make"), review(false, "noise")),
            (ask(true, false, Some(" "), None), Some("make"), Err(Refusal::EmptyReason)),
            (ask(true, false, None, None), None, Err(Refusal::EmptyReason)),
            (ask(false, true, None, None), None, review(true, "reviewed, no check run")),
            (ask(false, true, Some("read it"), None), Some("make"), review(true, "read it")),
            (ask(false, false, None, Some("make")), Some("make"), check("make")),
            (ask(false, false, None, Some("  ")), Some("cfg"), Err(Refusal::EmptyCheck)),
            (ask(false, false, None, None), Some("cfg"), check("cfg")),
            (ask(false, false, None, None), None, no_check()),
        ];
        for (a, found, want) in table {
            let looked = std::cell::Cell::new(false);
            let lookup = || {
                looked.set(true);
                found.map(str::to_string)
            };
            let got = endorse_mode(a, &def(None, None, None), lookup).map_err(|e| e.to_string());
            assert_eq!(got, want.map_err(|e: Refusal| e.to_string()), "{a:?} {found:?}");
            // The check is looked up only when one is to run.
            let runs = !a.reject && !a.no_check && !a.check.is_some_and(|c| c.trim().is_empty());
            assert_eq!(looked.get(), runs, "{a:?}");
        }
    }

    #[test]
    fn the_artifact_must_hold_what_the_event_names() {
        let table = [(None, true), (Some("t1"), true), (Some("t2"), false)];
        for (found, ok) in table {
            assert_eq!(ensure_artifact("alice", "t1", found).is_ok(), ok, "{found:?}");
        }
        let long = "a".repeat(40);
        assert_eq!(
            ensure_artifact("alice", &long, Some("b")).unwrap_err().to_string(),
            format!(
                "alice's proposal ref does not hold the content its latest proposal event names (tree {}); it was changed outside `git mas propose`",
                &long[..12]
            )
        );
    }

    #[test]
    fn an_endorsements_verdict_is_its_payloads_judgement() {
        let tool = |exit_status| SemanticPayload::ToolResult {
            command: "make".into(),
            exit_status,
            duration_ms: 3,
            output_digest: "sha256:x".into(),
            subject: "t".into(),
            differential: None,
        };
        let review = |accept| SemanticPayload::Review { subject: "t".into(), accept, reason: "r".into() };
        let table = [
            (tool(Some(0)), Some("passed")),
            (tool(Some(1)), Some("failed")),
            (tool(None), Some("failed")),
            (review(true), Some("accepted")),
            (review(false), Some("rejected")),
            (SemanticPayload::ExternalBytes { digest: "t".into(), len: 1 }, None),
        ];
        for (payload, want) in table {
            assert_eq!(verdict(&def(None, None, None), &payload).as_ref().map(Judgement::name), want, "{payload:?}");
        }
    }
}
