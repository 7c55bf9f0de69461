//! A run read whole: its meta chain, its events replayed through the development engine, the
//! pool's artifacts checked against the record, and the convergence state derived from them.

use super::events::{self, RunEvents};
use super::{Phase, Problem, RunError, RunMeta, proposal_ref, proposals_prefix};
use crate::convergence::{self, BlockedAttempt, DependencyIssue, Outcome, RunState};
use crate::engines::{DevelopmentEngine, Tally};
use crate::identity::Roster;
use crate::runtime::{EventOutcome, MasRuntime};
use crate::store::Store;
use gix::ObjectId;
use serde::Serialize;

/// The pass rate the quality gate needs: every check of the content.
pub const QUALITY_THRESHOLD: f64 = 1.0;

/// An event the engine refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct RefusedEvent {
    /// The sender.
    pub agent: String,
    /// The record's commit.
    pub record: String,
    /// The reason's code (`past-horizon`, …).
    pub code: String,
    /// The reason in words.
    pub reason: String,
}

/// A run read whole.
#[derive(Debug, Clone)]
pub struct RunView {
    /// The meta chain.
    pub meta: RunMeta,
    /// The verified events, in replay order.
    pub events: RunEvents,
    /// The replay.
    pub runtime: MasRuntime<DevelopmentEngine>,
    /// The tally after the replay.
    pub tally: Tally,
    /// Events the engine refused.
    pub refused: Vec<RefusedEvent>,
    /// Pool artifacts that do not match the record.
    pub dependency_issues: Vec<DependencyIssue>,
    /// The integration branch's tip now.
    pub main_tip: Option<ObjectId>,
    /// Proposal refs this read brought to what their events name (a `propose` a crash split).
    pub settled: Vec<super::settle::Settled>,
}

impl RunView {
    /// Records that were not applied (meta chain and events).
    pub fn problems(&self) -> impl Iterator<Item = &Problem> {
        self.meta.problems.iter().chain(self.events.problems.iter())
    }

    /// The proposals a landing would take now: the leader at quorum, or with `aggregate` every
    /// proposal at quorum in agent order; (agent, tree) pairs.
    pub fn candidates(&self, aggregate: bool) -> Vec<(String, String)> {
        let pick = |agent: &String| self.tally.proposal(agent).map(|p| (p.agent.clone(), p.tree.clone()));
        if aggregate {
            let mut members: Vec<(String, String)> = self.tally.at_quorum.iter().filter_map(pick).collect();
            // An aggregate run's slices merge in its plan's order; a reviewer has no slice to merge.
            if let Some(plan) = &self.meta.def.slices {
                members.retain(|(a, _)| plan.slice(a).is_some());
                let order = |a: &str| plan.slices.iter().position(|s| s.agent == a).unwrap_or(usize::MAX);
                members.sort_by_key(|(a, _)| order(a));
            }
            members
        } else if self.tally.quorum_reached() {
            self.tally.leader.iter().filter_map(pick).collect()
        } else {
            Vec::new()
        }
    }

    /// The convergence state, with `now_ms` as the time for a run that has not ended.
    pub fn state(&self, now_ms: u64) -> RunState {
        let def = &self.meta.def;
        let main = self.main_tip.map(|t| t.to_string());
        let blocked = self
            .meta
            .blocked
            .iter()
            .map(|(_, b)| BlockedAttempt {
                conflicts: b.conflicts.clone(),
                current: Some(&b.main) == main.as_ref() && b.members == self.candidates(b.aggregate),
            })
            .collect();
        let (outcome, end) = match &self.meta.phase {
            // Pending: not landed until the branch holds it (readers complete it first).
            Phase::Open | Phase::Landing { .. } => (Outcome::Open, now_ms),
            Phase::Aborted { abort, .. } => {
                (Outcome::Aborted { reason: abort.reason.clone(), risk: abort.risk }, abort.at_ms)
            }
            Phase::Landed { landing, .. } => (
                Outcome::Landed {
                    winners: landing.winners.iter().map(|(a, _)| a.clone()).collect(),
                    commit: landing.commit.clone(),
                    merged_check_passed: landing.merged_check.as_ref().map(|c| c.passed()),
                },
                landing.at_ms,
            ),
        };
        RunState {
            run: def.id.clone(),
            tally: self.tally.clone(),
            outcome,
            blocked,
            dependency_issues: self.dependency_issues.clone(),
            budget_ms: def.budget_ms,
            used_ms: end.saturating_sub(def.created_at_ms),
            quality_threshold: QUALITY_THRESHOLD,
            slices: def.slices.iter().flat_map(|p| &p.slices).map(|s| (s.agent.clone(), s.targets.clone())).collect(),
            rounds_held: match &self.meta.phase {
                Phase::Aborted { abort, .. } => abort.rounds,
                _ => None,
            },
        }
    }

    /// The convergence report now.
    pub fn report(&self, now_ms: u64) -> convergence::ConvergenceReport {
        convergence::evaluate(&self.state(now_ms))
    }
}

/// Reads a run whole. Once a run has landed, events recorded after the landing are not counted
/// (they are listed as problems): the run's state is what it was when it ended.
pub fn load(store: &Store, roster: &Roster, meta: RunMeta, allow_self_endorse: bool) -> Result<RunView, RunError> {
    let def = &meta.def;
    let mut loaded = events::load(store, roster, &def.id)?;
    let ended_at = match &meta.phase {
        Phase::Landed { landing, .. } | Phase::Landing { landing, .. } => Some(landing.at_ms),
        Phase::Aborted { abort, .. } => Some(abort.at_ms),
        Phase::Open => None,
    };
    if let Some(end) = ended_at {
        let (keep, late): (Vec<_>, Vec<_>) = loaded.events.into_iter().partition(|e| e.record.at_ms <= end);
        loaded.events = keep;
        for e in late {
            loaded.problems.push(Problem {
                refname: super::events_ref(&def.id, &e.agent),
                commit: e.record_commit.clone(),
                problem: format!("recorded after the run {} (not counted)", meta.phase.name()),
            });
        }
    }
    let runtime = events::replay(def, allow_self_endorse, &loaded)
        .map_err(|e| RunError::Unreadable { id: def.id.clone(), why: e.to_string() })?;
    let tally = runtime.engine().tally();
    let mut refused = Vec::new();
    for t in runtime.history() {
        if let EventOutcome::Rejected(reason) = &t.outcome
            && let Some(s) =
                loaded.events.iter().find(|s| s.record.event.metadata.event_id == t.event.metadata.event_id)
        {
            refused.push(RefusedEvent {
                agent: s.agent.clone(),
                record: s.record_commit.clone(),
                code: reason.code().into(),
                reason: reason.to_string(),
            });
        }
    }
    // Step 2 of a proposal that a crash cut short is completed here (best effort: what cannot be
    // settled is reported by the pool check below).
    let settled = super::settle::settle(store, def, &loaded, &runtime, None).unwrap_or_default();
    let dependency_issues = check_pool(store, &meta, &tally)?;
    let main_tip = store.tip(&format!("refs/heads/{}", def.branch))?;
    Ok(RunView { meta, events: loaded, runtime, tally, refused, dependency_issues, main_tip, settled })
}

/// Compares every proposal ref with the tally: the ref must hold the content of the agent's latest
/// accepted proposal, on top of the run's base.
fn check_pool(store: &Store, meta: &RunMeta, tally: &Tally) -> Result<Vec<DependencyIssue>, RunError> {
    let def = &meta.def;
    let mut issues = Vec::new();
    let read = |commit: ObjectId| -> Option<(String, Vec<String>)> {
        let c = store.repo().find_commit(commit).ok()?;
        let tree = c.tree_id().ok()?.to_string();
        Some((tree, c.parent_ids().map(|p| p.to_string()).collect()))
    };
    for p in &tally.proposals {
        let refname = proposal_ref(&def.id, &p.agent);
        let detail = match store.tip(&refname)? {
            None => Some(format!("{}'s proposal ref is missing", p.agent)),
            Some(tip) => match read(tip) {
                None => Some(format!("{}'s proposal ref points at {tip}, which is not a readable commit", p.agent)),
                Some((tree, _)) if tree != p.tree => Some(format!(
                    "{}'s proposal ref holds tree {tree}, not the tree {} its latest proposal event names",
                    p.agent, p.tree
                )),
                Some((_, parents)) if parents != [def.base.clone()] => Some(format!(
                    "{}'s proposal does not rest on the run's base {} (parents: {})",
                    p.agent,
                    def.base,
                    parents.join(", ")
                )),
                Some(_) => None,
            },
        };
        if let Some(detail) = detail {
            issues.push(DependencyIssue { agent: p.agent.clone(), detail });
        }
    }
    for info in store.list(&proposals_prefix(&def.id))? {
        let Some(agent) = crate::store::owner_of(&info.name) else { continue };
        if tally.proposal(agent).is_none() {
            issues.push(DependencyIssue {
                agent: agent.to_string(),
                detail: format!("{} exists but no accepted proposal event of {agent} names it", info.name),
            });
        }
    }
    Ok(issues)
}
