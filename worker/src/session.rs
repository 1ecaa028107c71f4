//! One worker session: Hello and Welcome, then the session machine
//! ([`crate::protocol`]) driven by the coordinator's messages, the pool's
//! results (batched), heartbeats and the drain on shutdown.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use std::path::PathBuf;

use pregen_games::external::{ProgramSpec, identity};
use pregen_games::{GameKind, PreparedGame};
use pregen_proto::v1::coordinator_client::CoordinatorClient;
use pregen_proto::v1::coordinator_message::Kind as In;
use pregen_proto::v1::worker_message::Kind as Out;
use pregen_proto::v1::{
    CoordinatorMessage, ExternalProgram, Hello, JobSpec, LeaseGrant, LeaseRequest, Welcome,
    WorkerMessage,
};
use pregen_proto::{AUTH_HEADER, PROTOCOL_VERSION};
use tokio::sync::{Notify, mpsc};
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::CancellationToken;
use tonic::Request;
use tonic::metadata::MetadataValue;

use crate::error::SessionError;
use crate::feed::{CancelOnDrop, Event, Events, JobRun, run_feed};
use crate::protocol::{Action, Ending, Input, Session};
use crate::{WorkerConfig, WorkerReport};

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
) -> Result<(), SessionError> {
    let (out, out_rx) = mpsc::channel::<WorkerMessage>(1024);
    let hello = hello(config.name.clone(), config.threads as u32, key.clone());
    let Opened {
        mut inbound,
        welcome,
        spec,
        strata,
    } = open(
        channel,
        &config.token,
        hello,
        config.program_dir.clone(),
        &out,
        out_rx,
    )
    .await?;
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
    if result.as_ref().is_err_and(SessionError::is_lost) {
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
/// the Welcome and prepares the job's params, once per stratum (a game
/// program is found in `program_dir`, else where the job says, and held to
/// the job's identity). What the session sends goes through `out`, whose
/// receiving end is `out_rx`.
pub(crate) async fn open(
    channel: tonic::transport::Channel,
    token: &str,
    hello: Hello,
    program_dir: Option<PathBuf>,
    out: &mpsc::Sender<WorkerMessage>,
    out_rx: mpsc::Receiver<WorkerMessage>,
) -> Result<Opened, SessionError> {
    let bearer: MetadataValue<_> = format!("Bearer {token}")
        .parse()
        .map_err(SessionError::Token)?;
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
        return Err(SessionError::Lost(
            "the coordinator did not answer Hello with Welcome".into(),
        ));
    };
    let spec = welcome
        .job
        .clone()
        .ok_or_else(|| SessionError::Job("Welcome carries no job".into()))?;
    // Preparing may start a game program and wait for it: off the runtime.
    let job = spec.clone();
    let strata = tokio::task::spawn_blocking(move || prepare(&job, program_dir))
        .await
        .map_err(|e| SessionError::Job(format!("preparing the job failed: {e}")))??;
    Ok(Opened {
        inbound,
        welcome,
        spec,
        strata,
    })
}

/// The job's game with each stratum's params.
fn prepare(
    spec: &JobSpec,
    program_dir: Option<PathBuf>,
) -> Result<Vec<PreparedGame>, SessionError> {
    let game = match &spec.external {
        Some(program) if spec.game == "external" => external_game(program, program_dir)?,
        _ => GameKind::from_name(&spec.game)?,
    };
    spec.params_json
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let params: serde_json::Value =
                serde_json::from_str(text).map_err(SessionError::Params)?;
            let band = spec
                .bands
                .get(i)
                .filter(|b| b.min.is_some() || b.max.is_some())
                .map(|b| pregen_games::rating::Band {
                    min: b.min,
                    max: b.max,
                });
            Ok(game.prepare(&params)?.with_band(band))
        })
        .collect()
}

/// The job's game program as this worker has it: in `program_dir` when
/// given, else in the job's folder; refused unless its files hash to the
/// job's identity and it describes itself by the job's name and version.
fn external_game(
    job: &ExternalProgram,
    program_dir: Option<PathBuf>,
) -> Result<GameKind, SessionError> {
    let spec = ProgramSpec {
        command: job.command.clone(),
        dir: program_dir.unwrap_or_else(|| PathBuf::from(&job.dir)),
        files: job.files.clone(),
    };
    let here = identity(&spec)?;
    if here != job.identity {
        return Err(SessionError::Job(format!(
            "the game program in {} is {here}, the job's is {}: install the job's program \
             there, or give --program-dir",
            spec.dir.display(),
            job.identity
        )));
    }
    let game = GameKind::external(&spec)?;
    let said = game
        .description()
        .map(|d| (d.name.as_str(), d.version.as_str()))
        .unwrap_or_default();
    if said != (job.name.as_str(), job.version.as_str()) {
        return Err(SessionError::Job(format!(
            "the game program says it is {} {}, the job's is {} {}",
            said.0, said.1, job.name, job.version
        )));
    }
    Ok(game)
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
) -> Result<(), SessionError> {
    let mut state = Session::new(job.strata.len());
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
            .map_err(SessionError::Thread)?;
    }
    let mut act = Actor {
        out,
        feed: &feed,
        cancel: &cancel,
        report,
    };
    let mut heartbeat = tokio::time::interval(Duration::from_millis((lease_ttl_ms / 3).max(100)));
    let gate = tokio::time::sleep(Duration::ZERO);
    tokio::pin!(gate);
    let mut gate_open = true;
    if let Some(end) = act.perform(state.start(config.leases_ahead.max(1))).await? {
        return end;
    }
    loop {
        let input = tokio::select! {
            message = inbound.message() => match message?.and_then(|m| m.kind) {
                Some(kind) => Input::Message(kind),
                None => Input::Closed,
            },
            Some(first) = events_rx.recv(), if gate_open => {
                // A quiet worker sends at once; a busy one at most once per GATHER,
                // so the pool's threads are not interrupted for every result.
                gate_open = false;
                gate.as_mut().reset(tokio::time::Instant::now() + GATHER);
                let mut next = Some(first);
                while let Some(event) = next.take() {
                    let (input, after) = gather(event, &mut events_rx);
                    if let Some(end) = act.perform(state.on(input)).await? {
                        return end;
                    }
                    next = after.or_else(|| events_rx.try_recv().ok());
                }
                continue;
            }
            () = &mut gate, if !gate_open => {
                gate_open = true;
                continue;
            }
            () = events.urgent.notified(), if !gate_open => {
                gate_open = true;
                continue;
            }
            _ = heartbeat.tick() => Input::Heartbeat,
            _ = shutdown.cancelled(), if !state.draining() => {
                tracing::info!(
                    in_flight = state.in_flight(),
                    "draining: finishing seeds in progress, returning leases"
                );
                Input::Shutdown
            }
        };
        if let Some(end) = act.perform(state.on(input)).await? {
            return end;
        }
    }
}

/// The machine's input for `event`: a result gathered with every result
/// already waiting behind it (up to [`MAX_BATCH`], in order: a lease's end is
/// sent after its results), and the event that stopped the gathering.
fn gather(event: Event, events: &mut mpsc::Receiver<Event>) -> (Input, Option<Event>) {
    let result = match event {
        Event::LeaseStarted => return (Input::LeaseStarted, None),
        Event::LeaseFinished { lease_id, complete } => {
            return (Input::LeaseFinished { lease_id, complete }, None);
        }
        Event::Result(result) => result,
    };
    let mut results = Vec::with_capacity((events.len() + 1).min(MAX_BATCH));
    results.push(*result);
    while results.len() < MAX_BATCH {
        match events.try_recv() {
            Ok(Event::Result(result)) => results.push(*result),
            Ok(other) => return (Input::Results(results), Some(other)),
            Err(_) => break,
        }
    }
    (Input::Results(results), None)
}

/// Carries out the session machine's actions for the real worker: seeds go
/// to the feed (the pool), messages to the coordinator.
struct Actor<'a> {
    out: &'a mpsc::Sender<WorkerMessage>,
    feed: &'a std::sync::mpsc::Sender<LeaseGrant>,
    cancel: &'a AtomicBool,
    report: &'a mut WorkerReport,
}

impl Actor<'_> {
    /// Performs `actions` in order; the session's result once one ends it.
    async fn perform(
        &mut self,
        actions: Vec<Action>,
    ) -> Result<Option<Result<(), SessionError>>, SessionError> {
        for action in actions {
            match action {
                Action::Send(kind) => {
                    match &kind {
                        Out::Results(r) => self.report.results += r.results.len() as u64,
                        Out::LeaseDone(_) => self.report.leases += 1,
                        _ => {}
                    }
                    send_on(self.out, kind).await?;
                }
                Action::Run(grant) => {
                    // The feed outlives the loop, so the channel is open.
                    let _ = self.feed.send(grant);
                }
                Action::RequestAfter(delay) => {
                    let out = self.out.clone();
                    tokio::spawn(async move {
                        tokio::time::sleep(delay).await;
                        let _ = out
                            .send(WorkerMessage {
                                kind: Some(Out::LeaseRequest(LeaseRequest {})),
                            })
                            .await;
                    });
                }
                Action::StopRunning => self.cancel.store(true, Ordering::Relaxed),
                Action::End(ending) => {
                    self.report.drained |= ending == Ending::Drained;
                    return Ok(Some(ending.into_result()));
                }
            }
        }
        Ok(None)
    }
}

/// Sends one message on the session's stream; a closed stream is a lost session.
pub(crate) async fn send_on(
    out: &mpsc::Sender<WorkerMessage>,
    kind: Out,
) -> Result<(), SessionError> {
    out.send(WorkerMessage { kind: Some(kind) })
        .await
        .map_err(|_| SessionError::Lost("stream closed".into()))
}

#[cfg(test)]
mod tests {
    use pregen_proto::v1::SeedResult;

    use super::*;

    fn result(seed: u64) -> Event {
        Event::Result(Box::new(SeedResult {
            seed,
            ..SeedResult::default()
        }))
    }

    fn seeds(input: &Input) -> Vec<u64> {
        match input {
            Input::Results(results) => results.iter().map(|r| r.seed).collect(),
            _ => Vec::new(),
        }
    }

    #[test]
    fn results_waiting_go_in_one_message_and_a_lease_end_after_them() {
        let (tx, mut rx) = mpsc::channel(16);
        for event in [
            result(2),
            result(3),
            Event::LeaseFinished {
                lease_id: 7,
                complete: true,
            },
            result(4),
        ] {
            tx.try_send(event).expect("room");
        }
        let (input, after) = gather(result(1), &mut rx);
        assert_eq!(seeds(&input), [1, 2, 3]);
        assert!(matches!(
            after,
            Some(Event::LeaseFinished {
                lease_id: 7,
                complete: true
            })
        ));
        let (input, after) = gather(Event::LeaseStarted, &mut rx);
        assert!(matches!(input, Input::LeaseStarted) && after.is_none());
        let (input, after) = gather(result(5), &mut rx);
        assert_eq!(seeds(&input), [5, 4]);
        assert!(after.is_none());
    }

    #[test]
    fn a_batch_stops_at_its_cap() {
        let (tx, mut rx) = mpsc::channel(2 * MAX_BATCH);
        for seed in 1..2 * MAX_BATCH as u64 {
            tx.try_send(result(seed)).expect("room");
        }
        let (input, _) = gather(result(0), &mut rx);
        assert_eq!(seeds(&input).len(), MAX_BATCH);
        assert_eq!(rx.len(), MAX_BATCH);
    }
}
