//! Saliency of one target from its raw signals: a pure function, bounded per signal.
//!
//! Every input is narrowed first: non-finite or negative counts become 0, fractions are clamped to
//! [0, 1]. Every response uses only `+ - * /` and `sqrt`, which IEEE 754 requires to be correctly
//! rounded, so two machines compute the same bits; `ln` and `exp` are not so specified across math
//! libraries, and one differing last bit would split the team's frame. Where a logarithm would be
//! natural (heavy-tailed reference counts) we use the fourth root instead, which compresses the
//! tail enough and is exact to compute.

use super::weights;
use serde::{Deserialize, Serialize};

/// The raw signals of one target, before weighting.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RawSignals {
    /// Whether the task text names the target.
    pub task: bool,
    /// Error count.
    pub errors: f64,
    /// Warning count.
    pub warnings: f64,
    /// Centrality already normalized to [0, 1] over the snapshot.
    pub centrality: f64,
    /// Recency in [0, 1].
    pub recency: f64,
    /// Whether the target is open in an editor.
    pub editor: bool,
}

/// Each signal's weighted contribution, and their sum.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Contributions {
    /// Task naming.
    pub task: f64,
    /// Errors.
    pub errors: f64,
    /// Warnings.
    pub warnings: f64,
    /// Centrality.
    pub centrality: f64,
    /// Recency.
    pub recency: f64,
    /// Editor.
    pub editor: f64,
}

impl Contributions {
    /// The saliency: the sum of the contributions.
    pub fn total(&self) -> f64 {
        self.task + self.errors + self.warnings + self.centrality + self.recency + self.editor
    }
}

/// A count made safe: NaN, infinities and negatives become 0.
pub fn narrow_count(x: f64) -> f64 {
    if x.is_finite() && x > 0.0 { x } else { 0.0 }
}

/// A fraction made safe: non-finite becomes 0, the rest is clamped to [0, 1].
pub fn narrow_unit(x: f64) -> f64 {
    if x.is_finite() { x.clamp(0.0, 1.0) } else { 0.0 }
}

/// Saturating response `n / (n + half)`: 0 at 0, ½ at `half`, approaching but never reaching 1.
pub fn saturate(n: f64, half: f64) -> f64 {
    let n = narrow_count(n);
    if n == 0.0 { 0.0 } else { narrow_unit(n / (n + half)) }
}

/// Heavy-tail compression for reference counts: the fourth root, exact in IEEE arithmetic.
pub fn compress(refs: f64) -> f64 {
    narrow_count(refs).sqrt().sqrt()
}

/// Normalizes a reference count against the snapshot's largest one.
pub fn normalized_centrality(refs: f64, max_refs: f64) -> f64 {
    let max = compress(max_refs);
    if max == 0.0 { 0.0 } else { narrow_unit(compress(refs) / max) }
}

/// Recency from the number of first-parent commits since the target last changed: touched now
/// (`Some(0)` with `touched`) is 1; `k` commits ago is `1 / (k + 1)`; outside the window is 0.
pub fn recency(touched: bool, commits_since: Option<usize>) -> f64 {
    if touched {
        return 1.0;
    }
    match commits_since {
        Some(k) if k < weights::RECENCY_WINDOW => 1.0 / (k as f64 + 1.0),
        _ => 0.0,
    }
}

/// Weights the raw signals; each contribution is at most its weight.
pub fn contributions(raw: &RawSignals) -> Contributions {
    let bounded = |weight: f64, x: f64| (weight * narrow_unit(x)).min(weight);
    Contributions {
        task: if raw.task { weights::TASK } else { 0.0 },
        errors: bounded(weights::ERRORS, saturate(raw.errors, weights::ERRORS_HALF)),
        warnings: bounded(weights::WARNINGS, saturate(raw.warnings, weights::WARNINGS_HALF)),
        centrality: bounded(weights::CENTRALITY, raw.centrality),
        recency: bounded(weights::RECENCY, raw.recency),
        editor: if raw.editor { weights::EDITOR } else { 0.0 },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_contribution_is_bounded_by_its_weight() {
        let extremes = [0.0, -1.0, 1.0, 1e9, 1e300, f64::MAX, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 0.5];
        for &a in &extremes {
            for &b in &extremes {
                let raw = RawSignals { task: true, errors: a, warnings: b, centrality: a, recency: b, editor: true };
                let c = contributions(&raw);
                assert!(c.task <= weights::TASK && c.errors <= weights::ERRORS && c.warnings <= weights::WARNINGS);
                assert!(c.centrality <= weights::CENTRALITY && c.recency <= weights::RECENCY);
                for x in [c.task, c.errors, c.warnings, c.centrality, c.recency, c.editor, c.total()] {
                    assert!(x.is_finite() && x >= 0.0, "{raw:?} -> {c:?}");
                }
            }
        }
    }

    #[test]
    fn a_flood_of_errors_cannot_outrank_a_named_central_target() {
        let flooded = contributions(&RawSignals { errors: 1e9, warnings: 1e9, ..Default::default() }).total();
        let named = contributions(&RawSignals { task: true, centrality: 1.0, ..Default::default() }).total();
        assert!(named > flooded, "{named} vs {flooded}");
        // Even the task naming alone outweighs any number of diagnostics.
        let named_only = contributions(&RawSignals { task: true, ..Default::default() }).total();
        assert!(named_only > flooded);
    }

    #[test]
    fn responses_grow_and_saturate() {
        assert_eq!(saturate(0.0, 2.0), 0.0);
        assert_eq!(saturate(2.0, 2.0), 0.5);
        assert!(saturate(3.0, 2.0) > saturate(2.0, 2.0));
        assert!(saturate(1e300, 2.0) <= 1.0);
        assert_eq!(saturate(f64::NAN, 2.0), 0.0);
        assert_eq!(normalized_centrality(16.0, 16.0), 1.0);
        assert_eq!(normalized_centrality(1.0, 16.0), 0.5);
        assert_eq!(normalized_centrality(5.0, 0.0), 0.0);
        assert_eq!(recency(true, None), 1.0);
        assert_eq!(recency(false, Some(0)), 1.0);
        assert_eq!(recency(false, Some(3)), 0.25);
        assert_eq!(recency(false, Some(weights::RECENCY_WINDOW)), 0.0);
        assert_eq!(recency(false, None), 0.0);
    }

    #[test]
    fn the_editor_is_only_a_tie_break() {
        let smallest_step = contributions(&RawSignals { recency: recency(false, Some(199)), ..Default::default() });
        assert!(weights::EDITOR < smallest_step.total());
    }
}
