//! The portable seeded PRNG every generator draws from.
//!
//! A 64-bit Mersenne Twister (MT19937-64): the same algorithm the source
//! documents ship, with a published reference output, so that a game client in
//! another runtime can rebuild a level from its seed. The derived draws
//! ([`Rng::below`], [`Rng::unit`], ...) use rejection sampling and fixed bit
//! widths so their results do not depend on the platform.

use rand_mt::Mt64;

/// A deterministic random source seeded by a level seed.
pub struct Rng {
    mt: Mt64,
}

impl Rng {
    /// A generator whose whole output is fixed by `seed`.
    pub fn new(seed: u64) -> Self {
        Self {
            mt: Mt64::new(seed),
        }
    }

    /// The next raw 64-bit output of MT19937-64.
    pub fn next_u64(&mut self) -> u64 {
        self.mt.next_u64()
    }

    /// A uniform integer in `0..n` (unbiased); `n` must be positive.
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0, "Rng::below(0)");
        // Largest multiple of n that fits, so every residue is equally likely.
        let zone = u64::MAX - (u64::MAX % n);
        loop {
            let x = self.next_u64();
            if x < zone {
                return x % n;
            }
        }
    }

    /// A uniform `usize` in `0..n`.
    pub fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    /// A uniform integer in `lo..=hi`.
    pub fn between(&mut self, lo: u32, hi: u32) -> u32 {
        debug_assert!(lo <= hi);
        lo + self.below(u64::from(hi - lo) + 1) as u32
    }

    /// A uniform float in `[0, 1)` built from the top 53 bits.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// An index drawn with probability proportional to `weights`; `None` when
    /// every weight is zero.
    pub fn weighted(&mut self, weights: &[u32]) -> Option<usize> {
        let total: u64 = weights.iter().map(|&w| u64::from(w)).sum();
        if total == 0 {
            return None;
        }
        let mut pick = self.below(total);
        for (i, &w) in weights.iter().enumerate() {
            if pick < u64::from(w) {
                return Some(i);
            }
            pick -= u64::from(w);
        }
        None
    }

    /// Fisher-Yates shuffle.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.index(i + 1);
            items.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mt19937_64_reference_output() {
        // The reference implementation's published check: init_by_array64 is not
        // used here, so pin the plain-seed stream of seed 5489 (the reference's
        // default seed), whose 10000th output is documented in C++'s std::mt19937_64.
        let mut rng = Rng::new(5489);
        let mut last = 0;
        for _ in 0..10_000 {
            last = rng.next_u64();
        }
        assert_eq!(last, 9_981_545_732_273_789_042);
    }

    #[test]
    fn derived_draws_are_pinned() {
        let mut rng = Rng::new(42);
        let draws: Vec<u64> = (0..8).map(|_| rng.below(10)).collect();
        assert_eq!(draws, PINNED_BELOW_10);
        let mut shuffled: Vec<u32> = (0..6).collect();
        rng.shuffle(&mut shuffled);
        assert_eq!(shuffled, PINNED_SHUFFLE);
    }

    const PINNED_BELOW_10: [u64; 8] = [6, 4, 0, 2, 1, 8, 6, 4];
    const PINNED_SHUFFLE: [u32; 6] = [1, 5, 0, 3, 2, 4];

    #[test]
    fn weighted_skips_zero_weights() {
        let mut rng = Rng::new(7);
        for _ in 0..200 {
            let i = rng.weighted(&[0, 3, 0, 1]).expect("positive total");
            assert!(i == 1 || i == 3);
        }
        assert_eq!(rng.weighted(&[0, 0]), None);
    }
}
