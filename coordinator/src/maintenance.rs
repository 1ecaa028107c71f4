//! What runs beside the server while a job is served: the maintenance loop
//! (leases expired, results flushed to the commit log with retry and
//! backoff while writes fail, the empty room watched) and the loop that runs
//! the seeds only the coordinator can settle (disputes, and sampled seeds no
//! other worker is there to check), off the async threads.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pregen_pack::SeedRecord;
use tokio::sync::Mutex;

use crate::CoordinatorError;
use crate::commit_log::CommitLog;
use crate::shared::{OwnRunFailed, Shared};

/// After this long with no worker connected, the coordinator says so, and
/// again each time as long passes.
pub const IDLE_WARNING: Duration = Duration::from_secs(30);

/// By default, while commit-log writes fail, they are retried for this long
/// (new leases paused, results kept in memory) before the coordinator gives up.
pub const WRITE_GIVE_UP: Duration = Duration::from_secs(60);

/// Commit-log writes failing since `since`; the next try after `backoff`.
#[derive(Debug, Clone, Copy)]
struct Failing {
    since: Instant,
    backoff: Duration,
    next_try: Instant,
}

/// Five times a second, and whenever batches wait for room in the log:
/// expires stale leases, flushes results to the log
/// (retrying with backoff while writes fail), and watches for an empty
/// room. Returns only when the run cannot go on.
pub(crate) async fn maintain(
    shared: Arc<Shared>,
    log: Arc<Mutex<CommitLog>>,
    idle_exit: Option<Duration>,
    write_give_up: Duration,
) -> CoordinatorError {
    let mut tick = tokio::time::interval(Duration::from_millis(200));
    let mut failing: Option<Failing> = None;
    let mut idle: Option<(Instant, Instant)> = None; // since, last warning
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            () = shared.flush_now.notified() => {}
        }
        let now = Instant::now();
        let expired = shared.scheduler().expire(now);
        if expired > 0 {
            tracing::warn!(expired, "leases expired; their seeds are re-issued");
        }
        if failing.is_none_or(|f| now >= f.next_try) {
            match flush(&shared, &log).await {
                Ok(()) => {
                    if failing.take().is_some() {
                        shared.scheduler().set_paused(false);
                        tracing::info!("the commit log is written again; granting leases");
                    }
                }
                Err(error) => {
                    let (since, backoff) = failing.map_or((now, Duration::from_millis(200)), |f| {
                        (f.since, (f.backoff * 2).min(Duration::from_secs(5)))
                    });
                    shared.scheduler().set_paused(true);
                    if now - since >= write_give_up {
                        return CoordinatorError::LogWrite {
                            seconds: (now - since).as_secs(),
                            source: Box::new(error),
                        };
                    }
                    tracing::error!(
                        %error,
                        retry_in_ms = backoff.as_millis() as u64,
                        "commit log write failed; the results are kept and no new leases are \
                         granted until it works"
                    );
                    failing = Some(Failing {
                        since,
                        backoff,
                        next_try: now + backoff,
                    });
                }
            }
        }
        if shared.connected() > 0 {
            idle = None;
            continue;
        }
        let (since, warned) = *idle.get_or_insert((now, now));
        let waited = now - since;
        if idle_exit.is_some_and(|limit| waited >= limit) {
            return CoordinatorError::Idle {
                seconds: waited.as_secs(),
            };
        }
        if now - warned >= IDLE_WARNING {
            tracing::warn!(
                waited_s = waited.as_secs(),
                "no worker connected for {} s; the coordinator keeps waiting",
                waited.as_secs()
            );
            idle = Some((since, now));
        }
    }
}

/// A sampled seed waits this long for a worker other than its first before
/// the coordinator checks it itself.
pub const CHECK_GRACE: Duration = Duration::from_secs(1);

/// Five times a second, and after every batch: runs here, off the async
/// threads and one per core at most, the seeds only the coordinator can
/// settle: disputed results, and sampled seeds no other worker is there to
/// check. At the tail the workers are idle, so the last checks use every core.
pub(crate) async fn run_own_seeds(shared: Arc<Shared>) {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let mut tick = tokio::time::interval(Duration::from_millis(200));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            () = shared.own_work.notified() => {}
        }
        let work = shared
            .scheduler()
            .coordinator_work(Instant::now(), CHECK_GRACE);
        let mut running = tokio::task::JoinSet::new();
        let mut seeds = HashMap::new();
        for (stratum, seed) in work {
            if running.len() >= cores
                && let Some(done) = running.join_next_with_id().await
            {
                settle_own_run(&shared, &mut seeds, done);
            }
            let run = shared.clone();
            let task = running.spawn_blocking(move || run.run_seed(stratum, seed));
            seeds.insert(task.id(), seed);
        }
        while let Some(done) = running.join_next_with_id().await {
            settle_own_run(&shared, &mut seeds, done);
        }
    }
}

/// Records one of the coordinator's own runs: its result settles the seed,
/// a failure leaves the workers' results standing unchecked.
fn settle_own_run(
    shared: &Shared,
    seeds: &mut HashMap<tokio::task::Id, u64>,
    done: Result<(tokio::task::Id, Result<SeedRecord, OwnRunFailed>), tokio::task::JoinError>,
) {
    let (id, ran) = match done {
        Ok((id, ran)) => (id, ran),
        Err(e) => (e.id(), Err(OwnRunFailed::Task(e.to_string()))),
    };
    let Some(seed) = seeds.remove(&id) else {
        return;
    };
    match ran {
        Ok(record) => shared.scheduler().coordinator_result(record),
        Err(error) => {
            tracing::error!(
                seed,
                %error,
                "the coordinator could not run the seed; its results stand unchecked"
            );
            shared
                .scheduler()
                .coordinator_failed(seed, &error.to_string());
        }
    }
    shared.check_complete();
}

/// Writes the results received since the last flush as one durable segment;
/// on failure they go back to the scheduler, to be written first next time.
///
/// The log's lock is taken before the batch and released by the blocking
/// write itself, so one flush runs at a time and a flush whose task is
/// aborted mid-write (the maintenance task, when the pack is complete) still
/// finishes its segment before the next flush, and the pack writer after it,
/// goes on.
pub(crate) async fn flush(
    shared: &Arc<Shared>,
    log: &Arc<Mutex<CommitLog>>,
) -> Result<(), CoordinatorError> {
    let mut log = log.clone().lock_owned().await;
    let batch = shared.scheduler().take_unflushed();
    if batch.is_empty() {
        return Ok(());
    }
    let shared = shared.clone();
    tokio::task::spawn_blocking(move || {
        let written = log.append(&batch);
        match written {
            Ok(()) => log.keep(batch),
            Err(_) => shared.scheduler().restore_unflushed(batch),
        }
        drop(log);
        shared.logged();
        written
    })
    .await
    .map_err(|e| CoordinatorError::server("the commit log writer")(e.into()))?
}
