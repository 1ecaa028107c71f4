//! Where each stratum stands: its complete prefix (every seed below it
//! recorded) and the accepted levels in it, its frontier (the next seed
//! never leased), and the canonical forms that make a level a duplicate.

use std::collections::{HashMap, HashSet};

use pregen_pack::job::Band;

use crate::verdicts::{Verdict, Verdicts};

/// One stratum of the job.
#[derive(Debug, Clone)]
pub(super) struct Stratum {
    pub(super) first_seed: u64,
    pub(super) count: u64,
    /// Every seed of the stratum below this is recorded.
    pub(super) prefix_end: u64,
    pub(super) prefix_accepted: u64,
    /// Accepted levels recorded, duplicates counted once.
    pub(super) accepted_total: u64,
    /// Seeds recorded (any verdict).
    pub(super) recorded: u64,
    /// Next seed of the stratum never leased.
    pub(super) frontier: u64,
    /// Canonical forms of the accepted levels recorded (any seed).
    seen: HashSet<u128>,
    /// Canonical forms of the accepted levels in the complete prefix.
    prefix_seen: HashSet<u128>,
    /// The canonical form of each accepted seed that has one.
    pub(super) canon: HashMap<u64, u128>,
    /// The band its levels must lie in, if any.
    pub(super) band: Option<Band>,
    /// Of the levels recorded outside the band, the difficulty nearest it.
    pub(super) closest: Option<f64>,
}

impl Stratum {
    /// A stratum of `count` levels from `first_seed`, nothing recorded.
    pub(super) fn new(first_seed: u64, count: u64, band: Option<Band>) -> Stratum {
        Stratum {
            first_seed,
            count,
            prefix_end: first_seed,
            prefix_accepted: 0,
            accepted_total: 0,
            recorded: 0,
            frontier: first_seed,
            seen: HashSet::new(),
            prefix_seen: HashSet::new(),
            canon: HashMap::new(),
            band,
            closest: None,
        }
    }

    /// Whether a level of `difficulty` lies outside the band (noting it
    /// when it is the nearest yet).
    pub(super) fn outside_band(&mut self, difficulty: f64) -> bool {
        let Some(band) = self.band else {
            return false;
        };
        if band.contains(difficulty) {
            return false;
        }
        if self
            .closest
            .is_none_or(|c| band.distance(difficulty) < band.distance(c))
        {
            self.closest = Some(difficulty);
        }
        true
    }

    pub(super) fn is_complete(&self) -> bool {
        self.prefix_accepted >= self.count
    }

    /// Whether the pack may still need `seed`'s result: anything until the
    /// stratum is complete, then only the complete prefix.
    pub(super) fn needs(&self, seed: u64) -> bool {
        !self.is_complete() || seed < self.prefix_end
    }

    /// Counts `seed`'s verdict, newly kept in `verdicts`, and moves the
    /// complete prefix on over the seeds recorded after it; returns the
    /// duplicates the prefix met (accepted levels a lower seed of the
    /// stratum already has).
    pub(super) fn count(&mut self, seed: u64, verdict: &Verdict, verdicts: &Verdicts) -> u64 {
        self.recorded += 1;
        if verdict.counts() {
            match self.canon.get(&seed) {
                Some(key) if !self.seen.insert(*key) => {}
                _ => self.accepted_total += 1,
            }
        }
        let mut duplicates = 0;
        while self.prefix_accepted < self.count {
            let Some(v) = verdicts.get(self.prefix_end) else {
                break;
            };
            if v.counts() {
                match self.canon.get(&self.prefix_end) {
                    Some(key) if !self.prefix_seen.insert(*key) => duplicates += 1,
                    _ => self.prefix_accepted += 1,
                }
            }
            self.prefix_end += 1;
        }
        duplicates
    }

    /// Back to nothing counted (the frontier stays), keeping the canonical
    /// forms of the seeds `kept` says are still recorded.
    pub(super) fn reset(&mut self, kept: impl Fn(u64) -> bool) {
        self.prefix_end = self.first_seed;
        self.prefix_accepted = 0;
        self.accepted_total = 0;
        self.recorded = 0;
        self.seen.clear();
        self.prefix_seen.clear();
        self.canon.retain(|&seed, _| kept(seed));
    }
}

/// A stratum that tried all the seeds it may without enough levels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Exhausted {
    /// The stratum's index.
    pub stratum: usize,
    /// Seeds tried.
    pub seeds: u64,
    /// Distinct levels accepted.
    pub accepted: u64,
    /// Levels wanted.
    pub wanted: u64,
    /// The stratum's band, if it has one.
    pub band: Option<Band>,
    /// The difficulty nearest the band of the levels outside it.
    pub closest: Option<f64>,
}

/// Seeds a stratum still wants leased from its frontier, estimated: the
/// levels it lacks beyond what its leases out should bring, over the share of
/// seeds accepted. The share is taken with one accepted seed more than seen
/// (`(accepted + 1) / (recorded + 1)`): optimistic, so that a stratum never
/// has more seeds out than its levels need at the share seen, and no seed is
/// computed past its pack but by chance; a stratum whose share is low gets
/// leases that grow as its results come. 0 once the leases out should be
/// enough (if they fall short, their results raise it again).
pub(super) fn seeds_wanted(st: &Stratum) -> u64 {
    let lacking = st.count.saturating_sub(st.accepted_total);
    if lacking == 0 {
        return 0;
    }
    let share = (st.accepted_total + 1) as f64 / (st.recorded + 1) as f64;
    let out = (st.frontier - st.first_seed).saturating_sub(st.recorded) as f64;
    let more = lacking as f64 - out * share;
    if more <= 0.0 {
        0
    } else {
        (more / share).ceil() as u64
    }
}

/// The index of the stratum holding `seed` (strata in seed order), if any.
pub(super) fn stratum_index(strata: &[Stratum], seed: u64) -> Option<usize> {
    strata
        .partition_point(|st| st.first_seed <= seed)
        .checked_sub(1)
}

#[cfg(test)]
mod tests {
    use super::super::tests::result;
    use super::*;

    /// Records `seed` in `verdicts` and counts it in `st` (seeds divisible by
    /// 3 are accepted).
    fn take(st: &mut Stratum, verdicts: &mut Verdicts, seed: u64) -> u64 {
        let v = verdicts.of(&result(seed));
        assert!(verdicts.insert(seed, v));
        st.count(seed, &v, verdicts)
    }

    #[test]
    fn the_prefix_moves_only_over_seeds_recorded_without_a_gap() {
        let mut st = Stratum::new(99, 2, None);
        let mut v = Verdicts::default();
        take(&mut st, &mut v, 102);
        take(&mut st, &mut v, 101);
        take(&mut st, &mut v, 100);
        assert_eq!(
            (st.prefix_end, st.prefix_accepted, st.accepted_total),
            (99, 0, 1)
        );
        take(&mut st, &mut v, 99);
        assert_eq!((st.prefix_end, st.prefix_accepted), (103, 2));
        assert!(st.is_complete());
        assert!(st.needs(102) && !st.needs(103));
        assert_eq!(st.recorded, 4);
    }

    #[test]
    fn a_level_a_lower_seed_has_is_a_duplicate_in_the_prefix() {
        let mut st = Stratum::new(0, 5, None);
        let mut v = Verdicts::default();
        st.canon.insert(0, 42);
        st.canon.insert(3, 42);
        take(&mut st, &mut v, 3);
        take(&mut st, &mut v, 1);
        take(&mut st, &mut v, 2);
        assert_eq!(take(&mut st, &mut v, 0), 1, "seed 3 repeats seed 0");
        assert_eq!((st.prefix_accepted, st.accepted_total), (1, 1));
        st.reset(|seed| seed == 0);
        assert_eq!((st.prefix_end, st.recorded, st.canon.len()), (0, 0, 1));
    }

    #[test]
    fn seeds_wanted_follows_the_share_accepted() {
        let mut st = Stratum::new(0, 100, None);
        // Nothing seen: every seed might be a level.
        assert_eq!(seeds_wanted(&st), 100);
        st.frontier = 60;
        assert_eq!(seeds_wanted(&st), 40);
        // 99 seeds recorded, 49 accepted (a half, with one more), 103 out.
        st.recorded = 99;
        st.accepted_total = 49;
        st.frontier = 202;
        assert_eq!(seeds_wanted(&st), 0);
        st.frontier = 119;
        // 51 lacking, 20 out bring 10: 41 more at a half.
        assert_eq!(seeds_wanted(&st), 82);
        // None accepted in 99: leases grow with what is seen.
        st.accepted_total = 0;
        st.frontier = 99;
        assert_eq!(seeds_wanted(&st), 10_000);
        st.accepted_total = 100;
        assert_eq!(seeds_wanted(&st), 0);
    }

    #[test]
    fn a_seed_belongs_to_the_last_stratum_starting_at_or_below_it() {
        let strata = [Stratum::new(10, 1, None), Stratum::new(1_000, 1, None)];
        assert_eq!(stratum_index(&strata, 9), None);
        assert_eq!(stratum_index(&strata, 10), Some(0));
        assert_eq!(stratum_index(&strata, 999), Some(0));
        assert_eq!(stratum_index(&strata, 5_000), Some(1));
    }
}
