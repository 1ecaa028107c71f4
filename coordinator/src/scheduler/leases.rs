//! The lease book: the leases out, the leases no longer out (whose holder's
//! late results still count), the ranges waiting to be leased again, and
//! the lease numbers.

use std::collections::{HashMap, VecDeque};
use std::time::Instant;

use super::SessionId;

/// A range of seeds leased to one session.
#[derive(Debug, Clone, PartialEq)]
pub struct Lease {
    /// Lease number, unique for the coordinator's lifetime.
    pub id: u64,
    /// Holder.
    pub session: SessionId,
    /// The stratum the seeds belong to.
    pub stratum: u32,
    /// First seed.
    pub first_seed: u64,
    /// Seeds in the range.
    pub seed_count: u64,
    /// 1 for a range's first issue, +1 per re-issue.
    pub attempt: u32,
    /// Re-issued if not heard of by then.
    pub deadline: Instant,
    /// When it was granted: the start of its progress clock.
    pub granted: Instant,
    /// A cross-check: one seed another worker already ran.
    pub check: bool,
    /// The other lease of the same range while both are out (one is a
    /// speculative copy of the other, for the tail of a run).
    pub twin: Option<u64>,
}

impl Lease {
    pub(super) fn contains(&self, seed: u64) -> bool {
        seed >= self.first_seed && seed - self.first_seed < self.seed_count
    }
}

/// The answer to a lease request.
#[derive(Debug, Clone, PartialEq)]
pub enum Grant {
    /// Work on this range.
    Lease(Lease),
    /// Nothing to hand out now (the rest is leased); ask again later.
    Wait,
    /// The pack is complete.
    Finished,
}

/// A result refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RecordError {
    /// The lease was never issued.
    #[error("lease {0} was never issued")]
    UnknownLease(u64),
    /// The lease belongs to another session.
    #[error("lease {lease} belongs to another worker")]
    NotYourLease {
        /// The lease claimed.
        lease: u64,
    },
    /// The seed is outside the claimed lease.
    #[error("seed {seed} is outside lease {lease} (seeds {first}..{end})")]
    SeedOutsideLease {
        /// The seed sent.
        seed: u64,
        /// The lease claimed.
        lease: u64,
        /// The lease's first seed.
        first: u64,
        /// One past its last seed.
        end: u64,
    },
    /// The worker was refused by the cross-check.
    #[error("worker {worker} is refused: {reason}")]
    Refused {
        /// The worker's name.
        worker: String,
        /// Why.
        reason: String,
    },
}

/// A range of seeds to lease: (stratum, first seed, count, attempt).
pub(super) type Range = (u32, u64, u64, u32);

/// Every lease issued, and the ranges to issue again.
#[derive(Debug)]
pub(super) struct LeaseBook {
    out: HashMap<u64, Lease>,
    /// Leases no longer out, kept so late results of their holder are still taken.
    past: HashMap<u64, Lease>,
    /// Ranges to re-issue; one longer than a lease is granted a lease at a time.
    pub(super) requeue: VecDeque<Range>,
    next: u64,
}

impl Default for LeaseBook {
    fn default() -> Self {
        LeaseBook {
            out: HashMap::new(),
            past: HashMap::new(),
            requeue: VecDeque::new(),
            next: 1,
        }
    }
}

impl LeaseBook {
    /// The number the next lease gets.
    pub(super) fn next_id(&self) -> u64 {
        self.next
    }

    /// A new lease of `range` for `session`, out until `deadline`: a
    /// cross-check or not, the copy of lease `twin` still out or not.
    pub(super) fn issue(
        &mut self,
        session: SessionId,
        (stratum, first_seed, seed_count, attempt): Range,
        check: bool,
        twin: Option<u64>,
        (now, deadline): (Instant, Instant),
    ) -> Lease {
        let lease = Lease {
            id: self.next,
            session,
            stratum,
            first_seed,
            seed_count,
            attempt,
            deadline,
            granted: now,
            check,
            twin,
        };
        self.next += 1;
        self.out.insert(lease.id, lease.clone());
        lease
    }

    /// The lease `session` claims for `seed`: it must have been issued to
    /// that session and hold the seed (a lease no longer out still counts,
    /// so late results of its holder are taken).
    pub(super) fn claimed(
        &self,
        session: SessionId,
        lease_id: u64,
        seed: u64,
    ) -> Result<&Lease, RecordError> {
        let lease = self
            .out
            .get(&lease_id)
            .or_else(|| self.past.get(&lease_id))
            .ok_or(RecordError::UnknownLease(lease_id))?;
        if lease.session != session {
            return Err(RecordError::NotYourLease { lease: lease_id });
        }
        if !lease.contains(seed) {
            return Err(RecordError::SeedOutsideLease {
                seed,
                lease: lease_id,
                first: lease.first_seed,
                end: lease.first_seed + lease.seed_count,
            });
        }
        Ok(lease)
    }

    /// The lease with this id, if out.
    pub(super) fn get(&self, id: u64) -> Option<&Lease> {
        self.out.get(&id)
    }

    /// The lease with this id, if out, to change.
    pub(super) fn get_mut(&mut self, id: u64) -> Option<&mut Lease> {
        self.out.get_mut(&id)
    }

    /// Every lease out.
    pub(super) fn out(&self) -> impl Iterator<Item = &Lease> {
        self.out.values()
    }

    /// Leases out.
    pub(super) fn len(&self) -> usize {
        self.out.len()
    }

    /// Takes lease `id` out of the leases out, if `session` holds it.
    pub(super) fn take(&mut self, session: SessionId, id: u64) -> Option<Lease> {
        if self.out.get(&id)?.session != session {
            return None;
        }
        self.out.remove(&id)
    }

    /// Keeps a lease taken out, so late results of its holder still count.
    pub(super) fn retire(&mut self, lease: Lease) {
        self.past.insert(lease.id, lease);
    }

    /// Moves the deadline of every lease of `ids` still out.
    pub(super) fn extend(&mut self, ids: &[u64], deadline: Instant) {
        for id in ids {
            if let Some(lease) = self.out.get_mut(id) {
                lease.deadline = deadline;
            }
        }
    }

    /// Leases out past their deadline at `now`, or `stalled`.
    pub(super) fn due(
        &self,
        now: Instant,
        stalled: impl Fn(&Lease) -> bool,
    ) -> Vec<(SessionId, u64)> {
        self.out
            .values()
            .filter(|l| l.deadline <= now || stalled(l))
            .map(|l| (l.session, l.id))
            .collect()
    }

    /// The seed ranges of stratum `i` out in a lease (not a cross-check) or
    /// queued, as `(first, end)` in order.
    pub(super) fn covered(&self, i: usize) -> Vec<(u64, u64)> {
        let mut covered: Vec<(u64, u64)> = self
            .out
            .values()
            .filter(|l| !l.check && l.stratum as usize == i)
            .map(|l| (l.first_seed, l.first_seed + l.seed_count))
            .chain(
                self.requeue
                    .iter()
                    .filter(|r| r.0 as usize == i)
                    .map(|r| (r.1, r.1 + r.2)),
            )
            .collect();
        covered.sort_unstable();
        covered
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn at(now: Instant) -> (Instant, Instant) {
        (now, now + Duration::from_secs(10))
    }

    #[test]
    fn leases_are_numbered_from_one_and_claimed_only_by_their_holder_and_seeds() {
        let now = Instant::now();
        let mut book = LeaseBook::default();
        let a = book.issue(7, (0, 100, 10, 1), false, None, at(now));
        let b = book.issue(8, (0, 110, 10, 1), false, None, at(now));
        assert_eq!((a.id, b.id, book.next_id(), book.len()), (1, 2, 3, 2));
        assert_eq!(book.claimed(7, 1, 109).map(|l| l.id), Ok(1));
        assert_eq!(
            book.claimed(8, 1, 105),
            Err(RecordError::NotYourLease { lease: 1 })
        );
        assert_eq!(
            book.claimed(7, 1, 110),
            Err(RecordError::SeedOutsideLease {
                seed: 110,
                lease: 1,
                first: 100,
                end: 110
            })
        );
        assert_eq!(book.claimed(7, 9, 100), Err(RecordError::UnknownLease(9)));
    }

    #[test]
    fn a_lease_taken_back_still_takes_its_holders_late_results() {
        let now = Instant::now();
        let mut book = LeaseBook::default();
        book.issue(7, (0, 100, 10, 1), false, None, at(now));
        assert!(book.take(8, 1).is_none(), "not the holder");
        let lease = book.take(7, 1).expect("out");
        book.retire(lease);
        assert_eq!(book.len(), 0);
        assert!(book.get(1).is_none());
        assert_eq!(book.claimed(7, 1, 100).map(|l| l.id), Ok(1));
    }

    #[test]
    fn leases_fall_due_at_their_deadline_unless_extended() {
        let now = Instant::now();
        let mut book = LeaseBook::default();
        book.issue(7, (0, 100, 10, 1), false, None, at(now));
        book.issue(8, (0, 110, 10, 1), false, None, at(now));
        let later = now + Duration::from_secs(10);
        book.extend(&[2], later + Duration::from_secs(10));
        assert_eq!(book.due(later, |_| false), vec![(7, 1)]);
        let mut stalled = book.due(later, |l| l.session == 8);
        stalled.sort_unstable();
        assert_eq!(stalled, vec![(7, 1), (8, 2)]);
    }

    #[test]
    fn a_stratum_is_covered_by_its_leases_and_queued_ranges_but_not_checks() {
        let now = Instant::now();
        let mut book = LeaseBook::default();
        book.issue(7, (1, 150, 10, 1), false, None, at(now));
        book.issue(7, (1, 100, 1, 1), true, None, at(now));
        book.issue(7, (0, 0, 10, 1), false, None, at(now));
        book.requeue.push_back((1, 120, 5, 2));
        assert_eq!(book.covered(1), vec![(120, 125), (150, 160)]);
        assert_eq!(book.covered(0), vec![(0, 10)]);
    }
}
