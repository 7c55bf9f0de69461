//! A shared renewable resource with a price on extraction.
//!
//! Agents draw from one stock `R`. Agent `i` wants to extract `desired_i` (2.5 when `i mod 3 = 1`,
//! else 2.0, with `i` its roster position from 0) and starts out extracting exactly that. Each epoch
//! every agent announces its next extraction `e_i`; the engine then, in this order:
//!
//! 1. takes the harvest `min(Σe, R)` from the stock (the stock never goes negative: when the
//!    announced total exceeds it, the whole stock is taken; the announcements are recorded as made);
//! 2. moves the price, the dual variable of the quota `0.25·R` on the stock the agents saw:
//!    `λ ← max(0, λ + α(Σe − 0.25·R))`;
//! 3. lets the stock regrow logistically: `R ← R + r·R·(1 − R/K)` with `r = 0.2`, `K = 30`.
//!
//! The metric is the remaining stock, higher is better, judged after the horizon
//! `min(max-rounds, 12)`; the stock is drawn down by design, so the stall halts do not apply.
//!
//! **Greedy baseline.** The uncontrolled team is α = 0 ([`ResourceConfig::greedy`]): the price never
//! moves, so the reference rule reduces to [`GREEDY_RULE`], which ignores the price. On the
//! published instance a coordinated team (α = 0.35, every agent on the reference rule) retains more
//! stock after 12 rounds than the greedy one, which exhausts it.

use super::halt::{MetricDirection, MetricSpec};
use super::{EngineError, ScalarEngine, ScalarModel, bad_config};
use crate::assembly::{Quantities, RESOURCE, UpdateClass};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The resource engine.
pub type ResourceEngine = ScalarEngine<Resource>;

/// The rule of an agent that ignores the price: the reference rule with `price` = 0, which is what
/// every agent effectively runs when α = 0.
pub const GREEDY_RULE: &str = "clamp(extraction + eta*(desired - extraction), 0, stock)";

/// Resource constants (defaults as published).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceConfig {
    /// The stock before the first round, R⁰ (24).
    pub initial_stock: f64,
    /// The stock's carrying capacity K (30).
    pub capacity: f64,
    /// The logistic regrowth rate r (0.2).
    pub regen: f64,
    /// The quota as a fraction of the stock (0.25).
    pub quota_fraction: f64,
    /// The price step α (0.35; 0 is the uncontrolled, greedy team).
    pub alpha: f64,
    /// The agents' step size η, shown to them (0.4).
    pub eta: f64,
    /// The price before the first round (0).
    pub initial_price: f64,
    /// What agents at positions `i mod 3 = 1` want to extract (2.5).
    pub desired_high: f64,
    /// What the others want (2.0).
    pub desired_low: f64,
    /// The class's horizon in rounds (12).
    pub rounds: u64,
    /// At most this many epochs (the horizon is the smaller of this and `rounds`).
    pub max_rounds: Option<u64>,
}

impl Default for ResourceConfig {
    fn default() -> Self {
        ResourceConfig {
            initial_stock: 24.0,
            capacity: 30.0,
            regen: 0.2,
            quota_fraction: 0.25,
            alpha: 0.35,
            eta: 0.4,
            initial_price: 0.0,
            desired_high: 2.5,
            desired_low: 2.0,
            rounds: 12,
            max_rounds: None,
        }
    }
}

impl ResourceConfig {
    /// The published instance without price control (α = 0): the greedy baseline.
    pub fn greedy() -> Self {
        ResourceConfig { alpha: 0.0, ..ResourceConfig::default() }
    }
}

/// The resource plant: stock, price and each agent's current extraction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resource {
    config: ResourceConfig,
    stock: f64,
    price: f64,
    desired: Vec<f64>,
    extraction: Vec<f64>,
    harvested: f64,
}

impl Resource {
    /// `n` agents sharing the stock.
    pub fn new(n: usize, config: ResourceConfig) -> Result<Self, EngineError> {
        let c = &config;
        let finite = [
            c.initial_stock,
            c.capacity,
            c.regen,
            c.quota_fraction,
            c.alpha,
            c.eta,
            c.initial_price,
            c.desired_high,
            c.desired_low,
        ];
        if !finite.iter().all(|x| x.is_finite()) {
            return Err(bad_config("resource constants", "must all be finite"));
        }
        if c.capacity <= 0.0 {
            return Err(bad_config("capacity", "must be positive"));
        }
        if !(0.0..=c.capacity).contains(&c.initial_stock) {
            return Err(bad_config("initial_stock", format!("must lie between 0 and the capacity {}", c.capacity)));
        }
        if !(0.0..=1.0).contains(&c.regen) {
            return Err(bad_config("regen", "must lie between 0 and 1"));
        }
        if c.alpha < 0.0 || c.initial_price < 0.0 {
            return Err(bad_config("alpha", "and the initial price must not be negative"));
        }
        let desired: Vec<f64> = (0..n).map(|i| if i % 3 == 1 { c.desired_high } else { c.desired_low }).collect();
        Ok(Resource {
            stock: c.initial_stock,
            price: c.initial_price,
            extraction: desired.clone(),
            desired,
            harvested: 0.0,
            config,
        })
    }

    /// A resource engine over `roster`.
    pub fn engine(roster: Vec<String>, config: ResourceConfig) -> Result<ResourceEngine, EngineError> {
        ScalarEngine::new(Resource::new(roster.len(), config)?, roster)
    }

    /// The stock left.
    pub fn stock(&self) -> f64 {
        self.stock
    }

    /// The price λ.
    pub fn price(&self) -> f64 {
        self.price
    }

    /// Everything harvested so far.
    pub fn harvested(&self) -> f64 {
        self.harvested
    }
}

impl ScalarModel for Resource {
    fn class(&self) -> &'static UpdateClass {
        &RESOURCE
    }

    fn agents(&self) -> usize {
        self.desired.len()
    }

    fn epochs(&self) -> Option<u64> {
        Some(self.config.max_rounds.map_or(self.config.rounds, |m| m.min(self.config.rounds)))
    }

    fn quantities(&self, agent: usize) -> Quantities {
        BTreeMap::from([
            ("extraction".to_owned(), self.extraction.get(agent).copied().unwrap_or(0.0)),
            ("desired".to_owned(), self.desired.get(agent).copied().unwrap_or(0.0)),
            ("price".to_owned(), self.price),
            ("stock".to_owned(), self.stock),
            ("eta".to_owned(), self.config.eta),
        ])
    }

    fn check(&self, value: f64) -> Result<(), String> {
        if value < 0.0 { Err(format!("an extraction cannot be negative ({value})")) } else { Ok(()) }
    }

    fn step(&mut self, announced: &[f64]) {
        let c = &self.config;
        let total: f64 = announced.iter().sum();
        let seen = self.stock;
        let harvest = total.min(seen);
        self.price = (self.price + c.alpha * (total - c.quota_fraction * seen)).max(0.0);
        let left = (seen - harvest).max(0.0);
        self.stock = (left + c.regen * left * (1.0 - left / c.capacity)).clamp(0.0, c.capacity);
        self.harvested += harvest;
        self.extraction.iter_mut().zip(announced).for_each(|(e, a)| *e = *a);
    }

    fn metric(&self) -> f64 {
        self.stock
    }

    fn metric_spec(&self) -> MetricSpec {
        MetricSpec { name: "stock", direction: MetricDirection::HigherIsBetter, stall_halts: false }
    }

    fn state(&self) -> BTreeMap<String, f64> {
        BTreeMap::from([
            ("stock".to_owned(), self.stock),
            ("price".to_owned(), self.price),
            ("harvested".to_owned(), self.harvested),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assembly::Expr;
    use crate::engines::tests::{drive, meta, roster};
    use crate::runtime::{CoordinationEngine, EventOutcome, PatternKind, RejectReason, SemanticEvent};

    fn final_stock(config: ResourceConfig, rule: &str) -> f64 {
        let engine = Resource::engine(roster(3), config).unwrap();
        let rule = RESOURCE.parse_rule(rule).unwrap();
        let runtime = drive(engine, &rule, 100);
        assert!(runtime.engine().is_complete());
        assert_eq!(runtime.engine().summaries().len(), 12);
        runtime.engine().model().stock()
    }

    #[test]
    fn a_coordinated_team_retains_more_stock_than_a_greedy_one() {
        let coordinated = final_stock(ResourceConfig::default(), RESOURCE.reference);
        let uncontrolled = final_stock(ResourceConfig::greedy(), RESOURCE.reference);
        let price_blind = final_stock(ResourceConfig::default(), GREEDY_RULE);
        assert!(coordinated > uncontrolled, "{coordinated} vs {uncontrolled}");
        assert!(coordinated > 1.0, "{coordinated}");
        // With α = 0 the price never moves, so the reference rule is the greedy rule.
        assert_eq!(uncontrolled, price_blind);
    }

    #[test]
    fn the_greedy_rule_differs_from_the_reference() {
        assert!(matches!(RESOURCE.score(Some(GREEDY_RULE)), crate::assembly::Verdict::Differs { .. }));
        assert!(Expr::parse(GREEDY_RULE, &RESOURCE.names()).is_ok());
    }

    #[test]
    fn one_round_by_hand() {
        // Extractions 2, 2.5, 2: harvest 6.5 from 24; λ = 0.35·(6.5 − 6) = 0.175;
        // left 17.5, regrowth 0.2·17.5·(1 − 17.5/30).
        let mut engine = Resource::engine(roster(3), ResourceConfig::default()).unwrap();
        let mut last = EventOutcome::Applied;
        for (i, value) in [2.0, 2.5, 2.0].into_iter().enumerate() {
            let agent = format!("agent-{i}");
            last = engine.apply(&SemanticEvent::scalar(PatternKind::Resource, meta(&agent, &agent, 0), value));
        }
        let EventOutcome::Finalized(summary) = last else { panic!("{last:?}") };
        let left = 17.5;
        let want = left + 0.2 * left * (1.0 - left / 30.0);
        assert!((engine.model().stock() - want).abs() < 1e-12);
        assert!((engine.model().price() - 0.175).abs() < 1e-12);
        assert_eq!(summary.metric, Some(engine.model().stock()));
        assert_eq!(engine.local_view("agent-1").unwrap().quantities["extraction"], 2.5);
    }

    #[test]
    fn over_extraction_empties_the_stock_but_never_below_zero() {
        let config = ResourceConfig { initial_stock: 1.0, ..ResourceConfig::default() };
        let mut engine = Resource::engine(roster(3), config).unwrap();
        for i in 0..3 {
            let agent = format!("agent-{i}");
            engine.apply(&SemanticEvent::scalar(PatternKind::Resource, meta(&agent, &agent, 0), 5.0));
        }
        assert_eq!(engine.model().stock(), 0.0);
        assert_eq!(engine.model().harvested(), 1.0);
        let outcome = engine.apply(&SemanticEvent::scalar(PatternKind::Resource, meta("neg", "agent-0", 1), -0.5));
        assert!(matches!(outcome, EventOutcome::Rejected(RejectReason::IncompatiblePayload { .. })));
    }
}
