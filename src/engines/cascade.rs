//! A supply-chain cascade: stages in a chain, each ordering from the one above.
//!
//! Stage 0 (the retailer) faces the external demand; stage `i > 0` faces the order stage `i − 1`
//! placed. Orders arrive after `lead` periods; the topmost stage orders from an unlimited source.
//! Suppliers ship what is ordered in full (shortages show up as the ordering stage's backlog, not as
//! short shipments upstream) — the usual simplification of the bullwhip model, which keeps each
//! stage's dynamics a function of its own orders and the demand it sees.
//!
//! Timeline. Epoch `t` is period `t`. Before the view of epoch `t` is shown, period `t` has
//! happened up to the ordering decision: the period's arrival was received and its demand shipped.
//! So a stage sees `inventory` after shipping (negative: backlog), `pipeline` = the units still in
//! transit, the `demand` it just faced and the one before, its `last_order`, and the constants.
//! When every stage has announced its order the engine places the orders (each joins its stage's
//! pipeline), charges the period's costs — holding `1 · max(inventory, 0)`, backlog
//! `2 · max(−inventory, 0)`, order change `0.5 · (order − last_order)²` per stage — and, unless the
//! horizon is reached, runs period `t + 1` up to the next decision: arrivals, then demand
//! (`demand[t + 1]` for the retailer, the orders just placed for the stages above).
//!
//! With the published constants (lead 2, target 8, inventory 8, orders 4, pipeline [4, 4]) the chain
//! starts in a steady state: the reference order-up-to rule orders 4 at every stage while demand is
//! 4. The metric is the accumulated cost, lower is better; it only ever grows, so the run is judged
//! at its horizon, `min(max-rounds, demand length)`, and the stall halts do not apply.

use super::halt::{MetricDirection, MetricSpec};
use super::{EngineError, ScalarEngine, ScalarModel, bad_config};
use crate::assembly::{CASCADE, Quantities, UpdateClass};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};

/// The cascade engine.
pub type CascadeEngine = ScalarEngine<Cascade>;

/// Cascade constants (defaults as published).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CascadeConfig {
    /// Periods between ordering and receiving (2).
    pub lead: u32,
    /// The stock level each stage aims to hold (8).
    pub target_inventory: f64,
    /// Each stage's stock before the first period (8).
    pub initial_inventory: f64,
    /// The order every stage placed before the run (4); also the demand seen before it.
    pub initial_order: f64,
    /// Units in transit to each stage before the first period, arriving first to last (`[4, 4]`;
    /// its length must be `lead`).
    pub pipeline: Vec<f64>,
    /// The retailer's demand per period (`[4, 4, 4, 8, 8, 8, 4, 4]`); its length is the horizon.
    pub demand: Vec<f64>,
    /// Cost per unit held per period (1).
    pub holding_cost: f64,
    /// Cost per unit of backlog per period (2).
    pub backlog_cost: f64,
    /// Weight of the squared order change (0.5).
    pub order_change_cost: f64,
    /// Smoothing weight of the previous demand, shown to peers (1).
    pub rho: f64,
    /// Smoothing weight of the previous order, shown to peers (0).
    pub gamma: f64,
    /// At most this many epochs (the horizon is the smaller of this and the demand length).
    pub max_rounds: Option<u64>,
}

impl Default for CascadeConfig {
    fn default() -> Self {
        CascadeConfig {
            lead: 2,
            target_inventory: 8.0,
            initial_inventory: 8.0,
            initial_order: 4.0,
            pipeline: vec![4.0, 4.0],
            demand: vec![4.0, 4.0, 4.0, 8.0, 8.0, 8.0, 4.0, 4.0],
            holding_cost: 1.0,
            backlog_cost: 2.0,
            order_change_cost: 0.5,
            rho: 1.0,
            gamma: 0.0,
            max_rounds: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Stage {
    inventory: f64,
    pipeline: VecDeque<f64>,
    last_order: f64,
    demand: f64,
    previous_demand: f64,
}

/// The cascade plant: the stages, the period and the accumulated cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cascade {
    config: CascadeConfig,
    stages: Vec<Stage>,
    period: usize,
    cost: f64,
}

impl Cascade {
    /// A chain of `n` stages (stage 0 is the retailer).
    pub fn new(n: usize, config: CascadeConfig) -> Result<Self, EngineError> {
        if config.lead == 0 {
            return Err(bad_config("lead", "must be at least 1"));
        }
        if config.pipeline.len() != config.lead as usize {
            return Err(bad_config(
                "pipeline",
                format!("has {} entries but the lead time is {}", config.pipeline.len(), config.lead),
            ));
        }
        if config.demand.is_empty() {
            return Err(bad_config("demand", "is empty"));
        }
        let numbers = [
            config.target_inventory,
            config.initial_inventory,
            config.initial_order,
            config.holding_cost,
            config.backlog_cost,
            config.order_change_cost,
            config.rho,
            config.gamma,
        ];
        if !numbers.iter().chain(&config.pipeline).chain(&config.demand).all(|x| x.is_finite()) {
            return Err(bad_config("cascade constants", "must all be finite"));
        }
        let stage = Stage {
            inventory: config.initial_inventory,
            pipeline: config.pipeline.iter().copied().collect(),
            last_order: config.initial_order,
            demand: config.initial_order,
            previous_demand: config.initial_order,
        };
        let mut cascade = Cascade { stages: vec![stage; n], period: 0, cost: 0.0, config };
        let before_the_run = vec![cascade.config.initial_order; n];
        cascade.open_period(&before_the_run);
        Ok(cascade)
    }

    /// A cascade engine over `roster` (roster order is the chain order, retailer first).
    pub fn engine(roster: Vec<String>, config: CascadeConfig) -> Result<CascadeEngine, EngineError> {
        ScalarEngine::new(Cascade::new(roster.len(), config)?, roster)
    }

    /// The accumulated cost.
    pub fn cost(&self) -> f64 {
        self.cost
    }

    /// The period whose decision is open (equal to the number of epochs run).
    pub fn period(&self) -> usize {
        self.period
    }

    fn horizon(&self) -> u64 {
        let len = self.config.demand.len() as u64;
        self.config.max_rounds.map_or(len, |m| m.min(len))
    }

    /// Runs the current period up to the ordering decision: arrivals, then demand and shipping.
    /// `orders` are the orders placed last (stage `i − 1`'s order is stage `i`'s demand).
    fn open_period(&mut self, orders: &[f64]) {
        let external = self.config.demand.get(self.period).copied().unwrap_or(0.0);
        for (i, stage) in self.stages.iter_mut().enumerate() {
            stage.inventory += stage.pipeline.pop_front().unwrap_or(0.0);
            let demand = if i == 0 { external } else { orders.get(i - 1).copied().unwrap_or(0.0) };
            stage.inventory -= demand;
            stage.previous_demand = stage.demand;
            stage.demand = demand;
        }
    }
}

impl ScalarModel for Cascade {
    fn class(&self) -> &'static UpdateClass {
        &CASCADE
    }

    fn agents(&self) -> usize {
        self.stages.len()
    }

    fn epochs(&self) -> Option<u64> {
        Some(self.horizon())
    }

    fn quantities(&self, agent: usize) -> Quantities {
        let Some(stage) = self.stages.get(agent) else { return Quantities::new() };
        BTreeMap::from([
            ("inventory".to_owned(), stage.inventory),
            ("pipeline".to_owned(), stage.pipeline.iter().sum()),
            ("last_order".to_owned(), stage.last_order),
            ("demand".to_owned(), stage.demand),
            ("previous_demand".to_owned(), stage.previous_demand),
            ("target_inventory".to_owned(), self.config.target_inventory),
            ("lead".to_owned(), f64::from(self.config.lead)),
            ("rho".to_owned(), self.config.rho),
            ("gamma".to_owned(), self.config.gamma),
        ])
    }

    fn check(&self, value: f64) -> Result<(), String> {
        if value < 0.0 { Err(format!("an order cannot be negative ({value})")) } else { Ok(()) }
    }

    fn step(&mut self, announced: &[f64]) {
        let c = &self.config;
        for (stage, &order) in self.stages.iter_mut().zip(announced) {
            stage.pipeline.push_back(order);
            let change = order - stage.last_order;
            self.cost += c.order_change_cost * change * change
                + c.holding_cost * stage.inventory.max(0.0)
                + c.backlog_cost * (-stage.inventory).max(0.0);
            stage.last_order = order;
        }
        self.period += 1;
        if (self.period as u64) < self.horizon() {
            self.open_period(announced);
        }
    }

    fn metric(&self) -> f64 {
        self.cost
    }

    fn metric_spec(&self) -> MetricSpec {
        MetricSpec { name: "cost", direction: MetricDirection::LowerIsBetter, stall_halts: false }
    }

    fn state(&self) -> BTreeMap<String, f64> {
        BTreeMap::from([("cost".to_owned(), self.cost), ("period".to_owned(), self.period as f64)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::halt::{ConvergeController, ConvergeHalt};
    use crate::engines::tests::{drive, meta, roster};
    use crate::runtime::{CoordinationEngine, EventOutcome, PatternKind, RejectReason, SemanticEvent};

    #[test]
    fn the_published_chain_starts_in_a_steady_state() {
        let engine = Cascade::engine(roster(4), CascadeConfig::default()).unwrap();
        for agent in engine.participants() {
            let view = engine.local_view(agent).unwrap();
            assert_eq!(view.quantities["inventory"], 8.0);
            assert_eq!(view.quantities["pipeline"], 4.0);
            assert_eq!(engine.reference_value(agent).unwrap(), Ok(4.0), "{agent}");
        }
    }

    #[test]
    fn four_reference_stages_over_the_demand_cost_something_and_stop_at_the_horizon() {
        let engine = Cascade::engine(roster(4), CascadeConfig::default()).unwrap();
        let mut controller = ConvergeController::for_engine(&engine, 20);
        assert_eq!(controller.horizon(), 8);
        let mut runtime = drive(engine, &CASCADE.reference_expr().unwrap(), 100);
        let engine = runtime.engine();
        assert!(engine.is_complete());
        assert_eq!(engine.summaries().len(), 8);
        assert!(engine.model().cost() > 0.0);
        let halts: Vec<_> = engine.summaries().iter().map(|s| controller.observe_summary(s).halt).collect();
        assert_eq!(halts.last(), Some(&Some(ConvergeHalt::PaperHorizon)));
        assert!(halts[..7].iter().all(Option::is_none), "{halts:?}");
        // The demand step shows up upstream amplified (the bullwhip): the factory's largest order
        // exceeds the retailer's.
        let max_order = |agent: &str| engine.summaries().iter().map(|s| s.values[agent]).fold(f64::MIN, f64::max);
        assert!(max_order("agent-3") > max_order("agent-0"));
        let outcome = runtime.apply(SemanticEvent::scalar(PatternKind::Cascade, meta("late", "agent-0", 8), 4.0));
        assert!(matches!(outcome, EventOutcome::Rejected(RejectReason::PastHorizon { horizon: 8, .. })));
    }

    #[test]
    fn max_rounds_shortens_the_horizon() {
        let config = CascadeConfig { max_rounds: Some(3), ..CascadeConfig::default() };
        let runtime = drive(Cascade::engine(roster(2), config).unwrap(), &CASCADE.reference_expr().unwrap(), 100);
        assert_eq!(runtime.engine().summaries().len(), 3);
        assert!(runtime.engine().is_complete());
    }

    #[test]
    fn costs_follow_the_published_weights() {
        // One stage, steady demand, ordering 6 instead of 4: order change 0.5·2² = 2 plus holding 8.
        let config = CascadeConfig { demand: vec![4.0, 4.0], ..CascadeConfig::default() };
        let mut runtime = crate::runtime::MasRuntime::new(Cascade::engine(roster(1), config).unwrap());
        let outcome = runtime.apply(SemanticEvent::scalar(PatternKind::Cascade, meta("o", "agent-0", 0), 6.0));
        let EventOutcome::Finalized(summary) = outcome else { panic!("{outcome:?}") };
        assert_eq!(summary.metric, Some(10.0));
        // Next period: arrival 4, demand 4, so inventory stays 8; 6 is now in transit.
        assert_eq!(summary.state["agent-0.inventory"], 8.0);
        assert_eq!(summary.state["agent-0.pipeline"], 6.0);
    }

    #[test]
    fn negative_orders_are_refused() {
        let mut engine = Cascade::engine(roster(2), CascadeConfig::default()).unwrap();
        let outcome = engine.apply(&SemanticEvent::scalar(PatternKind::Cascade, meta("n", "agent-0", 0), -1.0));
        assert!(matches!(outcome, EventOutcome::Rejected(RejectReason::IncompatiblePayload { .. })));
    }

    #[test]
    fn config_is_checked() {
        let bad = CascadeConfig { pipeline: vec![4.0], ..CascadeConfig::default() };
        assert!(matches!(Cascade::new(2, bad), Err(EngineError::BadConfig { field: "pipeline", .. })));
        let bad = CascadeConfig { demand: vec![], ..CascadeConfig::default() };
        assert!(matches!(Cascade::new(2, bad), Err(EngineError::BadConfig { field: "demand", .. })));
    }
}
