//! The gRPC adapter: converts wire messages to domain calls on the
//! [`Shared`] state and maps refusals to statuses. One task per worker session.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use pregen_games::Outcome;
use pregen_pack::SeedRecord;
use pregen_proto::v1::coordinator_message::Kind as Out;
use pregen_proto::v1::coordinator_server::Coordinator;
use pregen_proto::v1::worker_message::Kind as In;
use pregen_proto::v1::{
    CoordinatorMessage, Finished, LeaseGrant, NoWork, SeedResult, Welcome, WorkerMessage,
};
use pregen_proto::{AUTH_HEADER, PROTOCOL_VERSION};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status, Streaming};

use crate::connections::Admission;
use crate::scheduler::{Grant, RecordError, SessionId};
use crate::shared::Shared;
use crate::trust::{Batch, Refused};

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
            .map_err(|e| Status::invalid_argument(e.to_string()))?;
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
                    Err(refused) => {
                        let forged = format!("seed {}: refused: {refused}", refused.seed());
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

/// Checks a batch before any of it counts: every result in a lease of the
/// session, then [`Trust::admit_batch`] off the async threads. One bad
/// result refuses the batch; a level that fails the check is
/// `Ok(Err(refused))`, for its worker is refused.
async fn check_batch(
    shared: &Shared,
    session: SessionId,
    records: Vec<(u64, SeedRecord)>,
) -> Result<Result<Vec<(u64, SeedRecord)>, Refused>, Status> {
    let strata = {
        let scheduler = shared.scheduler();
        records
            .iter()
            .map(|(lease, r)| Ok(scheduler.lease_for(session, *lease, r.seed)?.stratum))
            .collect::<Result<Vec<u32>, RecordError>>()
            .map_err(|e| Status::invalid_argument(e.to_string()))?
    };
    let _permit = shared
        .checking
        .acquire()
        .await
        .map_err(|e| Status::internal(format!("the level check failed: {e}")))?;
    let trust = shared.trust.clone();
    let checked = tokio::task::spawn_blocking(move || trust.admit_batch(records, &strata))
        .await
        .map_err(|e| Status::internal(format!("the level check failed: {e}")))?;
    match checked {
        Batch::Taken(records) => Ok(Ok(records)),
        Batch::Forged(refused) => Ok(Err(refused)),
        Batch::ProgramFault(fault) => {
            shared.scheduler().program_fails(fault.clone());
            shared.check_complete();
            Err(Status::failed_precondition(fault))
        }
        Batch::Broken(broken) => {
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
