//! Seeded, portable randomness for the harnesses.
//!
//! The generator is PCG-XSL-RR 128/64 (`rand_pcg::Pcg64`), whose output is specified and tested
//! against reference vectors, so a seed gives the same stream on every platform. The draws built
//! on it here are exact: integers by rejection (no modulo bias, no floating point), fractions
//! from the top 53 bits. Nothing depends on a library's sampling algorithm, which may change value
//! between versions.

use rand_core::{Rng as _, SeedableRng};
use rand_pcg::Pcg64;

/// A deterministic stream.
#[derive(Debug, Clone)]
pub struct Stream(Pcg64);

/// SplitMix64's finalizer: spreads nearby integers over the whole 64-bit range.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Stream {
    /// The stream for a seed and a path of indices (e.g. harness tag, pair, episode): streams with
    /// different paths are independent, and each is reproducible on its own.
    pub fn new(seed: u64, path: &[u64]) -> Self {
        let key = path.iter().fold(mix(seed), |acc, &p| mix(acc ^ mix(p)));
        Stream(Pcg64::seed_from_u64(key))
    }

    /// A raw 64-bit value.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A uniform integer in `0..n` (`n > 0`), by rejection.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "below(0)");
        let zone = u64::MAX - (u64::MAX % n + 1) % n;
        loop {
            let x = self.next_u64();
            if x <= zone {
                return x % n;
            }
        }
    }

    /// A uniform index in `0..n`.
    pub fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    /// A uniform fraction in `[0, 1)` with 53 random bits.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// A uniformly random permutation of `0..n` (Fisher–Yates).
    pub fn permutation(&mut self, n: usize) -> Vec<usize> {
        let mut v: Vec<usize> = (0..n).collect();
        self.shuffle(&mut v);
        v
    }

    /// Shuffles in place (Fisher–Yates).
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.index(i + 1);
            v.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_independent() {
        let draw = |s: &mut Stream| (0..8).map(|_| s.next_u64()).collect::<Vec<_>>();
        assert_eq!(draw(&mut Stream::new(7, &[1, 2])), draw(&mut Stream::new(7, &[1, 2])));
        assert_ne!(draw(&mut Stream::new(7, &[1, 2])), draw(&mut Stream::new(7, &[2, 1])));
        assert_ne!(draw(&mut Stream::new(7, &[1, 2])), draw(&mut Stream::new(8, &[1, 2])));
    }

    #[test]
    fn pinned_values_hold_on_every_platform() {
        // If these change, every published table changes: a new generator or derivation is a
        // deliberate, documented break.
        let mut s = Stream::new(0, &[]);
        let got: Vec<u64> = (0..3).map(|_| s.next_u64()).collect();
        assert_eq!(got, [17234158945150000383, 12919125852565545238, 10275379849387994841]);
        let mut s = Stream::new(42, &[3, 1]);
        let got: Vec<u64> = (0..8).map(|_| s.below(5)).collect();
        assert_eq!(got, [4, 4, 4, 2, 3, 2, 0, 4]);
    }

    #[test]
    fn draws_stay_in_range_and_cover_it() {
        let mut s = Stream::new(1, &[]);
        let mut seen = [0u32; 5];
        for _ in 0..5000 {
            seen[s.index(5)] += 1;
            let u = s.unit();
            assert!((0.0..1.0).contains(&u));
        }
        // Each bucket near 1000: a gross bias would fail this.
        assert!(seen.iter().all(|&c| (850..1150).contains(&c)), "{seen:?}");
        let mut p = s.permutation(6);
        p.sort();
        assert_eq!(p, (0..6).collect::<Vec<_>>());
    }
}
