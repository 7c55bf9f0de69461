//! Preference aggregation on a line graph.
//!
//! Node `i` of `n` holds a private score `c_i = c_span · i / (n − 1)` (0 for a single node) and a
//! value `z_i`. The team wants the minimiser of `Σ (z_i − c_i)² + β Σ_{edges} (z_i − z_j)²`, whose
//! unique solution is `z* = (I + 2βL)⁻¹ c` with `L` the graph Laplacian; on a line `I + 2βL` is
//! tridiagonal and diagonally dominant, so it is solved exactly (Thomas algorithm) in `O(n)`. The
//! metric is `‖z − z*‖₂`, lower is better, and it settles at a fixed point, so the stall halts apply.
//!
//! Each epoch every node announces its next `z_i`; the engine sets `z` to the announced values. The
//! reference a node's rule is scored against is the simultaneous Jacobi step
//! `z_i ← (c_i + 2β Σ_{j∈N(i)} z_j) / (1 + 2β d_i)`, which the engine never applies itself.

use super::halt::{MetricDirection, MetricSpec};
use super::{EngineError, ScalarEngine, ScalarModel, bad_config};
use crate::assembly::{PREFERENCE, Quantities, UpdateClass};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The preference engine.
pub type PreferenceEngine = ScalarEngine<Preference>;

/// Preference constants (defaults as published).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreferenceConfig {
    /// Coupling β (0.75).
    pub beta: f64,
    /// Span of the private scores (8).
    pub c_span: f64,
    /// Starting values (`None`: all zero).
    pub initial: Option<Vec<f64>>,
    /// At most this many epochs (`None`: no limit of the class's own; the driver's `--max-rounds`
    /// caps the run).
    pub max_rounds: Option<u64>,
}

impl Default for PreferenceConfig {
    fn default() -> Self {
        PreferenceConfig { beta: 0.75, c_span: 8.0, initial: None, max_rounds: None }
    }
}

/// The private scores `c_i = c_span · i / (n − 1)`.
pub fn line_targets(n: usize, c_span: f64) -> Vec<f64> {
    if n <= 1 {
        return vec![0.0; n];
    }
    (0..n).map(|i| c_span * i as f64 / (n - 1) as f64).collect()
}

/// The line graph's degrees: 1 at the ends, 2 inside (0 for a single node).
pub fn line_degrees(n: usize) -> Vec<f64> {
    (0..n).map(|i| usize::from(i > 0) as f64 + usize::from(i + 1 < n) as f64).collect()
}

/// Solves `(I + 2βL) z = c` for the line graph.
pub fn line_optimum(c: &[f64], beta: f64) -> Vec<f64> {
    let n = c.len();
    let k = 2.0 * beta;
    let diag: Vec<f64> = line_degrees(n).iter().map(|d| 1.0 + k * d).collect();
    // Forward sweep: c' (super-diagonal) and d' (right-hand side); sub- and super-diagonal are −k.
    let mut sup = vec![0.0; n];
    let mut rhs = vec![0.0; n];
    for i in 0..n {
        let (prev_sup, prev_rhs) = if i == 0 { (0.0, 0.0) } else { (sup[i - 1], rhs[i - 1]) };
        let sub = if i == 0 { 0.0 } else { -k };
        let m = diag[i] - sub * prev_sup;
        sup[i] = if i + 1 < n { -k / m } else { 0.0 };
        rhs[i] = (c[i] - sub * prev_rhs) / m;
    }
    let mut z = vec![0.0; n];
    for i in (0..n).rev() {
        z[i] = rhs[i] - if i + 1 < n { sup[i] * z[i + 1] } else { 0.0 };
    }
    z
}

/// `‖a − b‖₂`, without overflow for large values.
pub fn distance(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).fold(0.0, |acc: f64, (x, y)| acc.hypot(x - y))
}

/// The preference plant: values, scores, and the optimum they are judged against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Preference {
    beta: f64,
    targets: Vec<f64>,
    degrees: Vec<f64>,
    values: Vec<f64>,
    optimum: Vec<f64>,
    max_rounds: Option<u64>,
}

impl Preference {
    /// A line of `n` nodes.
    pub fn new(n: usize, config: PreferenceConfig) -> Result<Self, EngineError> {
        if !(config.beta.is_finite() && config.beta > 0.0) {
            return Err(bad_config("beta", format!("must be a positive number, not {}", config.beta)));
        }
        if !config.c_span.is_finite() {
            return Err(bad_config("c_span", "must be finite"));
        }
        let values = match config.initial {
            None => vec![0.0; n],
            Some(v) if v.len() != n => {
                return Err(bad_config("initial", format!("has {} values for {n} nodes", v.len())));
            }
            Some(v) if !v.iter().all(|x| x.is_finite()) => return Err(bad_config("initial", "must be finite")),
            Some(v) => v,
        };
        let targets = line_targets(n, config.c_span);
        let optimum = line_optimum(&targets, config.beta);
        Ok(Preference {
            beta: config.beta,
            degrees: line_degrees(n),
            targets,
            values,
            optimum,
            max_rounds: config.max_rounds,
        })
    }

    /// A preference engine over `roster` (a line in roster order).
    pub fn engine(roster: Vec<String>, config: PreferenceConfig) -> Result<PreferenceEngine, EngineError> {
        ScalarEngine::new(Preference::new(roster.len(), config)?, roster)
    }

    /// The current values `z`.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// The private scores `c`.
    pub fn targets(&self) -> &[f64] {
        &self.targets
    }

    /// The optimum `z*`.
    pub fn optimum(&self) -> &[f64] {
        &self.optimum
    }

    fn neighbour_sum(&self, i: usize) -> f64 {
        let left = i.checked_sub(1).and_then(|j| self.values.get(j)).copied().unwrap_or(0.0);
        let right = self.values.get(i + 1).copied().unwrap_or(0.0);
        left + right
    }
}

impl ScalarModel for Preference {
    fn class(&self) -> &'static UpdateClass {
        &PREFERENCE
    }

    fn agents(&self) -> usize {
        self.values.len()
    }

    fn epochs(&self) -> Option<u64> {
        self.max_rounds
    }

    fn quantities(&self, agent: usize) -> Quantities {
        let get = |v: &[f64]| v.get(agent).copied().unwrap_or(0.0);
        BTreeMap::from([
            ("state".to_owned(), get(&self.values)),
            ("target".to_owned(), get(&self.targets)),
            ("beta".to_owned(), self.beta),
            ("degree".to_owned(), get(&self.degrees)),
            ("neighbour_sum".to_owned(), self.neighbour_sum(agent)),
        ])
    }

    fn check(&self, _value: f64) -> Result<(), String> {
        Ok(())
    }

    fn step(&mut self, announced: &[f64]) {
        self.values.iter_mut().zip(announced).for_each(|(z, a)| *z = *a);
    }

    fn metric(&self) -> f64 {
        distance(&self.values, &self.optimum)
    }

    fn metric_spec(&self) -> MetricSpec {
        MetricSpec { name: "distance", direction: MetricDirection::LowerIsBetter, stall_halts: true }
    }

    fn state(&self) -> BTreeMap<String, f64> {
        BTreeMap::from([("distance".to_owned(), self.metric())])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::halt::{ConvergeController, ConvergeHalt};
    use crate::engines::tests::{drive, roster};
    use crate::runtime::{CoordinationEngine, EventOutcome};

    fn reference() -> crate::assembly::Expr {
        PREFERENCE.reference_expr().unwrap()
    }

    #[test]
    fn optimum_of_the_published_instance() {
        let model = Preference::new(3, PreferenceConfig::default()).unwrap();
        assert_eq!(model.targets(), [0.0, 4.0, 8.0]);
        for (got, want) in model.optimum().iter().zip([2.4, 4.0, 5.6]) {
            assert!((got - want).abs() < 1e-12, "{got} vs {want}");
        }
    }

    #[test]
    fn optimum_solves_the_system_for_other_sizes() {
        for n in [1, 2, 5, 17] {
            let beta = 0.6;
            let c = line_targets(n, 10.0);
            let z = line_optimum(&c, beta);
            // (I + 2βL) z = c, row by row.
            for i in 0..n {
                let d = line_degrees(n)[i];
                let nsum = if i > 0 { z[i - 1] } else { 0.0 } + if i + 1 < n { z[i + 1] } else { 0.0 };
                let lhs = z[i] + 2.0 * beta * (d * z[i] - nsum);
                assert!((lhs - c[i]).abs() < 1e-12, "n={n} row {i}: {lhs} vs {}", c[i]);
            }
        }
    }

    #[test]
    fn one_jacobi_epoch_from_the_scores_reaches_the_optimum() {
        let config = PreferenceConfig { initial: Some(vec![0.0, 4.0, 8.0]), ..PreferenceConfig::default() };
        let runtime = drive(Preference::engine(roster(3), config).unwrap(), &reference(), 1);
        let engine = runtime.engine();
        assert_eq!(engine.epoch(), 1);
        for (got, want) in engine.model().values().iter().zip([2.4, 4.0, 5.6]) {
            assert!((got - want).abs() < 1e-12, "{got} vs {want}");
        }
        assert!(engine.metric() < 1e-12);
        assert!(matches!(runtime.history().last().map(|t| &t.outcome), Some(EventOutcome::Finalized(_))));
    }

    #[test]
    fn forty_jacobi_epochs_from_zero_never_increase_the_distance() {
        let engine = Preference::engine(roster(3), PreferenceConfig::default()).unwrap();
        let start = engine.metric();
        let runtime = drive(engine, &reference(), 40);
        let distances: Vec<f64> = runtime.engine().summaries().iter().filter_map(|s| s.metric).collect();
        assert_eq!(distances.len(), 40);
        let mut previous = start;
        for (epoch, d) in distances.iter().enumerate() {
            assert!(*d <= previous, "epoch {epoch}: {d} > {previous}");
            previous = *d;
        }
        assert!(previous < 1e-6, "final distance {previous}");
    }

    #[test]
    fn reference_peers_reach_a_plateau_at_the_optimum() {
        let engine = Preference::engine(roster(3), PreferenceConfig::default()).unwrap();
        let mut controller = ConvergeController::for_engine(&engine, 60);
        let mut runtime = crate::runtime::MasRuntime::new(engine);
        let rule = reference();
        while controller.halt().is_none() {
            runtime = {
                let engine = runtime.into_engine();
                drive(engine, &rule, 1)
            };
            let summary = runtime.engine().summaries().last().cloned().expect("an epoch closed");
            controller.observe_summary(&summary);
        }
        assert_eq!(controller.halt(), Some(ConvergeHalt::Plateau));
        assert!(controller.epochs() < 60);
        assert!(runtime.engine().metric() < 1e-6);
    }

    fn halt_under(rule: &str) -> (Option<ConvergeHalt>, f64) {
        let engine = Preference::engine(roster(3), PreferenceConfig::default()).unwrap();
        let mut controller = ConvergeController::for_engine(&engine, 60);
        let runtime = drive(engine, &PREFERENCE.parse_rule(rule).unwrap(), 10);
        for summary in runtime.engine().summaries() {
            if let Some(halt) = controller.observe_summary(summary).halt {
                return (Some(halt), summary.metric.unwrap_or(f64::NAN));
            }
        }
        (None, runtime.engine().metric())
    }

    #[test]
    fn a_rule_that_never_moves_is_no_solution() {
        let (halt, distance) = halt_under("state");
        assert_eq!(halt, Some(ConvergeHalt::NoSolution));
        assert!(distance > 7.0);
    }

    #[test]
    fn a_wrong_rule_with_a_fixed_point_plateaus_away_from_the_optimum() {
        // Announcing the own score: one improving step, then a fixed point that is not z*.
        let (halt, distance) = halt_under("target");
        assert_eq!(halt, Some(ConvergeHalt::Plateau));
        assert!((distance - (2.0f64 * 2.4 * 2.4).sqrt()).abs() < 1e-12, "{distance}");
    }

    #[test]
    fn config_is_checked() {
        let bad = PreferenceConfig { beta: 0.0, ..PreferenceConfig::default() };
        assert!(matches!(Preference::new(3, bad), Err(EngineError::BadConfig { field: "beta", .. })));
        let bad = PreferenceConfig { initial: Some(vec![1.0]), ..PreferenceConfig::default() };
        assert!(matches!(Preference::new(3, bad), Err(EngineError::BadConfig { field: "initial", .. })));
        let single = Preference::new(1, PreferenceConfig::default()).unwrap();
        assert_eq!(single.optimum(), [0.0]);
    }
}
