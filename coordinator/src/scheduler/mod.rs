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
//!
//! The state is split by concern behind this facade:
//! - [`leases`]: the lease book (leases out, past leases, ranges to issue again);
//! - [`sizing`]: how many seeds a lease holds;
//! - [`strata`]: where each stratum's complete prefix and frontier stand;
//! - [`sessions`]: the open sessions, their threads, leases and costs;
//! - `checks`: the cross-check's side of the scheduler (disputes, the
//!   coordinator's own runs, refusals), over [`crate::cross_check`].

mod checks;
mod leases;
mod sessions;
mod sizing;
mod strata;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use pregen_pack::job::Band;
use pregen_pack::{Code, Refusal, SeedRecord, Status};

use crate::commit_log::Entry;
use crate::cross_check::{COORDINATOR, CheckState, Claim, CrossCheck, Pending, is_broken};
use crate::verdicts::{Selection, Verdict, Verdicts, canonical_key};
use leases::LeaseBook;
use sessions::Sessions;
use sizing::{Cost, guided_size, lease_size};
use strata::{Stratum, seeds_wanted, stratum_index};

pub use leases::{Grant, Lease, RecordError};
pub use strata::Exhausted;

/// A worker session, numbered by the coordinator.
pub type SessionId = u64;

/// Counters for progress reports.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Progress {
    /// Seeds recorded (all statuses).
    pub seeds: u64,
    /// Accepted seeds recorded (may exceed the pack's count).
    pub accepted: u64,
    /// Accepted seeds inside the complete prefix, capped at count.
    pub committed: u64,
    /// Non-accepted results by status and reason code.
    pub rejected: BTreeMap<Refusal, u64>,
    /// For each reason an error or a timeout was recorded with: its first
    /// seed, and the reason with its detail.
    pub first_wrong: BTreeMap<Refusal, (u64, String)>,
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
    /// Seeds whose exchange with the game program broke on a worker (not
    /// recorded; the coordinator ran each itself).
    pub broken: u64,
    /// What the cross-check did.
    pub cross_check: pregen_pack::manifest::CrossCheck,
    /// Seeds recorded per stratum (those past its pack's last level included).
    pub computed: Vec<u64>,
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
    /// Per stratum, the band of difficulty its levels must lie in to count
    /// (a stratum past the list's end has none).
    pub bands: Vec<Option<Band>>,
}

/// A stratum with a band gives up when this many of its seeds in a row,
/// from its first, gave no level in the band: the band is out of the
/// generator's reach as the params set it ([`Scheduler::exhausted`]).
pub const BAND_TRIES: u64 = 20_000;

/// Leases one session may hold at once: enough for a worker to run one and
/// have the next queued.
pub const MAX_LEASES_PER_SESSION: usize = 4;

/// The circuit breaker: when this many seeds ended in an error or a timeout
/// and no level has come in (a game program whose every level breaks a rule, a params
/// set it cannot run; normal rejections between them do not reset it), the
/// run stops with the first error's detail rather than run on for ever.
pub const ERRORS_BEFORE_STOP: u64 = 1_000;

/// Queued cross-checks looked at for one grant.
const CHECK_WINDOW: usize = 64;

/// Leases out, results in.
#[derive(Debug)]
pub struct Scheduler {
    config: SchedulerConfig,
    strata: Vec<Stratum>,
    /// What is kept of each recorded seed (the records are in the log).
    verdicts: Verdicts,
    /// Leases out and past, and the ranges to issue again.
    book: LeaseBook,
    unflushed: Vec<Entry>,
    progress: Progress,
    /// No new leases while set (the commit log cannot be written).
    paused: bool,
    /// The sessions open now.
    sessions: Sessions,
    /// Per-seed cost seen in every session's results.
    cost: Cost,
    /// Sampled seeds, disputes and refused workers.
    checks: CrossCheck,
    /// With [`SchedulerConfig::audit_duplicate_levels`]: the first seed of
    /// each accepted level, by a keyed hash of its level hash (16 bytes a
    /// level).
    level_seeds: HashMap<u64, u64>,
    level_hasher: std::hash::RandomState,
    /// Why the job's program cannot make a pack, once known: the run ends.
    program_fault: Option<String>,
    /// Whether a level has come in (the circuit breaker is off).
    level_seen: bool,
    /// Seeds that ended in an error or a timeout while no level had come in.
    errors_before_level: u64,
    /// The first error or timeout recorded, as (seed, reason and detail).
    first_error: Option<(u64, String)>,
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
            .enumerate()
            .map(|(i, &(first_seed, count))| {
                let band = config.bands.get(i).copied().flatten();
                Stratum::new(first_seed, count, band)
            })
            .collect();
        let checks = CrossCheck::new(config.cross_check, config.check_key);
        Scheduler {
            config,
            strata,
            verdicts: Verdicts::default(),
            book: LeaseBook::default(),
            unflushed: Vec::new(),
            progress: Progress::default(),
            paused: false,
            sessions: Sessions::default(),
            cost: Cost::default(),
            checks,
            level_seeds: HashMap::new(),
            level_hasher: std::hash::RandomState::new(),
            program_fault: None,
            level_seen: false,
            errors_before_level: 0,
            first_error: None,
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
        self.book.requeue.clear();
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
            let covered = self.book.covered(i);
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
                    self.book.requeue.push_back((i as u32, a, end - a, 2));
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
            let tried = st.prefix_end - st.first_seed;
            let unfillable = st.band.is_some() && st.prefix_accepted == 0 && tried >= BAND_TRIES;
            (!st.is_complete() && (st.prefix_end >= self.seed_limit(st) || unfillable)).then_some(
                Exhausted {
                    stratum: i,
                    seeds: tried,
                    accepted: st.prefix_accepted,
                    wanted: st.count,
                    band: st.band,
                    closest: st.closest,
                },
            )
        })
    }

    /// Complete, or given up: nothing more will be leased.
    pub fn is_finished(&self) -> bool {
        self.is_complete() || self.exhausted().is_some() || self.program_fault.is_some()
    }

    /// Why the job's program cannot make a pack (it answered a seed two
    /// ways), once known; the run ends with it.
    pub fn program_fault(&self) -> Option<&str> {
        self.program_fault.as_deref()
    }

    /// The job's program cannot make a pack (`fault` says why): the run
    /// ends with it (the first fault is the one named).
    pub fn program_fails(&mut self, fault: String) {
        if self.program_fault.is_none() {
            tracing::error!(%fault, "the game program cannot make a pack");
            self.program_fault = Some(fault);
        }
    }

    /// Hands a range to `session`.
    pub fn grant(&mut self, session: SessionId, now: Instant) -> Grant {
        if self.is_finished() {
            return Grant::Finished;
        }
        let (worker, held) = self
            .sessions
            .get(session)
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
            pending.state = CheckState::Leased(self.book.next_id());
            let stratum = pending.stratum;
            return Grant::Lease(self.issue(session, (stratum, seed, 1, 1), true, None, now));
        }
        let size = self.lease_size(session);
        // Holes of a stratum that completed since are not needed.
        while let Some(r) = self.book.requeue.front()
            && self.strata[r.0 as usize].is_complete()
        {
            self.book.requeue.pop_front();
        }
        let range = if let Some(r) = self.book.requeue.pop_front() {
            // A long hole goes out a lease at a time.
            if r.2 > size {
                self.book
                    .requeue
                    .push_front((r.0, r.1 + size, r.2 - size, r.3));
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
            let guided = guided_size(
                self.sessions.threads(),
                self.sessions.threads_of(session),
                wanted,
            );
            let st = &mut self.strata[i];
            let first = st.frontier;
            let len = size.min(guided).min(wanted).min(limit - first);
            st.frontier += len;
            (i as u32, first, len, 1)
        } else if let Some(original) = (held == 0).then(|| self.speculation_for(session)).flatten()
        {
            let Some(range) = self
                .book
                .get(original)
                .map(|l| (l.stratum, l.first_seed, l.seed_count, l.attempt + 1))
            else {
                return Grant::Wait;
            };
            let copy = self.issue(session, range, false, Some(original), now);
            self.progress.speculative += 1;
            if let Some(l) = self.book.get_mut(original) {
                l.twin = Some(copy.id);
            }
            return Grant::Lease(copy);
        } else {
            return Grant::Wait;
        };
        Grant::Lease(self.issue(session, range, false, None, now))
    }

    /// A new lease of (stratum, first seed, count, attempt) for `session`:
    /// a cross-check or not, the copy of a lease still out or not.
    fn issue(
        &mut self,
        session: SessionId,
        range: leases::Range,
        check: bool,
        twin: Option<u64>,
        now: Instant,
    ) -> Lease {
        let deadline = now + self.config.lease_ttl;
        let lease = self
            .book
            .issue(session, range, check, twin, (now, deadline));
        self.sessions.add_lease(session, lease.id);
        lease
    }

    /// Seeds for `session`'s next lease ([`sizing::lease_size`]).
    fn lease_size(&self, session: SessionId) -> u64 {
        let own = self
            .sessions
            .get(session)
            .map(|s| s.cost)
            .unwrap_or_default();
        lease_size(
            self.config.seeds_per_lease,
            self.sessions.threads_of(session),
            own,
            self.cost,
        )
    }

    /// At the tail (nothing left to lease, `session` idle): the oldest lease out to another
    /// session that is not copied yet and still misses seeds its stratum
    /// needs, to be run again by `session` (the first result wins).
    fn speculation_for(&self, session: SessionId) -> Option<u64> {
        let mut candidates: Vec<(Instant, u64)> = self
            .book
            .out()
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
        candidates.into_iter().map(|(_, id)| id).find(|&id| {
            self.book.get(id).is_some_and(|l| {
                (self
                    .verdicts
                    .range(l.first_seed, l.first_seed + l.seed_count)
                    .count() as u64)
                    < l.seed_count
            })
        })
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
        self.book.claimed(session, lease_id, seed)
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
            let spent: f64 = batch.iter().map(|(_, r)| r.generate_ms + r.solve_ms).sum();
            let mean = spent / batch.len() as f64;
            self.cost.observe(mean);
            self.sessions.results(session, now, mean);
        }
        for ((_, mut record), attempt) in batch.into_iter().zip(attempts) {
            record.attempt = attempt;
            if record.worker != COORDINATOR && is_broken(record.reason.as_ref().map(|r| r.code)) {
                self.broken_on_worker(record);
                continue;
            }
            self.take_result(record, now);
        }
        Ok(())
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

    /// Counts a record and keeps its verdict; the prefix of its stratum moves
    /// on. An accepted level outside its stratum's band counts as
    /// `rejected: out of band`, as the pack writes it ([`Selection::take`]).
    fn store(&mut self, record: &SeedRecord) {
        let Some(i) = self.stratum_of(record.seed) else {
            return;
        };
        if self.verdicts.contains(record.seed) {
            return;
        }
        let mut verdict = self.verdicts.of(record);
        if matches!(record.status, Status::Error | Status::Timeout) {
            let said = record
                .reason
                .as_ref()
                .map_or_else(|| record.status.to_string(), ToString::to_string);
            if self.first_error.is_none() {
                self.first_error = Some((record.seed, said.clone()));
            }
            self.progress
                .first_wrong
                .entry(verdict.refusal())
                .or_insert((record.seed, said));
        }
        let st = &mut self.strata[i];
        if let Some(reason) = record.reason.as_ref().filter(|r| r.code == Code::OutOfBand) {
            // Refused by its worker as soon as it was rated.
            if let Some(difficulty) = Band::difficulty_in_detail(&reason.detail) {
                st.outside_band(difficulty);
            }
        } else if let Some(level) = record.accepted() {
            if st.outside_band(level.difficulty) {
                verdict.set_out_of_band();
            } else if let Some(key) = level.canonical.as_deref() {
                st.canon.insert(record.seed, canonical_key(key));
            }
        }
        self.count(i, record.seed, verdict);
    }

    /// Counts a verdict in progress and in its stratum, and keeps it.
    fn count(&mut self, i: usize, seed: u64, verdict: Verdict) {
        if !self.verdicts.insert(seed, verdict) {
            return;
        }
        self.progress.seeds += 1;
        match verdict.status {
            Status::Accepted => self.level_seen = true,
            Status::Error | Status::Timeout if !self.level_seen => {
                self.errors_before_level += 1;
                if self.errors_before_level >= ERRORS_BEFORE_STOP {
                    let first = self.first_error.as_ref().map_or_else(
                        || verdict.refusal().to_string(),
                        |(seed, detail)| format!("seed {seed}: {detail}"),
                    );
                    self.program_fails(format!(
                        "{} seeds ended in an error or a timeout and no level came in: the game \
                         cannot make levels as the job sets it (or its watchdog is too short); \
                         the first, {first}",
                        self.errors_before_level
                    ));
                }
            }
            _ => {}
        }
        // The worker's name is allocated only when new.
        let worker = self.verdicts.worker(&verdict);
        match self.progress.per_worker.get_mut(worker) {
            Some(n) => *n += 1,
            None => drop(self.progress.per_worker.insert(worker.to_string(), 1)),
        }
        if !verdict.counts() {
            *self.progress.rejected.entry(verdict.refusal()).or_default() += 1;
        }
        let duplicates = self.strata[i].count(seed, &verdict, &self.verdicts);
        if duplicates > 0 {
            *self
                .progress
                .rejected
                .entry(Refusal::DUPLICATE)
                .or_default() += duplicates;
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
        self.sessions.start(session, worker, threads);
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
        for id in self.sessions.end(session) {
            self.release(session, id);
        }
    }

    /// Extends every lease of the session.
    pub fn heartbeat(&mut self, session: SessionId, now: Instant) {
        let Some(info) = self.sessions.get(session) else {
            return;
        };
        self.book.extend(&info.leases, now + self.config.lease_ttl);
    }

    /// Re-queues leases past their deadline, and leases whose session has
    /// shown no progress (a result) within the progress limit; returns how many.
    pub fn expire(&mut self, now: Instant) -> usize {
        let limit = self.config.progress_limit;
        let stalled = |l: &Lease| {
            let last = self
                .sessions
                .last_result(l.session)
                .map_or(l.granted, |t| t.max(l.granted));
            now.saturating_duration_since(last) >= limit
        };
        let expired = self.book.due(now, stalled);
        for &(session, id) in &expired {
            self.release(session, id);
        }
        expired.len()
    }

    fn release(&mut self, session: SessionId, lease_id: u64) {
        let Some(lease) = self.book.take(session, lease_id) else {
            return;
        };
        self.sessions.drop_lease(session, lease_id);
        // While its twin is out, the twin covers the range.
        if let Some(twin) = lease.twin.and_then(|t| self.book.get_mut(t)) {
            twin.twin = None;
            self.book.retire(lease);
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
            self.book.retire(lease);
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
            self.book
                .requeue
                .push_back((lease.stratum, start, seed - start, lease.attempt + 1));
        }
        self.book.retire(lease);
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

    /// Counts every stratum and the progress afresh from the verdicts.
    fn recount(&mut self) {
        let verdicts = self.verdicts.drain();
        for st in &mut self.strata {
            st.reset(|seed| verdicts.binary_search_by_key(&seed, |v| v.0).is_ok());
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
            bands: self.strata.iter().map(|st| st.band).collect(),
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
        p.leases_out = self.book.len();
        p.sessions = self.sessions.len();
        p.threads = self.sessions.threads();
        let strata = &self.strata;
        p.cross_check = self
            .checks
            .facts(|seed| stratum_index(strata, seed).is_some_and(|i| strata[i].needs(seed)));
        p.computed = self.strata.iter().map(|st| st.recorded).collect();
        p
    }

    /// The lease with this id, if out.
    pub fn lease(&self, id: u64) -> Option<&Lease> {
        self.book.get(id)
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
