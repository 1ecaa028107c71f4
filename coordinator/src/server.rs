//! Running a job: resume from the commit log, serve workers over gRPC, keep
//! leases fresh and the log durable, show progress, and write the pack when the
//! last needed seed is in. [`run_job`] serves both `pregen run` (with embedded
//! workers over loopback) and `pregen serve` (remote workers only).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use pregen_proto::v1::coordinator_server::CoordinatorServer;
use pregen_worker::{WorkerConfig, run_worker};
use tokio::net::TcpListener;
use tokio_stream::wrappers::TcpListenerStream;
use tokio_util::sync::CancellationToken;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Identity, Server, ServerTlsConfig};

use crate::commit_log::CommitLog;
use crate::pack::{RunFacts, write_pack};
use crate::scheduler::{Progress, Scheduler, SchedulerConfig};
use crate::service::{CoordinatorService, Shared, token_check};
use crate::{CoordinatorError, Job};

/// Largest message a worker may send (a result is a few KiB).
pub const MAX_MESSAGE_BYTES: usize = 1 << 20;

/// How to run a job.
pub struct RunOptions {
    /// Output root; the pack goes to `<out>/<pack>/`.
    pub out: PathBuf,
    /// Address to serve on (`127.0.0.1:0` picks a free loopback port).
    pub listen: SocketAddr,
    /// Shared token workers must present.
    pub token: String,
    /// Workers to run in this process (0 for `serve`).
    pub local_workers: usize,
    /// Threads of each local worker.
    pub threads_per_worker: usize,
    /// A lease not heard of for this long is re-issued.
    pub lease_ttl: Duration,
    /// Draw a progress bar on a terminal.
    pub progress: bool,
    /// Serve Prometheus metrics at `/metrics` on this address.
    pub metrics: Option<SocketAddr>,
    /// Serve gRPC over TLS with this identity (remote workers only).
    pub tls: Option<ServerTls>,
    /// Called with the bound addresses once the servers listen.
    pub on_listening: Option<Box<dyn FnOnce(Listening) + Send>>,
    /// Cancelled to stop early (the log stays resumable).
    pub shutdown: CancellationToken,
}

/// The coordinator's TLS identity: certificate chain and private key, PEM.
#[derive(Clone)]
pub struct ServerTls {
    /// The certificate chain, leaf first.
    pub cert: Vec<u8>,
    /// The private key.
    pub key: Vec<u8>,
}

impl std::fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerTls")
            .field("cert", &format_args!("{} bytes", self.cert.len()))
            .field("key", &"(hidden)")
            .finish()
    }
}

/// Where a running job listens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Listening {
    /// The gRPC address workers connect to.
    pub grpc: SocketAddr,
    /// The metrics address, when metrics are served.
    pub metrics: Option<SocketAddr>,
}

/// What a run did.
#[derive(Debug, Clone)]
pub struct RunSummary {
    /// The pack's folder.
    pub dir: PathBuf,
    /// Accepted levels in the pack.
    pub accepted: u64,
    /// Seeds recorded in total (including those resumed from the log).
    pub seeds: u64,
    /// Seeds found in the commit log at start.
    pub resumed_seeds: usize,
    /// The pack was already complete: nothing was run.
    pub already_complete: bool,
    /// Wall-clock time.
    pub elapsed: Duration,
    /// Of which writing the pack (Parquet, release files, manifest).
    pub writing: Duration,
    /// Final counters.
    pub progress: Progress,
}

/// Runs `job` to completion (or until `options.shutdown`).
pub async fn run_job(job: Job, options: RunOptions) -> Result<RunSummary, CoordinatorError> {
    let started = Instant::now();
    job.validate()?;
    if options.tls.is_some() && options.local_workers > 0 {
        return Err(CoordinatorError::Server(
            "TLS is for remote workers (serve); local workers connect over loopback".into(),
        ));
    }
    let dir = options.out.join(&job.pack);
    if is_complete_pack(&dir, &job) {
        return Ok(RunSummary {
            dir,
            accepted: job.count,
            seeds: 0,
            resumed_seeds: 0,
            already_complete: true,
            elapsed: started.elapsed(),
            writing: Duration::ZERO,
            progress: Progress::default(),
        });
    }
    let (log, committed) = CommitLog::open(&dir.join("commit"), &job)?;
    let resumed_seeds = committed.len();
    let config = SchedulerConfig {
        strata: job.plan().iter().map(|p| (p.first_seed, p.count)).collect(),
        seeds_per_lease: job.seeds_per_lease,
        lease_ttl: options.lease_ttl,
        max_seeds: job.max_seeds,
    };
    let shared = Shared::new(&job, Scheduler::new(config, committed), options.lease_ttl);
    let log = Arc::new(Mutex::new(log));

    let stop_server = CancellationToken::new();
    let listener = TcpListener::bind(options.listen).await.map_err(|e| {
        CoordinatorError::Server(format!("cannot listen on {}: {e}", options.listen))
    })?;
    let addr = listener
        .local_addr()
        .map_err(|e| CoordinatorError::Server(e.to_string()))?;
    let (health, health_service) = tonic_health::server::health_reporter();
    health
        .set_serving::<CoordinatorServer<CoordinatorService>>()
        .await;
    let service = CoordinatorServer::new(CoordinatorService::new(shared.clone()))
        .max_decoding_message_size(MAX_MESSAGE_BYTES);
    let mut builder = Server::builder();
    if let Some(tls) = &options.tls {
        builder = builder
            .tls_config(ServerTlsConfig::new().identity(Identity::from_pem(&tls.cert, &tls.key)))
            .map_err(|e| CoordinatorError::Server(format!("TLS: {e}")))?;
    }
    let server = tokio::spawn({
        let stop = stop_server.clone();
        builder
            .http2_keepalive_interval(Some(Duration::from_secs(10)))
            .http2_keepalive_timeout(Some(Duration::from_secs(20)))
            .add_service(health_service)
            .add_service(InterceptedService::new(
                service,
                token_check(options.token.clone()),
            ))
            .serve_with_incoming_shutdown(TcpListenerStream::new(listener), async move {
                stop.cancelled().await
            })
    });
    let metrics = match options.metrics {
        Some(at) => Some(
            crate::metrics::serve_metrics(at, shared.clone(), job.count, stop_server.clone())
                .await?,
        ),
        None => None,
    };
    tracing::info!(%addr, ?metrics, pack = job.pack, job_id = job.id(), resumed_seeds, "coordinator listening");
    if let Some(callback) = options.on_listening {
        callback(Listening {
            grpc: addr,
            metrics,
        });
    }

    let maintenance = tokio::spawn(maintain(shared.clone(), log.clone()));
    let workers_stop = CancellationToken::new();
    let mut workers = Vec::new();
    for i in 0..options.local_workers {
        let mut config = WorkerConfig::new(format!("http://{addr}"), options.token.clone());
        config.threads = options.threads_per_worker.max(1);
        config.name = format!("local-{}", i + 1);
        workers.push(tokio::spawn(run_worker(config, workers_stop.clone())));
    }
    let bar = progress_bar(&job, options.progress);
    let progress_task = tokio::spawn(show_progress(shared.clone(), bar.clone()));

    let interrupted = tokio::select! {
        _ = shared.wait_complete() => false,
        _ = options.shutdown.cancelled() => true,
    };
    progress_task.abort();
    maintenance.abort();
    flush(&shared, &log).await?;
    let progress = shared.scheduler().progress();
    bar.finish_and_clear();

    if interrupted {
        health
            .set_not_serving::<CoordinatorServer<CoordinatorService>>()
            .await;
        workers_stop.cancel();
        stop_server.cancel();
        return Err(CoordinatorError::Resume(format!(
            "interrupted with {} of {} levels; run the same job again to resume",
            progress.committed, job.count
        )));
    }

    let exhausted = shared.scheduler().exhausted();
    if let Some(e) = exhausted {
        health
            .set_not_serving::<CoordinatorServer<CoordinatorService>>()
            .await;
        workers_stop.cancel();
        stop_server.cancel();
        let name = job
            .plan()
            .get(e.stratum)
            .filter(|p| !p.name.is_empty())
            .map(|p| format!(" (stratum `{}`)", p.name))
            .unwrap_or_default();
        return Err(CoordinatorError::Exhausted(format!(
            "max_seeds reached{name}: {} distinct levels accepted of {} wanted after {} seeds; \
             the commit log keeps them: run again with a higher --max-seeds to go on, or ask \
             for fewer levels",
            e.accepted, e.wanted, e.seeds
        )));
    }
    let records = shared.scheduler().take_pack_records().unwrap_or_default();
    let facts = RunFacts {
        mismatches: progress.mismatches,
    };
    let writing = Instant::now();
    let pack_dir = dir.clone();
    let pack_job = job.clone();
    tokio::task::spawn_blocking(move || write_pack(&pack_dir, &pack_job, &records, &facts))
        .await
        .map_err(|e| CoordinatorError::Io(format!("pack writer failed: {e}")))??;
    let writing = writing.elapsed();

    // Sessions have been told Finished; give workers a moment to hang up.
    health
        .set_not_serving::<CoordinatorServer<CoordinatorService>>()
        .await;
    for w in workers {
        match tokio::time::timeout(Duration::from_secs(10), w).await {
            Ok(Ok(Ok(_))) => {}
            Ok(Ok(Err(e))) => tracing::warn!(error = %e, "local worker failed"),
            _ => tracing::warn!("local worker did not stop in time"),
        }
    }
    workers_stop.cancel();
    stop_server.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(5), server).await;
    Ok(RunSummary {
        dir,
        accepted: job.count,
        seeds: progress.seeds,
        resumed_seeds,
        already_complete: false,
        elapsed: started.elapsed(),
        writing,
        progress,
    })
}

/// A pack whose `_SUCCESS` exists and whose manifest names this job.
fn is_complete_pack(dir: &Path, job: &Job) -> bool {
    if !dir.join("_SUCCESS").exists() {
        return false;
    }
    std::fs::read_to_string(dir.join("manifest.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .is_some_and(|m| m["job_id"] == job.id())
}

/// Expires stale leases and flushes results to the log, five times a second.
async fn maintain(shared: Arc<Shared>, log: Arc<Mutex<CommitLog>>) {
    let mut tick = tokio::time::interval(Duration::from_millis(200));
    loop {
        tick.tick().await;
        let expired = shared.scheduler().expire(Instant::now());
        if expired > 0 {
            tracing::warn!(expired, "leases expired; their seeds are re-issued");
        }
        if let Err(e) = flush(&shared, &log).await {
            tracing::error!(error = %e, "commit log write failed");
        }
    }
}

/// Writes the results received since the last flush as one durable segment.
async fn flush(shared: &Arc<Shared>, log: &Arc<Mutex<CommitLog>>) -> Result<(), CoordinatorError> {
    let log = log.clone();
    let batch = shared.scheduler().take_unflushed();
    if batch.is_empty() {
        return Ok(());
    }
    tokio::task::spawn_blocking(move || {
        log.lock().unwrap_or_else(|p| p.into_inner()).append(&batch)
    })
    .await
    .map_err(|e| CoordinatorError::Io(format!("commit log writer failed: {e}")))?
}

fn progress_bar(job: &Job, visible: bool) -> ProgressBar {
    let target = if visible {
        ProgressDrawTarget::stderr_with_hz(4)
    } else {
        ProgressDrawTarget::hidden()
    };
    let bar = ProgressBar::with_draw_target(Some(job.count), target);
    let style = ProgressStyle::with_template(
        "{spinner} {prefix} [{bar:30}] {pos}/{len} accepted ({levels_per_sec}, eta {eta})\n  {wide_msg}",
    )
    .map(|style| {
        style.with_key(
            "levels_per_sec",
            |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{:.0} levels/s", state.per_sec());
            },
        )
    })
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .progress_chars("=> ");
    bar.set_style(style);
    bar.set_prefix(job.pack.clone());
    bar
}

async fn show_progress(shared: Arc<Shared>, bar: ProgressBar) {
    let started = Instant::now();
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    loop {
        tick.tick().await;
        let p = shared.scheduler().progress();
        bar.set_position(p.accepted.min(bar.length().unwrap_or(u64::MAX)));
        let rate = p.seeds as f64 / started.elapsed().as_secs_f64().max(1e-3);
        let rejected: Vec<String> = p.rejected.iter().map(|(k, v)| format!("{k} {v}")).collect();
        // Seeds per worker, busiest first; a long list is cut to the first eight.
        let mut workers: Vec<(&String, &u64)> = p.per_worker.iter().collect();
        workers.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
        let mut per_worker: Vec<String> = workers
            .iter()
            .take(8)
            .map(|(name, n)| format!("{name} {n}"))
            .collect();
        if workers.len() > 8 {
            per_worker.push(format!("and {} more", workers.len() - 8));
        }
        bar.set_message(format!(
            "{:.0} seeds/s | {} workers ({}), {} leases out | rejected: {}",
            rate,
            p.per_worker.len(),
            if per_worker.is_empty() {
                "no seeds yet".into()
            } else {
                per_worker.join(", ")
            },
            p.leases_out,
            if rejected.is_empty() {
                "none".into()
            } else {
                rejected.join(", ")
            },
        ));
    }
}
