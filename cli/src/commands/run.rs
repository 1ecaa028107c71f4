//! `pregen run`: the whole pack on this machine. The coordinator serves on a
//! loopback port; local workers connect to it over real gRPC like remote ones.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{Result, bail};
use clap::Args;
use pregen_coordinator::server::{RunOptions, Started, start_job};
use pregen_worker::{WorkerConfig, run_worker};
use tokio_util::sync::CancellationToken;

use crate::flags::JobArgs;
use crate::progress::ProgressView;

/// Flags of `pregen run`.
#[derive(Args)]
pub struct RunArgs {
    #[command(flatten)]
    job: JobArgs,
    /// Local worker processes' worth of sessions to run (at most four per
    /// core: more only start threads; above that it is capped, with a
    /// warning).
    #[arg(long, default_value_t = 1)]
    workers: usize,
    /// Threads per local worker (default: all cores shared among workers;
    /// more than the cores is capped at them, with a warning).
    #[arg(long)]
    threads: Option<usize>,
    /// Do not draw the progress bar.
    #[arg(long)]
    no_progress: bool,
    /// Serve Prometheus metrics at http://ADDR/metrics (e.g. 127.0.0.1:9100).
    #[arg(long, value_name = "ADDR")]
    metrics: Option<SocketAddr>,
    /// While commit-log writes fail (e.g. a full disk) they are retried, no
    /// new leases granted, for this many seconds; then the run stops with an
    /// error (exit status 1) and a rerun resumes from what was written.
    #[arg(long, value_name = "SECONDS", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(1..))]
    write_give_up_s: u64,
}

/// The most local workers a run starts per core.
const WORKERS_PER_CORE: usize = 4;

/// `--workers` held to `WORKERS_PER_CORE` per core, with a warning above.
fn workers_within_cores(asked: usize, cores: usize) -> usize {
    let most = WORKERS_PER_CORE * cores;
    if asked > most {
        eprintln!(
            "warning: --workers {asked} is above {WORKERS_PER_CORE} per core on this machine's \
             {cores} cores: capped at {most}"
        );
        return most;
    }
    asked
}

/// A local worker's task: its report, or why it ended (a panic is a join
/// error).
type LocalWorker = tokio::task::JoinHandle<
    Result<Result<pregen_worker::WorkerReport, pregen_worker::WorkerError>, tokio::task::JoinError>,
>;

/// Starts `n` local workers (`local-1`, ...) of `threads` threads on the
/// coordinator at `url`; each says on the returned channel, as it ends,
/// why it failed (`None`: it did not).
fn spawn_workers(
    n: usize,
    url: &str,
    token: &str,
    threads: usize,
    stop: &CancellationToken,
) -> (
    Vec<LocalWorker>,
    tokio::sync::mpsc::Receiver<Option<String>>,
) {
    let (ended_tx, ended) = tokio::sync::mpsc::channel(n);
    let workers = (0..n)
        .map(|i| {
            let mut config = WorkerConfig::new(url.to_string(), token.to_string());
            config.threads = threads;
            config.name = format!("local-{}", i + 1);
            let worker = tokio::spawn(run_worker(config, stop.clone()));
            let ended = ended_tx.clone();
            tokio::spawn(async move {
                let result = worker.await;
                let error = match &result {
                    Ok(Ok(_)) => None,
                    Ok(Err(e)) => Some(e.to_string()),
                    Err(e) => Some(e.to_string()),
                };
                let _ = ended.send(error).await;
                result
            })
        })
        .collect();
    (workers, ended)
}

/// Runs the job with local workers until the pack is written.
pub async fn run(args: RunArgs) -> Result<()> {
    crate::init_logs("warn");
    // The program's game is held for the run: its program starts once.
    let (job, _program) = args.job.load()?;
    if args.workers == 0 {
        bail!("--workers must be at least 1 (use `pregen serve` for remote workers only)");
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut args = args;
    args.workers = workers_within_cores(args.workers, cores);
    let threads = match args.threads {
        Some(asked) => super::threads_within_cores(asked)?,
        None => (cores / args.workers).max(1),
    };
    let token = loopback_token()?;
    let output = args.job.output()?;
    let options = RunOptions {
        metrics: args.metrics,
        shutdown: crate::cancel_on_signals(),
        write_give_up: Duration::from_secs(args.write_give_up_s),
        ..args.job.run_options(&output, token.clone())
    };
    let count = job.count;
    let pack = job.pack.clone();
    let mut running = match start_job(job, options).await? {
        Started::AlreadyComplete(summary) => {
            super::report(&summary);
            return Ok(());
        }
        Started::Running(running) => running,
    };
    if let Some(m) = running.listening.metrics {
        eprintln!("metrics on http://{m}/metrics");
    }
    let workers_stop = CancellationToken::new();
    let url = format!("http://{}", running.listening.grpc);
    let (workers, mut ended) = spawn_workers(args.workers, &url, &token, threads, &workers_stop);
    let view = ProgressView::start(&pack, count, !args.no_progress, running.watch());
    // The run's own workers are its only workers: when every one of them
    // has stopped with an error (refused, say), nothing will finish the pack.
    let every_worker_failed = async {
        let mut failed = 0;
        while let Some(error) = ended.recv().await {
            let Some(error) = error else {
                return std::future::pending().await;
            };
            failed += 1;
            if failed == args.workers {
                return error;
            }
        }
        std::future::pending::<String>().await
    };
    let summary = tokio::select! {
        summary = running.complete() => summary,
        error = every_worker_failed => {
            view.finish();
            // A program at fault (answering seeds two ways, contradicting
            // itself) stops honest workers: it, not they, is the cause.
            let probed = running.program_outcome().await;
            running.stop().await;
            probed?;
            bail!(
                "every local worker stopped with an error before the pack was complete (the \
                 last: {error}); the commit log is kept: run the same job again to resume"
            );
        }
    };
    view.finish();
    if summary.is_err() {
        workers_stop.cancel();
    }
    // Sessions have been told Finished; give workers a moment to hang up.
    for w in workers {
        match tokio::time::timeout(Duration::from_secs(10), w).await {
            Ok(Ok(Ok(Ok(_)))) => {}
            Ok(Ok(Ok(Err(e)))) => tracing::warn!(error = %e, "local worker failed"),
            _ => tracing::warn!("local worker did not stop in time"),
        }
    }
    workers_stop.cancel();
    running.stop().await;
    super::report(&summary?);
    Ok(())
}

/// A fresh random token for the run's own workers: nothing else on the
/// machine can guess it and feed the coordinator.
pub fn loopback_token() -> anyhow::Result<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("no randomness for a token: {e}"))?;
    Ok(pregen_games::hex(&bytes))
}
