//! CONVERGE halts for the scalar classes: when the team stops, and why.
//!
//! [`ConvergeController`] watches the summaries the engine produces, one per closed epoch, and halts
//! on the first of (checked in this order each epoch):
//!
//! 1. **MajorityStop** — strictly more than half of the roster voted STOP in the epoch
//!    (`stop votes × 2 > roster size`; ballots from outside the roster are ignored).
//! 2. **Plateau** / **NoSolution** — the metric failed to improve for `k` consecutive compared
//!    epochs (default [`DEFAULT_PLATEAU_K`] = 3). An epoch *improves* when its metric beats the
//!    previous epoch's by more than [`IMPROVEMENT_EPSILON`] in the class's direction; the first
//!    epoch is compared with the metric before the run when the driver supplies it. When the stall
//!    reaches `k`, the two are told apart by where the run got to:
//!    - **Plateau**: the metric improved at least once and the stalled value is still its best
//!      (within the epsilon) — the team reached a fixed point.
//!    - **NoSolution**: the metric never improved, or it stalled worse than the best it had reached —
//!      the team's updates make no progress.
//!
//!    (The published controller could never report Plateau; both are reachable here.)
//! 3. **PaperHorizon** — the epochs reached the horizon: the class's own (cascade: the demand
//!    length; resource: 12 rounds) capped by `--max-rounds`.
//!
//! Decision: **the stall halts apply only where the metric can settle.** Preference's distance to
//! `z*` converges to a fixed point, so it stalls when the team is done. The cascade's accumulated
//! cost only ever grows, and the resource's stock is drawn down by design; both are finite-horizon
//! problems judged at their horizon, where "failed to improve" is their normal course and a stall
//! halt would end every run after three epochs. Their models say so ([`MetricSpec::stall_halts`]),
//! and [`ConvergeController::for_engine`] follows; a driver may still set `k` explicitly.
//!
//! Three halts are not about the trajectory: **Unmapped** (ASSEMBLY named a class with no engine),
//! **MissingUpdateRule** (a peer has no usable rule) — both decided before CONVERGE by [`preflight`] —
//! and **UnreadableAnnouncement** (a peer's reply could not be read twice), which the driver records
//! with [`ConvergeController::halt_with`], as it does **BudgetExhausted** (the run's time budget ran
//! out first — an addition: a driver that runs real processes needs a bound on the whole run).

use super::{ScalarEngine, ScalarModel};
use crate::assembly::Verdict;
use crate::runtime::{EpochSummary, PatternKind, Vote};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// An epoch improves when its metric beats the previous by more than this.
pub const IMPROVEMENT_EPSILON: f64 = 1e-9;

/// Default number of non-improving epochs before a stall halt.
pub const DEFAULT_PLATEAU_K: u32 = 3;

/// Which way a metric is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MetricDirection {
    /// Smaller is better (a distance, a cost).
    LowerIsBetter,
    /// Larger is better (a stock).
    HigherIsBetter,
}

impl MetricDirection {
    /// True when `new` beats `old` by more than [`IMPROVEMENT_EPSILON`]; never for non-finite values.
    pub fn improves(self, new: f64, old: f64) -> bool {
        if !new.is_finite() || !old.is_finite() {
            return false;
        }
        match self {
            MetricDirection::LowerIsBetter => new < old - IMPROVEMENT_EPSILON,
            MetricDirection::HigherIsBetter => new > old + IMPROVEMENT_EPSILON,
        }
    }

    /// True when `a` is better than `b` at all (no epsilon).
    pub fn better(self, a: f64, b: f64) -> bool {
        match self {
            MetricDirection::LowerIsBetter => a < b,
            MetricDirection::HigherIsBetter => a > b,
        }
    }
}

/// A class's metric: its name, its direction, and whether stalls halt the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MetricSpec {
    /// What it measures (`distance`, `cost`, `stock`).
    pub name: &'static str,
    /// Which way is better.
    pub direction: MetricDirection,
    /// True when the metric settles at a fixed point, so Plateau / NoSolution apply by default.
    pub stall_halts: bool,
}

/// Why a CONVERGE run stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ConvergeHalt {
    /// A strict majority of the roster voted STOP.
    MajorityStop,
    /// The metric stopped improving at its best value: a fixed point.
    Plateau,
    /// The metric never improved, or stalled worse than its best: no progress.
    NoSolution,
    /// The horizon was reached.
    PaperHorizon,
    /// ASSEMBLY named a class with no engine; CONVERGE did not start.
    Unmapped,
    /// A peer has no usable UPDATE rule; CONVERGE did not start.
    MissingUpdateRule,
    /// A peer's reply had no readable announcement, twice.
    UnreadableAnnouncement,
    /// The run's time budget ran out before the team halted.
    BudgetExhausted,
}

impl ConvergeHalt {
    /// The stable kebab-case name.
    pub fn code(self) -> &'static str {
        match self {
            ConvergeHalt::MajorityStop => "majority-stop",
            ConvergeHalt::Plateau => "plateau",
            ConvergeHalt::NoSolution => "no-solution",
            ConvergeHalt::PaperHorizon => "paper-horizon",
            ConvergeHalt::Unmapped => "unmapped",
            ConvergeHalt::MissingUpdateRule => "missing-update-rule",
            ConvergeHalt::UnreadableAnnouncement => "unreadable-announcement",
            ConvergeHalt::BudgetExhausted => "budget-exhausted",
        }
    }
}

impl fmt::Display for ConvergeHalt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// Decides whether CONVERGE may start: the inferred class must have an engine, and for the scalar
/// classes every peer's rule must be usable.
pub fn preflight(inferred: Option<PatternKind>, verdicts: &[Verdict]) -> Result<PatternKind, ConvergeHalt> {
    let pattern = match inferred {
        Some(p) if p.is_implemented() => p,
        _ => return Err(ConvergeHalt::Unmapped),
    };
    if pattern.is_converge_class() && !verdicts.iter().all(Verdict::is_usable) {
        return Err(ConvergeHalt::MissingUpdateRule);
    }
    Ok(pattern)
}

/// What the controller made of one epoch.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EpochSignal {
    /// How many epochs have been observed, this one included.
    pub epochs: u64,
    /// The metric after the epoch.
    pub metric: f64,
    /// The metric it was compared with.
    pub previous: Option<f64>,
    /// True when it beat `previous` by more than the epsilon.
    pub improved: bool,
    /// Consecutive compared epochs without improvement, this one included.
    pub stall: u32,
    /// STOP votes from roster members.
    pub stop_votes: usize,
    /// The halt, once there is one.
    pub halt: Option<ConvergeHalt>,
}

/// Tracks a scalar CONVERGE run epoch by epoch and decides when the team stops.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConvergeController {
    roster: Vec<String>,
    direction: MetricDirection,
    horizon: u64,
    plateau_k: Option<u32>,
    previous: Option<f64>,
    best: Option<f64>,
    improved_ever: bool,
    stall: u32,
    epochs: u64,
    halt: Option<ConvergeHalt>,
}

impl ConvergeController {
    /// A controller for `roster`, halting at `horizon` epochs; `plateau_k: None` turns the stall
    /// halts off.
    pub fn new(roster: Vec<String>, direction: MetricDirection, horizon: u64, plateau_k: Option<u32>) -> Self {
        ConvergeController {
            roster,
            direction,
            horizon,
            plateau_k: plateau_k.map(|k| k.max(1)),
            previous: None,
            best: None,
            improved_ever: false,
            stall: 0,
            epochs: 0,
            halt: None,
        }
    }

    /// A controller for `engine`'s class and roster: horizon `min(max_rounds, epochs the engine has
    /// left)`, the class's direction and stall policy (default `k` where stalls apply), and the
    /// engine's current metric as the baseline the first epoch is compared with.
    pub fn for_engine<M: ScalarModel>(engine: &ScalarEngine<M>, max_rounds: u64) -> Self {
        use crate::runtime::CoordinationEngine;
        let spec = engine.model().metric_spec();
        let horizon = engine.remaining_epochs().map_or(max_rounds, |left| left.min(max_rounds));
        let k = spec.stall_halts.then_some(DEFAULT_PLATEAU_K);
        ConvergeController::new(engine.participants().to_vec(), spec.direction, horizon, k)
            .with_baseline(engine.metric())
    }

    /// Sets the metric before the first epoch, which the first epoch is compared with.
    pub fn with_baseline(mut self, metric: f64) -> Self {
        if self.epochs == 0 {
            self.previous = Some(metric);
            self.best = metric.is_finite().then_some(metric);
        }
        self
    }

    /// Sets the stall length (`None`: no stall halts).
    pub fn with_plateau_k(mut self, plateau_k: Option<u32>) -> Self {
        self.plateau_k = plateau_k.map(|k| k.max(1));
        self
    }

    /// Observes one closed epoch: its metric and ballots.
    pub fn observe(&mut self, metric: f64, ballots: &BTreeMap<String, Vote>) -> EpochSignal {
        let stop_votes =
            ballots.iter().filter(|(agent, vote)| **vote == Vote::Stop && self.roster.contains(agent)).count();
        let previous = self.previous;
        if self.halt.is_some() {
            return self.signal(metric, previous, false, stop_votes);
        }
        self.epochs += 1;
        let improved = previous.is_some_and(|p| self.direction.improves(metric, p));
        if improved {
            self.improved_ever = true;
            self.stall = 0;
        } else if previous.is_some() {
            self.stall = self.stall.saturating_add(1);
        }
        if metric.is_finite() && self.best.is_none_or(|b| self.direction.better(metric, b)) {
            self.best = Some(metric);
        }
        self.previous = Some(metric);

        self.halt = if stop_votes * 2 > self.roster.len() {
            Some(ConvergeHalt::MajorityStop)
        } else if self.plateau_k.is_some_and(|k| self.stall >= k) {
            let at_best = metric.is_finite() && self.best.is_some_and(|b| !self.direction.improves(b, metric));
            Some(if self.improved_ever && at_best { ConvergeHalt::Plateau } else { ConvergeHalt::NoSolution })
        } else if self.epochs >= self.horizon {
            Some(ConvergeHalt::PaperHorizon)
        } else {
            None
        };
        self.signal(metric, previous, improved, stop_votes)
    }

    /// Observes an engine's epoch summary (a summary without a metric counts as no improvement).
    pub fn observe_summary(&mut self, summary: &EpochSummary) -> EpochSignal {
        self.observe(summary.metric.unwrap_or(f64::NAN), &summary.ballots)
    }

    fn signal(&self, metric: f64, previous: Option<f64>, improved: bool, stop_votes: usize) -> EpochSignal {
        EpochSignal { epochs: self.epochs, metric, previous, improved, stall: self.stall, stop_votes, halt: self.halt }
    }

    /// Records a halt decided by the driver (unreadable announcement, …). The first halt stands.
    pub fn halt_with(&mut self, halt: ConvergeHalt) -> ConvergeHalt {
        *self.halt.get_or_insert(halt)
    }

    /// The halt, once there is one.
    pub fn halt(&self) -> Option<ConvergeHalt> {
        self.halt
    }

    /// Epochs observed.
    pub fn epochs(&self) -> u64 {
        self.epochs
    }

    /// The horizon in epochs.
    pub fn horizon(&self) -> u64 {
        self.horizon
    }

    /// The best metric seen.
    pub fn best(&self) -> Option<f64> {
        self.best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assembly::AssemblySession;

    fn abc() -> Vec<String> {
        vec!["a".into(), "b".into(), "c".into()]
    }

    fn ballots(votes: &[(&str, Vote)]) -> BTreeMap<String, Vote> {
        votes.iter().map(|(a, v)| ((*a).to_owned(), *v)).collect()
    }

    fn run(ctl: &mut ConvergeController, metrics: &[f64]) -> Vec<Option<ConvergeHalt>> {
        metrics.iter().map(|m| ctl.observe(*m, &BTreeMap::new()).halt).collect()
    }

    #[test]
    fn two_of_three_stop_is_majority_stop() {
        let mut ctl = ConvergeController::new(abc(), MetricDirection::LowerIsBetter, 10, Some(3));
        let signal = ctl.observe(1.0, &ballots(&[("a", Vote::Stop), ("b", Vote::Continue)]));
        assert_eq!(signal.halt, None);
        let signal = ctl.observe(0.5, &ballots(&[("a", Vote::Stop), ("b", Vote::Stop), ("c", Vote::Continue)]));
        assert_eq!(signal.stop_votes, 2);
        assert_eq!(signal.halt, Some(ConvergeHalt::MajorityStop));
    }

    #[test]
    fn ballots_from_outside_the_roster_are_ignored() {
        let mut ctl = ConvergeController::new(abc(), MetricDirection::LowerIsBetter, 10, Some(3));
        let signal = ctl.observe(1.0, &ballots(&[("a", Vote::Stop), ("ghost", Vote::Stop), ("mallory", Vote::Stop)]));
        assert_eq!(signal.stop_votes, 1);
        assert_eq!(signal.halt, None);
        // Half is not a majority.
        let mut even = ConvergeController::new(vec!["a".into(), "b".into()], MetricDirection::LowerIsBetter, 10, None);
        assert_eq!(even.observe(1.0, &ballots(&[("a", Vote::Stop)])).halt, None);
    }

    #[test]
    fn the_horizon_halts() {
        let mut ctl = ConvergeController::new(abc(), MetricDirection::LowerIsBetter, 3, Some(3));
        assert_eq!(run(&mut ctl, &[3.0, 2.0, 1.0]), [None, None, Some(ConvergeHalt::PaperHorizon)]);
        assert_eq!(ctl.epochs(), 3);
        // Once halted, further epochs change nothing.
        assert_eq!(ctl.observe(0.5, &BTreeMap::new()).halt, Some(ConvergeHalt::PaperHorizon));
        assert_eq!(ctl.epochs(), 3);
    }

    #[test]
    fn a_stalled_metric_is_a_plateau() {
        let mut ctl = ConvergeController::new(abc(), MetricDirection::LowerIsBetter, 100, Some(3)).with_baseline(8.0);
        let halts = run(&mut ctl, &[4.0, 2.0, 1.0, 1.0, 1.0 + 1e-12, 1.0 - 1e-12]);
        assert_eq!(halts, [None, None, None, None, None, Some(ConvergeHalt::Plateau)]);
        // Higher-is-better stalls the same way.
        let mut stock = ConvergeController::new(abc(), MetricDirection::HigherIsBetter, 100, Some(2));
        assert_eq!(run(&mut stock, &[1.0, 2.0, 2.0, 2.0]), [None, None, None, Some(ConvergeHalt::Plateau)]);
    }

    #[test]
    fn a_never_improving_metric_is_no_solution() {
        let mut flat = ConvergeController::new(abc(), MetricDirection::LowerIsBetter, 100, Some(3)).with_baseline(5.0);
        assert_eq!(run(&mut flat, &[5.0, 5.0, 5.0]), [None, None, Some(ConvergeHalt::NoSolution)]);
        let mut worse = ConvergeController::new(abc(), MetricDirection::LowerIsBetter, 100, Some(3));
        assert_eq!(run(&mut worse, &[1.0, 2.0, 3.0, 4.0]), [None, None, None, Some(ConvergeHalt::NoSolution)]);
        // Improving once and then losing ground is no progress either.
        let mut lost = ConvergeController::new(abc(), MetricDirection::LowerIsBetter, 100, Some(3));
        assert_eq!(
            run(&mut lost, &[2.0, 1.0, 1.5, 1.5, 1.5]),
            [None, None, None, None, Some(ConvergeHalt::NoSolution)]
        );
        // Non-finite metrics never improve.
        let mut broken = ConvergeController::new(abc(), MetricDirection::LowerIsBetter, 100, Some(2));
        assert_eq!(
            run(&mut broken, &[f64::NAN, f64::NAN, f64::INFINITY]),
            [None, None, Some(ConvergeHalt::NoSolution)]
        );
    }

    #[test]
    fn stall_halts_can_be_off() {
        let mut ctl = ConvergeController::new(abc(), MetricDirection::LowerIsBetter, 5, None);
        assert_eq!(run(&mut ctl, &[1.0; 5]), [None, None, None, None, Some(ConvergeHalt::PaperHorizon)]);
    }

    #[test]
    fn majority_stop_comes_before_the_other_halts() {
        let mut ctl = ConvergeController::new(abc(), MetricDirection::LowerIsBetter, 1, Some(1)).with_baseline(1.0);
        let signal = ctl.observe(1.0, &ballots(&[("a", Vote::Stop), ("b", Vote::Stop)]));
        assert_eq!(signal.halt, Some(ConvergeHalt::MajorityStop));
    }

    #[test]
    fn driver_halts_stick() {
        let mut ctl = ConvergeController::new(abc(), MetricDirection::LowerIsBetter, 10, Some(3));
        assert_eq!(ctl.halt_with(ConvergeHalt::UnreadableAnnouncement), ConvergeHalt::UnreadableAnnouncement);
        assert_eq!(ctl.halt_with(ConvergeHalt::MajorityStop), ConvergeHalt::UnreadableAnnouncement);
        assert_eq!(ctl.observe(1.0, &BTreeMap::new()).halt, Some(ConvergeHalt::UnreadableAnnouncement));
    }

    #[test]
    fn an_unknown_class_refuses_to_converge() {
        let mut session = AssemblySession::new();
        session.ingest("We think this is a matching market.\nCLASS matching-markets\nUPDATE state\nDONE");
        assert_eq!(preflight(session.inferred(), &[Verdict::Matches]), Err(ConvergeHalt::Unmapped));
        assert_eq!(preflight(None, &[]), Err(ConvergeHalt::Unmapped));
    }

    #[test]
    fn a_peer_without_a_usable_rule_halts_missing_update_rule() {
        let differs = Verdict::Differs { worst_gap: 1.0, at: Default::default() };
        let pattern = Some(PatternKind::Preference);
        assert_eq!(preflight(pattern, &[Verdict::Matches, differs.clone()]), Ok(PatternKind::Preference));
        assert_eq!(preflight(pattern, &[Verdict::Matches, Verdict::Missing]), Err(ConvergeHalt::MissingUpdateRule));
        let invalid = Verdict::Invalid { reason: "sqrt".into() };
        assert_eq!(preflight(pattern, &[invalid]), Err(ConvergeHalt::MissingUpdateRule));
        // Development has no UPDATE rules to check.
        assert_eq!(preflight(Some(PatternKind::Development), &[]), Ok(PatternKind::Development));
    }

    #[test]
    fn halts_have_stable_names() {
        let all = [
            ConvergeHalt::MajorityStop,
            ConvergeHalt::Plateau,
            ConvergeHalt::NoSolution,
            ConvergeHalt::PaperHorizon,
            ConvergeHalt::Unmapped,
            ConvergeHalt::MissingUpdateRule,
            ConvergeHalt::UnreadableAnnouncement,
            ConvergeHalt::BudgetExhausted,
        ];
        for halt in all {
            assert_eq!(serde_json::to_string(&halt).unwrap(), format!("\"{}\"", halt.code()));
        }
    }
}
