//! The coordinator's state shared by the worker sessions (the gRPC adapter,
//! [`crate::service`]), the maintenance loop and the metrics: the scheduler,
//! the trust policy, what workers are told to run, and the signals between
//! them. No wire type but the `JobSpec` workers are sent.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use pregen_games::Outcome;
use pregen_pack::{PackError, SeedRecord};
use pregen_proto::v1::{JobSpec, SeedResult};
use tokio::sync::{Notify, Semaphore, watch};

use crate::Job;
use crate::cross_check::COORDINATOR;
use crate::identity::Identities;
use crate::scheduler::Scheduler;
use crate::trust::Trust;

/// State shared by every session and the coordinator's maintenance loop.
#[derive(Debug)]
pub struct Shared {
    /// What workers are told to run.
    pub(crate) spec: JobSpec,
    /// What a level must pass to count (its checks, its rating).
    pub(crate) trust: Arc<Trust>,
    scheduler: Mutex<Scheduler>,
    pub(crate) next_session: AtomicU64,
    /// Sessions open now.
    pub(crate) connected: AtomicUsize,
    pub(crate) complete: watch::Sender<bool>,
    pub(crate) lease_ttl: Duration,
    /// Rung when the log writer should not wait for its next tick.
    pub(crate) flush_now: Notify,
    /// Rung after each write of the commit log.
    pub(crate) flushed: Notify,
    /// Rung after each batch is recorded: the coordinator's own runs may be
    /// due, at the tail at once (waiting for the next tick would hold the
    /// pack back).
    pub(crate) own_work: Notify,
    /// Batches checked at once: one per core, so a thousand sessions do not
    /// make a thousand blocking threads.
    pub(crate) checking: Semaphore,
    /// Issues and checks the workers' identities.
    pub(crate) identities: Identities,
}

/// Entries waiting for the commit log past which batches wait for a write:
/// what is received but not yet durable stays bounded, whatever the rate.
pub const MAX_UNFLUSHED: usize = 65_536;

impl Shared {
    /// Shared state for `job` over a (possibly resumed) scheduler.
    pub fn new(
        job: &Job,
        trust: Arc<Trust>,
        scheduler: Scheduler,
        lease_ttl: Duration,
    ) -> Result<Arc<Shared>, PackError> {
        let complete = scheduler.is_finished();
        let identities = Identities::new(scheduler.secret());
        Ok(Arc::new(Shared {
            identities,
            trust,
            spec: JobSpec {
                job_id: job.id(),
                game: job.game.clone(),
                params_json: job.plan().iter().map(|p| p.params.to_string()).collect(),
                bands: job
                    .run_bands()
                    .into_iter()
                    .map(|band| pregen_proto::v1::DifficultyBand {
                        min: band.and_then(|b| b.min),
                        max: band.and_then(|b| b.max),
                    })
                    .collect(),
                max_nodes: job.budget.max_nodes,
                watchdog_ms: job.budget.watchdog_ms,
                external: job
                    .external
                    .as_ref()
                    .filter(|_| job.is_external())
                    .map(|e| {
                        Box::new(pregen_proto::v1::ExternalProgram {
                            command: e.command.clone(),
                            dir: e.dir.clone(),
                            files: e.files.clone(),
                            identity: e.identity.clone(),
                            name: e.name.clone(),
                            version: e.version.clone(),
                        })
                    }),
            },
            scheduler: Mutex::new(scheduler),
            next_session: AtomicU64::new(1),
            connected: AtomicUsize::new(0),
            complete: watch::Sender::new(complete),
            lease_ttl,
            flush_now: Notify::new(),
            flushed: Notify::new(),
            own_work: Notify::new(),
            checking: Semaphore::new(
                std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
            ),
        }))
    }

    /// Waits while [`MAX_UNFLUSHED`] entries wait for the commit log (the
    /// sender's stream waits meanwhile: backpressure down to the workers).
    pub async fn room_in_log(&self) {
        while self.scheduler().unflushed_len() >= MAX_UNFLUSHED {
            let flushed = self.flushed.notified();
            self.flush_now.notify_one();
            // A write that ended between the check and here is seen next round.
            let _ = tokio::time::timeout(Duration::from_millis(50), flushed).await;
        }
    }

    /// After a write of the commit log: wakes the batches waiting for room.
    pub(crate) fn logged(&self) {
        self.flushed.notify_waiters();
    }

    /// The scheduler (a poisoned lock is still usable: its state is consistent
    /// between calls).
    pub fn scheduler(&self) -> MutexGuard<'_, Scheduler> {
        self.scheduler.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Worker sessions open now.
    pub fn connected(&self) -> usize {
        self.connected.load(Ordering::Relaxed)
    }

    /// Resolves when the pack's seeds are all recorded, or a stratum has
    /// tried every seed it may.
    pub async fn wait_complete(&self) {
        let mut rx = self.complete.subscribe();
        let _ = rx.wait_for(|&c| c).await;
    }

    /// Marks the job complete once the scheduler says so.
    pub fn check_complete(&self) {
        if self.scheduler().is_finished() {
            self.complete.send_replace(true);
        }
    }

    /// Runs a seed here, as a worker would (the same budget, the same wire
    /// form and checks on the way back), for the cross-check. Blocking.
    pub fn run_seed(&self, stratum: u32, seed: u64) -> Result<SeedRecord, OwnRunFailed> {
        let game = self
            .trust
            .games()
            .get(stratum as usize)
            .ok_or(OwnRunFailed::NoStratum(stratum))?;
        // A program's seed runs twice here, in two processes: the
        // coordinator's answer decides whose result is wrong, so it must be
        // the program's one answer.
        let outcome = game.run_twice(seed, &self.trust.budget()).map_err(|e| {
            self.scheduler().program_fails(e.to_string());
            OwnRunFailed::NotDeterministic(e)
        })?;
        let wire = SeedResult::within_caps(0, seed, outcome);
        let outcome = Outcome::try_from(wire).map_err(OwnRunFailed::Wire)?;
        let mut record = SeedRecord::from_outcome(seed, outcome, COORDINATOR.to_string(), 1);
        self.trust
            .judge_own(stratum, &mut record)
            .map_err(|e| OwnRunFailed::Checker(seed, e))?;
        self.trust
            .rate(&mut record)
            .map_err(|e| OwnRunFailed::Rating(seed, e))?;
        Ok(record)
    }
}

/// Why the coordinator's own run of a seed gave no record.
#[derive(Debug, thiserror::Error)]
pub enum OwnRunFailed {
    /// The seed's stratum is not the job's.
    #[error("no stratum {0}")]
    NoStratum(u32),
    /// A game program answered the seed two ways.
    #[error(transparent)]
    NotDeterministic(pregen_games::NotDeterministic),
    /// The outcome broke the wire's caps.
    #[error(transparent)]
    Wire(pregen_proto::convert::MalformedResult),
    /// The job's checker program broke on the level.
    #[error("seed {0}: the checker: {1}")]
    Checker(u64, pregen_games::CheckError),
    /// The level cannot be rated.
    #[error("seed {0}: {1}")]
    Rating(u64, crate::trust::Refused),
    /// The blocking task did not finish.
    #[error("{0}")]
    Task(String),
}

impl Shared {
    /// A game program's determinism probe: the first `seeds` seeds of each
    /// of `firsts` (the strata's first seeds) run twice, in two processes,
    /// under the job's budget; the first seed answered two ways. Blocking.
    pub fn probe_program(
        &self,
        firsts: &[u64],
        seeds: u64,
    ) -> Result<(), pregen_games::NotDeterministic> {
        let budget = self.trust.budget();
        for (game, &first) in self.trust.games().iter().zip(firsts) {
            let run: Vec<u64> = (first..first.saturating_add(seeds)).collect();
            game.probe_determinism(&run, &budget)?;
        }
        Ok(())
    }
}
