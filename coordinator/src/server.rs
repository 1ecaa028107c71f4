//! Running a job: resume from the commit log, serve workers over gRPC, keep
//! leases fresh and the log durable, and write the pack when the last needed
//! seed is in. [`start_job`] gives a [`RunningJob`] whose address workers
//! connect to (the CLI starts local ones for `pregen run`) and whose progress
//! can be watched; [`run_job`] is start, complete and stop in one call.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pregen_pack::PackDir;
use pregen_pack::SeedRecord;
use pregen_pack::write::{PackWriter, RunFacts, WriteOptions, WriteProgress};
use pregen_proto::v1::coordinator_server::CoordinatorServer;
use tokio::net::TcpListener;
use tokio::sync::Mutex;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Identity, Server, ServerTlsConfig};

use crate::commit_log::key::LogKey;
use crate::commit_log::{CommitLog, Entry};
use crate::connections::{
    ADMIT_WITHIN, METRICS_CONNECTIONS, RESERVED_FILES, capped, fits_file_limit, raise_file_limit,
};
use crate::in_store::InStore;
use crate::maintenance::{flush, maintain, run_own_seeds};
use crate::scheduler::{Progress, Scheduler, SchedulerConfig};
use crate::service::{CoordinatorService, MAX_SESSIONS_PER_CONNECTION, token_check};
use crate::shared::Shared;
use crate::trust::Trust;
use crate::verdicts::Selection;
use crate::{CoordinatorError, Job, ResumeError};

pub use crate::maintenance::{CHECK_GRACE, IDLE_WARNING, WRITE_GIVE_UP};

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
    /// A lease not heard of for this long is re-issued.
    pub lease_ttl: Duration,
    /// Serve Prometheus metrics at `/metrics` on this address.
    pub metrics: Option<SocketAddr>,
    /// Serve gRPC over TLS with this identity.
    pub tls: Option<ServerTls>,
    /// Cancelled to stop early (the log stays resumable).
    pub shutdown: CancellationToken,
    /// Connections open at once; more are closed as they come.
    pub max_connections: usize,
    /// With no worker connected for this long, stop with
    /// [`CoordinatorError::Idle`] (the log stays resumable).
    pub idle_exit: Option<Duration>,
    /// While commit-log writes fail they are retried for this long (new
    /// leases paused) before the run stops with [`CoordinatorError::LogWrite`].
    pub write_give_up: Duration,
    /// How the pack is written at the end (the sort's memory).
    pub write: WriteOptions,
    /// The output root in an object store: the pack and its log are kept
    /// there, `out` holding only the working copy (`in_store`).
    pub store: Option<pregen_store::Remote>,
    /// How long the pack's lease in the store lasts unrenewed: a coordinator
    /// started on a pack whose holder died waits this long at most.
    pub store_lease: Duration,
}

/// The pack's lease in an object store lasts this long by default.
pub const DEFAULT_STORE_LEASE: Duration = Duration::from_secs(30);

/// Connections served at once by default.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;

/// A lease not heard of for this long is re-issued, by default (`serve
/// --lease-ttl-ms`, and every `pregen run`).
pub const DEFAULT_LEASE_TTL: Duration = Duration::from_secs(15);

impl RunOptions {
    /// Options for a job served on a free loopback port with `token`, its
    /// pack under `out`: 15 s leases, no metrics, no TLS, the default
    /// connection cap, no idle exit, 60 s of failed writes before giving up.
    pub fn local(out: PathBuf, token: String) -> RunOptions {
        RunOptions {
            out,
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            token,
            lease_ttl: DEFAULT_LEASE_TTL,
            metrics: None,
            tls: None,
            shutdown: CancellationToken::new(),
            max_connections: DEFAULT_MAX_CONNECTIONS,
            idle_exit: None,
            write_give_up: WRITE_GIVE_UP,
            write: WriteOptions::default(),
            store: None,
            store_lease: DEFAULT_STORE_LEASE,
        }
    }
}

/// The coordinator's TLS identity: certificate chain and private key, PEM;
/// and, to ask every worker for a certificate, the CA that signs them.
#[derive(Clone)]
pub struct ServerTls {
    /// The certificate chain, leaf first.
    pub cert: Vec<u8>,
    /// The private key.
    pub key: Vec<u8>,
    /// With it, a worker must show a certificate this CA signed (PEM), and
    /// its identity's ID is the certificate's (the coordinator's `identity` module).
    pub client_ca: Option<Vec<u8>>,
}

impl std::fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerTls")
            .field("cert", &format_args!("{} bytes", self.cert.len()))
            .field("key", &"(hidden)")
            .field("client_ca", &self.client_ca.as_ref().map(Vec::len))
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
    /// The pack's folder (the working copy, for a pack in an object store).
    pub dir: PathBuf,
    /// The pack's URL, for a pack in an object store.
    pub url: Option<String>,
    /// Accepted levels in the pack.
    pub accepted: u64,
    /// Seeds recorded in total (including those resumed from the log), those
    /// past each stratum's last level included.
    pub seeds: u64,
    /// Seeds the pack holds (its levels and rejects).
    pub in_pack: u64,
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

impl RunSummary {
    /// The summary of a run that found its pack complete and ran nothing.
    fn already_complete(dir: &PackDir, job: &Job, started: Instant) -> RunSummary {
        RunSummary {
            dir: dir.root().to_path_buf(),
            url: None,
            accepted: job.count,
            seeds: 0,
            in_pack: 0,
            resumed_seeds: 0,
            already_complete: true,
            elapsed: started.elapsed(),
            writing: Duration::ZERO,
            progress: Progress::default(),
        }
    }
}

/// Runs `job` to completion (or until `options.shutdown`) with whatever
/// workers connect, then stops serving.
pub async fn run_job(job: Job, options: RunOptions) -> Result<RunSummary, CoordinatorError> {
    match start_job(job, options).await? {
        Started::AlreadyComplete(summary) => Ok(summary),
        Started::Running(mut running) => {
            let summary = running.complete().await;
            running.stop().await;
            summary
        }
    }
}

/// What [`start_job`] found.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // one per run
pub enum Started {
    /// The pack was already written for this job: nothing runs.
    AlreadyComplete(RunSummary),
    /// The job is served.
    Running(RunningJob),
}

/// A job being served: workers connect to [`RunningJob::listening`].
#[derive(Debug)]
pub struct RunningJob {
    /// Where the servers listen.
    pub listening: Listening,
    job: Job,
    dir: PackDir,
    shared: Arc<Shared>,
    log: Arc<Mutex<CommitLog>>,
    health: tonic_health::server::HealthReporter,
    stop_server: CancellationToken,
    server: JoinHandle<Result<(), tonic::transport::Error>>,
    maintenance: JoinHandle<CoordinatorError>,
    own_runs: JoinHandle<()>,
    /// A game program's determinism probe (docs/external.md): the pack is
    /// not written before it passes, and the run stops when it fails.
    probe: Option<JoinHandle<Result<(), pregen_games::NotDeterministic>>>,
    shutdown: CancellationToken,
    started: Instant,
    resumed_seeds: usize,
    write: WriteOptions,
    writing: Arc<WriteProgress>,
    store: Option<InStore>,
}

/// The verdict of a determinism probe (kept until it has one: a wait
/// dropped half-way loses nothing).
async fn probe_verdict(
    probe: &mut Option<JoinHandle<Result<(), pregen_games::NotDeterministic>>>,
) -> Result<(), CoordinatorError> {
    let Some(running) = probe.as_mut() else {
        return Ok(());
    };
    let ran = running.await;
    *probe = None;
    ran.map_err(|e| CoordinatorError::server("the program's probe")(e.into()))?
        .map_err(|e| CoordinatorError::Program(e.to_string()))
}

/// Opens the pack's commit log, resumes, and starts serving `job`.
pub async fn start_job(job: Job, options: RunOptions) -> Result<Started, CoordinatorError> {
    let started = Instant::now();
    job.validate()?;
    let dir = PackDir::under(&options.out, &job.pack);
    let store = InStore::for_run(&options, &job, &dir).await?;
    if is_complete_pack(&dir, &job) {
        let mut summary = RunSummary::already_complete(&dir, &job, started);
        if let Some(store) = store {
            summary.url = Some(store.url());
            store.release().await;
        }
        return Ok(Started::AlreadyComplete(summary));
    }
    // The port and the TLS identity first: a busy port or a bad key stops
    // the run before anything is written under the pack folder.
    let stop_server = CancellationToken::new();
    let max_connections = connection_cap(&options)?;
    let listener = TcpListener::bind(options.listen).await.map_err(|e| {
        CoordinatorError::server(format!("cannot listen on {}", options.listen))(e.into())
    })?;
    let addr = listener
        .local_addr()
        .map_err(|e| CoordinatorError::server("the listening address")(e.into()))?;
    let metrics_listener = match options.metrics {
        Some(at) => Some(crate::metrics::bind_metrics(at).await?),
        None => None,
    };
    let builder = server_builder(options.tls.as_ref())?;
    let (trust, (scheduler, mut log, resumed_seeds)) =
        resume_off_threads(&job, &dir, options.lease_ttl).await?;
    if let Some(store) = &store {
        log = store.keep_log(log).await?;
    }
    let shared = Shared::new(&job, trust, scheduler, options.lease_ttl)?;
    // A new log is kept in memory as well while it fits the sort's memory,
    // so that the pack need not read it back.
    log.keep_in_memory(options.write.sort_memory);
    let log = Arc::new(Mutex::new(log));

    let (health, health_service) = tonic_health::server::health_reporter();
    health
        .set_serving::<CoordinatorServer<CoordinatorService>>()
        .await;
    let service = CoordinatorServer::new(CoordinatorService::new(shared.clone()))
        .max_decoding_message_size(MAX_MESSAGE_BYTES);
    let server = tokio::spawn({
        let stop = stop_server.clone();
        builder
            .http2_keepalive_interval(Some(Duration::from_secs(10)))
            .http2_keepalive_timeout(Some(Duration::from_secs(20)))
            .max_concurrent_streams(Some(MAX_SESSIONS_PER_CONNECTION))
            .add_service(health_service)
            .add_service(InterceptedService::new(
                service,
                token_check(options.token.clone()),
            ))
            .serve_with_incoming_shutdown(
                capped(listener, max_connections, ADMIT_WITHIN),
                async move { stop.cancelled().await },
            )
    });
    let metrics = match metrics_listener {
        Some(listener) => Some(
            crate::metrics::serve_metrics(listener, shared.clone(), job.count, stop_server.clone())
                .await?,
        ),
        None => None,
    };
    tracing::info!(%addr, ?metrics, pack = job.pack, job_id = job.id(), resumed_seeds, "coordinator listening");
    let maintenance = tokio::spawn(maintain(
        shared.clone(),
        log.clone(),
        options.idle_exit,
        options.write_give_up,
    ));
    let own_runs = tokio::spawn(run_own_seeds(shared.clone()));
    let probe = start_probe(&job, &shared);
    Ok(Started::Running(RunningJob {
        listening: Listening {
            grpc: addr,
            metrics,
        },
        job,
        dir,
        shared,
        log,
        health,
        stop_server,
        server,
        maintenance,
        own_runs,
        probe,
        shutdown: options.shutdown,
        started,
        resumed_seeds,
        write: options.write,
        writing: Arc::default(),
        store,
    }))
}

/// The game program's determinism probe, started beside the run when the
/// job asks for one.
fn start_probe(
    job: &Job,
    shared: &Arc<Shared>,
) -> Option<JoinHandle<Result<(), pregen_games::NotDeterministic>>> {
    job.external
        .as_ref()
        .map(|spec| spec.probe_seeds())
        .filter(|&seeds| seeds > 0)
        .map(|seeds| {
            let firsts: Vec<u64> = job.plan().iter().map(|p| p.first_seed).collect();
            let shared = shared.clone();
            tokio::task::spawn_blocking(move || shared.probe_program(&firsts, seeds))
        })
}

/// Connections served at once: `--max-connections`, checked against the
/// open-file limit (raised to its hard limit first). The default is lowered
/// to what the limit allows, with a warning; an explicit cap that does not
/// fit is refused.
fn connection_cap(options: &RunOptions) -> Result<usize, CoordinatorError> {
    let file_limit = raise_file_limit();
    let metrics_places = options.metrics.map_or(0, |_| METRICS_CONNECTIONS);
    let mut max_connections = options.max_connections;
    if let Err(why) = fits_file_limit((max_connections + metrics_places) as u64, file_limit) {
        let refuse = |why: crate::connections::TooManyFiles| CoordinatorError::Server {
            message: why.to_string(),
            source: None,
        };
        if max_connections != DEFAULT_MAX_CONNECTIONS {
            return Err(refuse(why));
        }
        // The default is lowered to what the limit allows, with a word.
        let limit = file_limit.unwrap_or(u64::MAX);
        max_connections = limit.saturating_sub(RESERVED_FILES + metrics_places as u64) as usize;
        if max_connections == 0 {
            return Err(refuse(why));
        }
        tracing::warn!(
            max_connections,
            limit,
            "the open-file limit lowers --max-connections"
        );
    }
    Ok(max_connections)
}

/// The gRPC server's builder, over TLS when the options give an identity
/// (and with client certificates required when they give a CA).
fn server_builder(tls: Option<&ServerTls>) -> Result<Server, CoordinatorError> {
    let mut builder = Server::builder();
    if let Some(tls) = tls {
        let mut config = ServerTlsConfig::new().identity(Identity::from_pem(&tls.cert, &tls.key));
        if let Some(ca) = &tls.client_ca {
            config = config.client_ca_root(tonic::transport::Certificate::from_pem(ca));
        }
        builder = builder
            .tls_config(config)
            .map_err(|e| CoordinatorError::server("TLS")(e.into()))?;
    }
    Ok(builder)
}

/// The job's trust and its resume ([`resume`]), which reads and checks the
/// whole log (and may start the job's game program): off the async threads.
async fn resume_off_threads(
    job: &Job,
    dir: &PackDir,
    lease_ttl: Duration,
) -> Result<(Arc<Trust>, (Scheduler, CommitLog, usize)), CoordinatorError> {
    let (job, dir) = (job.clone(), dir.clone());
    tokio::task::spawn_blocking(move || -> Result<_, CoordinatorError> {
        let trust = Arc::new(Trust::new(&job)?);
        let resumed = resume(&job, &dir, lease_ttl, &trust)?;
        Ok((trust, resumed))
    })
    .await
    .map_err(|e| CoordinatorError::server("the resume")(e.into()))?
}

/// The scheduler resumed from the pack's commit log (every accepted level
/// checked again as a worker's is; a forged one stops the resume), the log
/// open for appending, and the seeds it held. The cross-check's key is read
/// from beside the log, or drawn and written there.
fn resume(
    job: &Job,
    dir: &PackDir,
    lease_ttl: Duration,
    trust: &Trust,
) -> Result<(Scheduler, CommitLog, usize), CoordinatorError> {
    // The log's key: a resumed run samples the seeds the first run sampled,
    // so those the log already settled are not run again and those it had
    // not yet are still checked.
    let key = LogKey::read_or_draw(&dir.commit())?;
    let check_key = key.bytes();
    let config = SchedulerConfig {
        strata: job.plan().iter().map(|p| (p.first_seed, p.count)).collect(),
        seeds_per_lease: job.seeds_per_lease,
        lease_ttl,
        max_seeds: job.max_seeds,
        progress_limit: Duration::from_millis(job.budget.watchdog_ms) + lease_ttl,
        cross_check: job.cross_check,
        check_key,
        audit_duplicate_levels: !trust.regenerates(),
        bands: job.plan().iter().map(|p| p.band).collect(),
    };
    let mut scheduler = Scheduler::start(config);
    let mut forged = None;
    let log = CommitLog::open(&dir.commit(), job, key, |entry| {
        if forged.is_some() {
            return;
        }
        if let Some(Err(refused)) = entry.result().map(|r| trust.admit_stored(r)) {
            forged = Some(refused);
            return;
        }
        scheduler.replay(entry);
    })?;
    if let Some(refused) = forged {
        return Err(ResumeError::Forged(refused).into());
    }
    scheduler.end_replay();
    // Seeds, not entries: a checked seed has two results in the log.
    let resumed_seeds = scheduler.progress().seeds as usize;
    Ok((scheduler, log, resumed_seeds))
}

/// Why a stratum of `job` gave up, in words, with the seeds that ended in
/// an error ([`errors_said`]).
fn exhausted_message(e: &crate::scheduler::Exhausted, job: &Job, progress: &Progress) -> String {
    let name = job
        .plan()
        .get(e.stratum)
        .filter(|p| !p.name.is_empty())
        .map(|p| format!(" (stratum `{}`)", p.name))
        .unwrap_or_default();
    let mut message = stratum_gave_up(e, &name);
    message.push_str(&errors_said(progress));
    message
}

/// Why a stratum gave up, in words: `name` is ` (stratum `NAME`)` or empty.
fn stratum_gave_up(e: &crate::scheduler::Exhausted, name: &str) -> String {
    let Some(band) = e.band else {
        return format!(
            "max_seeds reached{name}: {} distinct levels accepted of {} wanted after {} seeds; \
             the commit log keeps them: run again with a higher --max-seeds to go on, or ask \
             for fewer levels",
            e.accepted, e.wanted, e.seeds
        );
    };
    let closest = e.closest.map_or_else(
        || "no level was accepted at all".to_string(),
        |d| format!("the difficulty nearest the band was {d}"),
    );
    format!(
        "the difficulty band {band}{name} cannot be filled: {} of {} levels in the band after {} \
         seeds; {closest}. Widen the band, set the game's params toward it, or raise \
         --max-seeds (the commit log keeps what was made)",
        e.accepted, e.wanted, e.seeds
    )
}

/// The seeds that ended in an error, in words for a run that gave up:
/// how many, and each reason's first seed and detail (empty when none did).
fn errors_said(progress: &Progress) -> String {
    let errors: u64 = progress
        .rejected
        .iter()
        .filter(|(r, _)| r.status == pregen_pack::Status::Error)
        .map(|(_, n)| n)
        .sum();
    if errors == 0 {
        return String::new();
    }
    let firsts: Vec<String> = progress
        .first_wrong
        .iter()
        .filter(|(r, _)| r.status == pregen_pack::Status::Error)
        .map(|(_, (seed, said))| format!("seed {seed}: {said}"))
        .collect();
    format!(
        ". {errors} of the seeds ended in an error; the first of each reason: {}",
        firsts.join("; ")
    )
}

/// A handle that reads a running job's counters, from any task.
#[derive(Debug, Clone)]
pub struct JobWatch {
    shared: Arc<Shared>,
    writing: Arc<WriteProgress>,
}

impl JobWatch {
    /// The job's counters now.
    pub fn progress(&self) -> Progress {
        self.shared.scheduler().progress()
    }

    /// How far the pack's writing has come (all zero until every level is in).
    pub fn writing(&self) -> &WriteProgress {
        &self.writing
    }
}

impl RunningJob {
    /// A handle on the job's counters, for a progress display.
    pub fn watch(&self) -> JobWatch {
        JobWatch {
            shared: self.shared.clone(),
            writing: self.writing.clone(),
        }
    }

    /// Whether the job's game program is at fault, once its determinism
    /// probe (if running) has finished: `Err` when it answered a seed two
    /// ways, contradicted itself, or failed every seed.
    pub async fn program_outcome(&mut self) -> Result<(), CoordinatorError> {
        probe_verdict(&mut self.probe).await?;
        match self.shared.scheduler().program_fault() {
            Some(fault) => Err(CoordinatorError::Program(fault.to_string())),
            None => Ok(()),
        }
    }

    /// Waits until the pack's seeds are all in (or the shutdown token is
    /// cancelled), makes the log durable and writes the pack. The server
    /// keeps serving, so that workers hear `Finished`; [`RunningJob::stop`]
    /// ends it.
    pub async fn complete(&mut self) -> Result<RunSummary, CoordinatorError> {
        let job = &self.job;
        let (shared, probe) = (&self.shared, &mut self.probe);
        // Complete once every seed is in and the probe has passed; a probe
        // that fails stops the run at once.
        let complete = async {
            let probed = probe_verdict(probe);
            let mut probed = std::pin::pin!(probed);
            let mut passed = false;
            let mut waited = std::pin::pin!(shared.wait_complete());
            loop {
                tokio::select! {
                    ran = &mut probed, if !passed => {
                        ran?;
                        passed = true;
                    }
                    () = &mut waited => {
                        return if passed { Ok(()) } else { probed.await };
                    }
                }
            }
        };
        let ended = tokio::select! {
            ran = complete => ran.map(|()| false),
            _ = self.shutdown.cancelled() => Ok(true),
            failed = &mut self.maintenance => Err(failed.unwrap_or_else(|e| {
                CoordinatorError::server("the maintenance task")(e.into())
            })),
        };
        if let Some(lost) = self.store.as_ref().and_then(InStore::lost) {
            return Err(lost);
        }
        let interrupted = match ended {
            Ok(interrupted) => interrupted,
            Err(e) => {
                // What can still be written is; the log stays resumable.
                let _ = flush(&self.shared, &self.log).await;
                return Err(e);
            }
        };
        self.maintenance.abort();
        // Waited for, not only aborted: a run of its own that is recording a
        // check on another thread would otherwise land after the final flush,
        // counted in the manifest but missing from the log.
        self.own_runs.abort();
        let _ = (&mut self.own_runs).await;
        flush(&self.shared, &self.log).await?;
        let progress = self.shared.scheduler().progress();
        if let Some(fault) = self.shared.scheduler().program_fault() {
            return Err(CoordinatorError::Program(fault.to_string()));
        }
        if interrupted {
            return Err(CoordinatorError::Interrupted {
                committed: progress.committed,
                wanted: job.count,
            });
        }
        let exhausted = self.shared.scheduler().exhausted();
        if let Some(e) = exhausted {
            let progress = self.shared.scheduler().progress();
            return Err(CoordinatorError::Exhausted(exhausted_message(
                &e, job, &progress,
            )));
        }
        let selection = self.shared.scheduler().take_selection().ok_or_else(|| {
            CoordinatorError::server("the pack's selection")("not complete".into())
        })?;
        let facts = RunFacts {
            mismatches: progress.mismatches,
            protocol: pregen_proto::PROTOCOL_VERSION,
            cross_check: progress.cross_check.clone(),
            computed: progress.computed.clone(),
        };
        let in_pack = selection.seeds();
        let writing = Instant::now();
        tracing::info!(
            levels = job.count,
            seeds = progress.seeds,
            "every level is in; writing the pack"
        );
        self.write_pack(selection, facts).await?;
        Ok(RunSummary {
            dir: self.dir.root().to_path_buf(),
            url: self.store.as_ref().map(InStore::url),
            accepted: job.count,
            seeds: progress.seeds,
            in_pack,
            resumed_seeds: self.resumed_seeds,
            already_complete: false,
            elapsed: self.started.elapsed(),
            writing: writing.elapsed(),
            progress,
        })
    }

    /// Writes the pack from the log (off the async threads), and publishes
    /// it in its object store, if it has one.
    async fn write_pack(
        &self,
        selection: Selection,
        facts: RunFacts,
    ) -> Result<(), CoordinatorError> {
        let (dir, pack_job) = (self.dir.clone(), self.job.clone());
        let (mut options, counted) = (self.write.clone(), self.writing.clone());
        if let Some(store) = &self.store {
            options.delivery = Some(store.delivery().await?);
        }
        let mut log = self.log.clone().lock_owned().await;
        tokio::task::spawn_blocking(move || {
            let writer = PackWriter::new(&dir, &pack_job, options)?.with_progress(counted);
            write_from_log(&mut log, writer, &dir, &pack_job, selection, &facts, |_| {})
        })
        .await
        .map_err(|e| CoordinatorError::server("the pack writer")(e.into()))??;
        match &self.store {
            Some(store) => store.publish(&self.dir).await,
            None => Ok(()),
        }
    }

    /// Stops serving: health NOT_SERVING first, then the servers, waiting a
    /// bounded time for them to close.
    pub async fn stop(self) {
        self.maintenance.abort();
        self.own_runs.abort();
        self.health
            .set_not_serving::<CoordinatorServer<CoordinatorService>>()
            .await;
        self.stop_server.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(5), self.server).await;
        if let Some(store) = self.store {
            store.release().await;
        }
    }
}

/// Writes the pack from the commit log: one pass over it, each seed of the
/// selection taking the record its verdict names.
pub(crate) fn write_from_log(
    log: &mut CommitLog,
    mut writer: PackWriter,
    dir: &PackDir,
    job: &Job,
    mut selection: Selection,
    facts: &RunFacts,
    mut each: impl FnMut(&mut SeedRecord),
) -> Result<(), CoordinatorError> {
    writer.expect(job.count, selection.seeds().saturating_sub(job.count));
    let mut failed = None;
    log.take_entries(job, |entry| {
        if failed.is_some() {
            return;
        }
        if let Entry::Result(r) = entry
            && let Some(mut r) = selection.take(r)
            && let Err(e) = {
                each(&mut r);
                writer.add(r)
            }
        {
            failed = Some(e);
        }
    })?;
    if let Some(e) = failed {
        return Err(e.into());
    }
    let missing = selection.missing();
    if let Some(seed) = missing.first() {
        return Err(ResumeError::Unrecorded {
            commit: dir.commit(),
            count: missing.len(),
            first: *seed,
        }
        .into());
    }
    // The verdicts (12 bytes a seed tried) are not needed to finish: their
    // memory goes to the sorts' merges and the files instead.
    drop(selection);
    writer.finish(facts)?;
    Ok(())
}

/// A pack whose `_SUCCESS` exists and whose manifest names this job.
fn is_complete_pack(dir: &PackDir, job: &Job) -> bool {
    dir.is_complete() && dir.read_manifest().is_ok_and(|m| m.job_id == job.id())
}
