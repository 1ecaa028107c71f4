//! The gRPC adapter: converts wire messages to domain calls on the
//! [`Scheduler`] and maps refusals to statuses. One task per worker session.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use pregen_games::rating::Model;
use pregen_games::{Budget, Candidate, CheckError, Outcome, PreparedGame};
use pregen_pack::{PackError, SeedRecord};
use pregen_proto::v1::coordinator_message::Kind as Out;
use pregen_proto::v1::coordinator_server::Coordinator;
use pregen_proto::v1::worker_message::Kind as In;
use pregen_proto::v1::{
    CoordinatorMessage, Finished, JobSpec, LeaseGrant, NoWork, SeedResult, Welcome, WorkerMessage,
};
use pregen_proto::{AUTH_HEADER, PROTOCOL_VERSION};
use tokio::sync::{Notify, Semaphore, mpsc, watch};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status, Streaming};

use crate::Job;
use crate::connections::Admission;
use crate::cross_check::COORDINATOR;
use crate::identity::Identities;
use crate::scheduler::{Grant, RecordError, Scheduler, SessionId};

/// State shared by every session and the coordinator's maintenance loop.
#[derive(Debug)]
pub struct Shared {
    /// What workers are told to run.
    spec: JobSpec,
    /// Per stratum, the game with its params: checks workers' levels.
    games: Arc<Vec<PreparedGame>>,
    /// Per stratum, the job's `[external] checker`, which checks workers'
    /// levels instead of the game when the job names one.
    checkers: Option<Arc<Vec<PreparedGame>>>,
    scheduler: Mutex<Scheduler>,
    next_session: AtomicU64,
    /// Sessions open now.
    connected: AtomicUsize,
    complete: watch::Sender<bool>,
    lease_ttl: Duration,
    /// Rung when the log writer should not wait for its next tick.
    pub(crate) flush_now: Notify,
    /// Rung after each write of the commit log.
    flushed: Notify,
    /// Rung after each batch is recorded: the coordinator's own runs may be
    /// due, at the tail at once (waiting for the next tick would hold the
    /// pack back).
    pub(crate) own_work: Notify,
    /// Batches checked at once: one per core, so a thousand sessions do not
    /// make a thousand blocking threads.
    checking: Semaphore,
    /// Issues and checks the workers' identities.
    identities: Identities,
    /// The job's rating model: every accepted level's difficulty is its
    /// rating of the level's metrics, whatever a worker said.
    model: Arc<Model>,
    /// The game's built-in model, which workers rate with: a worker's
    /// difficulty that is not its rating of the level's metrics is a lie.
    built_in: Arc<Model>,
}

/// `model`'s rating of a level's metrics and moves (a level without a
/// feature the model needs is an error naming the seed).
pub fn rating(
    model: &Model,
    seed: u64,
    level: &pregen_pack::record::LevelRecord,
) -> Result<f64, String> {
    model
        .rate(Model::features(&level.metrics, level.moves))
        .map_err(|e| format!("seed {seed}: {e}"))
}

/// Sets an accepted record's difficulty to `model`'s rating of it.
pub fn rate(model: &Model, record: &mut SeedRecord) -> Result<(), String> {
    if let Some(level) = record.level.as_mut() {
        level.difficulty = rating(model, record.seed, level)?;
    }
    Ok(())
}

/// Entries waiting for the commit log past which batches wait for a write:
/// what is received but not yet durable stays bounded, whatever the rate.
pub const MAX_UNFLUSHED: usize = 65_536;

impl Shared {
    /// Shared state for `job` over a (possibly resumed) scheduler.
    pub fn new(
        job: &Job,
        scheduler: Scheduler,
        lease_ttl: Duration,
    ) -> Result<Arc<Shared>, PackError> {
        let game = job.game_kind()?;
        let games = job
            .plan()
            .iter()
            .zip(job.run_bands())
            .map(|(p, band)| game.prepare(&p.params).map(|g| g.with_band(band)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| PackError::Job(e.to_string()))?;
        // An `[external] checker` judges the levels in the generator's place.
        let checkers = match job.checker_kind()? {
            Some(_) => Some(Arc::new(
                job.judging_strata()?
                    .into_iter()
                    .map(|(_, g)| g)
                    .collect::<Vec<_>>(),
            )),
            None => None,
        };
        let complete = scheduler.is_finished();
        let identities = Identities::new(scheduler.secret());
        let model = Arc::new(job.rating_model()?);
        let built_in = Arc::new(
            game.default_model()
                .map_err(|e| PackError::Job(e.to_string()))?,
        );
        Ok(Arc::new(Shared {
            identities,
            model,
            built_in,
            games: Arc::new(games),
            checkers,
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
    pub fn run_seed(&self, stratum: u32, seed: u64) -> Result<SeedRecord, String> {
        let game = self
            .games
            .get(stratum as usize)
            .ok_or_else(|| format!("no stratum {stratum}"))?;
        // A program's seed runs twice here, in two processes: the
        // coordinator's answer decides whose result is wrong, so it must be
        // the program's one answer.
        let outcome = game.run_twice(seed, &self.budget()).map_err(|e| {
            let fault = e.to_string();
            self.scheduler().program_fails(fault.clone());
            fault
        })?;
        let wire = SeedResult::within_caps(0, seed, outcome);
        let outcome = Outcome::try_from(wire).map_err(|e| e.to_string())?;
        let mut record = SeedRecord::from_outcome(seed, outcome, COORDINATOR.to_string(), 1);
        rate(&self.model, &mut record)?;
        Ok(record)
    }
}

impl Shared {
    /// A seed's budget as a worker runs it: the job's nodes and watchdog,
    /// made on the thread that runs the seed.
    fn budget(&self) -> impl Fn() -> Budget + Sync + Send + 'static {
        let (max_nodes, watchdog) = (
            self.spec.max_nodes,
            Duration::from_millis(self.spec.watchdog_ms),
        );
        move || Budget::watched(max_nodes, watchdog)
    }

    /// A game program's determinism probe: the first `seeds` seeds of each
    /// of `firsts` (the strata's first seeds) run twice, in two processes,
    /// under the job's budget; the first seed answered two ways. Blocking.
    pub fn probe_program(
        &self,
        firsts: &[u64],
        seeds: u64,
    ) -> Result<(), pregen_games::NotDeterministic> {
        let budget = self.budget();
        for (game, &first) in self.games.iter().zip(firsts) {
            let run: Vec<u64> = (first..first.saturating_add(seeds)).collect();
            game.probe_determinism(&run, &budget)?;
        }
        Ok(())
    }
}

/// The `pregen.v1.Coordinator` service.
#[derive(Debug, Clone)]
pub struct CoordinatorService {
    shared: Arc<Shared>,
}

impl CoordinatorService {
    /// A service over shared state.
    pub fn new(shared: Arc<Shared>) -> Self {
        Self { shared }
    }
}

/// Checks the shared token on every call.
pub fn token_check(token: String) -> impl Fn(Request<()>) -> Result<Request<()>, Status> + Clone {
    let expected = format!("Bearer {token}");
    move |req: Request<()>| match req.metadata().get(AUTH_HEADER).map(|v| v.as_bytes()) {
        Some(v) if v == expected.as_bytes() => Ok(req),
        Some(_) => Err(Status::unauthenticated("wrong token")),
        None => Err(Status::unauthenticated(
            "missing token (authorization: Bearer <token>)",
        )),
    }
}

type Outbound = mpsc::Sender<Result<CoordinatorMessage, Status>>;

/// A session that sends no Hello within this long is closed.
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(5);

/// A session that sends nothing (not even a heartbeat, due every third of
/// the lease TTL) for this long is closed, its leases released.
pub fn session_idle_limit(lease_ttl: Duration) -> Duration {
    (lease_ttl * 2).max(Duration::from_secs(10))
}

/// Sessions open at once on one HTTP/2 connection (a worker opens one).
pub const MAX_SESSIONS_PER_CONNECTION: u32 = 4;

#[tonic::async_trait]
impl Coordinator for CoordinatorService {
    type SessionStream = ReceiverStream<Result<CoordinatorMessage, Status>>;

    async fn session(
        &self,
        request: Request<Streaming<WorkerMessage>>,
    ) -> Result<Response<Self::SessionStream>, Status> {
        let admission = Admission::of(&request).cloned();
        let cert = Admission::peer_cert(&request);
        let mut inbound = request.into_inner();
        let first = tokio::time::timeout(HELLO_TIMEOUT, inbound.message())
            .await
            .map_err(|_| {
                Status::deadline_exceeded(format!("no Hello within {} s", HELLO_TIMEOUT.as_secs()))
            })??
            .ok_or_else(|| Status::invalid_argument("session closed before Hello"))?;
        let Some(In::Hello(hello)) = first.kind else {
            return Err(Status::invalid_argument(
                "the first message of a session must be Hello",
            ));
        };
        if hello.protocol_version != PROTOCOL_VERSION {
            return Err(Status::failed_precondition(format!(
                "worker speaks protocol {}, coordinator speaks {PROTOCOL_VERSION}",
                hello.protocol_version
            )));
        }
        if hello.generator_version != pregen_games::GENERATOR_VERSION {
            return Err(Status::failed_precondition(format!(
                "worker generator version {} differs from the coordinator's {}",
                hello.generator_version,
                pregen_games::GENERATOR_VERSION
            )));
        }
        let shared = self.shared.clone();
        let session = shared.next_session.fetch_add(1, Ordering::Relaxed);
        let admitted = shared
            .identities
            .admit(&hello.worker_name, &hello.worker_key, cert.as_deref())
            .map_err(Status::invalid_argument)?;
        let worker = admitted.identity;
        shared
            .scheduler()
            .session_started(session, &worker, hello.threads)
            .map_err(|e| Status::permission_denied(e.to_string()))?;
        // A worker with the token and a valid Hello: its connection stays.
        if let Some(admission) = admission {
            admission.admit();
        }
        let (tx, rx) = mpsc::channel(256);
        let welcome = Welcome {
            worker_id: worker.clone(),
            job: Some(shared.spec.clone()),
            lease_ttl_ms: shared.lease_ttl.as_millis() as u64,
            worker_key: admitted.key,
        };
        tx.send(Ok(CoordinatorMessage {
            kind: Some(Out::Welcome(welcome)),
        }))
        .await
        .map_err(|_| Status::cancelled("session closed"))?;
        shared.connected.fetch_add(1, Ordering::Relaxed);
        tokio::spawn(async move {
            let result = drive(&shared, session, &worker, &mut inbound, &tx).await;
            shared.scheduler().session_ended(session);
            shared.connected.fetch_sub(1, Ordering::Relaxed);
            match result {
                Ok(()) => tracing::debug!(worker, session, "session ended"),
                Err(Ended::Lost(status)) => {
                    tracing::info!(worker, session, error = %status.message(),
                        "session lost: the worker's stream broke (its leases go to others)");
                }
                Err(Ended::Refused(status)) if status.code() == tonic::Code::Cancelled => {
                    tracing::info!(worker, session, "session lost: the worker hung up");
                }
                Err(Ended::Refused(status)) => {
                    tracing::warn!(worker, session, error = %status.message(), "session refused");
                    let _ = tx.send(Err(status)).await;
                }
            }
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }
}

/// How a session ended early: refused by the coordinator (the worker is
/// told why), or lost (its stream broke: the worker died or was cut off).
enum Ended {
    Refused(Status),
    Lost(Status),
}

impl From<Status> for Ended {
    fn from(status: Status) -> Self {
        Ended::Refused(status)
    }
}

async fn send(tx: &Outbound, kind: Out) -> Result<(), Status> {
    tx.send(Ok(CoordinatorMessage { kind: Some(kind) }))
        .await
        .map_err(|_| Status::cancelled("session closed"))
}

async fn drive(
    shared: &Shared,
    session: SessionId,
    worker: &str,
    inbound: &mut Streaming<WorkerMessage>,
    tx: &Outbound,
) -> Result<(), Ended> {
    let mut complete = shared.complete.subscribe();
    let idle = session_idle_limit(shared.lease_ttl);
    loop {
        let message = tokio::select! {
            m = tokio::time::timeout(idle, inbound.message()) => Some(m.map_err(|_| {
                Status::deadline_exceeded(format!(
                    "nothing from the worker for {} s (workers send a heartbeat every third \
                     of the lease TTL)",
                    idle.as_secs()
                ))
            })?.map_err(Ended::Lost)?),
            done = complete.wait_for(|&c| c) => {
                drop(done);
                None
            }
        };
        let Some(message) = message else {
            return Ok(send(tx, Out::Finished(Finished {})).await?);
        };
        let Some(kind) = message.and_then(|m| m.kind) else {
            return Ok(());
        };
        match kind {
            In::Hello(_) => return Err(Status::invalid_argument("Hello sent twice").into()),
            In::LeaseRequest(_) => {
                refused(shared, worker)?;
                let grant = shared.scheduler().grant(session, Instant::now());
                let reply = match grant {
                    Grant::Lease(l) => Out::Grant(LeaseGrant {
                        lease_id: l.id,
                        first_seed: l.first_seed,
                        seed_count: l.seed_count,
                        attempt: l.attempt,
                        stratum: l.stratum,
                    }),
                    Grant::Wait => Out::NoWork(NoWork {
                        retry_after_ms: 100,
                    }),
                    Grant::Finished => Out::Finished(Finished {}),
                };
                send(tx, reply).await?;
            }
            In::Results(batch) => {
                shared.room_in_log().await;
                let records = batch
                    .results
                    .into_iter()
                    .map(|r| Ok((r.lease_id, to_record(r, worker)?)))
                    .collect::<Result<Vec<_>, Status>>()?;
                let records = match check_batch(shared, session, records).await? {
                    Ok(records) => records,
                    Err(forged) => {
                        shared.scheduler().refuse(worker, &forged);
                        return Err(Status::permission_denied(format!(
                            "worker {worker} is refused: {forged}"
                        ))
                        .into());
                    }
                };
                {
                    let mut scheduler = shared.scheduler();
                    scheduler
                        .record_batch(session, records, Instant::now())
                        .map_err(|e| match e {
                            RecordError::Refused { .. } => Status::permission_denied(e.to_string()),
                            e => Status::invalid_argument(e.to_string()),
                        })?;
                    scheduler.heartbeat(session, Instant::now());
                }
                shared.check_complete();
                shared.own_work.notify_one();
            }
            In::LeaseDone(d) => shared.scheduler().lease_done(session, d.lease_id),
            In::LeaseReturn(r) => shared.scheduler().lease_returned(session, r.lease_id),
            In::Heartbeat(_) => shared.scheduler().heartbeat(session, Instant::now()),
        }
    }
}

/// Ends the session of a refused worker.
fn refused(shared: &Shared, worker: &str) -> Result<(), Status> {
    match shared.scheduler().refusal(worker) {
        Some(reason) => Err(Status::permission_denied(format!(
            "worker {worker} is refused: {reason}"
        ))),
        None => Ok(()),
    }
}

/// A batch with a level no honest worker makes: why.
type Forged = String;

/// Checks a batch before any of it counts: every result in a lease of the
/// session, every accepted level re-derived by the job's game off the async
/// threads ([`PreparedGame::check`]). One bad result refuses the batch; a
/// level that fails the check is `Ok(Err(why))`, for its worker is refused.
async fn check_batch(
    shared: &Shared,
    session: SessionId,
    records: Vec<(u64, SeedRecord)>,
) -> Result<Result<Vec<(u64, SeedRecord)>, Forged>, Status> {
    let strata = {
        let scheduler = shared.scheduler();
        records
            .iter()
            .map(|(lease, r)| Ok(scheduler.lease_for(session, *lease, r.seed)?.stratum))
            .collect::<Result<Vec<u32>, RecordError>>()
            .map_err(|e| Status::invalid_argument(e.to_string()))?
    };
    let games = shared.games.clone();
    let judges = shared.checkers.clone().unwrap_or_else(|| games.clone());
    let model = shared.model.clone();
    let built_in = shared.built_in.clone();
    let budget = Budget::nodes(shared.spec.max_nodes);
    let watched = shared.budget();
    let judged_by_generator = shared.checkers.is_none();
    let _permit = shared
        .checking
        .acquire()
        .await
        .map_err(|e| Status::internal(format!("the level check failed: {e}")))?;
    let checked = tokio::task::spawn_blocking(move || {
        let mut records = records;
        let checks = check_levels(&judges, &records, &strata);
        let mut failed = checks.iter().filter_map(|c| c.as_ref().err());
        if let Some(broken) = failed.find(|e| e.is_broken()) {
            // The coordinator's own program failed (a crash, a kill, no
            // answer in time, a stray line): nothing is known against the
            // worker. The batch is not taken; the worker's session ends and
            // its leases run again; the program's process was started anew.
            return Checked::Broken(broken.to_string());
        }
        for (((_, record), stratum), check) in records.iter_mut().zip(strata).zip(checks) {
            let (Some(level), Some(game)) = (&record.level, games.get(stratum as usize)) else {
                continue;
            };
            if let Err(e) = &check
                && judged_by_generator
                && game.kind().is_external()
            {
                // A program that judges itself: when its own run of the
                // seed makes this very level and solution, its check
                // contradicts its generate: the program's fault, not the
                // worker's.
                let own = game.run(record.seed, &watched());
                let same = |c: &Candidate| {
                    (c.level_hash.as_str(), c.solution.as_str(), c.moves)
                        == (
                            level.level_hash.as_str(),
                            level.solution.as_str(),
                            level.moves,
                        )
                };
                if own.result.as_ref().is_ok_and(same) {
                    return Checked::ProgramFault(format!(
                        "the game program's check refuses the level its own generate makes for \
                         seed {} ({e}): the program contradicts itself; fix its check or its \
                         generate",
                        record.seed
                    ));
                }
            }
            if let Err(e) =
                check.and_then(|()| game.made_by(record.seed, &level.level_json, &budget))
            {
                return Checked::Forged(format!("seed {}: refused: {e}", record.seed));
            }
            let rated = match built_in.rate(Model::features(&level.metrics, level.moves)) {
                Ok(rated) => rated,
                Err(e) => return Checked::Forged(format!("seed {}: refused: {e}", record.seed)),
            };
            if rated.to_bits() != level.difficulty.to_bits() {
                return Checked::Forged(format!(
                    "seed {}: refused: difficulty {} is not the rating of its metrics ({rated})",
                    record.seed, level.difficulty
                ));
            }
            if let Err(e) = rate(&model, record) {
                // The job's model cannot rate the level (its metrics overflow
                // the model): the seed's error, not the worker's.
                record.level = None;
                record.status = pregen_pack::Status::Error;
                record.reason = Some(pregen_pack::Reason::new(pregen_pack::Code::Rating, e));
            }
        }
        Checked::Taken(records)
    })
    .await
    .map_err(|e| Status::internal(format!("the level check failed: {e}")))?;
    match checked {
        Checked::Taken(records) => Ok(Ok(records)),
        Checked::Forged(forged) => Ok(Err(forged)),
        Checked::ProgramFault(fault) => {
            shared.scheduler().program_fails(fault.clone());
            shared.check_complete();
            Err(Status::failed_precondition(fault))
        }
        Checked::Broken(broken) => {
            tracing::warn!(
                %broken,
                "the coordinator's own game program could not check a batch; the batch is run again"
            );
            Err(Status::unavailable(format!(
                "the coordinator's game program could not check this batch ({broken}); its \
                 seeds are leased again"
            )))
        }
    }
}

/// What the coordinator's check made of a batch.
enum Checked {
    /// Every result taken (rated by the job's model).
    Taken(Vec<(u64, SeedRecord)>),
    /// A result no honest worker sends: its worker is refused.
    Forged(String),
    /// The coordinator's own program could not check: the batch runs again.
    Broken(String),
    /// The job's program contradicts itself: the run ends.
    ProgramFault(String),
}

/// [`PreparedGame::check`] of every record's level (`Ok` for a record
/// without one), each stratum's levels checked in one call, so that a game
/// program is sent them at once.
fn check_levels(
    games: &[PreparedGame],
    records: &[(u64, SeedRecord)],
    strata: &[u32],
) -> Vec<Result<(), CheckError>> {
    let mut checks: Vec<Result<(), CheckError>> = records.iter().map(|_| Ok(())).collect();
    for (index, game) in games.iter().enumerate() {
        let (at, levels): (Vec<usize>, Vec<&Candidate>) = records
            .iter()
            .zip(strata)
            .enumerate()
            .filter(|(_, (_, stratum))| **stratum as usize == index)
            .filter_map(|(i, ((_, record), _))| Some((i, record.level.as_ref()?)))
            .unzip();
        if levels.is_empty() {
            continue;
        }
        for (i, check) in at.into_iter().zip(game.check_many(&levels)) {
            checks[i] = check;
        }
    }
    checks
}

/// Converts a wire result; a malformed one is `invalid_argument`. The
/// attempt is the scheduler's to fill in.
fn to_record(r: SeedResult, worker: &str) -> Result<SeedRecord, Status> {
    let seed = r.seed;
    let outcome = Outcome::try_from(r).map_err(|e| Status::invalid_argument(e.to_string()))?;
    Ok(SeedRecord::from_outcome(
        seed,
        outcome,
        worker.to_string(),
        0,
    ))
}
