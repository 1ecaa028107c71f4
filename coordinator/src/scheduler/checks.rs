//! The cross-check's side of the scheduler: a second result compared with
//! the first, levels met at two seeds, the seeds the coordinator runs itself,
//! its verdicts, and refusals. The bookkeeping (the sample, the queue,
//! disputes, refused workers) is [`crate::cross_check::CrossCheck`].

use std::hash::BuildHasher;
use std::time::{Duration, Instant};

use pregen_pack::{SeedRecord, Status};

use super::strata::{seeds_wanted, stratum_index};
use super::{CHECK_WINDOW, Scheduler};
use crate::commit_log::Entry;
use crate::cross_check::{
    BrokenSeed, COORDINATOR, CheckState, Claim, Dispute, describe, is_broken,
};
use crate::verdicts::Verdict;

impl Scheduler {
    /// A result, live or replayed from the log: the first for its seed is
    /// recorded (and, if sampled, waits for a second run); one from another
    /// worker is compared with it.
    pub(super) fn take_result(&mut self, record: SeedRecord, now: Instant) {
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
        let seed = record.seed;
        // A watchdog timeout, or a broken exchange with a program (a crash,
        // a kill), depends on the machine: it proves nothing.
        let timeout = old.status == Status::Timeout
            || record.status == Status::Timeout
            || is_broken(old.code())
            || is_broken(record.reason.as_ref().map(|r| r.code));
        if self.verdicts.worker(&old) == record.worker {
            if !same {
                self.progress.mismatches += 1;
            }
            return;
        }
        if timeout || same {
            if self.checks.pending.remove(&seed).is_some() && !timeout {
                self.checks.confirm(seed);
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
        self.checks.count_dispute(seed);
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

    /// A worker's result that is a broken exchange with the game program
    /// (the seed broke even asked alone: a crash, a kill, a message that is
    /// not one). It is no verdict: nothing of it is recorded, and the
    /// coordinator runs the seed itself ([`Scheduler::coordinator_work`]);
    /// if the seed breaks there too, the run stops naming it. A seed
    /// already recorded keeps its verdict (a broken second run proves
    /// nothing).
    pub(super) fn broken_on_worker(&mut self, record: SeedRecord) {
        let seed = record.seed;
        if self.verdicts.contains(seed) || self.checks.broken.contains_key(&seed) {
            return;
        }
        let Some(stratum) = self.stratum_of(seed) else {
            return;
        };
        let detail = record
            .reason
            .as_ref()
            .map_or_else(String::new, |r| r.detail.clone());
        tracing::warn!(
            seed,
            worker = %record.worker,
            %detail,
            "the game program broke on a seed: the coordinator runs it to decide"
        );
        self.progress.broken += 1;
        self.checks.broken.insert(
            seed,
            BrokenSeed {
                stratum: stratum as u32,
                detail,
                running: false,
            },
        );
    }

    /// A recorded verdict as the cross-check judges it.
    fn claim_of(&self, v: &Verdict) -> Claim {
        Claim {
            worker: self.verdicts.worker(v).to_string(),
            status: v.status,
            fingerprint: v.fingerprint,
            description: v.reported().to_string(),
            broken: is_broken(v.code()),
        }
    }

    /// A level already recorded for another seed: one of the two seeds may
    /// carry the other's level (a real level passes every check), so the
    /// coordinator runs both, and whoever sent a level its seed does not
    /// make is refused. Honest twins (two seeds that make one level) cost
    /// the two runs and nothing more.
    pub(super) fn audit_if_met_before(&mut self, record: &SeedRecord) {
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

    /// The next queued cross-check `worker` may run; checks the pack no
    /// longer needs (past the prefix of a complete stratum) are dropped.
    pub(super) fn next_check(&mut self, worker: &str) -> Option<u64> {
        let strata = &self.strata;
        let needed = |seed: u64| stratum_index(strata, seed).is_some_and(|i| strata[i].needs(seed));
        self.checks.next_for(worker, CHECK_WINDOW, needed)
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
        // Checks the pack no longer needs (past the prefix of a complete
        // stratum) are dropped, not run: what the log holds and the pack is
        // must not depend on whether such a check ran before the end (a
        // resumed run would run them again).
        let strata = &self.strata;
        self.checks
            .pending
            .retain(|&seed, _| stratum_index(strata, seed).is_some_and(|i| strata[i].needs(seed)));
        for (&seed, d) in self.checks.disputes.iter_mut().filter(|(_, d)| !d.running) {
            d.running = true;
            work.push((d.stratum, seed));
        }
        for (&seed, b) in self.checks.broken.iter_mut().filter(|(_, b)| !b.running) {
            b.running = true;
            work.push((b.stratum, seed));
        }
        // Up to two names of open sessions: enough to know whether a
        // worker other than the first one is there.
        let mut names: Vec<&str> = Vec::with_capacity(2);
        for name in self.sessions.workers() {
            let usable = self.checks.refusal(name).is_none();
            if usable && names.len() < 2 && !names.contains(&name) {
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
        if let Some(broken) = self.checks.broken.remove(&seed) {
            self.settle_broken(broken, record);
            return;
        }
        if record.status == Status::Timeout || is_broken(record.reason.as_ref().map(|r| r.code)) {
            // Neither the watchdog nor a broken exchange with the
            // coordinator's own program process (a crash, an OOM kill) says
            // anything of the workers' results.
            tracing::warn!(
                seed,
                outcome = %describe(&record),
                "the coordinator's own run did not finish: the seed's results stand unchecked"
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
                !r.proves_nothing() && (r.status != record.status || r.fingerprint != fingerprint)
            })
            .collect();
        if sampled && !results.is_empty() {
            if wrong.is_empty() {
                self.checks.confirm(seed);
            } else {
                self.checks.count_dispute(seed);
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
    pub fn coordinator_failed(&mut self, seed: u64, error: &str) {
        if let Some(broken) = self.checks.broken.remove(&seed) {
            self.program_fails(format!(
                "seed {seed}: the game program broke on it ({}), and the coordinator could not \
                 run it: {error}",
                broken.detail
            ));
            return;
        }
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
        for (session, id) in self.sessions.leases_of_worker(worker) {
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
}

impl Scheduler {
    /// The coordinator's own run of a seed that broke on a worker: a
    /// verdict is recorded as the seed's (the coordinator's run decides it,
    /// as it decides a dispute); a seed that breaks here too is the
    /// program's fault, and the run stops naming it.
    fn settle_broken(&mut self, broken: BrokenSeed, record: SeedRecord) {
        let seed = record.seed;
        if is_broken(record.reason.as_ref().map(|r| r.code)) {
            let here = record
                .reason
                .as_ref()
                .map_or_else(String::new, |r| r.detail.clone());
            self.program_fails(format!(
                "the game program breaks on seed {seed} even asked alone, on a worker ({}) and \
                 in the coordinator's own process ({here}): a crash, a kill, or a line on its \
                 stdout that is not the answer (the log has its stderr, each line with its seed)",
                broken.detail
            ));
            return;
        }
        if !self.verdicts.contains(seed) {
            self.insert(record, Instant::now());
        }
    }
}
