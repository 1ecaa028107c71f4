//! The load client: many light sessions, each on its own connection, that
//! run their leases' seeds inline and send the results back as fast as the
//! coordinator takes them. It speaks the worker protocol exactly (Hello,
//! leases, results, lease ends, heartbeats: the worker's own session machine,
//! [`crate::protocol`]), so the coordinator cannot tell
//! it from a fleet of real workers; it is meant for the `synthetic` game at
//! (near) zero cost per seed, where the coordinator is the bottleneck.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use pregen_games::{Budget, PreparedGame};
use pregen_proto::v1::coordinator_message::Kind as In;
use pregen_proto::v1::worker_message::Kind as Out;
use pregen_proto::v1::{CoordinatorMessage, LeaseRequest, SeedResult, WorkerMessage};
use tokio::sync::mpsc;

use crate::WorkerConfig;
use crate::connect::endpoint;
use crate::error::{SessionError, WorkerError};
use crate::protocol::{Action, Input, Session};
use crate::session::{Opened, hello, open, send_on};

/// Results per message, as a real worker's largest batch.
const BATCH: u64 = 256;

/// How a load run connects.
#[derive(Debug, Clone)]
pub struct LoadConfig {
    /// Coordinator URL, e.g. `http://127.0.0.1:50051`.
    pub coordinator: String,
    /// The shared token.
    pub token: String,
    /// Sessions, each on a connection of its own.
    pub sessions: usize,
    /// Leases each session keeps asked for beyond the one it works on.
    pub leases_ahead: usize,
}

/// What a load run did.
#[derive(Debug, Clone, Default)]
pub struct LoadReport {
    /// Results sent.
    pub results: u64,
    /// Leases finished.
    pub leases: u64,
    /// When every session had its Welcome, from the start.
    pub all_welcomed: Duration,
    /// When the first session was told the job is finished, from the start.
    pub first_finished: Option<Duration>,
}

/// Counters the sessions share.
#[derive(Default)]
struct Shared {
    results: AtomicU64,
    leases: AtomicU64,
    welcomed: AtomicU64,
    all_welcomed_us: AtomicU64,
    first_finished_us: AtomicU64,
}

/// Opens `config.sessions` sessions at once and runs each until the
/// coordinator says the job is finished. A session refused or lost is an
/// error: under load that is what the run must show.
pub async fn run_load(config: LoadConfig) -> Result<LoadReport, WorkerError> {
    let base = WorkerConfig::new(config.coordinator.clone(), config.token.clone());
    let endpoint = endpoint(&base)?;
    let shared = Arc::new(Shared::default());
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..config.sessions {
        let (endpoint, shared, config) = (endpoint.clone(), shared.clone(), config.clone());
        tasks.spawn(async move {
            let channel = endpoint
                .connect()
                .await
                .map_err(|e| WorkerError::Unreachable {
                    url: config.coordinator.clone(),
                    within: Duration::ZERO,
                    source: SessionError::Connect(e),
                })?;
            load_session(&config, channel, i, &shared, started)
                .await
                .map_err(|end| match end.into_worker_error() {
                    Ok(fatal) => fatal,
                    Err(lost) => WorkerError::Load {
                        index: i + 1,
                        source: lost,
                    },
                })
        });
    }
    while let Some(joined) = tasks.join_next().await {
        joined.map_err(WorkerError::Panicked)??;
    }
    let micros = |a: &AtomicU64| Duration::from_micros(a.load(Ordering::Relaxed));
    let first_finished = shared.first_finished_us.load(Ordering::Relaxed);
    Ok(LoadReport {
        results: shared.results.load(Ordering::Relaxed),
        leases: shared.leases.load(Ordering::Relaxed),
        all_welcomed: micros(&shared.all_welcomed_us),
        first_finished: (first_finished > 0).then(|| Duration::from_micros(first_finished)),
    })
}

async fn load_session(
    config: &LoadConfig,
    channel: tonic::transport::Channel,
    index: usize,
    shared: &Shared,
    started: Instant,
) -> Result<(), SessionError> {
    let (out, out_rx) = mpsc::channel::<WorkerMessage>(64);
    let hello = hello(format!("load-{}", index + 1), 1, String::new());
    let Opened {
        mut inbound,
        welcome,
        spec,
        strata,
    } = open(channel, &config.token, hello, None, &out, out_rx).await?;
    let since_start = || started.elapsed().as_micros() as u64;
    if shared.welcomed.fetch_add(1, Ordering::Relaxed) + 1 == config.sessions as u64 {
        shared
            .all_welcomed_us
            .store(since_start(), Ordering::Relaxed);
    }
    let budget = Budget::nodes(spec.max_nodes);
    let result = lease_loop(
        &mut inbound,
        &out,
        &strata,
        &budget,
        (welcome.lease_ttl_ms, config.leases_ahead + 1),
        shared,
    )
    .await;
    let finished = match result {
        Ok(()) => true,
        // The coordinator may have finished the job and closed the session
        // while this one was still sending: its Finished may be waiting.
        Err(ref end) if end.is_lost() => finished_after_loss(&mut inbound).await,
        Err(end) => return Err(end),
    };
    if !finished {
        return result;
    }
    let _ = shared.first_finished_us.compare_exchange(
        0,
        since_start().max(1),
        Ordering::Relaxed,
        Ordering::Relaxed,
    );
    Ok(())
}

/// Whether a Finished comes within a second on a session that was lost.
async fn finished_after_loss(inbound: &mut tonic::Streaming<CoordinatorMessage>) -> bool {
    while let Ok(Ok(Some(message))) =
        tokio::time::timeout(Duration::from_secs(1), inbound.message()).await
    {
        if matches!(message.kind, Some(In::Finished(_))) {
            return true;
        }
    }
    false
}

/// Takes leases, runs their seeds inline and sends the results until
/// Finished: the session machine ([`crate::protocol`]) says what to send.
async fn lease_loop(
    inbound: &mut tonic::Streaming<CoordinatorMessage>,
    out: &mpsc::Sender<WorkerMessage>,
    strata: &[PreparedGame],
    budget: &Budget,
    (lease_ttl_ms, requests): (u64, usize),
    shared: &Shared,
) -> Result<(), SessionError> {
    let mut state = Session::new(strata.len());
    let mut heartbeat = tokio::time::interval(Duration::from_millis((lease_ttl_ms / 3).max(100)));
    let mut actions = state.start(requests);
    loop {
        for action in std::mem::take(&mut actions) {
            match action {
                Action::Send(kind) => send(out, kind, shared).await?,
                Action::Run(grant) => {
                    // The machine checked the stratum.
                    let Some(game) = strata.get(grant.stratum as usize) else {
                        continue;
                    };
                    let end = grant.first_seed.saturating_add(grant.seed_count);
                    let mut next = grant.first_seed;
                    while next < end {
                        let stop = next.saturating_add(BATCH).min(end);
                        let results = run_seeds(game, grant.lease_id, next..stop, budget);
                        next = stop;
                        actions.extend(state.on(Input::Results(results)));
                        for action in std::mem::take(&mut actions) {
                            if let Action::Send(kind) = action {
                                send(out, kind, shared).await?;
                            }
                        }
                    }
                    actions.extend(state.on(Input::LeaseFinished {
                        lease_id: grant.lease_id,
                        complete: true,
                    }));
                    actions.extend(state.on(Input::LeaseStarted));
                }
                Action::RequestAfter(delay) => {
                    tokio::time::sleep(delay).await;
                    send(out, Out::LeaseRequest(LeaseRequest {}), shared).await?;
                }
                Action::StopRunning => {}
                Action::End(ending) => return ending.into_result(),
            }
        }
        if !actions.is_empty() {
            continue;
        }
        let input = tokio::select! {
            message = inbound.message() => match message?.and_then(|m| m.kind) {
                Some(kind) => Input::Message(kind),
                None => Input::Closed,
            },
            _ = heartbeat.tick() => Input::Heartbeat,
        };
        actions = state.on(input);
    }
}

/// Sends one message, counting results and finished leases.
async fn send(
    out: &mpsc::Sender<WorkerMessage>,
    kind: Out,
    shared: &Shared,
) -> Result<(), SessionError> {
    match &kind {
        Out::Results(r) => {
            shared
                .results
                .fetch_add(r.results.len() as u64, Ordering::Relaxed);
        }
        Out::LeaseDone(_) => {
            shared.leases.fetch_add(1, Ordering::Relaxed);
        }
        _ => {}
    }
    send_on(out, kind).await
}

/// The results of `seeds` of lease `lease_id`, run inline in turn.
fn run_seeds(
    game: &PreparedGame,
    lease_id: u64,
    seeds: std::ops::Range<u64>,
    budget: &Budget,
) -> Vec<SeedResult> {
    seeds
        .map(|seed| SeedResult::from_outcome(lease_id, seed, game.run(seed, budget)))
        .collect()
}
