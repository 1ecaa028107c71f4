//! Lease sizing: how many seeds a session's next lease holds. A lease should
//! keep its session's threads busy for about [`LEASE_TARGET`] at the cost per
//! seed seen so far (`seeds_per_lease` is the cap), and near the end of a
//! stratum no more than half the session's share of what is still wanted
//! (guided self-scheduling), so that the sessions finish together.

use std::time::Duration;

/// How long a lease should keep a worker busy: leases are sized from the
/// observed cost per seed to about this (`seeds_per_lease` is the cap).
pub const LEASE_TARGET: Duration = Duration::from_secs(3);

/// Seeds per worker thread in a session's lease before any cost is known.
const FIRST_SEEDS_PER_THREAD: u64 = 4;

/// The cost of a seed (ms of one thread) seen in results: a moving average,
/// so that a slower machine gets leases of the same duration, not the same
/// size.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct Cost(Option<f64>);

impl Cost {
    /// Takes in a batch's mean cost per seed (a value that is not finite is
    /// ignored).
    pub(super) fn observe(&mut self, mean: f64) {
        if mean.is_finite() {
            self.0 = Some(self.0.map_or(mean, |c| 0.9 * c + 0.1 * mean));
        }
    }

    /// The average so far, if any result was seen.
    pub(super) fn ms(self) -> Option<f64> {
        self.0
    }
}

/// Seeds for a session's next lease: about [`LEASE_TARGET`] of its `threads`'
/// time at the cost per seed seen so far (in its own results, else in all),
/// at most `cap`; a few per thread before any cost is known; `cap` when its
/// threads are not known.
pub(super) fn lease_size(cap: u64, threads: u32, own: Cost, all: Cost) -> u64 {
    if threads == 0 {
        return cap;
    }
    let size = match own.ms().or(all.ms()) {
        None => FIRST_SEEDS_PER_THREAD * u64::from(threads),
        Some(cost) if cost > 0.0 => {
            let seeds = LEASE_TARGET.as_secs_f64() * 1e3 * f64::from(threads) / cost;
            if seeds >= cap as f64 {
                cap
            } else {
                seeds as u64
            }
        }
        Some(_) => cap,
    };
    size.clamp(1, cap)
}

/// Guided self-scheduling: at most half of a session's share (its `mine`
/// threads of `all`) of the seeds still `wanted`; unbounded (`u64::MAX`)
/// while either is unknown.
pub(super) fn guided_size(all: u64, mine: u32, wanted: u64) -> u64 {
    if all == 0 || mine == 0 || wanted == u64::MAX {
        return u64::MAX;
    }
    let share = u128::from(wanted) * u128::from(mine) / (2 * u128::from(all));
    u64::try_from(share).unwrap_or(u64::MAX).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cost(ms: f64) -> Cost {
        let mut c = Cost::default();
        c.observe(ms);
        c
    }

    #[test]
    fn before_any_cost_a_few_seeds_per_thread_and_the_cap_for_unknown_threads() {
        assert_eq!(lease_size(512, 8, Cost::default(), Cost::default()), 32);
        assert_eq!(lease_size(512, 0, cost(1.0), cost(1.0)), 512);
        assert_eq!(lease_size(20, 8, Cost::default(), Cost::default()), 20);
    }

    #[test]
    fn a_lease_lasts_the_target_at_the_sessions_own_cost_first() {
        // 2 threads x 3 s at 10 ms a seed.
        assert_eq!(lease_size(10_000, 2, cost(10.0), cost(1.0)), 600);
        // Its own unknown: everyone's.
        assert_eq!(lease_size(10_000, 2, Cost::default(), cost(100.0)), 60);
        // Never past the cap, never below one seed; a zero cost is the cap.
        assert_eq!(lease_size(100, 2, cost(0.001), Cost::default()), 100);
        assert_eq!(lease_size(100, 1, cost(1e9), Cost::default()), 1);
        assert_eq!(lease_size(100, 1, cost(0.0), Cost::default()), 100);
    }

    #[test]
    fn the_cost_is_a_moving_average_that_ignores_what_is_not_finite() {
        let mut c = cost(10.0);
        c.observe(20.0);
        assert_eq!(c.ms(), Some(11.0));
        c.observe(f64::NAN);
        c.observe(f64::INFINITY);
        assert_eq!(c.ms(), Some(11.0));
    }

    #[test]
    fn guided_leases_take_half_a_sessions_share_of_what_is_wanted() {
        assert_eq!(guided_size(8, 2, 1_000), 125);
        assert_eq!(guided_size(8, 2, 1), 1);
        assert_eq!(guided_size(0, 2, 1_000), u64::MAX);
        assert_eq!(guided_size(8, 0, 1_000), u64::MAX);
        assert_eq!(guided_size(8, 2, u64::MAX), u64::MAX);
    }
}
