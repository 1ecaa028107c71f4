//! Leases and results: the coordinator's core, free of any network code.
//!
//! The pack is, for each stratum (one when the job has none), the first `count`
//! accepted seeds in seed order from the stratum's first seed. Seeds are handed
//! out in ranges ([`Lease`]s) in any order to any number of workers; a lease
//! that expires, is returned, or whose session breaks has its missing seeds
//! re-queued. Results are idempotent by seed and must fall inside a lease their
//! session holds. A stratum is complete when the contiguous prefix of its
//! recorded seeds holds `count` accepted ones; the pack, when every stratum is
//! and the cross-check ([`crate::cross_check`]) has settled every sampled seed
//! inside it.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::hash::BuildHasher;
use std::time::{Duration, Instant};

use pregen_pack::{SeedRecord, Status};

use crate::commit_log::Entry;
use crate::cross_check::{COORDINATOR, CheckState, Claim, CrossCheck, Dispute, Pending, describe};
use crate::verdicts::{Selection, Verdict, Verdicts, canonical_key};

/// A worker session, numbered by the coordinator.
pub type SessionId = u64;

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
    fn contains(&self, seed: u64) -> bool {
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

/// Counters for progress reports.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Progress {
    /// Seeds recorded (all statuses).
    pub seeds: u64,
    /// Accepted seeds recorded (may exceed the pack's count).
    pub accepted: u64,
    /// Accepted seeds inside the complete prefix, capped at count.
    pub committed: u64,
    /// Non-accepted results by status and reason head.
    pub rejected: BTreeMap<String, u64>,
    /// Results per worker name.
    pub per_worker: BTreeMap<String, u64>,
    /// Results that disagreed with an earlier result for the same seed.
    pub mismatches: u64,
    /// Leases currently out.
    pub leases_out: usize,
    /// Worker sessions open.
    pub sessions: usize,
    /// Their threads, as their Hellos said.
    pub threads: u64,
    /// Leases issued again, while still out, to an idle worker at the tail.
    pub speculative: u64,
    /// Results for seeds already recorded (re-issued or speculative leases).
    pub duplicate_results: u64,
    /// What the cross-check did.
    pub cross_check: pregen_pack::manifest::CrossCheck,
}

/// Scheduler settings from the job.
#[derive(Debug, Clone)]
pub struct SchedulerConfig {
    /// Per stratum: (first seed, accepted levels wanted), strata in seed order
    /// and far enough apart never to meet.
    pub strata: Vec<(u64, u64)>,
    /// Seeds per lease.
    pub seeds_per_lease: u64,
    /// A lease not heard of for this long is re-issued.
    pub lease_ttl: Duration,
    /// Seeds a stratum may try before the run gives up.
    pub max_seeds: Option<u64>,
    /// A lease whose session has sent no result for this long (since the
    /// grant or its last result) is re-issued, heartbeats or not.
    pub progress_limit: Duration,
    /// The share of seeds run a second time by another worker.
    pub cross_check: f64,
    /// The key of the cross-check's sample (drawn at start, never sent).
    pub check_key: [u8; 16],
    /// Whether a level met at two seeds has both run by the coordinator:
    /// for games whose levels the coordinator does not make again from
    /// their seeds (for the others the check finds another seed's level).
    pub audit_duplicate_levels: bool,
}

/// Leases one session may hold at once: enough for a worker to run one and
/// have the next queued.
pub const MAX_LEASES_PER_SESSION: usize = 4;

/// Queued cross-checks looked at for one grant.
const CHECK_WINDOW: usize = 64;

/// How long a lease should keep a worker busy: leases are sized from the
/// observed cost per seed to about this (`seeds_per_lease` is the cap).
pub const LEASE_TARGET: Duration = Duration::from_secs(3);

/// Seeds per worker thread in a session's lease before any cost is known.
const FIRST_SEEDS_PER_THREAD: u64 = 4;

/// An open session.
#[derive(Debug, Clone, Default)]
struct SessionInfo {
    worker: String,
    /// Worker threads, as its Hello said (0: unknown).
    threads: u32,
    /// Its leases out.
    leases: Vec<u64>,
    /// Per-seed cost (ms of one thread) in its results, a moving average:
    /// a slower machine gets leases of the same duration, not the same size.
    seed_cost_ms: Option<f64>,
}
/// Where one stratum stands.
#[derive(Debug, Clone)]
struct Stratum {
    first_seed: u64,
    count: u64,
    /// Every seed of the stratum below this is recorded.
    prefix_end: u64,
    prefix_accepted: u64,
    /// Accepted levels recorded, duplicates counted once.
    accepted_total: u64,
    /// Seeds recorded (any verdict).
    recorded: u64,
    /// Next seed of the stratum never leased.
    frontier: u64,
    /// Canonical forms of the accepted levels recorded (any seed).
    seen: HashSet<u128>,
    /// Canonical forms of the accepted levels in the complete prefix.
    prefix_seen: HashSet<u128>,
    /// The canonical form of each accepted seed that has one.
    canon: HashMap<u64, u128>,
}

impl Stratum {
    fn is_complete(&self) -> bool {
        self.prefix_accepted >= self.count
    }

    /// Whether the pack may still need `seed`'s result: anything until the
    /// stratum is complete, then only the complete prefix.
    fn needs(&self, seed: u64) -> bool {
        !self.is_complete() || seed < self.prefix_end
    }
}

/// Seeds a stratum still wants leased from its frontier, estimated: the
/// levels it lacks beyond what its leases out should bring, over the share
/// of seeds accepted so far, plus a quarter. `u64::MAX` while the share is not
/// known yet; 0 once the leases out should be enough (if they fall short,
/// their results raise it again).
fn seeds_wanted(st: &Stratum) -> u64 {
    let lacking = st.count.saturating_sub(st.accepted_total);
    if lacking == 0 {
        return 0;
    }
    if st.recorded < 64 || st.accepted_total == 0 {
        return u64::MAX;
    }
    let share = st.accepted_total as f64 / st.recorded as f64;
    let out = (st.frontier - st.first_seed).saturating_sub(st.recorded) as f64;
    let more = lacking as f64 - out * share;
    if more <= 0.0 {
        0
    } else {
        (more / share * 1.25).ceil() as u64
    }
}

/// Adds one to a count by name (allocating the name only when new).
fn bump(counts: &mut BTreeMap<String, u64>, key: &str) {
    match counts.get_mut(key) {
        Some(n) => *n += 1,
        None => {
            counts.insert(key.to_string(), 1);
        }
    }
}

/// The index of the stratum holding `seed` (strata in seed order), if any.
fn stratum_index(strata: &[Stratum], seed: u64) -> Option<usize> {
    strata
        .partition_point(|st| st.first_seed <= seed)
        .checked_sub(1)
}

/// A stratum that tried all the seeds it may without enough levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exhausted {
    /// The stratum's index.
    pub stratum: usize,
    /// Seeds tried.
    pub seeds: u64,
    /// Distinct levels accepted.
    pub accepted: u64,
    /// Levels wanted.
    pub wanted: u64,
}

/// Leases out, results in.
#[derive(Debug)]
pub struct Scheduler {
    config: SchedulerConfig,
    strata: Vec<Stratum>,
    /// What is kept of each recorded seed (the records are in the log).
    verdicts: Verdicts,
    /// Ranges to re-issue: (stratum, first seed, count, attempt); one longer
    /// than a lease is granted a lease at a time.
    requeue: VecDeque<(u32, u64, u64, u32)>,
    leases: HashMap<u64, Lease>,
    /// Leases no longer out, kept so late results of their holder are still taken.
    past_leases: HashMap<u64, Lease>,
    next_lease: u64,
    unflushed: Vec<Entry>,
    progress: Progress,
    /// When each session last sent a result.
    last_result: HashMap<SessionId, Instant>,
    /// No new leases while set (the commit log cannot be written).
    paused: bool,
    /// The sessions open now.
    sessions: HashMap<SessionId, SessionInfo>,
    /// Their threads, summed.
    threads_open: u64,
    /// Per-seed cost (ms of one thread) seen in results, a moving average.
    seed_cost_ms: Option<f64>,
    /// Sampled seeds, disputes and refused workers.
    checks: CrossCheck,
    /// With [`SchedulerConfig::audit_duplicate_levels`]: the first seed of
    /// each accepted level, by a keyed hash of its level hash (16 bytes a
    /// level).
    level_seeds: HashMap<u64, u64>,
    level_hasher: std::hash::RandomState,
    /// Every entry replayed or handed to the log (the tests' log).
    #[cfg(test)]
    logged: Vec<Entry>,
}

impl Scheduler {
    /// A scheduler resuming from the commit log's entries (none for a new
    /// job), replayed in order by the rules that made them.
    pub fn new(config: SchedulerConfig, committed: Vec<Entry>) -> Self {
        let mut s = Scheduler::start(config);
        for entry in committed {
            s.replay(entry);
        }
        s.end_replay();
        s
    }

    /// A scheduler with nothing recorded: give it the log's entries with
    /// [`Scheduler::replay`], then call [`Scheduler::end_replay`].
    pub fn start(config: SchedulerConfig) -> Self {
        let strata = config
            .strata
            .iter()
            .map(|&(first_seed, count)| Stratum {
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
            })
            .collect();
        let checks = CrossCheck::new(config.cross_check, config.check_key);
        Scheduler {
            config,
            strata,
            verdicts: Verdicts::default(),
            requeue: VecDeque::new(),
            leases: HashMap::new(),
            past_leases: HashMap::new(),
            next_lease: 1,
            unflushed: Vec::new(),
            progress: Progress::default(),
            last_result: HashMap::new(),
            paused: false,
            sessions: HashMap::new(),
            threads_open: 0,
            seed_cost_ms: None,
            checks,
            level_seeds: HashMap::new(),
            level_hasher: std::hash::RandomState::new(),
            #[cfg(test)]
            logged: Vec::new(),
        }
    }

    /// One entry of the commit log, in log order.
    pub fn replay(&mut self, entry: Entry) {
        #[cfg(test)]
        self.logged.push(entry.clone());
        match entry {
            Entry::Result(r) => self.take_result(r, Instant::now()),
            Entry::Refused { worker, reason } => self.refuse(&worker, &reason),
        }
        self.unflushed.clear();
    }

    /// The log is replayed: leasing goes on past each stratum's highest
    /// committed seed, and the holes below it are re-queued.
    pub fn end_replay(&mut self) {
        self.requeue.clear();
        for i in 0..self.strata.len() {
            let st = &self.strata[i];
            let end = self.strata.get(i + 1).map_or(u64::MAX, |n| n.first_seed);
            if let Some(last) = self.verdicts.last_in(st.first_seed, end) {
                self.strata[i].frontier = last + 1;
            }
        }
        self.requeue_holes();
    }

    /// Re-queues every seed of a stratum between its complete prefix and its
    /// frontier that is neither recorded, nor out in a lease, nor queued
    /// already. Walks the records, not the seeds: a far-off record costs
    /// nothing, and each hole is one entry (granted a lease at a time).
    fn requeue_holes(&mut self) {
        for i in 0..self.strata.len() {
            let (from, to) = (self.strata[i].prefix_end, self.strata[i].frontier);
            if from >= to {
                // Nothing leased past the prefix (or, while the log is
                // replayed, the frontier not set yet).
                continue;
            }
            let mut covered: Vec<(u64, u64)> = self
                .leases
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
            let mut gaps = Vec::new();
            let mut at = from;
            for (seed, _) in self.verdicts.range(from, to) {
                if seed > at {
                    gaps.push((at, seed));
                }
                at = seed + 1;
            }
            if at < to {
                gaps.push((at, to));
            }
            let mut c = 0;
            for (mut a, b) in gaps {
                while c < covered.len() && covered[c].1 <= a {
                    c += 1;
                }
                let mut k = c;
                while a < b {
                    if k < covered.len() && covered[k].0 <= a {
                        a = a.max(covered[k].1);
                        k += 1;
                        continue;
                    }
                    let end = covered.get(k).map_or(b, |c| c.0.min(b));
                    self.requeue.push_back((i as u32, a, end - a, 2));
                    a = end;
                }
            }
        }
    }

    /// The stratum holding `seed`, if any.
    fn stratum_of(&self, seed: u64) -> Option<usize> {
        stratum_index(&self.strata, seed)
    }

    /// The first seed past a stratum's limit.
    fn seed_limit(&self, st: &Stratum) -> u64 {
        self.config
            .max_seeds
            .map_or(u64::MAX, |m| st.first_seed.saturating_add(m))
    }

    /// The first stratum that tried every seed it may and is not complete:
    /// the run cannot finish.
    pub fn exhausted(&self) -> Option<Exhausted> {
        self.strata.iter().enumerate().find_map(|(i, st)| {
            (!st.is_complete() && st.prefix_end >= self.seed_limit(st)).then(|| Exhausted {
                stratum: i,
                seeds: st.prefix_end - st.first_seed,
                accepted: st.prefix_accepted,
                wanted: st.count,
            })
        })
    }

    /// Complete, or given up: nothing more will be leased.
    pub fn is_finished(&self) -> bool {
        self.is_complete() || self.exhausted().is_some()
    }

    /// Hands a range to `session`.
    pub fn grant(&mut self, session: SessionId, now: Instant) -> Grant {
        if self.is_finished() {
            return Grant::Finished;
        }
        let (worker, held) = self
            .sessions
            .get(&session)
            .map_or((String::new(), 0), |s| (s.worker.clone(), s.leases.len()));
        if self.paused || held >= MAX_LEASES_PER_SESSION || self.checks.refusal(&worker).is_some() {
            return Grant::Wait;
        }
        if let Some(seed) = self.next_check(&worker) {
            let pending = self
                .checks
                .pending
                .get_mut(&seed)
                .expect("a queued check is pending");
            pending.state = CheckState::Leased(self.next_lease);
            let stratum = pending.stratum;
            return Grant::Lease(self.issue(session, (stratum, seed, 1, 1), true, None, now));
        }
        let size = self.lease_size(session);
        // Holes of a stratum that completed since are not needed.
        while let Some(r) = self.requeue.front()
            && self.strata[r.0 as usize].is_complete()
        {
            self.requeue.pop_front();
        }
        let (stratum, first_seed, seed_count, attempt) = if let Some(r) = self.requeue.pop_front() {
            // A long hole goes out a lease at a time.
            if r.2 > size {
                self.requeue.push_front((r.0, r.1 + size, r.2 - size, r.3));
            }
            (r.0, r.1, r.2.min(size), r.3)
        } else if let Some((i, wanted)) = self
            .strata
            .iter()
            .enumerate()
            .filter(|(_, st)| st.frontier < self.seed_limit(st))
            .map(|(i, st)| (i, seeds_wanted(st)))
            .find(|&(_, wanted)| wanted > 0)
        {
            let limit = self.seed_limit(&self.strata[i]);
            let guided = self.guided_size(session, wanted);
            let st = &mut self.strata[i];
            let first = st.frontier;
            let len = size.min(guided).min(limit - first);
            st.frontier += len;
            (i as u32, first, len, 1)
        } else if let Some(original) = (held == 0).then(|| self.speculation_for(session)).flatten()
        {
            let (stratum, first, count, attempt) = {
                let l = &self.leases[&original];
                (l.stratum, l.first_seed, l.seed_count, l.attempt + 1)
            };
            let copy = self.issue(
                session,
                (stratum, first, count, attempt),
                false,
                Some(original),
                now,
            );
            self.progress.speculative += 1;
            if let Some(l) = self.leases.get_mut(&original) {
                l.twin = Some(copy.id);
            }
            return Grant::Lease(copy);
        } else {
            return Grant::Wait;
        };
        Grant::Lease(self.issue(
            session,
            (stratum, first_seed, seed_count, attempt),
            false,
            None,
            now,
        ))
    }

    /// A new lease of (stratum, first seed, count, attempt) for `session`:
    /// a cross-check or not, the copy of a lease still out or not.
    fn issue(
        &mut self,
        session: SessionId,
        (stratum, first_seed, seed_count, attempt): (u32, u64, u64, u32),
        check: bool,
        twin: Option<u64>,
        now: Instant,
    ) -> Lease {
        let lease = Lease {
            id: self.next_lease,
            session,
            stratum,
            first_seed,
            seed_count,
            attempt,
            deadline: now + self.config.lease_ttl,
            granted: now,
            check,
            twin,
        };
        self.next_lease += 1;
        self.leases.insert(lease.id, lease.clone());
        self.sessions
            .entry(session)
            .or_default()
            .leases
            .push(lease.id);
        lease
    }

    /// Seeds for `session`'s next lease: about [`LEASE_TARGET`] of its
    /// threads' time at the cost per seed seen so far (in its own results,
    /// else in all), at most `seeds_per_lease`; a few per thread before any
    /// cost is known.
    fn lease_size(&self, session: SessionId) -> u64 {
        let cap = self.config.seeds_per_lease;
        let threads = self.sessions.get(&session).map_or(0, |s| s.threads);
        if threads == 0 {
            return cap;
        }
        let seen = self.sessions.get(&session).and_then(|s| s.seed_cost_ms);
        let size = match seen.or(self.seed_cost_ms) {
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

    /// Guided self-scheduling: at most half of `session`'s share (by
    /// threads) of the seeds still wanted, so the last leases shrink and the
    /// sessions finish together.
    fn guided_size(&self, session: SessionId, wanted: u64) -> u64 {
        let all = self.threads_open;
        let mine = self
            .sessions
            .get(&session)
            .map_or(0, |s| u64::from(s.threads));
        if all == 0 || mine == 0 || wanted == u64::MAX {
            return u64::MAX;
        }
        let share = u128::from(wanted) * u128::from(mine) / (2 * u128::from(all));
        u64::try_from(share).unwrap_or(u64::MAX).max(1)
    }

    /// At the tail (nothing left to lease, `session` idle): the oldest lease out to another
    /// session that is not copied yet and still misses seeds its stratum
    /// needs, to be run again by `session` (the first result wins).
    fn speculation_for(&self, session: SessionId) -> Option<u64> {
        let mut candidates: Vec<(Instant, u64)> = self
            .leases
            .values()
            .filter(|l| {
                l.session != session
                    && !l.check
                    && l.twin.is_none()
                    && !self.strata[l.stratum as usize].is_complete()
            })
            .map(|l| (l.granted, l.id))
            .collect();
        candidates.sort_unstable();
        // The oldest that still misses a seed (most do: they are out).
        candidates.into_iter().map(|(_, id)| id).find(|id| {
            let l = &self.leases[id];
            (self
                .verdicts
                .range(l.first_seed, l.first_seed + l.seed_count)
                .count() as u64)
                < l.seed_count
        })
    }

    /// The next queued cross-check `worker` may run; checks the pack no
    /// longer needs (past the prefix of a complete stratum) are dropped.
    fn next_check(&mut self, worker: &str) -> Option<u64> {
        let strata = &self.strata;
        let needed = |seed: u64| stratum_index(strata, seed).is_some_and(|i| strata[i].needs(seed));
        self.checks.next_for(worker, CHECK_WINDOW, needed)
    }

    /// The lease `session` claims for `seed`: it must have been issued to
    /// that session and hold the seed (a lease no longer out still counts,
    /// so late results of its holder are taken).
    pub fn lease_for(
        &self,
        session: SessionId,
        lease_id: u64,
        seed: u64,
    ) -> Result<&Lease, RecordError> {
        let lease = self
            .leases
            .get(&lease_id)
            .or_else(|| self.past_leases.get(&lease_id))
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

    /// Takes one result. Idempotent: a seed already recorded is ignored (a
    /// disagreeing verdict is counted as a mismatch).
    pub fn record(
        &mut self,
        session: SessionId,
        lease_id: u64,
        record: SeedRecord,
    ) -> Result<(), RecordError> {
        self.record_batch(session, vec![(lease_id, record)], Instant::now())
    }

    /// Takes a batch of results whole or not at all: every result must fall
    /// in a lease of `session` before any is recorded.
    pub fn record_batch(
        &mut self,
        session: SessionId,
        batch: Vec<(u64, SeedRecord)>,
        now: Instant,
    ) -> Result<(), RecordError> {
        let attempts = batch
            .iter()
            .map(|(lease, r)| {
                if let Some(reason) = self.checks.refusal(&r.worker) {
                    return Err(RecordError::Refused {
                        worker: r.worker.clone(),
                        reason: reason.to_string(),
                    });
                }
                Ok(self.lease_for(session, *lease, r.seed)?.attempt)
            })
            .collect::<Result<Vec<u32>, RecordError>>()?;
        if !batch.is_empty() {
            self.last_result.insert(session, now);
            let spent: f64 = batch.iter().map(|(_, r)| r.generate_ms + r.solve_ms).sum();
            let mean = spent / batch.len() as f64;
            if mean.is_finite() {
                let average = |seen: Option<f64>| Some(seen.map_or(mean, |c| 0.9 * c + 0.1 * mean));
                self.seed_cost_ms = average(self.seed_cost_ms);
                if let Some(info) = self.sessions.get_mut(&session) {
                    info.seed_cost_ms = average(info.seed_cost_ms);
                }
            }
        }
        for ((_, mut record), attempt) in batch.into_iter().zip(attempts) {
            record.attempt = attempt;
            self.take_result(record, now);
        }
        Ok(())
    }

    /// A result, live or replayed from the log: the first for its seed is
    /// recorded (and, if sampled, waits for a second run); one from another
    /// worker is compared with it.
    fn take_result(&mut self, record: SeedRecord, now: Instant) {
        if record.worker == COORDINATOR {
            // Replayed: the coordinator's run settled the seed's dispute (the
            // refusals it made follow it in the log).
            self.checks.disputes.remove(&record.seed);
        }
        let Some(old) = self.verdicts.get(record.seed) else {
            self.insert(record, now);
            return;
        };
        self.progress.duplicate_results += 1;
        let fingerprint = self.verdicts.fingerprint(&record);
        let same = old.status == record.status && old.fingerprint == fingerprint;
        if self.verdicts.worker(&old) == record.worker {
            if !same {
                self.progress.mismatches += 1;
            }
            return;
        }
        let seed = record.seed;
        let timeout = old.status == Status::Timeout || record.status == Status::Timeout;
        if timeout || same {
            // A watchdog timeout depends on the machine: it proves nothing.
            if self.checks.pending.remove(&seed).is_some() && !timeout {
                self.checks.confirm();
                self.unflushed.push(Entry::Result(record));
            }
            return;
        }
        self.progress.mismatches += 1;
        // The first result in words: as sampled, or as its verdict says.
        let first = match self.checks.pending.remove(&seed) {
            Some(p) => p.first,
            None => self.claim_of(&old),
        };
        if self.checks.disputes.contains_key(&seed) {
            return;
        }
        let stratum = self.stratum_of(seed).unwrap_or(0) as u32;
        tracing::warn!(
            seed,
            first = %first.worker,
            second = %record.worker,
            "two results disagree; the coordinator runs the seed to decide"
        );
        self.checks.count_dispute();
        self.checks.disputes.insert(
            seed,
            Dispute {
                stratum,
                results: [first, Claim::of(&record, fingerprint)],
                running: false,
            },
        );
        self.unflushed.push(Entry::Result(record));
    }

    /// A recorded verdict as the cross-check judges it.
    fn claim_of(&self, v: &Verdict) -> Claim {
        let reason = self.verdicts.reasons.name(u32::from(v.reason));
        Claim {
            worker: self.verdicts.worker(v).to_string(),
            status: v.status,
            fingerprint: v.fingerprint,
            description: if reason.is_empty() {
                v.status.as_str().to_string()
            } else {
                reason.to_string()
            },
        }
    }

    /// Records a seed's first result: logged, sampled for a cross-check.
    fn insert(&mut self, record: SeedRecord, now: Instant) {
        let Some(i) = self.stratum_of(record.seed) else {
            return;
        };
        if self.strata[i].needs(record.seed)
            && record.worker != COORDINATOR
            && self.checks.sampled(record.seed)
        {
            let fingerprint = self.verdicts.fingerprint(&record);
            self.checks.pending.insert(
                record.seed,
                Pending {
                    stratum: i as u32,
                    first: Claim::of(&record, fingerprint),
                    since: now,
                    state: CheckState::Queued,
                },
            );
            self.checks.queue.push_back(record.seed);
        }
        self.audit_if_met_before(&record);
        self.store(&record);
        self.unflushed.push(Entry::Result(record));
    }

    /// A level already recorded for another seed: one of the two seeds may
    /// carry the other's level (a real level passes every check), so the
    /// coordinator runs both, and whoever sent a level its seed does not
    /// make is refused. Honest twins (two seeds that make one level) cost
    /// the two runs and nothing more.
    fn audit_if_met_before(&mut self, record: &SeedRecord) {
        let Some(level) = record.accepted() else {
            return;
        };
        // Once the pack is complete nothing is added to settle: the pack is
        // being written from what is settled.
        if !self.config.audit_duplicate_levels || record.worker == COORDINATOR || self.is_complete()
        {
            return;
        }
        let key = self.level_hasher.hash_one(&level.level_hash);
        let first = *self.level_seeds.entry(key).or_insert(record.seed);
        if first == record.seed {
            return;
        }
        let claims = [(
            record.seed,
            Claim::of(record, self.verdicts.fingerprint(record)),
        )]
        .into_iter()
        .chain(
            self.verdicts
                .get(first)
                .filter(|v| self.verdicts.worker(v) != COORDINATOR)
                .map(|v| (first, self.claim_of(&v))),
        )
        .collect::<Vec<_>>();
        for (seed, claim) in claims {
            if self.checks.disputes.contains_key(&seed) {
                continue;
            }
            tracing::info!(
                seed,
                other = first.max(record.seed),
                "a level met at two seeds: the coordinator runs it"
            );
            let stratum = self.stratum_of(seed).unwrap_or(0) as u32;
            self.checks.disputes.insert(
                seed,
                Dispute {
                    stratum,
                    results: [claim.clone(), claim],
                    running: false,
                },
            );
        }
    }

    /// Counts a record and keeps its verdict; the prefix of its stratum moves on.
    fn store(&mut self, record: &SeedRecord) {
        let Some(i) = self.stratum_of(record.seed) else {
            return;
        };
        if self.verdicts.contains(record.seed) {
            return;
        }
        if let Some(key) = record.accepted().and_then(|l| l.canonical.as_deref()) {
            self.strata[i].canon.insert(record.seed, canonical_key(key));
        }
        let verdict = self.verdicts.of(record);
        self.count(i, record.seed, verdict);
    }

    /// Counts a verdict in progress and in its stratum, and keeps it.
    fn count(&mut self, i: usize, seed: u64, verdict: Verdict) {
        if !self.verdicts.insert(seed, verdict) {
            return;
        }
        self.progress.seeds += 1;
        bump(
            &mut self.progress.per_worker,
            self.verdicts.worker(&verdict),
        );
        let st = &mut self.strata[i];
        st.recorded += 1;
        if verdict.status == Status::Accepted {
            match st.canon.get(&seed) {
                Some(key) if !st.seen.insert(*key) => {}
                _ => st.accepted_total += 1,
            }
        } else {
            let key = self.verdicts.reasons.name(u32::from(verdict.reason));
            bump(&mut self.progress.rejected, key);
        }
        while st.prefix_accepted < st.count {
            let Some(v) = self.verdicts.get(st.prefix_end) else {
                break;
            };
            if v.status == Status::Accepted {
                match st.canon.get(&st.prefix_end) {
                    Some(key) if !st.prefix_seen.insert(*key) => {
                        bump(&mut self.progress.rejected, "rejected: duplicate");
                    }
                    _ => st.prefix_accepted += 1,
                }
            }
            st.prefix_end += 1;
        }
    }

    /// The session finished every seed of the lease.
    pub fn lease_done(&mut self, session: SessionId, lease_id: u64) {
        self.release(session, lease_id);
    }

    /// The session gives the lease back; its missing seeds are re-issued.
    pub fn lease_returned(&mut self, session: SessionId, lease_id: u64) {
        self.release(session, lease_id);
    }

    /// Stops (or resumes) granting leases, e.g. while the commit log cannot
    /// be written.
    pub fn set_paused(&mut self, paused: bool) {
        self.paused = paused;
    }

    /// Gives back records the commit log could not take, to be written first
    /// on the next flush.
    pub fn restore_unflushed(&mut self, mut records: Vec<Entry>) {
        records.append(&mut self.unflushed);
        self.unflushed = records;
    }

    /// A session of `worker` opened; refused (with the reason) if the
    /// cross-check refused that worker.
    pub fn session_started(
        &mut self,
        session: SessionId,
        worker: &str,
        threads: u32,
    ) -> Result<(), RecordError> {
        if let Some(reason) = self.checks.refusal(worker) {
            return Err(RecordError::Refused {
                worker: worker.to_string(),
                reason: reason.to_string(),
            });
        }
        let info = self.sessions.entry(session).or_default();
        info.worker = worker.to_string();
        self.threads_open -= u64::from(info.threads);
        info.threads = threads.min(1024);
        self.threads_open += u64::from(info.threads);
        Ok(())
    }

    /// Why `worker` is refused, if it is.
    pub fn refusal(&self, worker: &str) -> Option<&str> {
        self.checks.refusal(worker)
    }

    /// The coordinator's secret for this log (the cross-check's key), which
    /// also keys the worker identities it issues.
    pub fn secret(&self) -> [u8; 16] {
        self.config.check_key
    }

    /// The session is gone (stream ended or broke): all its leases are released.
    pub fn session_ended(&mut self, session: SessionId) {
        self.last_result.remove(&session);
        let ids = self
            .sessions
            .get(&session)
            .map(|s| s.leases.clone())
            .unwrap_or_default();
        for id in ids {
            self.release(session, id);
        }
        if let Some(info) = self.sessions.remove(&session) {
            self.threads_open -= u64::from(info.threads);
        }
    }

    /// Extends every lease of the session.
    pub fn heartbeat(&mut self, session: SessionId, now: Instant) {
        let Some(info) = self.sessions.get(&session) else {
            return;
        };
        for id in &info.leases {
            if let Some(lease) = self.leases.get_mut(id) {
                lease.deadline = now + self.config.lease_ttl;
            }
        }
    }

    /// Re-queues leases past their deadline, and leases whose session has
    /// shown no progress (a result) within the progress limit; returns how many.
    pub fn expire(&mut self, now: Instant) -> usize {
        let limit = self.config.progress_limit;
        let stalled = |l: &Lease| {
            let last = self
                .last_result
                .get(&l.session)
                .map_or(l.granted, |&t| t.max(l.granted));
            now.saturating_duration_since(last) >= limit
        };
        let expired: Vec<(SessionId, u64)> = self
            .leases
            .values()
            .filter(|l| l.deadline <= now || stalled(l))
            .map(|l| (l.session, l.id))
            .collect();
        for &(session, id) in &expired {
            self.release(session, id);
        }
        expired.len()
    }

    fn release(&mut self, session: SessionId, lease_id: u64) {
        let Some(lease) = self.leases.get(&lease_id) else {
            return;
        };
        if lease.session != session {
            return;
        }
        let Some(lease) = self.leases.remove(&lease_id) else {
            return;
        };
        if let Some(info) = self.sessions.get_mut(&session) {
            info.leases.retain(|&id| id != lease_id);
        }
        // While its twin is out, the twin covers the range.
        if let Some(twin) = lease.twin.and_then(|t| self.leases.get_mut(&t)) {
            twin.twin = None;
            self.past_leases.insert(lease.id, lease);
            return;
        }
        if lease.check {
            // A check not answered goes back to the queue.
            if let Some(p) = self.checks.pending.get_mut(&lease.first_seed)
                && p.state == CheckState::Leased(lease.id)
            {
                p.state = CheckState::Queued;
                self.checks.queue.push_front(lease.first_seed);
            }
            self.past_leases.insert(lease.id, lease);
            return;
        }
        // Missing seeds go back in contiguous runs.
        let end = lease.first_seed + lease.seed_count;
        let mut seed = lease.first_seed;
        while seed < end {
            if self.verdicts.contains(seed) {
                seed += 1;
                continue;
            }
            let start = seed;
            while seed < end && !self.verdicts.contains(seed) {
                seed += 1;
            }
            if self.strata[lease.stratum as usize].is_complete() {
                continue;
            }
            self.requeue
                .push_back((lease.stratum, start, seed - start, lease.attempt + 1));
        }
        self.past_leases.insert(lease.id, lease);
    }

    /// Whether the pack's seeds are all recorded, no result is disputed and
    /// no sampled seed inside the pack waits for its second run.
    pub fn is_complete(&self) -> bool {
        self.strata.iter().all(Stratum::is_complete)
            && self.checks.disputes.is_empty()
            && self.strata.iter().all(|st| {
                self.checks
                    .pending
                    .range(st.first_seed..st.prefix_end)
                    .next()
                    .is_none()
            })
    }

    /// How many entries wait for the commit log.
    pub fn unflushed_len(&self) -> usize {
        self.unflushed.len()
    }

    /// Entries not yet handed to the commit log. The next ones are gathered
    /// in a list of the size these took, so that it does not grow by steps.
    pub fn take_unflushed(&mut self) -> Vec<Entry> {
        let capacity = self.unflushed.len();
        let entries = std::mem::replace(&mut self.unflushed, Vec::with_capacity(capacity));
        #[cfg(test)]
        self.logged.extend(entries.iter().cloned());
        entries
    }

    /// Seeds the coordinator must run itself, as (stratum, seed): disputed
    /// ones, and sampled ones that waited `grace` with no open session of
    /// another worker to check them, or a lease TTL whatever the sessions
    /// (a worker that never asks for work holds nothing back), or that a
    /// checker holds too long (a lease TTL at the tail, the progress limit
    /// before: a session that keeps taking checks holds nothing back). Each is
    /// handed out once; its result comes back through
    /// [`Scheduler::coordinator_result`] (or [`Scheduler::coordinator_failed`]).
    pub fn coordinator_work(&mut self, now: Instant, grace: Duration) -> Vec<(u32, u64)> {
        let mut work = Vec::new();
        for (&seed, d) in self.checks.disputes.iter_mut().filter(|(_, d)| !d.running) {
            d.running = true;
            work.push((d.stratum, seed));
        }
        // Up to two names of open sessions: enough to know whether a
        // worker other than the first one is there.
        let mut names: Vec<&str> = Vec::with_capacity(2);
        for name in self.sessions.values().map(|s| &s.worker) {
            let usable = self.checks.refusal(name).is_none();
            if usable && names.len() < 2 && !names.contains(&name.as_str()) {
                names.push(name);
            }
        }
        let patience = self.config.lease_ttl;
        let progress_limit = self.config.progress_limit;
        // At the tail no worker gets new seeds: waiting for another one to
        // come only delays the pack.
        let at_tail = self.strata.iter().all(|st| {
            st.is_complete() || seeds_wanted(st) == 0 || st.frontier >= self.seed_limit(st)
        });
        for (&seed, p) in self.checks.pending.iter_mut() {
            let other = names.iter().any(|n| *n != p.first.worker);
            // Counted from when the check was first queued: a session that
            // takes it again and again (returning it, or letting its lease
            // lapse) does not make it younger.
            let waited = now.saturating_duration_since(p.since);
            let alone = !other && (waited >= grace || at_tail);
            let held_too_long = matches!(p.state, CheckState::Leased(_))
                && waited >= if at_tail { patience } else { progress_limit };
            if (p.state == CheckState::Queued && (waited >= patience || alone)) || held_too_long {
                p.state = CheckState::Coordinator;
                work.push((p.stratum, seed));
            }
        }
        work
    }

    /// The coordinator's own result for a seed of [`Scheduler::coordinator_work`]:
    /// it settles a dispute or a check, and every worker whose result for the
    /// seed disagrees with it is refused.
    pub fn coordinator_result(&mut self, record: SeedRecord) {
        let seed = record.seed;
        if record.status == Status::Timeout {
            tracing::warn!(
                seed,
                "the coordinator's run hit the watchdog: the seed's results stand unchecked"
            );
            self.checks.disputes.remove(&seed);
            self.checks.pending.remove(&seed);
            return;
        }
        // The results to judge: a dispute's two, or a sampled seed's first.
        let (results, sampled): (Vec<Claim>, bool) = match self.checks.disputes.remove(&seed) {
            Some(d) => (d.results.into(), false),
            None => match self.checks.pending.remove(&seed) {
                Some(p) => (vec![p.first], true),
                None => (Vec::new(), false),
            },
        };
        let fingerprint = self.verdicts.fingerprint(&record);
        let ours = describe(&record);
        let wrong: Vec<&Claim> = results
            .iter()
            .filter(|r| {
                r.status != Status::Timeout
                    && (r.status != record.status || r.fingerprint != fingerprint)
            })
            .collect();
        if sampled && !results.is_empty() {
            if wrong.is_empty() {
                self.checks.confirm();
            } else {
                self.checks.count_dispute();
            }
        }
        for r in wrong {
            let reason = format!(
                "seed {seed}: it reported {}, the coordinator's own run found {ours}",
                r.description
            );
            self.refuse(&r.worker, &reason);
        }
        if self.verdicts.contains(seed) {
            self.unflushed.push(Entry::Result(record));
        } else {
            self.insert(record, Instant::now());
        }
    }

    /// The coordinator could not run a seed of [`Scheduler::coordinator_work`]:
    /// its results stand unchecked (so that the pack is not held back).
    pub fn coordinator_failed(&mut self, seed: u64) {
        self.checks.disputes.remove(&seed);
        self.checks.pending.remove(&seed);
    }

    /// Refuses `worker`: its sessions get no more work, none of its results
    /// count (they are dropped and their seeds run again by others), and the
    /// log says so.
    pub fn refuse(&mut self, worker: &str, reason: &str) {
        if !self.checks.refuse(worker, reason) {
            return;
        }
        tracing::error!(
            worker,
            reason,
            "worker refused: its results are run again by others"
        );
        self.unflushed.push(Entry::Refused {
            worker: worker.to_string(),
            reason: reason.to_string(),
        });
        let theirs: Vec<(SessionId, u64)> = self
            .sessions
            .iter()
            .filter(|(_, s)| s.worker == worker)
            .flat_map(|(&session, s)| s.leases.iter().map(move |&id| (session, id)))
            .collect();
        for (session, id) in theirs {
            self.release(session, id);
        }
        let Some(id) = self.verdicts.workers.id(worker) else {
            return;
        };
        if self.verdicts.remove_where(|v| v.worker == id + 1) == 0 {
            return;
        }
        // Their seeds are run again, and whatever a stratum that is no
        // longer complete dropped from its leases.
        self.recount();
        self.requeue_holes();
    }

    /// Counts every stratum and the progress afresh from the verdicts.
    fn recount(&mut self) {
        let verdicts = self.verdicts.drain();
        for st in &mut self.strata {
            st.prefix_end = st.first_seed;
            st.prefix_accepted = 0;
            st.accepted_total = 0;
            st.recorded = 0;
            st.seen.clear();
            st.prefix_seen.clear();
            st.canon
                .retain(|seed, _| verdicts.binary_search_by_key(seed, |v| v.0).is_ok());
        }
        self.progress.seeds = 0;
        self.progress.per_worker.clear();
        self.progress.rejected.clear();
        for (seed, verdict) in verdicts {
            if let Some(i) = self.stratum_of(seed) {
                self.count(i, seed, verdict);
            }
        }
    }

    /// What the pack is made of, once complete (`None` before): for each
    /// stratum every seed of the complete prefix, up to and including the
    /// `count`-th accepted one, with the verdict whose record the pack takes
    /// from the log. An accepted level whose canonical form a lower seed of
    /// its stratum already has becomes a `rejected` duplicate.
    ///
    /// Takes the verdicts out: the scheduler holds none afterwards.
    pub fn take_selection(&mut self) -> Option<Selection> {
        if !self.is_complete() {
            return None;
        }
        let mut duplicates = HashMap::new();
        for st in &self.strata {
            let mut keyed: Vec<(u64, u128)> = st
                .canon
                .iter()
                .filter(|(s, _)| (st.first_seed..st.prefix_end).contains(*s))
                .map(|(&s, &k)| (s, k))
                .collect();
            keyed.sort_unstable();
            let mut first: HashMap<u128, u64> = HashMap::new();
            for (seed, key) in keyed {
                let original = *first.entry(key).or_insert(seed);
                if original != seed {
                    duplicates.insert(seed, original);
                }
            }
        }
        Some(Selection {
            prefixes: self
                .strata
                .iter()
                .map(|st| (st.first_seed, st.prefix_end))
                .collect(),
            verdicts: std::mem::take(&mut self.verdicts),
            duplicates,
        })
    }

    /// Counters for progress reports.
    pub fn progress(&self) -> Progress {
        let mut p = self.progress.clone();
        p.accepted = self.strata.iter().map(|st| st.accepted_total).sum();
        p.committed = self
            .strata
            .iter()
            .map(|st| st.prefix_accepted.min(st.count))
            .sum();
        p.leases_out = self.leases.len();
        p.sessions = self.sessions.len();
        p.threads = self.threads_open;
        p.cross_check = self.checks.facts();
        p
    }

    /// The lease with this id, if out.
    pub fn lease(&self, id: u64) -> Option<&Lease> {
        self.leases.get(&id)
    }
}

#[cfg(test)]
impl Scheduler {
    /// The pack's records in seed order, as the server writes them: every
    /// entry logged, through the selection. `None` until complete.
    fn take_pack_records(&mut self) -> Option<Vec<SeedRecord>> {
        let mut entries = std::mem::take(&mut self.logged);
        entries.extend(self.unflushed.iter().cloned());
        let mut selection = self.take_selection()?;
        let mut pack: Vec<SeedRecord> = entries
            .into_iter()
            .filter_map(|e| match e {
                Entry::Result(r) => selection.take(r),
                Entry::Refused { .. } => None,
            })
            .collect();
        assert_eq!(selection.missing(), Vec::<u64>::new(), "every record found");
        pack.sort_by_key(|r| r.seed);
        Some(pack)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(count: u64, per_lease: u64) -> SchedulerConfig {
        SchedulerConfig {
            strata: vec![(100, count)],
            seeds_per_lease: per_lease,
            lease_ttl: Duration::from_secs(10),
            max_seeds: None,
            progress_limit: Duration::from_secs(3600),
            cross_check: 0.0,
            check_key: [0; 16],
            audit_duplicate_levels: false,
        }
    }

    /// Seeds divisible by 3 are accepted.
    fn result(seed: u64) -> SeedRecord {
        let accepted = seed.is_multiple_of(3);
        SeedRecord {
            seed,
            status: if accepted {
                Status::Accepted
            } else {
                Status::Rejected
            },
            reason: if accepted {
                String::new()
            } else {
                "too easy: 1 move".into()
            },
            level: None,
            generate_ms: 0.0,
            solve_ms: 0.0,
            nodes: 0,
            worker: "w".into(),
            attempt: 0,
        }
    }

    fn accepted_seeds(pack: &[SeedRecord]) -> Vec<u64> {
        pack.iter()
            .filter(|r| r.status == Status::Accepted)
            .map(|r| r.seed)
            .collect()
    }

    fn lease(g: Grant) -> Lease {
        match g {
            Grant::Lease(l) => l,
            other => panic!("expected a lease, got {other:?}"),
        }
    }

    fn finish(s: &mut Scheduler, session: SessionId, l: &Lease) {
        for seed in l.first_seed..l.first_seed + l.seed_count {
            s.record(session, l.id, result(seed)).expect("in lease");
        }
        s.lease_done(session, l.id);
    }

    #[test]
    fn a_stratum_gives_up_after_max_seeds() {
        let now = Instant::now();
        // Seeds 100.. accept every third: 10 seeds hold 3 levels, not 4.
        let mut s = Scheduler::new(
            SchedulerConfig {
                max_seeds: Some(10),
                progress_limit: Duration::from_secs(3600),
                ..config(4, 4)
            },
            vec![],
        );
        let mut granted = Vec::new();
        while let Grant::Lease(l) = s.grant(1, now) {
            granted.push((l.first_seed, l.seed_count));
            assert!(s.exhausted().is_none(), "not every seed is recorded yet");
            finish(&mut s, 1, &l);
        }
        assert_eq!(granted, vec![(100, 4), (104, 4), (108, 2)]);
        assert!(!s.is_complete());
        assert!(s.is_finished());
        assert_eq!(
            s.exhausted(),
            Some(Exhausted {
                stratum: 0,
                seeds: 10,
                accepted: 3,
                wanted: 4
            })
        );
        assert_eq!(s.grant(1, now), Grant::Finished);
        // Resumed with a higher limit, it goes on from seed 110.
        let committed: Vec<Entry> = (100..110).map(result).map(Entry::Result).collect();
        let mut s = Scheduler::new(
            SchedulerConfig {
                max_seeds: Some(20),
                progress_limit: Duration::from_secs(3600),
                ..config(4, 4)
            },
            committed,
        );
        assert!(s.exhausted().is_none());
        let l = lease(s.grant(1, now));
        assert_eq!(l.first_seed, 110);
        finish(&mut s, 1, &l);
        assert!(s.is_complete());
    }

    #[test]
    fn duplicates_lose_to_the_lowest_seed_whatever_the_order() {
        let now = Instant::now();
        let mut s = Scheduler::new(config(3, 6), vec![]);
        let a = lease(s.grant(1, now));
        let b = lease(s.grant(2, now));
        // Every accepted level has one of two canonical forms, except seed 111.
        let with_key = |seed: u64| {
            let mut r = result(seed);
            if r.status == Status::Accepted {
                let key = if seed == 111 {
                    "c".into()
                } else {
                    format!("k{}", seed % 2)
                };
                r.level = Some(pregen_pack::record::LevelRecord {
                    difficulty: seed as f64,
                    moves: 1,
                    moves_optimal: true,
                    layout: String::new(),
                    level_json: String::new(),
                    solution: String::new(),
                    metrics: Default::default(),
                    level_hash: seed.to_string(),
                    canonical: Some(key),
                });
            }
            r
        };
        // The later range first: its levels come in before their originals.
        for l in [&b, &a] {
            let session = l.session;
            for seed in l.first_seed..l.first_seed + l.seed_count {
                s.record(session, l.id, with_key(seed)).expect("in lease");
            }
            s.lease_done(session, l.id);
        }
        assert!(s.is_complete());
        let pack = s.take_pack_records().expect("complete");
        let accepted = accepted_seeds(&pack);
        // 102 (k0), 105 (k1), 108 (k0 again), 111 (c).
        assert_eq!(accepted, vec![102, 105, 111]);
        let duplicates: Vec<(u64, &str)> = pack
            .iter()
            .filter(|r| r.status == Status::Rejected && r.reason.starts_with("duplicate"))
            .map(|r| (r.seed, r.reason.as_str()))
            .collect();
        assert_eq!(duplicates, vec![(108, "duplicate: the level of seed 102")]);
        assert_eq!(s.progress().rejected.get("rejected: duplicate"), Some(&1));
    }

    #[test]
    fn pack_is_first_count_accepted_in_seed_order_whatever_the_order() {
        let now = Instant::now();
        let mut s = Scheduler::new(config(5, 4), vec![]);
        let a = lease(s.grant(1, now));
        let b = lease(s.grant(2, now));
        let c = lease(s.grant(2, now));
        let d = lease(s.grant(1, now));
        // Later ranges finish first.
        finish(&mut s, 1, &d);
        finish(&mut s, 2, &c);
        assert!(!s.is_complete());
        finish(&mut s, 2, &b);
        finish(&mut s, 1, &a);
        assert!(s.is_complete());
        let pack = s.take_pack_records().expect("complete");
        let accepted = accepted_seeds(&pack);
        assert_eq!(accepted, vec![102, 105, 108, 111, 114]);
        assert_eq!(pack.first().map(|r| r.seed), Some(100));
        assert_eq!(pack.last().map(|r| r.seed), Some(114));
        assert_eq!(s.grant(1, now), Grant::Finished);
    }

    #[test]
    fn broken_session_requeues_missing_seeds_with_next_attempt() {
        let now = Instant::now();
        let mut s = Scheduler::new(config(3, 4), vec![]);
        let a = lease(s.grant(1, now));
        s.record(1, a.id, result(100)).expect("ok");
        s.session_ended(1);
        let again = lease(s.grant(2, now));
        assert_eq!(
            (again.first_seed, again.seed_count, again.attempt),
            (101, 3, 2)
        );
        // A late result of the dead session for its old lease is still taken once.
        s.record(1, a.id, result(101))
            .expect("late result of own lease");
        s.record(2, again.id, result(101))
            .expect("duplicate is idempotent");
        assert_eq!(s.progress().seeds, 2);
    }

    #[test]
    fn expired_leases_are_reissued_and_heartbeats_extend_them() {
        let now = Instant::now();
        let mut s = Scheduler::new(config(3, 4), vec![]);
        let a = lease(s.grant(1, now));
        let b = lease(s.grant(2, now));
        s.heartbeat(2, now + Duration::from_secs(8));
        assert_eq!(s.expire(now + Duration::from_secs(11)), 1);
        assert!(s.lease(a.id).is_none());
        assert!(s.lease(b.id).is_some());
        let again = lease(s.grant(3, now));
        assert_eq!(again.first_seed, a.first_seed);
    }

    #[test]
    fn results_are_checked_against_the_lease() {
        let now = Instant::now();
        let mut s = Scheduler::new(config(3, 4), vec![]);
        let a = lease(s.grant(1, now));
        assert!(matches!(
            s.record(1, a.id, result(104)),
            Err(RecordError::SeedOutsideLease { seed: 104, .. })
        ));
        assert!(matches!(
            s.record(2, a.id, result(100)),
            Err(RecordError::NotYourLease { .. })
        ));
        assert!(matches!(
            s.record(1, 99, result(100)),
            Err(RecordError::UnknownLease(99))
        ));
        assert_eq!(s.progress().seeds, 0, "nothing recorded");
    }

    #[test]
    fn resume_requeues_holes_and_continues_after_the_last_seed() {
        let committed: Vec<Entry> = [100, 101, 105, 106]
            .into_iter()
            .map(result)
            .map(Entry::Result)
            .collect();
        let mut s = Scheduler::new(config(4, 4), committed);
        let now = Instant::now();
        let hole = lease(s.grant(1, now));
        assert_eq!((hole.first_seed, hole.seed_count), (102, 3));
        let next = lease(s.grant(1, now));
        assert_eq!(next.first_seed, 107);
        assert!(
            s.take_unflushed().is_empty(),
            "resumed records are already durable"
        );
    }

    #[test]
    fn no_new_ranges_once_enough_accepted_but_holes_still_served() {
        let now = Instant::now();
        let (mut s, a) = tail(now);
        // Enough accepted in b, but a's seeds come first in order.
        s.session_ended(1);
        let again = lease(s.grant(2, now));
        assert_eq!((again.first_seed, again.twin), (a.first_seed, None));
        finish(&mut s, 2, &again);
        assert!(s.is_complete());
        let pack = s.take_pack_records().expect("complete");
        assert_eq!(
            pack.iter().map(|r| r.seed).collect::<Vec<_>>(),
            vec![100, 101, 102]
        );
    }

    /// The tail of a run: session 2 finished its lease, which holds enough
    /// levels, while session 1 still holds `a`, whose seeds come first.
    fn tail(now: Instant) -> (Scheduler, Lease) {
        let mut s = Scheduler::new(config(1, 4), vec![]);
        let a = lease(s.grant(1, now));
        let b = lease(s.grant(2, now));
        finish(&mut s, 2, &b);
        (s, a)
    }

    #[test]
    fn at_the_tail_an_idle_worker_runs_a_copy_of_the_oldest_lease() {
        let now = Instant::now();
        let (mut s, a) = tail(now);
        // Nothing left to lease but a, which session 1 still holds.
        let copy = lease(s.grant(2, now));
        assert_eq!(
            (copy.first_seed, copy.seed_count, copy.attempt, copy.twin),
            (a.first_seed, a.seed_count, 2, Some(a.id))
        );
        assert_eq!(s.grant(3, now), Grant::Wait, "a lease is copied once");
        finish(&mut s, 2, &copy);
        assert!(s.is_complete());
        // The original's late results are duplicates, taken quietly.
        finish(&mut s, 1, &a);
        let p = s.progress();
        assert_eq!(
            (p.speculative, p.duplicate_results, p.mismatches),
            (1, 4, 0)
        );
        let pack = s.take_pack_records().expect("complete");
        assert_eq!(
            pack.iter().map(|r| r.seed).collect::<Vec<_>>(),
            vec![100, 101, 102]
        );
    }

    #[test]
    fn a_twin_given_back_leaves_its_range_to_the_other() {
        let now = Instant::now();
        let (mut s, a) = tail(now);
        let copy = lease(s.grant(2, now));
        s.lease_returned(2, copy.id);
        assert_eq!(
            s.grant(3, now),
            Grant::Lease(Lease {
                id: 4,
                session: 3,
                granted: now,
                deadline: now + Duration::from_secs(10),
                attempt: 2,
                twin: Some(a.id),
                ..a.clone()
            }),
            "copied again, not re-queued twice"
        );
        s.session_ended(1);
        s.session_ended(3);
        let again = lease(s.grant(2, now));
        assert_eq!((again.first_seed, again.twin), (a.first_seed, None));
        assert_eq!(s.grant(2, now), Grant::Wait, "the range is queued once");
    }

    #[test]
    fn leases_are_sized_from_the_cost_per_seed() {
        let now = Instant::now();
        let mut s = Scheduler::new(config(1000, 512), vec![]);
        s.session_started(1, "w", 2).expect("open");
        let first = lease(s.grant(1, now));
        assert_eq!(
            first.seed_count, 8,
            "a few per thread before any cost is known"
        );
        // 100 ms a seed on 2 threads: 3 s is 60 seeds.
        let slow = (first.first_seed..first.first_seed + 8)
            .map(|seed| {
                (
                    first.id,
                    SeedRecord {
                        generate_ms: 60.0,
                        solve_ms: 40.0,
                        ..result(seed)
                    },
                )
            })
            .collect();
        s.record_batch(1, slow, now).expect("in lease");
        s.lease_done(1, first.id);
        assert_eq!(lease(s.grant(1, now)).seed_count, 60);
        // Cheap seeds: the job's seeds_per_lease is the cap.
        let mut cheap = Scheduler::new(config(1000, 512), vec![]);
        cheap.session_started(1, "w", 2).expect("open");
        let l = lease(cheap.grant(1, now));
        let fast = (l.first_seed..l.first_seed + l.seed_count)
            .map(|seed| {
                (
                    l.id,
                    SeedRecord {
                        generate_ms: 0.01,
                        ..result(seed)
                    },
                )
            })
            .collect();
        cheap.record_batch(1, fast, now).expect("in lease");
        assert_eq!(lease(cheap.grant(1, now)).seed_count, 512);
    }

    #[test]
    fn strata_fill_in_order_and_the_pack_holds_each_prefix() {
        let now = Instant::now();
        let mut s = Scheduler::new(
            SchedulerConfig {
                strata: vec![(0, 2), (1 << 40, 3)],
                seeds_per_lease: 4,
                lease_ttl: Duration::from_secs(10),
                max_seeds: None,
                progress_limit: Duration::from_secs(3600),
                cross_check: 0.0,
                check_key: [0; 16],
                audit_duplicate_levels: false,
            },
            Vec::new(),
        );
        let mut leases = Vec::new();
        while let Grant::Lease(l) = s.grant(1, now) {
            leases.push(l.clone());
            for seed in l.first_seed..l.first_seed + l.seed_count {
                s.record(1, l.id, result(seed)).expect("recorded");
            }
            s.lease_done(1, l.id);
        }
        assert!(s.is_complete());
        // Stratum 0 first (seeds 0..), then stratum 1, each lease inside one stratum.
        assert_eq!((leases[0].stratum, leases[0].first_seed), (0, 0));
        assert!(
            leases
                .iter()
                .all(|l| (l.stratum == 1) == (l.first_seed >= 1 << 40))
        );
        assert!(leases.iter().any(|l| l.stratum == 1));
        let pack = s.take_pack_records().expect("complete");
        let accepted = accepted_seeds(&pack);
        // Multiples of 3: two from stratum 0, three from stratum 1 (2^40 + 2 is one).
        let base = 1u64 << 40;
        let firsts: Vec<u64> = (base..).filter(|v| v % 3 == 0).take(3).collect();
        assert_eq!(accepted, [vec![0, 3], firsts].concat());
        assert_eq!(s.progress().committed, 5);
    }

    #[test]
    fn a_session_holds_a_few_leases_at_most_and_none_while_paused() {
        let mut s = Scheduler::new(config(1000, 5), vec![]);
        let now = Instant::now();
        for _ in 0..MAX_LEASES_PER_SESSION {
            lease(s.grant(1, now));
        }
        assert_eq!(s.grant(1, now), Grant::Wait);
        lease(s.grant(2, now));
        s.set_paused(true);
        assert_eq!(s.grant(3, now), Grant::Wait);
        s.set_paused(false);
        lease(s.grant(3, now));
    }

    #[test]
    fn heartbeats_without_results_do_not_keep_a_lease() {
        let mut cfg = config(10, 5);
        cfg.lease_ttl = Duration::from_secs(1);
        cfg.progress_limit = Duration::from_secs(3);
        let mut s = Scheduler::new(cfg, vec![]);
        let t0 = Instant::now();
        let idle = lease(s.grant(1, t0));
        let busy = lease(s.grant(2, t0));
        for step in 1..=5 {
            let now = t0 + Duration::from_millis(500 * step);
            s.heartbeat(1, now);
            s.heartbeat(2, now);
        }
        // Session 2 shows progress at 2.5 s; session 1 only heartbeats.
        let t = t0 + Duration::from_millis(2500);
        s.record_batch(2, vec![(busy.id, result(busy.first_seed))], t)
            .expect("in lease");
        s.heartbeat(1, t0 + Duration::from_millis(3000));
        s.heartbeat(2, t0 + Duration::from_millis(3000));
        assert_eq!(s.expire(t0 + Duration::from_millis(3100)), 1);
        assert!(
            s.lease(idle.id).is_none(),
            "the idle session's lease is reclaimed"
        );
        assert!(s.lease(busy.id).is_some(), "the busy one keeps its lease");
        let again = lease(s.grant(3, t0 + Duration::from_millis(3200)));
        assert_eq!((again.first_seed, again.attempt), (idle.first_seed, 2));
    }

    #[test]
    fn a_batch_is_taken_whole_or_not_at_all() {
        let mut s = Scheduler::new(config(10, 5), vec![]);
        let l = lease(s.grant(1, Instant::now()));
        let batch = vec![
            (l.id, result(l.first_seed)),
            (l.id, result(l.first_seed + 40)),
        ];
        let err = s
            .record_batch(1, batch, Instant::now())
            .expect_err("outside");
        assert!(matches!(err, RecordError::SeedOutsideLease { .. }));
        assert_eq!(s.progress().seeds, 0, "the valid result was not taken");
    }

    fn checked(count: u64, per_lease: u64, share: f64) -> Scheduler {
        let config = SchedulerConfig {
            cross_check: share,
            ..config(count, per_lease)
        };
        Scheduler::new(config, vec![])
    }

    fn by(worker: &str, record: SeedRecord) -> SeedRecord {
        SeedRecord {
            worker: worker.into(),
            ..record
        }
    }

    /// The true result, except that a liar calls every other accepted seed
    /// (102, 108, ...) rejected.
    fn answer(worker: &str, seed: u64) -> SeedRecord {
        let r = by(worker, result(seed));
        if worker.starts_with("liar") && seed.is_multiple_of(6) {
            return SeedRecord {
                status: Status::Rejected,
                reason: "too easy: 1 move".into(),
                ..r
            };
        }
        r
    }

    /// Takes leases for `session` (as `worker`) and answers them until it is
    /// told to wait; returns the leases it ran.
    fn work(s: &mut Scheduler, session: SessionId, worker: &str) -> Vec<Lease> {
        work_with(s, session, |seed| answer(worker, seed))
    }

    /// [`work`] with the answers of `answer`.
    fn work_with(
        s: &mut Scheduler,
        session: SessionId,
        answer: impl Fn(u64) -> SeedRecord,
    ) -> Vec<Lease> {
        let mut ran = Vec::new();
        while let Grant::Lease(l) = s.grant(session, Instant::now()) {
            let batch = (l.first_seed..l.first_seed + l.seed_count)
                .map(|seed| (l.id, answer(seed)))
                .collect();
            if s.record_batch(session, batch, Instant::now()).is_err() {
                break;
            }
            s.lease_done(session, l.id);
            ran.push(l);
        }
        ran
    }

    fn own_runs(s: &mut Scheduler, grace: Duration) -> usize {
        let work = s.coordinator_work(Instant::now() + grace, grace);
        for &(_, seed) in &work {
            s.coordinator_result(by(COORDINATOR, result(seed)));
        }
        work.len()
    }

    #[test]
    fn a_sampled_seed_is_checked_by_another_worker_before_the_pack_is_complete() {
        let mut s = checked(4, 6, 1.0);
        s.session_started(1, "a", 0).expect("open");
        s.session_started(2, "b", 0).expect("open");
        let first = lease(s.grant(1, Instant::now()));
        for seed in first.first_seed..first.first_seed + 6 {
            s.record(1, first.id, answer("a", seed)).expect("in lease");
        }
        s.lease_done(1, first.id);
        // a gets fresh seeds, never its own to check.
        let next = lease(s.grant(1, Instant::now()));
        assert!(!next.check && next.first_seed == 106);
        s.lease_returned(1, next.id);
        let check = lease(s.grant(2, Instant::now()));
        assert!(check.check && check.seed_count == 1 && check.first_seed == 100);
        s.record(2, check.id, answer("b", 100)).expect("in lease");
        assert_eq!(s.progress().cross_check.confirmed, 1);
        // A check lease given back goes to the next taker.
        let check = lease(s.grant(2, Instant::now()));
        s.lease_returned(2, check.id);
        let again = lease(s.grant(2, Instant::now()));
        assert_eq!(again.first_seed, check.first_seed);
        s.record(2, again.id, answer("b", again.first_seed))
            .expect("in lease");
        work(&mut s, 2, "b");
        work(&mut s, 1, "a");
        work(&mut s, 2, "b");
        assert!(s.is_complete());
        assert!(s.progress().cross_check.confirmed >= 12);
        assert_eq!(s.progress().cross_check.disputes, 0);
    }

    #[test]
    fn a_liar_is_refused_its_results_run_again_and_the_pack_is_the_honest_one() {
        let mut honest_run = checked(4, 6, 0.0);
        work(&mut honest_run, 1, "honest");
        let honest_pack = honest_run.take_pack_records().expect("complete");

        let mut s = checked(4, 6, 1.0);
        s.session_started(1, "liar", 0).expect("open");
        s.session_started(2, "honest", 0).expect("open");
        work(&mut s, 1, "liar");
        let lied = s.progress().seeds;
        assert!(lied > 0);
        // The honest worker checks the liar's seeds and disagrees on 102.
        work(&mut s, 2, "honest");
        assert!(!s.is_complete(), "a disputed seed holds the pack back");
        assert!(own_runs(&mut s, Duration::ZERO) >= 1);
        assert!(s.refusal("liar").is_some_and(|r| r.contains("seed 102")));
        assert!(!s.progress().per_worker.contains_key("liar"));
        assert!(matches!(
            s.record(1, 1, answer("liar", 100)),
            Err(RecordError::Refused { .. })
        ));
        assert!(matches!(s.grant(1, Instant::now()), Grant::Wait));
        assert!(s.session_started(3, "liar", 0).is_err(), "refused for good");
        // Everything the liar ran is run again by the honest worker.
        work(&mut s, 2, "honest");
        own_runs(&mut s, Duration::from_secs(2));
        work(&mut s, 2, "honest");
        assert!(s.is_complete());
        let entries = s.take_unflushed();
        let pack = s.take_pack_records().expect("complete");
        let verdicts = |p: &[SeedRecord]| -> Vec<(u64, Status)> {
            p.iter().map(|r| (r.seed, r.status)).collect()
        };
        assert_eq!(verdicts(&pack), verdicts(&honest_pack));
        assert!(pack.iter().all(|r| r.worker != "liar"));

        // The log replays to the same state: the liar refused, the pack whole.
        assert!(
            entries
                .iter()
                .any(|e| matches!(e, Entry::Refused { worker, .. } if worker == "liar"))
        );
        let mut resumed = Scheduler::new(
            SchedulerConfig {
                cross_check: 1.0,
                ..config(4, 6)
            },
            entries,
        );
        assert!(resumed.refusal("liar").is_some());
        let replayed = resumed.take_pack_records().expect("complete after replay");
        assert_eq!(verdicts(&replayed), verdicts(&honest_pack));
    }

    /// An accepted seed's true result, with a level.
    fn leveled(worker: &str, seed: u64) -> SeedRecord {
        let mut r = by(worker, result(seed));
        if r.status == Status::Accepted {
            r.nodes = 40 + seed;
            r.level = Some(pregen_games::Candidate {
                difficulty: seed as f64 / 7.0,
                moves: 5,
                moves_optimal: true,
                layout: format!("level {seed}"),
                level_json: format!("{{\"seed\":{seed}}}"),
                solution: "U R D".into(),
                metrics: [("pushes".to_string(), 3.0)].into(),
                level_hash: format!("{seed:064x}"),
                canonical: None,
            });
        }
        r
    }

    #[test]
    fn issue_52_any_deterministic_field_that_differs_is_a_dispute() {
        type Forgery = (&'static str, fn(&mut SeedRecord));
        let forgeries: [Forgery; 7] = [
            ("difficulty", |r| {
                r.level.as_mut().expect("level").difficulty += 1e-9;
            }),
            ("a metric", |r| {
                r.level
                    .as_mut()
                    .expect("level")
                    .metrics
                    .insert("pushes".into(), 4.0);
            }),
            ("a metric added", |r| {
                r.level
                    .as_mut()
                    .expect("level")
                    .metrics
                    .insert("agents".into(), 0.0);
            }),
            ("moves_optimal", |r| {
                r.level.as_mut().expect("level").moves_optimal = false;
            }),
            ("the solution", |r| {
                r.level.as_mut().expect("level").solution = "U R D D U".into();
            }),
            ("nodes", |r| r.nodes += 1),
            ("the layout", |r| {
                r.level.as_mut().expect("level").layout.push(' ');
            }),
        ];
        for (what, forge) in forgeries {
            let mut s = checked(4, 6, 1.0);
            s.session_started(1, "liar", 0).expect("open");
            s.session_started(2, "honest", 0).expect("open");
            work_with(&mut s, 1, |seed| {
                let mut r = leveled("liar", seed);
                if seed == 105 {
                    forge(&mut r);
                }
                r
            });
            work_with(&mut s, 2, |seed| leveled("honest", seed));
            assert_eq!(s.progress().cross_check.disputes, 1, "{what}");
            let work = s.coordinator_work(Instant::now(), Duration::ZERO);
            for &(_, seed) in &work {
                s.coordinator_result(leveled(COORDINATOR, seed));
            }
            assert!(
                s.refusal("liar").is_some_and(|r| r.contains("seed 105")),
                "{what}: {:?}",
                s.refusal("liar")
            );
            assert!(s.refusal("honest").is_none(), "{what}");
        }
    }

    #[test]
    fn issue_52_another_seeds_level_has_both_seeds_run_by_the_coordinator() {
        let audited = || SchedulerConfig {
            audit_duplicate_levels: true,
            ..config(4, 6)
        };
        let mut s = Scheduler::new(audited(), vec![]);
        s.session_started(1, "liar", 0).expect("open");
        // Seed 102 carries seed 105's real level; nothing else is wrong.
        work_with(&mut s, 1, |seed| {
            let mut r = leveled("liar", if seed == 102 { 105 } else { seed });
            r.seed = seed;
            r
        });
        assert!(!s.is_complete(), "the two seeds wait for the coordinator");
        let mut work = s.coordinator_work(Instant::now(), Duration::from_secs(60));
        work.sort_unstable();
        assert_eq!(work, [(0, 102), (0, 105)]);
        for &(_, seed) in &work {
            s.coordinator_result(leveled(COORDINATOR, seed));
        }
        assert!(s.refusal("liar").is_some_and(|r| r.contains("seed 102")));

        // Honest twins (two seeds, one level) cost two runs and refuse no one.
        let mut s = Scheduler::new(audited(), vec![]);
        s.session_started(1, "honest", 0).expect("open");
        let twin = |seed: u64| {
            let mut r = leveled("honest", if seed == 102 { 105 } else { seed });
            r.seed = seed;
            r
        };
        work_with(&mut s, 1, twin);
        for (_, seed) in s.coordinator_work(Instant::now(), Duration::from_secs(60)) {
            s.coordinator_result(by(COORDINATOR, twin(seed)));
        }
        assert!(s.refusal("honest").is_none());
        assert!(s.is_complete());
    }

    #[test]
    fn issue_52_a_dispute_between_two_liars_outlives_the_refusal_of_one() {
        let mut s = checked(4, 6, 1.0);
        s.session_started(1, "liar-a", 0).expect("open");
        s.session_started(2, "liar-b", 0).expect("open");
        let lie = |worker: &'static str, by: f64| {
            move |seed: u64| {
                let mut r = leveled(worker, seed);
                if seed == 105 {
                    r.level.as_mut().expect("level").difficulty += by;
                }
                r
            }
        };
        work_with(&mut s, 1, lie("liar-a", 1.0));
        work_with(&mut s, 2, lie("liar-b", 2.0));
        assert_eq!(s.progress().cross_check.disputes, 1);
        // liar-a is refused for something else first.
        s.refuse("liar-a", "seed 7: a forged level");
        let work = s.coordinator_work(Instant::now(), Duration::ZERO);
        assert!(work.contains(&(0, 105)), "the dispute stays: {work:?}");
        for &(_, seed) in &work {
            s.coordinator_result(leveled(COORDINATOR, seed));
        }
        assert!(s.refusal("liar-b").is_some_and(|r| r.contains("seed 105")));
    }

    #[test]
    fn a_lying_checker_is_refused_and_the_first_result_stands() {
        let mut s = checked(4, 6, 1.0);
        s.session_started(1, "honest", 0).expect("open");
        s.session_started(2, "liar", 0).expect("open");
        work(&mut s, 1, "honest");
        work(&mut s, 2, "liar");
        own_runs(&mut s, Duration::ZERO);
        assert!(s.refusal("liar").is_some());
        assert!(s.refusal("honest").is_none());
        // With the liar gone, the coordinator checks what is left itself.
        s.session_ended(2);
        own_runs(&mut s, Duration::from_secs(2));
        work(&mut s, 1, "honest");
        own_runs(&mut s, Duration::from_secs(2));
        assert!(s.is_complete());
        let pack = s.take_pack_records().expect("complete");
        assert_eq!(accepted_seeds(&pack), vec![102, 105, 108, 111]);
    }

    #[test]
    fn with_one_worker_the_coordinator_checks_the_sample_itself() {
        let mut s = checked(4, 6, 1.0);
        s.session_started(1, "alone", 0).expect("open");
        let first = lease(s.grant(1, Instant::now()));
        for seed in first.first_seed..first.first_seed + 2 {
            s.record(1, first.id, answer("alone", seed))
                .expect("in lease");
        }
        assert_eq!(
            s.coordinator_work(Instant::now(), Duration::from_secs(60)),
            vec![],
            "not before the grace while seeds are still wanted"
        );
        for seed in first.first_seed + 2..first.first_seed + first.seed_count {
            s.record(1, first.id, answer("alone", seed))
                .expect("in lease");
        }
        s.lease_done(1, first.id);
        work(&mut s, 1, "alone");
        assert!(!s.is_complete());
        // At the tail no other worker will come for them: at once.
        let at_once = s.coordinator_work(Instant::now(), Duration::from_secs(60));
        assert!(at_once.len() >= 12, "{at_once:?}");
        for &(_, seed) in &at_once {
            s.coordinator_result(by(COORDINATOR, result(seed)));
        }
        assert!(s.is_complete());
        assert_eq!(s.progress().cross_check.disputes, 0);
    }

    #[test]
    fn a_worker_that_never_asks_for_work_does_not_hold_the_checks_back() {
        let mut s = checked(4, 6, 1.0);
        s.session_started(1, "busy", 0).expect("open");
        s.session_started(2, "silent", 0).expect("open");
        work(&mut s, 1, "busy");
        let later = Instant::now() + Duration::from_secs(2);
        assert_eq!(s.coordinator_work(later, Duration::from_secs(1)), vec![]);
        let ttl = Instant::now() + Duration::from_secs(11);
        assert!(s.coordinator_work(ttl, Duration::from_secs(1)).len() >= 12);
    }

    #[test]
    fn issue_52_a_session_that_hoards_checks_does_not_hold_the_pack_back() {
        let mut s = checked(4, 6, 1.0);
        s.session_started(1, "a", 0).expect("open");
        s.session_started(2, "hoarder", 0).expect("open");
        work(&mut s, 1, "a");
        let start = Instant::now();
        // The hoarder takes checks and never answers; what it gives back it
        // takes again at once.
        let mut held: Vec<Lease> = Vec::new();
        while let Grant::Lease(l) = s.grant(2, start) {
            held.push(l);
        }
        assert!(!held.is_empty() && held.iter().all(|l| l.check));
        s.lease_returned(2, held[0].id);
        let again = lease(s.grant(2, start));
        assert_eq!(again.first_seed, held[0].first_seed);
        s.heartbeat(2, start + Duration::from_secs(9));
        // A lease TTL on, at the tail, the coordinator runs every check.
        let later = start + Duration::from_secs(11);
        let work = s.coordinator_work(later, Duration::from_secs(1));
        for l in held.iter().skip(1).chain([&again]) {
            assert!(
                work.iter().any(|&(_, seed)| seed == l.first_seed),
                "{work:?}"
            );
        }
        for &(_, seed) in &work {
            s.coordinator_result(by(COORDINATOR, result(seed)));
        }
        assert!(s.is_complete(), "the hoarder holds nothing back");
        assert!(s.refusal("hoarder").is_none(), "holding is not lying");
    }

    #[test]
    fn a_far_off_record_costs_nothing_on_resume() {
        let far = 100 + (1 << 39);
        let committed = [100, far]
            .into_iter()
            .map(result)
            .map(Entry::Result)
            .collect();
        let mut s = Scheduler::new(config(4, 4), committed);
        let hole = lease(s.grant(1, Instant::now()));
        assert_eq!((hole.first_seed, hole.seed_count), (101, 4));
        let next = lease(s.grant(1, Instant::now()));
        assert_eq!((next.first_seed, next.seed_count), (105, 4));
    }
}
