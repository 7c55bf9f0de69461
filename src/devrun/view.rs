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
use std::collections::BTreeMap;

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
    /// The paths each current proposal changes against the run's base, in the tally's order
    /// (see `changed_paths`).
    pub changed: Vec<(String, Vec<String>)>,
    /// The gate's refusals of slice files while the run was open (aggregate runs; see
    /// `slice_refusals`).
    pub slice_refusals: Vec<convergence::SliceRefusal>,
    /// The tree of the run's base (`None` when it cannot be read).
    pub base_tree: Option<String>,
    /// Lines each proposal at quorum changes from the base (added and deleted, as
    /// `git diff --numstat` counts them), read for a best-of-N run with two or more at quorum:
    /// the tie-break of [`RunView::candidates`].
    pub changed_lines: BTreeMap<String, u64>,
}

impl RunView {
    /// Records that were not applied (meta chain and events).
    pub fn problems(&self) -> impl Iterator<Item = &Problem> {
        self.meta.problems.iter().chain(self.events.problems.iter())
    }

    /// Whether `agent` abstained: in an aggregate run, its current proposal is the base's tree
    /// unchanged (`git mas propose --abstain`: its slice needs no change). An abstention is not
    /// endorsed, merged or waited for.
    pub fn abstained(&self, agent: &str) -> bool {
        self.meta.def.slices.is_some()
            && self.base_tree.as_deref().is_some_and(|base| self.tally.proposal(agent).is_some_and(|p| p.tree == base))
    }

    /// Why `agent` abstained (its abstention's message), when it did.
    pub fn abstention(&self, agent: &str) -> Option<String> {
        if !self.abstained(agent) {
            return None;
        }
        let note = events::accepted_proposal(&self.runtime, &self.events, agent).and_then(|s| s.record.note.clone());
        Some(note.unwrap_or_default())
    }

    /// The proposals a landing would take now: the leader at quorum, or with `aggregate` every
    /// proposal at quorum in agent order; (agent, tree) pairs.
    pub fn candidates(&self, aggregate: bool) -> Vec<(String, String)> {
        let pick = |agent: &String| self.tally.proposal(agent).map(|p| (p.agent.clone(), p.tree.clone()));
        if aggregate {
            let mut members: Vec<(String, String)> =
                self.tally.at_quorum.iter().filter(|a| !self.abstained(a)).filter_map(pick).collect();
            // An aggregate run's slices merge in its plan's order; a reviewer has no slice to merge.
            if let Some(plan) = &self.meta.def.slices {
                members.retain(|(a, _)| plan.slice(a).is_some());
                let order = |a: &str| plan.slices.iter().position(|s| s.agent == a).unwrap_or(usize::MAX);
                members.sort_by_key(|(a, _)| order(a));
            }
            members
        } else if self.tally.quorum_reached() {
            self.best_at_quorum().iter().filter_map(pick).collect()
        } else {
            Vec::new()
        }
    }

    /// The best-of-N winner among the proposals at quorum: the one that fixes the most failing
    /// tests as its endorsements' checks say ([`fixes`]: a check that passed fixes all of them),
    /// then the one changing the fewest lines, then the first by name.
    pub fn best_at_quorum(&self) -> Option<String> {
        let key = |agent: &String| {
            let fixed = self.tally.proposal(agent).map_or(0, fixes);
            let lines = self.changed_lines.get(agent).copied().unwrap_or(u64::MAX);
            (std::cmp::Reverse(fixed), lines, agent.clone())
        };
        self.tally.at_quorum.iter().min_by_key(|a| key(a)).cloned()
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
            Phase::Aborted { abort, .. } => (
                Outcome::Aborted { reason: abort.reason.clone(), risk: abort.risk, halt: abort.halt.clone() },
                abort.at_ms,
            ),
            Phase::Landed { landing, .. } => (
                Outcome::Landed {
                    winners: landing.winners.iter().map(|(a, _)| a.clone()).collect(),
                    commit: landing.commit.clone(),
                    merged_check_passed: landing.merged_check.as_ref().map(|c| c.passed()),
                    still_failing: landing.still_failing,
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
            abstained: def
                .slices
                .iter()
                .flat_map(|p| &p.slices)
                .filter_map(|s| self.abstention(&s.agent).map(|why| (s.agent.clone(), why)))
                .collect(),
            rounds_held: match &self.meta.phase {
                Phase::Aborted { abort, .. } => abort.rounds,
                _ => None,
            },
            changed: self.changed.clone(),
            slice_refusals: self.slice_refusals.clone(),
            reviewers: def.slices.iter().flat_map(|p| &p.reviewers).map(|r| (r.agent.clone(), r.why.clone())).collect(),
        }
    }

    /// The convergence report now.
    pub fn report(&self, now_ms: u64) -> convergence::ConvergenceReport {
        convergence::evaluate(&self.state(now_ms))
    }
}

/// How many failing tests a proposal fixes, as its endorsing checks say: `u64::MAX` when a check
/// passed on it (it fixes every failing test), else the most an improving check's report
/// counted; 0 when only reviews endorse it.
pub fn fixes(p: &crate::engines::development::ProposalTally) -> u64 {
    use crate::engines::development::Judgement;
    p.verdicts
        .iter()
        .filter(|v| v.judgement.endorses())
        .map(|v| match &v.judgement {
            Judgement::Passed { .. } => u64::MAX,
            j => j.delta().map_or(0, |d| d.fixed.len() as u64),
        })
        .max()
        .unwrap_or(0)
}

/// Lines `tree` changes from `base` (added and deleted; a binary file counts 1), or `None` when
/// git cannot say.
fn changed_lines(store: &Store, base: &str, tree: &str) -> Option<u64> {
    let dir = store.common_dir();
    let out = crate::git::run(dir, &["diff", "--numstat", "--no-renames", base, tree]).ok()?;
    let text = String::from_utf8_lossy(&out);
    Some(
        text.lines()
            .map(|l| {
                let mut f = l.split('\t');
                let n = |s: Option<&str>| s.and_then(|s| s.parse::<u64>().ok());
                match (n(f.next()), n(f.next())) {
                    (Some(a), Some(d)) => a + d,
                    _ => 1,
                }
            })
            .sum(),
    )
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
    let base_tree = def
        .base_id()
        .ok()
        .and_then(|b| store.repo().find_object(b).ok()?.peel_to_tree().ok())
        .map(|t| t.id.to_string());
    let mut changed = BTreeMap::new();
    if def.slices.is_none()
        && tally.at_quorum.len() > 1
        && let Some(base) = &base_tree
    {
        for agent in &tally.at_quorum {
            if let Some(n) = tally.proposal(agent).and_then(|p| changed_lines(store, base, &p.tree)) {
                changed.insert(agent.clone(), n);
            }
        }
    }
    let paths_changed = changed_paths(store, def, &tally);
    let slice_refusals = slice_refusals(store, &meta);
    Ok(RunView {
        meta,
        events: loaded,
        runtime,
        tally,
        refused,
        dependency_issues,
        main_tip,
        settled,
        base_tree,
        changed_lines: changed,
        changed: paths_changed,
        slice_refusals,
    })
}

/// The paths each current proposal's tree changes against the run's base, in the tally's order,
/// diffed in process (only subtrees whose ids differ are read). A proposal whose tree, or a base
/// whose commit, cannot be read is left out: the report lists what it can show, never a guess.
fn changed_paths(store: &Store, def: &super::RunDef, tally: &Tally) -> Vec<(String, Vec<String>)> {
    let repo = store.repo();
    let tree_of = |id: ObjectId| repo.find_object(id).ok()?.peel_to_tree().ok().map(|t| t.id);
    let Some(base) = def.base_id().ok().and_then(tree_of) else { return Vec::new() };
    tally
        .proposals
        .iter()
        .filter_map(|p| {
            let tree = ObjectId::from_hex(p.tree.as_bytes()).ok().and_then(tree_of)?;
            let mut paths = Vec::new();
            crate::attention::frame::changed_paths(repo, Some(base), Some(tree), "", &mut paths).ok()?;
            Some((p.agent.clone(), paths))
        })
        .collect()
}

/// The gate's refusals of slice files while an aggregate run was open, from this machine's
/// denial log ([`convergence::slice_refusals`]); none for a best-of-N run.
fn slice_refusals(store: &Store, meta: &RunMeta) -> Vec<convergence::SliceRefusal> {
    let def = &meta.def;
    let Some(plan) = &def.slices else { return Vec::new() };
    let until = match &meta.phase {
        Phase::Landed { landing, .. } | Phase::Landing { landing, .. } => Some(landing.at_ms / 1000),
        Phase::Aborted { abort, .. } => Some(abort.at_ms / 1000),
        Phase::Open => None,
    };
    let log = crate::attention::denials::read(store.common_dir());
    let denied: Vec<convergence::Denied<'_>> =
        log.iter().map(|d| (d.at, d.agent.as_str(), d.holder.as_str(), d.file.as_str())).collect();
    let slices: Vec<(String, Vec<String>)> = plan.slices.iter().map(|s| (s.agent.clone(), s.targets.clone())).collect();
    // The driver reads the log from a second before the run's start (its clock is in seconds).
    let from = (def.created_at_ms / 1000).saturating_sub(1);
    convergence::slice_refusals(&denied, &def.roster, &slices, from, until)
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
