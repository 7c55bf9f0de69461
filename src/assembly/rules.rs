//! What each scalar class's UPDATE rule may read, the reference rule it is scored against, and the
//! scoring itself.
//!
//! Scoring asks "does this rule compute the same function as the reference?", not "is it the same
//! text": a correct rule written another way must match. Both rules are evaluated at
//! [`PROBE_POINTS`] points drawn from each quantity's probe range with the published generator
//! (xorshift64*, seed [`PROBE_SEED`]), so every verdict is reproducible on any machine. A point
//! counts as a gap when `|rule − reference| > 1e-9 · max(|reference|, 1)`.
//!
//! Verdicts: [`Verdict::Missing`] (no rule), [`Verdict::Invalid`] (it does not parse over the class's
//! names, or fails to evaluate at a probe point — a division by zero there is a rule that cannot be
//! applied), [`Verdict::Differs`] with the worst gap and where it occurred, or [`Verdict::Matches`].
//!
//! **Probe ranges** are realistic for the class, because a rule only has to agree with the
//! reference where the engine will ask it, and because a range that is too narrow would let a wrong
//! rule pass (the cascade's `max(0, …)` only matters when the stock on hand and on order already
//! exceeds the order-up-to level, so the ranges include such points):
//!
//! | class | quantity | range |
//! |---|---|---|
//! | preference | state, target | 0 … 10 (scores on a 0–10 span) |
//! | preference | beta | 0.1 … 2 |
//! | preference | degree | whole 1 … 2 (a line graph) |
//! | preference | neighbour_sum | 0 … 20 (up to two neighbours' states) |
//! | cascade | inventory | −8 … 16 (negative is backlog) |
//! | cascade | pipeline, last_order | 0 … 16 |
//! | cascade | demand, previous_demand | 0 … 12 |
//! | cascade | target_inventory | 4 … 12 |
//! | cascade | lead | whole 1 … 4 |
//! | cascade | rho, gamma | 0 … 1 |
//! | resource | extraction | 0 … 5 |
//! | resource | desired | 1.5 … 3.5 |
//! | resource | price | 0 … 2 |
//! | resource | stock | 0 … 30 (up to the capacity) |
//! | resource | eta | 0.1 … 1 |
//!
//! The quantity names are exactly those of the design's table ([`quantity_names`]); the engines
//! expose their local views under these names, and the skills teach them.

use super::expr::{Expr, ExprError, Quantities};
use crate::runtime::PatternKind;
use serde::{Deserialize, Serialize};

/// How many points a rule is probed at.
pub const PROBE_POINTS: usize = 64;

/// The probe generator's seed (as published, so verdicts are comparable).
pub const PROBE_SEED: u64 = 0x5eed_5a0d_1a7e;

/// The relative tolerance of a gap: it counts when it exceeds `GAP_TOLERANCE · max(|reference|, 1)`.
pub const GAP_TOLERANCE: f64 = 1e-9;

/// Where a quantity's probe values are drawn from.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum ProbeRange {
    /// A real number, uniform in `[lo, hi)`.
    Uniform {
        /// Lower end.
        lo: f64,
        /// Upper end.
        hi: f64,
    },
    /// A whole number, uniform in `lo..=hi`.
    Whole {
        /// Lower end.
        lo: u32,
        /// Upper end.
        hi: u32,
    },
}

/// One named local quantity of a class.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct QuantitySpec {
    /// Its name in rules and local views.
    pub name: &'static str,
    /// What it is, for people.
    pub meaning: &'static str,
    /// Where probe values come from.
    pub probe: ProbeRange,
}

/// A scalar class as ASSEMBLY sees it: what a rule may read and what it is scored against.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct UpdateClass {
    /// The class.
    pub pattern: PatternKind,
    /// What the announced value is.
    pub announces: &'static str,
    /// The quantities, in the order views list them.
    pub quantities: &'static [QuantitySpec],
    /// The reference rule (scoring only: no engine applies it).
    pub reference: &'static str,
}

const fn uniform(lo: f64, hi: f64) -> ProbeRange {
    ProbeRange::Uniform { lo, hi }
}

const fn q(name: &'static str, meaning: &'static str, probe: ProbeRange) -> QuantitySpec {
    QuantitySpec { name, meaning, probe }
}

/// Preference aggregation: the synchronous Jacobi step.
pub const PREFERENCE: UpdateClass = UpdateClass {
    pattern: PatternKind::Preference,
    announces: "the node's next value z_i",
    quantities: &[
        q("state", "the node's current value z_i", uniform(0.0, 10.0)),
        q("target", "the node's private score c_i", uniform(0.0, 10.0)),
        q("beta", "the coupling to neighbours", uniform(0.1, 2.0)),
        q("degree", "the number of neighbours", ProbeRange::Whole { lo: 1, hi: 2 }),
        q("neighbour_sum", "the sum of the neighbours' current values", uniform(0.0, 20.0)),
    ],
    reference: "(target + 2*beta*neighbour_sum) / (1 + 2*beta*degree)",
};

/// Supply-chain cascade: order-up-to with smoothing.
pub const CASCADE: UpdateClass = UpdateClass {
    pattern: PatternKind::Cascade,
    announces: "the stage's next order",
    quantities: &[
        q("inventory", "stock on hand after shipping this period's demand (negative: backlog)", uniform(-8.0, 16.0)),
        q("pipeline", "units ordered and still in transit", uniform(0.0, 16.0)),
        q("last_order", "the stage's previous order", uniform(0.0, 16.0)),
        q("demand", "the demand the stage faced this period", uniform(0.0, 12.0)),
        q("previous_demand", "the demand it faced the period before", uniform(0.0, 12.0)),
        q("target_inventory", "the stock level to hold", uniform(4.0, 12.0)),
        q("lead", "periods between ordering and receiving", ProbeRange::Whole { lo: 1, hi: 4 }),
        q("rho", "weight of the previous demand (smoothing)", uniform(0.0, 1.0)),
        q("gamma", "weight of the previous order (smoothing)", uniform(0.0, 1.0)),
    ],
    reference: "(max(0, target_inventory + lead*demand - inventory - pipeline) + gamma*last_order + rho*previous_demand) / (1 + gamma + rho)",
};

/// Sustainable resource: a dual step on the agent's extraction.
pub const RESOURCE: UpdateClass = UpdateClass {
    pattern: PatternKind::Resource,
    announces: "the agent's next extraction",
    quantities: &[
        q("extraction", "the agent's current extraction", uniform(0.0, 5.0)),
        q("desired", "the extraction the agent wants", uniform(1.5, 3.5)),
        q("price", "the price on extraction (the dual variable)", uniform(0.0, 2.0)),
        q("stock", "the shared stock left", uniform(0.0, 30.0)),
        q("eta", "the step size", uniform(0.1, 1.0)),
    ],
    reference: "clamp(extraction + eta*((desired - extraction) - price), 0, stock)",
};

/// The scalar class for `pattern` (`None` for development and unmapped, which have no UPDATE rule).
pub fn update_class(pattern: PatternKind) -> Option<&'static UpdateClass> {
    match pattern {
        PatternKind::Preference => Some(&PREFERENCE),
        PatternKind::Cascade => Some(&CASCADE),
        PatternKind::Resource => Some(&RESOURCE),
        PatternKind::Development | PatternKind::Unmapped => None,
    }
}

/// The quantity names a rule of `pattern` may read, in view order (empty for classes without rules).
pub fn quantity_names(pattern: PatternKind) -> Vec<&'static str> {
    update_class(pattern).map(|c| c.names()).unwrap_or_default()
}

impl UpdateClass {
    /// The quantity names, in view order.
    pub fn names(&self) -> Vec<&'static str> {
        self.quantities.iter().map(|q| q.name).collect()
    }

    /// Parses a rule over this class's names.
    pub fn parse_rule(&self, rule: &str) -> Result<Expr, ExprError> {
        Expr::parse(rule, &self.names())
    }

    /// The reference rule, parsed.
    pub fn reference_expr(&self) -> Result<Expr, ExprError> {
        self.parse_rule(self.reference)
    }

    /// What the reference rule gives for `values` (scoring and reports only).
    pub fn reference_value(&self, values: &Quantities) -> Result<f64, ExprError> {
        self.reference_expr()?.eval(values)
    }

    /// The probe points, reproducibly.
    pub fn probe_points(&self) -> Vec<Quantities> {
        let mut rng = ProbeRng::new(PROBE_SEED);
        (0..PROBE_POINTS)
            .map(|_| self.quantities.iter().map(|q| (q.name.to_owned(), rng.draw(q.probe))).collect())
            .collect()
    }

    /// Scores a peer's rule against the reference.
    pub fn score(&self, rule: Option<&str>) -> Verdict {
        let Some(rule) = rule.map(str::trim).filter(|r| !r.is_empty()) else {
            return Verdict::Missing;
        };
        let expr = match self.parse_rule(rule) {
            Ok(expr) => expr,
            Err(e) => return Verdict::Invalid { reason: e.to_string() },
        };
        let reference = match self.reference_expr() {
            Ok(r) => r,
            Err(e) => return Verdict::Invalid { reason: format!("the reference rule does not parse: {e}") },
        };
        let mut worst: Option<(f64, Quantities)> = None;
        for (i, point) in self.probe_points().into_iter().enumerate() {
            // The ranges keep the reference defined; a point where it is not says nothing about the rule.
            let Ok(want) = reference.eval(&point) else { continue };
            let got = match expr.eval(&point) {
                Ok(v) => v,
                Err(e) => return Verdict::Invalid { reason: format!("at probe point {}: {e}", i + 1) },
            };
            let gap = (got - want).abs();
            if gap > GAP_TOLERANCE * want.abs().max(1.0) && worst.as_ref().is_none_or(|(w, _)| gap > *w) {
                worst = Some((gap, point));
            }
        }
        match worst {
            None => Verdict::Matches,
            Some((worst_gap, at)) => Verdict::Differs { worst_gap, at },
        }
    }
}

/// A rule's verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum Verdict {
    /// It computes the reference's function on every probe point.
    Matches,
    /// It parses but computes something else.
    Differs {
        /// The largest gap that counted.
        worst_gap: f64,
        /// The probe point where it occurred.
        at: Quantities,
    },
    /// It does not parse over the class's names, or cannot be evaluated.
    Invalid {
        /// Why, with where.
        reason: String,
    },
    /// There is no rule.
    Missing,
}

impl Verdict {
    /// True when the rule can be applied (it matches or differs): a peer without one cannot take
    /// part in CONVERGE.
    pub fn is_usable(&self) -> bool {
        matches!(self, Verdict::Matches | Verdict::Differs { .. })
    }

    /// The kebab-case name.
    pub fn label(&self) -> &'static str {
        match self {
            Verdict::Matches => "matches",
            Verdict::Differs { .. } => "differs",
            Verdict::Invalid { .. } => "invalid",
            Verdict::Missing => "missing",
        }
    }
}

/// Scores `rule` for `pattern`; classes without rules give `Invalid`.
pub fn score_rule(pattern: PatternKind, rule: Option<&str>) -> Verdict {
    match update_class(pattern) {
        Some(class) => class.score(rule),
        None => Verdict::Invalid { reason: format!("class {pattern} has no UPDATE rule") },
    }
}

/// The probe generator: xorshift64* (Vigna), as the published implementation uses.
#[derive(Debug, Clone)]
pub struct ProbeRng {
    state: u64,
}

impl ProbeRng {
    /// A generator from `seed` (a zero seed, which xorshift cannot leave, is replaced by 1).
    pub fn new(seed: u64) -> Self {
        ProbeRng { state: if seed == 0 { 1 } else { seed } }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.state;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.state = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A uniform number in `[0, 1)` from the top 53 bits.
    pub fn next_unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// One value from `range`.
    pub fn draw(&mut self, range: ProbeRange) -> f64 {
        match range {
            ProbeRange::Uniform { lo, hi } => lo + (hi - lo) * self.next_unit(),
            ProbeRange::Whole { lo, hi } => {
                let span = u64::from(hi.saturating_sub(lo)) + 1;
                f64::from(lo) + (self.next_u64() % span) as f64
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [&UpdateClass; 3] = [&PREFERENCE, &CASCADE, &RESOURCE];

    fn differs(verdict: &Verdict) -> bool {
        matches!(verdict, Verdict::Differs { worst_gap, .. } if *worst_gap > 0.0)
    }

    #[test]
    fn quantity_names_are_the_design_tables() {
        assert_eq!(quantity_names(PatternKind::Preference), ["state", "target", "beta", "degree", "neighbour_sum"]);
        assert_eq!(
            quantity_names(PatternKind::Cascade),
            [
                "inventory",
                "pipeline",
                "last_order",
                "demand",
                "previous_demand",
                "target_inventory",
                "lead",
                "rho",
                "gamma"
            ]
        );
        assert_eq!(quantity_names(PatternKind::Resource), ["extraction", "desired", "price", "stock", "eta"]);
        assert!(quantity_names(PatternKind::Development).is_empty());
        assert!(quantity_names(PatternKind::Unmapped).is_empty());
    }

    #[test]
    fn reference_rules_match_themselves() {
        for class in ALL {
            assert_eq!(class.score(Some(class.reference)), Verdict::Matches, "{}", class.pattern);
            let names = class.names();
            assert!(class.reference_expr().unwrap().names().iter().all(|n| names.contains(n)), "{}", class.pattern);
        }
    }

    #[test]
    fn rewritten_equivalents_match() {
        let cases: &[(&UpdateClass, &str)] = &[
            (&PREFERENCE, "(2*neighbour_sum*beta + target)/(2*degree*beta + 1)"),
            (&PREFERENCE, "target/(1+2*beta*degree) + neighbour_sum*(2*beta)/(1+2*beta*degree)"),
            (&PREFERENCE, "(target + beta*neighbour_sum + beta*neighbour_sum) / (1 + beta*degree*2)"),
            (
                &CASCADE,
                "(rho*previous_demand + gamma*last_order + max(target_inventory + lead*demand - (inventory + pipeline), 0)) / (rho + gamma + 1)",
            ),
            (
                &CASCADE,
                "(max(0, target_inventory - inventory - pipeline + demand*lead) + gamma*last_order + rho*previous_demand) / (1 + gamma + rho)",
            ),
            (&RESOURCE, "min(max(extraction*(1 - eta) + eta*(desired - price), 0), stock)"),
            (&RESOURCE, "max(0, min(stock, extraction + eta*desired - eta*extraction - eta*price))"),
        ];
        for (class, rule) in cases {
            assert_eq!(class.score(Some(rule)), Verdict::Matches, "{rule}");
        }
    }

    #[test]
    fn wrong_rules_differ() {
        let cases: &[(&UpdateClass, &str)] = &[
            (&PREFERENCE, "(state + 2*beta*neighbour_sum) / (1 + 2*beta*degree)"),
            (&PREFERENCE, "(target + beta*neighbour_sum) / (1 + beta*degree)"),
            (&PREFERENCE, "(target + 2*beta*neighbour_sum) / (1 + 4*beta)"),
            (
                &CASCADE,
                "((target_inventory + lead*demand - inventory - pipeline) + gamma*last_order + rho*previous_demand) / (1 + gamma + rho)",
            ),
            (&RESOURCE, "extraction + eta*((desired - extraction) - price)"),
            (&RESOURCE, "clamp(extraction + eta*(desired - extraction), 0, stock)"),
        ];
        for (class, rule) in cases {
            let verdict = class.score(Some(rule));
            assert!(differs(&verdict), "{rule}: {verdict:?}");
        }
    }

    #[test]
    fn invalid_and_missing_rules() {
        for rule in ["sqrt(target)", "target + z_star", "(target", "target / (degree - degree)"] {
            let verdict = PREFERENCE.score(Some(rule));
            assert!(matches!(verdict, Verdict::Invalid { .. }), "{rule}: {verdict:?}");
            assert!(!verdict.is_usable());
        }
        assert_eq!(PREFERENCE.score(None), Verdict::Missing);
        assert_eq!(PREFERENCE.score(Some("  ")), Verdict::Missing);
        assert!(matches!(score_rule(PatternKind::Unmapped, Some("1")), Verdict::Invalid { .. }));
        let Verdict::Invalid { reason } = PREFERENCE.score(Some("target + z_star")) else { unreachable!() };
        assert!(reason.contains("column 10") && reason.contains("z_star"), "{reason}");
    }

    #[test]
    fn probes_are_reproducible_and_in_range() {
        for class in ALL {
            let points = class.probe_points();
            assert_eq!(points.len(), PROBE_POINTS);
            assert_eq!(points, class.probe_points());
            for point in &points {
                for spec in class.quantities {
                    let v = point[spec.name];
                    match spec.probe {
                        ProbeRange::Uniform { lo, hi } => assert!(v >= lo && v < hi, "{} = {v}", spec.name),
                        ProbeRange::Whole { lo, hi } => {
                            assert!(v.fract() == 0.0 && v >= f64::from(lo) && v <= f64::from(hi), "{} = {v}", spec.name)
                        }
                    }
                }
            }
        }
        // The first outputs of xorshift64* from the published seed (computed independently), pinned so
        // that a change to the generator, and so to every verdict, is noticed.
        let mut rng = ProbeRng::new(PROBE_SEED);
        let first: Vec<u64> = (0..3).map(|_| rng.next_u64()).collect();
        assert_eq!(first, [0x2f1d_fb6b_f6a5_d10a, 0x90b2_058b_7d17_18f0, 0x545b_e217_0dce_7064]);
    }
}
