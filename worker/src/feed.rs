//! The leases' seeds on the rayon pool: one feed per session draws seeds in
//! grant order, every result goes back through a bounded channel.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use pregen_games::{Budget, PreparedGame};
use pregen_proto::v1::{LeaseGrant, SeedResult};
use rayon::prelude::*;
use tokio::sync::{Notify, mpsc};

/// Events from the rayon pool back to the session loop.
pub(crate) enum Event {
    /// A thread took the lease up: time to ask for the next one.
    LeaseStarted,
    Result(Box<SeedResult>),
    LeaseFinished {
        lease_id: u64,
        complete: bool,
    },
}

/// The rayon side's end of the event channel. Lease starts and ends also ring
/// `urgent`, which opens the session loop's gate at once: asking for the next
/// lease must not wait for the next batch of results.
#[derive(Clone)]
pub(crate) struct Events {
    pub(crate) tx: mpsc::Sender<Event>,
    pub(crate) urgent: Arc<Notify>,
}

impl Events {
    /// Sends from a pool thread. A closed channel means the session is gone
    /// (its leases are re-issued), so the event is dropped.
    pub(crate) fn send(&self, event: Event) {
        let urgent = !matches!(event, Event::Result(_));
        let _ = self.tx.blocking_send(event);
        if urgent {
            self.urgent.notify_one();
        }
    }
}

/// Cancels a session's rayon work when the session ends, however it ends.
pub(crate) struct CancelOnDrop(pub(crate) Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// The job of a session: the game prepared once per stratum, and the budget.
pub(crate) struct JobRun {
    /// The game with each stratum's params, parsed and checked once.
    pub(crate) strata: Vec<PreparedGame>,
    pub(crate) max_nodes: u64,
    pub(crate) watchdog: Duration,
    /// Every seed's time stretched this many times (1: as it comes).
    pub(crate) slowdown: u32,
}

/// A lease as the feed hands it out: its seeds are counted down as they finish.
struct FedLease {
    grant: LeaseGrant,
    left: AtomicU64,
}

/// The seeds of the session's leases, in grant order, a few at a time: the
/// pool's threads draw from it (`par_bridge`), so a thread that finishes its
/// seeds takes the next ones, from the next lease if need be. No thread waits
/// at a lease's end, and leases never nest on a thread's stack. A built-in
/// game's seeds go one at a time; a game program's go in batches
/// ([`PreparedGame::batch`]), never more than a share of the lease that
/// leaves every thread some of it.
struct Feed {
    leases: std::sync::mpsc::Receiver<LeaseGrant>,
    current: Option<(Arc<FedLease>, u64)>,
    job: Arc<JobRun>,
    threads: u64,
    events: Events,
}

/// Seeds a thread runs in a row: the lease, its first seed and how many.
type Chunk = (Arc<FedLease>, u64, u64);

impl Iterator for Feed {
    type Item = Chunk;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some((lease, next)) = &mut self.current {
                let grant = &lease.grant;
                let end = grant.first_seed.saturating_add(grant.seed_count);
                if *next < end {
                    let batch = self.job.strata[grant.stratum as usize].batch() as u64;
                    let share = (grant.seed_count / (2 * self.threads)).max(1);
                    let count = batch.min(share).min(end - *next);
                    let first = *next;
                    *next += count;
                    return Some((lease.clone(), first, count));
                }
                self.current = None;
            }
            // Blocks until the next grant; a closed channel ends the session's work.
            let grant = self.leases.recv().ok()?;
            self.events.send(Event::LeaseStarted);
            if grant.seed_count == 0 {
                self.events.send(Event::LeaseFinished {
                    lease_id: grant.lease_id,
                    complete: true,
                });
                continue;
            }
            let first = grant.first_seed;
            let left = AtomicU64::new(grant.seed_count);
            self.current = Some((Arc::new(FedLease { grant, left }), first));
        }
    }
}

/// Runs the session's leases on the pool until `leases` closes: every seed's
/// result goes back as soon as it is ready, and a lease's end after its last
/// result. A cancelled session skips the seeds it has not started.
pub(crate) fn run_feed(
    pool: Arc<rayon::ThreadPool>,
    job: Arc<JobRun>,
    leases: std::sync::mpsc::Receiver<LeaseGrant>,
    cancel: Arc<AtomicBool>,
    events: Events,
) {
    let feed = Feed {
        leases,
        current: None,
        job: job.clone(),
        threads: pool.current_num_threads().max(1) as u64,
        events: events.clone(),
    };
    pool.install(|| {
        feed.par_bridge().for_each(|(lease, first, count)| {
            if !cancel.load(Ordering::Relaxed) {
                run_seeds(&job, &lease.grant, first, count, &mut |result| {
                    events.send(Event::Result(Box::new(result)));
                });
            }
            if lease.left.fetch_sub(count, Ordering::AcqRel) == count {
                events.send(Event::LeaseFinished {
                    lease_id: lease.grant.lease_id,
                    complete: !cancel.load(Ordering::Relaxed),
                });
            }
        });
    });
}

/// Runs `count` seeds of a lease from `first` under the job's budget (each
/// seed's watchdog starting with its turn); each result goes to `each` in
/// wire form as it comes.
fn run_seeds(
    job: &JobRun,
    grant: &LeaseGrant,
    first: u64,
    count: u64,
    each: &mut dyn FnMut(SeedResult),
) {
    let game = &job.strata[grant.stratum as usize];
    if count == 1 {
        each(run_seed(job, grant.lease_id, grant.stratum, first));
        return;
    }
    let seeds: Vec<u64> = (first..first + count).collect();
    let budget = || Budget::watched(job.max_nodes, job.watchdog);
    let mut started = Instant::now();
    game.run_many(&seeds, &budget, &mut |seed, mut outcome| {
        slow_down(job, started, &mut outcome);
        each(SeedResult::within_caps(grant.lease_id, seed, outcome));
        started = Instant::now();
    });
}

/// Stretches a seed's time (spent since `started`, and reported) as a
/// slower machine would, when the job says so.
fn slow_down(job: &JobRun, started: Instant, outcome: &mut pregen_games::Outcome) {
    if job.slowdown > 1 {
        std::thread::sleep(started.elapsed() * (job.slowdown - 1));
        outcome.generate_ms *= f64::from(job.slowdown);
        outcome.solve_ms *= f64::from(job.slowdown);
    }
}

/// Runs one seed under the job's budget; its result in wire form.
fn run_seed(job: &JobRun, lease_id: u64, stratum: u32, seed: u64) -> SeedResult {
    let budget = Budget::watched(job.max_nodes, job.watchdog);
    let started = Instant::now();
    let mut outcome = job.strata[stratum as usize].run(seed, &budget);
    slow_down(job, started, &mut outcome);
    SeedResult::within_caps(lease_id, seed, outcome)
}
