//! Leases and results: the coordinator's core, free of any network code.
//!
//! The pack is, for each stratum (one when the job has none), the first `count`
//! accepted seeds in seed order from the stratum's first seed. Seeds are handed
//! out in ranges ([`Lease`]s) in any order to any number of workers; a lease
//! that expires, is returned, or whose session breaks has its missing seeds
//! re-queued. Results are idempotent by seed and must fall inside a lease their
//! session holds. A stratum is complete when the contiguous prefix of its
//! recorded seeds holds `count` accepted ones; the pack, when every stratum is.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::time::{Duration, Instant};

use pregen_pack::{SeedRecord, Status};

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
}

/// Leases one session may hold at once: enough for a worker to run one and
/// have the next queued.
pub const MAX_LEASES_PER_SESSION: usize = 4;

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
    /// Next seed of the stratum never leased.
    frontier: u64,
    /// Canonical forms of the accepted levels recorded (any seed).
    seen: HashSet<String>,
    /// Canonical forms of the accepted levels in the complete prefix.
    prefix_seen: HashSet<String>,
}

impl Stratum {
    fn is_complete(&self) -> bool {
        self.prefix_accepted >= self.count
    }
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
    records: BTreeMap<u64, SeedRecord>,
    /// Ranges to re-issue: (stratum, first seed, count, attempt).
    requeue: VecDeque<(u32, u64, u64, u32)>,
    leases: HashMap<u64, Lease>,
    /// Leases no longer out, kept so late results of their holder are still taken.
    past_leases: HashMap<u64, Lease>,
    next_lease: u64,
    unflushed: Vec<SeedRecord>,
    progress: Progress,
    /// When each session last sent a result.
    last_result: HashMap<SessionId, Instant>,
    /// No new leases while set (the commit log cannot be written).
    paused: bool,
}

impl Scheduler {
    /// A scheduler resuming from records already committed (empty for a new job).
    pub fn new(config: SchedulerConfig, committed: Vec<SeedRecord>) -> Self {
        let strata = config
            .strata
            .iter()
            .map(|&(first_seed, count)| Stratum {
                first_seed,
                count,
                prefix_end: first_seed,
                prefix_accepted: 0,
                accepted_total: 0,
                frontier: first_seed,
                seen: HashSet::new(),
                prefix_seen: HashSet::new(),
            })
            .collect();
        let mut s = Scheduler {
            config,
            strata,
            records: BTreeMap::new(),
            requeue: VecDeque::new(),
            leases: HashMap::new(),
            past_leases: HashMap::new(),
            next_lease: 1,
            unflushed: Vec::new(),
            progress: Progress::default(),
            last_result: HashMap::new(),
            paused: false,
        };
        for r in committed {
            s.insert(r);
        }
        s.unflushed.clear();
        // Holes below a stratum's highest committed seed are re-queued, a lease at a time.
        for i in 0..s.strata.len() {
            let st = &s.strata[i];
            let end = s.strata.get(i + 1).map_or(u64::MAX, |n| n.first_seed);
            let Some((&last, _)) = s.records.range(st.first_seed..end).next_back() else {
                continue;
            };
            let mut seed = st.prefix_end;
            while seed <= last {
                if s.records.contains_key(&seed) {
                    seed += 1;
                    continue;
                }
                let mut len = 0;
                while seed + len <= last
                    && len < s.config.seeds_per_lease
                    && !s.records.contains_key(&(seed + len))
                {
                    len += 1;
                }
                s.requeue.push_back((i as u32, seed, len, 2));
                seed += len;
            }
            s.strata[i].frontier = last + 1;
        }
        s
    }

    /// The stratum holding `seed`, if any.
    fn stratum_of(&self, seed: u64) -> Option<usize> {
        let i = self.strata.partition_point(|st| st.first_seed <= seed);
        i.checked_sub(1)
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
        let held = self
            .leases
            .values()
            .filter(|l| l.session == session)
            .count();
        if self.paused || held >= MAX_LEASES_PER_SESSION {
            return Grant::Wait;
        }
        let (stratum, first_seed, seed_count, attempt) = if let Some(r) = self.requeue.pop_front() {
            r
        } else if let Some(i) = self
            .strata
            .iter()
            .position(|st| st.accepted_total < st.count && st.frontier < self.seed_limit(st))
        {
            let limit = self.seed_limit(&self.strata[i]);
            let st = &mut self.strata[i];
            let first = st.frontier;
            let len = self.config.seeds_per_lease.min(limit - first);
            st.frontier += len;
            (i as u32, first, len, 1)
        } else {
            return Grant::Wait;
        };
        let lease = Lease {
            id: self.next_lease,
            session,
            stratum,
            first_seed,
            seed_count,
            attempt,
            deadline: now + self.config.lease_ttl,
            granted: now,
        };
        self.next_lease += 1;
        self.leases.insert(lease.id, lease.clone());
        Grant::Lease(lease)
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
            .map(|(lease, r)| Ok(self.lease_for(session, *lease, r.seed)?.attempt))
            .collect::<Result<Vec<u32>, RecordError>>()?;
        if !batch.is_empty() {
            self.last_result.insert(session, now);
        }
        for ((_, mut record), attempt) in batch.into_iter().zip(attempts) {
            record.attempt = attempt;
            if let Some(old) = self.records.get(&record.seed) {
                if !old.same_verdict(&record) {
                    self.progress.mismatches += 1;
                }
                continue;
            }
            self.insert(record);
        }
        Ok(())
    }

    fn insert(&mut self, record: SeedRecord) {
        let Some(i) = self.stratum_of(record.seed) else {
            return;
        };
        if self.records.contains_key(&record.seed) {
            return;
        }
        self.progress.seeds += 1;
        *self
            .progress
            .per_worker
            .entry(record.worker.clone())
            .or_default() += 1;
        if record.status == Status::Accepted {
            let st = &mut self.strata[i];
            match record.level.as_ref().and_then(|l| l.canonical.as_ref()) {
                Some(key) if !st.seen.insert(key.clone()) => {}
                _ => st.accepted_total += 1,
            }
        } else {
            let head = record.reason.split(':').next().unwrap_or("").trim();
            let key = if head.is_empty() {
                record.status.as_str().to_string()
            } else {
                format!("{}: {head}", record.status.as_str())
            };
            *self.progress.rejected.entry(key).or_default() += 1;
        }
        self.unflushed.push(record.clone());
        self.records.insert(record.seed, record);
        let st = &mut self.strata[i];
        while st.prefix_accepted < st.count {
            let Some(r) = self.records.get(&st.prefix_end) else {
                break;
            };
            if r.status == Status::Accepted {
                match r.level.as_ref().and_then(|l| l.canonical.as_ref()) {
                    Some(key) if !st.prefix_seen.insert(key.clone()) => {
                        *self
                            .progress
                            .rejected
                            .entry("rejected: duplicate".into())
                            .or_default() += 1;
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
    pub fn restore_unflushed(&mut self, mut records: Vec<SeedRecord>) {
        records.append(&mut self.unflushed);
        self.unflushed = records;
    }

    /// The session is gone (stream ended or broke): all its leases are released.
    pub fn session_ended(&mut self, session: SessionId) {
        self.last_result.remove(&session);
        let ids: Vec<u64> = self
            .leases
            .values()
            .filter(|l| l.session == session)
            .map(|l| l.id)
            .collect();
        for id in ids {
            self.release(session, id);
        }
    }

    /// Extends every lease of the session.
    pub fn heartbeat(&mut self, session: SessionId, now: Instant) {
        for lease in self.leases.values_mut().filter(|l| l.session == session) {
            lease.deadline = now + self.config.lease_ttl;
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
        // Missing seeds go back in contiguous runs.
        let end = lease.first_seed + lease.seed_count;
        let mut seed = lease.first_seed;
        while seed < end {
            if self.records.contains_key(&seed) {
                seed += 1;
                continue;
            }
            let start = seed;
            while seed < end && !self.records.contains_key(&seed) {
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

    /// Whether the pack's seeds are all recorded.
    pub fn is_complete(&self) -> bool {
        self.strata.iter().all(Stratum::is_complete)
    }

    /// Records not yet handed to the commit log.
    pub fn take_unflushed(&mut self) -> Vec<SeedRecord> {
        std::mem::take(&mut self.unflushed)
    }

    /// The pack's records in seed order: for each stratum, every seed of the
    /// complete prefix, up to and including the `count`-th accepted one. An
    /// accepted level whose canonical form a lower seed of its stratum already
    /// has becomes a `rejected` duplicate. `None` until complete.
    ///
    /// Takes the records out (without copying them): the scheduler holds none
    /// afterwards.
    pub fn take_pack_records(&mut self) -> Option<Vec<SeedRecord>> {
        if !self.is_complete() {
            return None;
        }
        let mut rest = std::mem::take(&mut self.records);
        let mut out = Vec::new();
        for st in &self.strata {
            // Strata are in seed order: split off this one's prefix.
            let mut prefix = rest.split_off(&st.first_seed);
            rest = prefix.split_off(&st.prefix_end);
            let mut first: HashMap<String, u64> = HashMap::new();
            for (seed, r) in prefix {
                let key = r.level.as_ref().and_then(|l| l.canonical.clone());
                match key.map(|k| *first.entry(k).or_insert(seed)) {
                    Some(original) if original != seed => out.push(SeedRecord {
                        status: Status::Rejected,
                        reason: format!("duplicate: the level of seed {original}"),
                        level: None,
                        ..r
                    }),
                    _ => out.push(r),
                }
            }
        }
        Some(out)
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
        p
    }

    /// The lease with this id, if out.
    pub fn lease(&self, id: u64) -> Option<&Lease> {
        self.leases.get(&id)
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
        let committed: Vec<SeedRecord> = (100..110).map(result).collect();
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
        let committed: Vec<SeedRecord> = [100, 101, 105, 106].into_iter().map(result).collect();
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
        let mut s = Scheduler::new(config(1, 4), vec![]);
        let a = lease(s.grant(1, now));
        let b = lease(s.grant(2, now));
        finish(&mut s, 2, &b);
        // Enough accepted in b, but a's seeds come first in order.
        assert_eq!(s.grant(2, now), Grant::Wait);
        s.session_ended(1);
        let again = lease(s.grant(2, now));
        assert_eq!(again.first_seed, a.first_seed);
        finish(&mut s, 2, &again);
        assert!(s.is_complete());
        let pack = s.take_pack_records().expect("complete");
        assert_eq!(
            pack.iter().map(|r| r.seed).collect::<Vec<_>>(),
            vec![100, 101, 102]
        );
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
}
