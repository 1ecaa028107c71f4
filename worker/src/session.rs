//! One worker session: Hello and Welcome, lease requests and grants, results
//! batched back from the pool, heartbeats, and the drain on shutdown.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use pregen_games::{GameKind, PreparedGame};
use pregen_proto::v1::coordinator_client::CoordinatorClient;
use pregen_proto::v1::coordinator_message::Kind as In;
use pregen_proto::v1::worker_message::Kind as Out;
use pregen_proto::v1::{
    CoordinatorMessage, Heartbeat, Hello, JobSpec, LeaseDone, LeaseGrant, LeaseRequest,
    LeaseReturn, Results, Welcome, WorkerMessage,
};
use pregen_proto::{AUTH_HEADER, PROTOCOL_VERSION};
use tokio::sync::{Notify, mpsc};
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::CancellationToken;
use tonic::metadata::MetadataValue;
use tonic::{Code, Request, Status};

use crate::feed::{CancelOnDrop, Event, Events, JobRun, run_feed};
use crate::{WorkerConfig, WorkerReport};

pub(crate) enum SessionEnd {
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
const GATHER: Duration = Duration::from_millis(50);

/// Results sent in one message at most, well under the transport's message limit.
const MAX_BATCH: usize = 256;

pub(crate) async fn run_session(
    config: &WorkerConfig,
    channel: tonic::transport::Channel,
    pool: &Arc<rayon::ThreadPool>,
    shutdown: &CancellationToken,
    report: &mut WorkerReport,
    key: &mut String,
) -> Result<(), SessionEnd> {
    let (out, out_rx) = mpsc::channel::<WorkerMessage>(1024);
    let hello = hello(config.name.clone(), config.threads as u32, key.clone());
    let Opened {
        mut inbound,
        welcome,
        spec,
        strata,
    } = open(channel, &config.token, hello, &out, out_rx).await?;
    report.welcomed += 1;
    key.clone_from(&welcome.worker_key);
    let job = Arc::new(JobRun {
        strata,
        max_nodes: spec.max_nodes,
        watchdog: Duration::from_millis(spec.watchdog_ms),
        slowdown: config.slowdown.max(1),
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

/// The Hello of a worker of this build named `name` with `threads` threads,
/// presenting the `key` of its last Welcome (empty on first contact).
pub(crate) fn hello(name: String, threads: u32, key: String) -> Hello {
    Hello {
        protocol_version: PROTOCOL_VERSION,
        generator_version: pregen_games::GENERATOR_VERSION.to_string(),
        worker_name: name,
        threads,
        worker_key: key,
    }
}

/// A session the coordinator welcomed, with the job's strata prepared.
pub(crate) struct Opened {
    pub(crate) inbound: tonic::Streaming<CoordinatorMessage>,
    pub(crate) welcome: Welcome,
    pub(crate) spec: JobSpec,
    pub(crate) strata: Vec<PreparedGame>,
}

/// Opens a session on `channel`: sends `hello` (with the token), waits for
/// the Welcome and prepares the job's params, once per stratum. What the
/// session sends goes through `out`, whose receiving end is `out_rx`.
pub(crate) async fn open(
    channel: tonic::transport::Channel,
    token: &str,
    hello: Hello,
    out: &mpsc::Sender<WorkerMessage>,
    out_rx: mpsc::Receiver<WorkerMessage>,
) -> Result<Opened, SessionEnd> {
    let bearer: MetadataValue<_> = format!("Bearer {token}").parse().map_err(|_| {
        SessionEnd::Refused("the token has characters a header cannot carry".into())
    })?;
    let mut client = CoordinatorClient::with_interceptor(channel, move |mut req: Request<()>| {
        req.metadata_mut().insert(AUTH_HEADER, bearer.clone());
        Ok(req)
    });
    send_on(out, Out::Hello(hello)).await?;
    let mut inbound = client
        .session(ReceiverStream::new(out_rx))
        .await?
        .into_inner();
    let Some(In::Welcome(welcome)) = inbound.message().await?.and_then(|m| m.kind) else {
        return Err(SessionEnd::Lost(
            "the coordinator did not answer Hello with Welcome".into(),
        ));
    };
    let spec = welcome
        .job
        .clone()
        .ok_or_else(|| SessionEnd::Job("Welcome carries no job".into()))?;
    let game = GameKind::from_name(&spec.game).map_err(|e| SessionEnd::Job(e.to_string()))?;
    let mut strata = Vec::new();
    for text in &spec.params_json {
        let params: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| SessionEnd::Job(format!("params are not JSON: {e}")))?;
        strata.push(
            game.prepare(&params)
                .map_err(|e| SessionEnd::Job(e.to_string()))?,
        );
    }
    Ok(Opened {
        inbound,
        welcome,
        spec,
        strata,
    })
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
    let send = |kind: Out| send_on(out, kind);
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
                            let mut results =
                                Vec::with_capacity((events_rx.len() + 1).min(MAX_BATCH));
                            results.push(*result);
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

/// Sends one message on the session's stream; a closed stream is a lost session.
pub(crate) async fn send_on(
    out: &mpsc::Sender<WorkerMessage>,
    kind: Out,
) -> Result<(), SessionEnd> {
    out.send(WorkerMessage { kind: Some(kind) })
        .await
        .map_err(|_| SessionEnd::Lost("stream closed".into()))
}
