//! The pregen worker: connects to a coordinator, leases seed ranges, runs every
//! seed on a rayon pool under its budget, and streams each result back as soon
//! as it is ready.
//!
//! Main items: [`WorkerConfig`] and [`run_worker`]. CPU work never runs on
//! tokio's threads: granted leases go to a feed whose seeds the rayon pool
//! draws one at a time, in grant order, and results come back through a
//! bounded channel. On shutdown (the token is cancelled, e.g. by
//! SIGTERM) the worker stops starting seeds, finishes the ones in progress,
//! returns its unfinished leases and closes its session.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use pregen_games::{Budget, GameKind, Outcome, Rejection};
use pregen_proto::v1::coordinator_client::CoordinatorClient;
use pregen_proto::v1::coordinator_message::Kind as In;
use pregen_proto::v1::worker_message::Kind as Out;
use pregen_proto::v1::{
    Heartbeat, Hello, LeaseDone, LeaseGrant, LeaseRequest, LeaseReturn, Level, Results, SeedResult,
    WorkerMessage, seed_result,
};
use pregen_proto::{AUTH_HEADER, PROTOCOL_VERSION};
use rayon::prelude::*;
use tokio::sync::{Notify, mpsc};
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::CancellationToken;
use tonic::metadata::MetadataValue;
use tonic::transport::{Certificate, ClientTlsConfig, Endpoint};
use tonic::{Code, Request, Status};

/// How a worker runs.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// Coordinator URL, e.g. `http://127.0.0.1:50051`.
    pub coordinator: String,
    /// The shared token.
    pub token: String,
    /// Threads for candidates (rayon pool size).
    pub threads: usize,
    /// Name reported to the coordinator (stored in the `worker` column).
    pub name: String,
    /// Leases kept waiting beyond those the pool is working on: a new one is
    /// asked for whenever a lease starts, so the pool never waits for a grant.
    pub leases_ahead: usize,
    /// Give up when the coordinator cannot be reached for this long.
    pub connect_timeout: Duration,
    /// For an `https://` coordinator: a CA certificate (PEM) to trust besides
    /// the system's roots, e.g. a cluster's own CA.
    pub tls_ca: Option<Vec<u8>>,
}

impl WorkerConfig {
    /// Defaults: all cores, one lease ahead, a 60 s connect timeout.
    pub fn new(coordinator: impl Into<String>, token: impl Into<String>) -> Self {
        Self {
            coordinator: coordinator.into(),
            token: token.into(),
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            name: default_name(),
            leases_ahead: 1,
            connect_timeout: Duration::from_secs(60),
            tls_ca: None,
        }
    }
}

/// `host-pid`.
pub fn default_name() -> String {
    let host = std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "worker".into());
    format!("{host}-{}", std::process::id())
}

/// Why a worker stopped with an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorkerError {
    /// The coordinator URL is malformed.
    #[error("bad coordinator address `{0}`: {1}")]
    Address(String, String),
    /// The coordinator could not be reached in time.
    #[error("cannot reach the coordinator at {0} within {1:?}: {2}")]
    Unreachable(String, Duration, String),
    /// The coordinator refused the worker (token, version, protocol).
    #[error("coordinator refused this worker: {0}")]
    Refused(String),
    /// The job cannot run here.
    #[error("cannot run the job: {0}")]
    Job(String),
}

/// What a worker did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WorkerReport {
    /// Results sent.
    pub results: u64,
    /// Leases finished.
    pub leases: u64,
    /// Sessions opened (1 unless the connection was lost).
    pub sessions: u64,
    /// Sessions the coordinator answered with Welcome.
    pub welcomed: u64,
    /// Whether the worker stopped because of shutdown rather than job end.
    pub drained: bool,
}

/// Runs until the job is finished or `shutdown` is cancelled. Lost connections
/// are retried with exponential backoff; refusals (token, versions) are not.
pub async fn run_worker(
    config: WorkerConfig,
    shutdown: CancellationToken,
) -> Result<WorkerReport, WorkerError> {
    let endpoint = endpoint(&config)?;
    let pool = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(config.threads.max(1))
            .thread_name(|i| format!("pregen-worker-{i}"))
            .build()
            .map_err(|e| {
                WorkerError::Job(format!("cannot start {} threads: {e}", config.threads))
            })?,
    );
    let mut report = WorkerReport::default();
    let mut backoff = Duration::from_millis(50);
    let mut unreachable_since: Option<Instant> = None;
    loop {
        if shutdown.is_cancelled() {
            report.drained = true;
            return Ok(report);
        }
        let error = match endpoint.connect().await {
            Ok(channel) => {
                report.sessions += 1;
                let welcomed = report.welcomed;
                match run_session(&config, channel, &pool, &shutdown, &mut report).await {
                    Ok(()) => return Ok(report),
                    Err(SessionEnd::Refused(msg)) => return Err(WorkerError::Refused(msg)),
                    Err(SessionEnd::Job(msg)) => return Err(WorkerError::Job(msg)),
                    Err(SessionEnd::Lost(msg)) => {
                        // A session that got going resets the backoff; one
                        // that never got a Welcome (say, plain gRPC to a TLS
                        // port) counts as the coordinator being unreachable.
                        if report.welcomed > welcomed {
                            backoff = Duration::from_millis(50);
                            unreachable_since = None;
                        }
                        msg
                    }
                }
            }
            Err(e) => with_causes(&e),
        };
        let since = *unreachable_since.get_or_insert_with(Instant::now);
        if since.elapsed() >= config.connect_timeout {
            return Err(WorkerError::Unreachable(
                config.coordinator.clone(),
                config.connect_timeout,
                error,
            ));
        }
        tracing::info!(error, retry_in = ?backoff, "coordinator unreachable; retrying");
        tokio::select! {
            _ = tokio::time::sleep(backoff) => {}
            _ = shutdown.cancelled() => {}
        }
        backoff = (backoff * 2).min(Duration::from_secs(2));
    }
}

/// An error and the errors beneath it, e.g. `transport error: invalid peer
/// certificate: UnknownIssuer`.
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(e) = source {
        let cause = e.to_string();
        if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
        source = e.source();
    }
    text
}

/// The coordinator's endpoint: plain for `http://`, TLS for `https://` (the
/// system's roots plus `tls_ca`).
fn endpoint(config: &WorkerConfig) -> Result<Endpoint, WorkerError> {
    let address =
        |e: &dyn std::fmt::Display| WorkerError::Address(config.coordinator.clone(), e.to_string());
    let endpoint = Endpoint::from_shared(config.coordinator.clone())
        .map_err(|e| address(&e))?
        .connect_timeout(Duration::from_secs(5))
        .tcp_nodelay(true);
    if !config.coordinator.starts_with("https://") {
        if config.tls_ca.is_some() {
            return Err(address(&"a TLS CA was given but the URL is not https://"));
        }
        return Ok(endpoint);
    }
    let mut tls = ClientTlsConfig::new().with_native_roots();
    if let Some(pem) = &config.tls_ca {
        tls = tls.ca_certificate(Certificate::from_pem(pem));
    }
    endpoint.tls_config(tls).map_err(|e| address(&e))
}

enum SessionEnd {
    Refused(String),
    Job(String),
    Lost(String),
}

impl From<Status> for SessionEnd {
    fn from(s: Status) -> Self {
        match s.code() {
            Code::Unauthenticated
            | Code::PermissionDenied
            | Code::FailedPrecondition
            | Code::InvalidArgument => {
                SessionEnd::Refused(format!("{}: {}", code_name(s.code()), s.message()))
            }
            _ => SessionEnd::Lost(s.message().to_string()),
        }
    }
}

fn code_name(code: Code) -> &'static str {
    match code {
        Code::Unauthenticated => "unauthenticated",
        Code::PermissionDenied => "permission denied",
        Code::FailedPrecondition => "failed precondition",
        Code::InvalidArgument => "invalid argument",
        _ => "error",
    }
}

/// Results ready on the pool are sent together at most this often.
const GATHER: Duration = Duration::from_millis(10);

/// Results sent in one message at most, well under the transport's message limit.
const MAX_BATCH: usize = 256;

/// Events from the rayon pool back to the session loop.
enum Event {
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
struct Events {
    tx: mpsc::Sender<Event>,
    urgent: Arc<Notify>,
}

impl Events {
    /// Sends from a pool thread. A closed channel means the session is gone
    /// (its leases are re-issued), so the event is dropped.
    fn send(&self, event: Event) {
        let urgent = !matches!(event, Event::Result(_));
        let _ = self.tx.blocking_send(event);
        if urgent {
            self.urgent.notify_one();
        }
    }
}

/// Cancels a session's rayon work when the session ends, however it ends.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

struct JobRun {
    game: GameKind,
    /// Params per stratum.
    strata: Vec<Arc<serde_json::Value>>,
    max_nodes: u64,
    watchdog: Duration,
}

async fn run_session(
    config: &WorkerConfig,
    channel: tonic::transport::Channel,
    pool: &Arc<rayon::ThreadPool>,
    shutdown: &CancellationToken,
    report: &mut WorkerReport,
) -> Result<(), SessionEnd> {
    let bearer: MetadataValue<_> = format!("Bearer {}", config.token).parse().map_err(|_| {
        SessionEnd::Refused("the token has characters a header cannot carry".into())
    })?;
    let mut client = CoordinatorClient::with_interceptor(channel, move |mut req: Request<()>| {
        req.metadata_mut().insert(AUTH_HEADER, bearer.clone());
        Ok(req)
    });
    let (out, out_rx) = mpsc::channel::<WorkerMessage>(1024);
    let send = |kind: Out| {
        let out = out.clone();
        async move {
            out.send(WorkerMessage { kind: Some(kind) })
                .await
                .map_err(|_| SessionEnd::Lost("stream closed".into()))
        }
    };
    send(Out::Hello(Hello {
        protocol_version: PROTOCOL_VERSION,
        generator_version: pregen_games::GENERATOR_VERSION.to_string(),
        worker_name: config.name.clone(),
        threads: config.threads as u32,
    }))
    .await?;
    let mut inbound = client
        .session(ReceiverStream::new(out_rx))
        .await?
        .into_inner();
    let welcome = match inbound.message().await?.and_then(|m| m.kind) {
        Some(In::Welcome(w)) => {
            report.welcomed += 1;
            w
        }
        _ => {
            return Err(SessionEnd::Lost(
                "the coordinator did not answer Hello with Welcome".into(),
            ));
        }
    };
    let spec = welcome
        .job
        .ok_or_else(|| SessionEnd::Job("Welcome carries no job".into()))?;
    let game = GameKind::from_name(&spec.game).map_err(|e| SessionEnd::Job(e.to_string()))?;
    let mut strata = Vec::new();
    for text in &spec.params_json {
        let params: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| SessionEnd::Job(format!("params are not JSON: {e}")))?;
        game.validate_params(&params)
            .map_err(|e| SessionEnd::Job(e.to_string()))?;
        strata.push(Arc::new(params));
    }
    let job = Arc::new(JobRun {
        game,
        strata,
        max_nodes: spec.max_nodes,
        watchdog: Duration::from_millis(spec.watchdog_ms),
    });
    tracing::info!(
        worker = welcome.worker_id,
        job = spec.job_id,
        game = spec.game,
        "session open"
    );

    let result = session_loop(
        config,
        pool,
        shutdown,
        report,
        job,
        &out,
        &mut inbound,
        welcome.lease_ttl_ms,
    )
    .await;
    if let Err(SessionEnd::Lost(_)) = &result {
        // The coordinator may have finished the job and closed the session while
        // this worker was still sending: look for its Finished before reconnecting.
        while let Ok(Ok(Some(message))) =
            tokio::time::timeout(Duration::from_secs(1), inbound.message()).await
        {
            if matches!(message.kind, Some(In::Finished(_))) {
                return Ok(());
            }
        }
    }
    result
}

#[allow(clippy::too_many_arguments)]
async fn session_loop(
    config: &WorkerConfig,
    pool: &Arc<rayon::ThreadPool>,
    shutdown: &CancellationToken,
    report: &mut WorkerReport,
    job: Arc<JobRun>,
    out: &mpsc::Sender<WorkerMessage>,
    inbound: &mut tonic::Streaming<pregen_proto::v1::CoordinatorMessage>,
    lease_ttl_ms: u64,
) -> Result<(), SessionEnd> {
    let send = |kind: Out| {
        let out = out.clone();
        async move {
            out.send(WorkerMessage { kind: Some(kind) })
                .await
                .map_err(|_| SessionEnd::Lost("stream closed".into()))
        }
    };
    let cancel = Arc::new(AtomicBool::new(false));
    let _guard = CancelOnDrop(cancel.clone());
    let (tx, mut events_rx) = mpsc::channel::<Event>(4096);
    let events = Events {
        tx,
        urgent: Arc::new(Notify::new()),
    };
    // Grants go to the feed, which a thread of its own runs on the pool.
    let (feed, leases) = std::sync::mpsc::channel::<LeaseGrant>();
    {
        let (pool, job, cancel, events) =
            (pool.clone(), job.clone(), cancel.clone(), events.clone());
        std::thread::Builder::new()
            .name("pregen-feed".into())
            .spawn(move || run_feed(pool, job, leases, cancel, events))
            .map_err(|e| SessionEnd::Job(format!("cannot start the feed thread: {e}")))?;
    }
    let mut heartbeat = tokio::time::interval(Duration::from_millis((lease_ttl_ms / 3).max(100)));
    let gate = tokio::time::sleep(Duration::ZERO);
    tokio::pin!(gate);
    let mut gate_open = true;
    let mut in_flight = 0usize;
    let mut draining = false;
    for _ in 0..config.leases_ahead.max(1) {
        send(Out::LeaseRequest(LeaseRequest {})).await?;
    }
    loop {
        tokio::select! {
            message = inbound.message() => {
                let Some(kind) = message?.and_then(|m| m.kind) else {
                    return Err(SessionEnd::Lost("the coordinator closed the session".into()));
                };
                match kind {
                    In::Grant(grant) if draining => {
                        send(Out::LeaseReturn(LeaseReturn { lease_id: grant.lease_id })).await?;
                    }
                    In::Grant(grant) if grant.stratum as usize >= job.strata.len() => {
                        return Err(SessionEnd::Job(format!(
                            "lease {} names stratum {}; the job has {}",
                            grant.lease_id, grant.stratum, job.strata.len()
                        )));
                    }
                    In::Grant(grant) => {
                        in_flight += 1;
                        // The feed outlives the loop, so the channel is open.
                        let _ = feed.send(grant);
                    }
                    In::NoWork(wait) => {
                        let out = out.clone();
                        let delay = Duration::from_millis(wait.retry_after_ms.clamp(10, 10_000));
                        tokio::spawn(async move {
                            tokio::time::sleep(delay).await;
                            let _ = out.send(WorkerMessage { kind: Some(Out::LeaseRequest(LeaseRequest {})) }).await;
                        });
                    }
                    In::Finished(_) => return Ok(()),
                    In::Welcome(_) => return Err(SessionEnd::Lost("Welcome sent twice".into())),
                }
            }
            Some(first) = events_rx.recv(), if gate_open => {
                // A quiet worker sends at once; a busy one at most once per GATHER,
                // so the pool's threads are not interrupted for every result.
                gate_open = false;
                gate.as_mut().reset(tokio::time::Instant::now() + GATHER);
                let mut next = Some(first);
                while let Some(event) = next.take() {
                    match event {
                        Event::LeaseStarted => {
                            if !draining {
                                send(Out::LeaseRequest(LeaseRequest {})).await?;
                            }
                        }
                        Event::Result(result) => {
                            // Everything already waiting goes in one message, in
                            // order: a lease's end is sent after its results.
                            let mut results = vec![*result];
                            while results.len() < MAX_BATCH {
                                match events_rx.try_recv() {
                                    Ok(Event::Result(result)) => results.push(*result),
                                    Ok(other) => {
                                        next = Some(other);
                                        break;
                                    }
                                    Err(_) => break,
                                }
                            }
                            report.results += results.len() as u64;
                            send(Out::Results(Results { results })).await?;
                        }
                        Event::LeaseFinished { lease_id, complete } => {
                            in_flight -= 1;
                            if complete {
                                report.leases += 1;
                                send(Out::LeaseDone(LeaseDone { lease_id })).await?;
                            } else {
                                send(Out::LeaseReturn(LeaseReturn { lease_id })).await?;
                            }
                            if draining && in_flight == 0 {
                                report.drained = true;
                                return Ok(());
                            }
                        }
                    }
                    if next.is_none() {
                        next = events_rx.try_recv().ok();
                    }
                }
            }
            () = &mut gate, if !gate_open => gate_open = true,
            () = events.urgent.notified(), if !gate_open => gate_open = true,
            _ = heartbeat.tick() => send(Out::Heartbeat(Heartbeat {})).await?,
            _ = shutdown.cancelled(), if !draining => {
                tracing::info!(in_flight, "draining: finishing seeds in progress, returning leases");
                draining = true;
                cancel.store(true, Ordering::Relaxed);
                if in_flight == 0 {
                    report.drained = true;
                    return Ok(());
                }
            }
        }
    }
}

/// A lease as the feed hands it out: its seeds are counted down as they finish.
struct FedLease {
    grant: LeaseGrant,
    left: AtomicU64,
}

/// The seeds of the session's leases, in grant order, one at a time: the
/// pool's threads draw from it (`par_bridge`), so a thread that finishes a
/// seed takes the next one, from the next lease if need be. No thread waits
/// at a lease's end, and leases never nest on a thread's stack.
struct Feed {
    leases: std::sync::mpsc::Receiver<LeaseGrant>,
    current: Option<(Arc<FedLease>, u64)>,
    events: Events,
}

impl Iterator for Feed {
    type Item = (Arc<FedLease>, u64);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some((lease, next)) = &mut self.current {
                let end = lease
                    .grant
                    .first_seed
                    .saturating_add(lease.grant.seed_count);
                if *next < end {
                    let seed = *next;
                    *next += 1;
                    return Some((lease.clone(), seed));
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
fn run_feed(
    pool: Arc<rayon::ThreadPool>,
    job: Arc<JobRun>,
    leases: std::sync::mpsc::Receiver<LeaseGrant>,
    cancel: Arc<AtomicBool>,
    events: Events,
) {
    let feed = Feed {
        leases,
        current: None,
        events: events.clone(),
    };
    pool.install(|| {
        feed.par_bridge().for_each(|(lease, seed)| {
            if !cancel.load(Ordering::Relaxed) {
                let result = run_seed(&job, lease.grant.lease_id, lease.grant.stratum, seed);
                events.send(Event::Result(Box::new(result)));
            }
            if lease.left.fetch_sub(1, Ordering::AcqRel) == 1 {
                events.send(Event::LeaseFinished {
                    lease_id: lease.grant.lease_id,
                    complete: !cancel.load(Ordering::Relaxed),
                });
            }
        });
    });
}

/// Runs one seed under its budget and converts the outcome for the wire.
pub fn run_seed_outcome(
    game: GameKind,
    params: &serde_json::Value,
    seed: u64,
    max_nodes: u64,
    watchdog: Duration,
) -> Outcome {
    let budget = Budget {
        max_nodes,
        deadline: Some(Instant::now() + watchdog),
    };
    game.run(params, seed, &budget)
}

fn run_seed(job: &JobRun, lease_id: u64, stratum: u32, seed: u64) -> SeedResult {
    let params = &job.strata[stratum as usize];
    let outcome = run_seed_outcome(job.game, params, seed, job.max_nodes, job.watchdog);
    let (status, reason, level) = match outcome.result {
        Ok(c) => (
            seed_result::Status::Accepted,
            String::new(),
            Some(Level {
                difficulty: c.difficulty,
                moves: c.moves,
                moves_optimal: c.moves_optimal,
                layout: c.layout,
                level_json: c.level_json,
                solution: c.solution,
                metrics: c.metrics.into_iter().collect(),
                level_hash: c.level_hash,
                canonical: c.canonical.unwrap_or_default(),
            }),
        ),
        Err(r) => {
            let status = match r {
                Rejection::Unsolvable => seed_result::Status::Unsolvable,
                Rejection::Timeout => seed_result::Status::Timeout,
                Rejection::Rejected(_) => seed_result::Status::Rejected,
                Rejection::Error(_) => seed_result::Status::Error,
            };
            (status, r.reason().to_string(), None)
        }
    };
    SeedResult {
        lease_id,
        seed,
        status: status as i32,
        reason,
        level,
        generate_ms: outcome.generate_ms,
        solve_ms: outcome.solve_ms,
        nodes: outcome.nodes,
    }
}
