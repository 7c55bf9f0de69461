//! Interval estimates for the harness tables.

use serde::{Deserialize, Serialize};

/// z for a two-sided 95 % interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// A proportion with its 95 % Wilson score interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Proportion {
    /// Successes.
    pub count: u64,
    /// Trials.
    pub trials: u64,
    /// count / trials (0 when there are no trials).
    pub rate: f64,
    /// Lower bound of the interval.
    pub low: f64,
    /// Upper bound of the interval.
    pub high: f64,
}

/// The Wilson score interval: unlike the normal approximation it stays inside [0, 1] and is
/// honest at rates of 0 and 1 (a perfect score still has a lower bound below 1).
pub fn wilson(count: u64, trials: u64) -> Proportion {
    if trials == 0 {
        return Proportion { count, trials, rate: 0.0, low: 0.0, high: 1.0 };
    }
    let n = trials as f64;
    let p = count as f64 / n;
    let z2 = Z95 * Z95;
    let denom = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denom;
    let half = Z95 * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denom;
    // At the edges the bound is exact (rounding would leave 0.9999999999999999).
    let low = if count == 0 { 0.0 } else { (centre - half).max(0.0) };
    let high = if count >= trials { 1.0 } else { (centre + half).min(1.0) };
    Proportion { count, trials, rate: p, low, high }
}

/// A mean with its 95 % normal-approximation interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mean {
    /// Samples.
    pub n: u64,
    /// The mean.
    pub mean: f64,
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
}

/// The mean of `xs` and a 95 % interval (mean ± z·s/√n).
pub fn mean(xs: &[f64]) -> Mean {
    let n = xs.len();
    if n == 0 {
        return Mean { n: 0, mean: 0.0, low: 0.0, high: 0.0 };
    }
    let m = xs.iter().sum::<f64>() / n as f64;
    let var = if n > 1 { xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1) as f64 } else { 0.0 };
    let half = Z95 * (var / n as f64).sqrt();
    Mean { n: n as u64, mean: m, low: m - half, high: m + half }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_matches_reference_values() {
        // Reference: 20 of 100 → [0.1333, 0.2888]; 0 of 10 → [0, 0.2775]; 10 of 10 → [0.7225, 1].
        let close = |a: f64, b: f64| (a - b).abs() < 5e-4;
        let w = wilson(20, 100);
        assert!(close(w.low, 0.1333) && close(w.high, 0.2888), "{w:?}");
        let w = wilson(0, 10);
        assert!(w.low == 0.0 && close(w.high, 0.2775), "{w:?}");
        let w = wilson(10, 10);
        assert!(close(w.low, 0.7225) && w.high == 1.0, "{w:?}");
        assert_eq!(wilson(0, 0).rate, 0.0);
    }

    #[test]
    fn mean_interval() {
        let m = mean(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(m.mean, 2.5);
        assert!(m.low < 2.5 && m.high > 2.5);
        assert!((m.high - m.mean - Z95 * (5.0f64 / 3.0 / 4.0).sqrt()).abs() < 1e-12);
        assert_eq!(mean(&[]).n, 0);
    }
}
