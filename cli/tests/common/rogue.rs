//! A hostile worker built from the proto: it speaks the protocol by hand and
//! sends whatever a test wants, true or forged.

use std::net::SocketAddr;

use pregen_proto::v1::coordinator_client::CoordinatorClient;
use pregen_proto::v1::coordinator_message::Kind as In;
use pregen_proto::v1::worker_message::Kind as Out;
use pregen_proto::v1::{
    Hello, LeaseGrant, LeaseRequest, Results, SeedResult, Welcome, WorkerMessage,
};
use pregen_proto::{AUTH_HEADER, PROTOCOL_VERSION};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Streaming;
use tonic::codegen::InterceptedService;
use tonic::transport::Channel;

use pregen_coordinator::Job;
use pregen_coordinator::server::{RunOptions, RunSummary, Started, start_job};
use std::path::Path;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::TOKEN;

/// A coordinator running in this process.
pub struct Coordinator {
    /// Where it listens for workers.
    pub addr: SocketAddr,
    /// Ends with the run.
    pub run: JoinHandle<Result<RunSummary, pregen_coordinator::CoordinatorError>>,
    /// Cancel to stop it early.
    pub shutdown: CancellationToken,
}

/// Starts `job` with its pack under `out`, leases living `lease_ttl`.
pub async fn coordinator(out: &Path, job: &str, lease_ttl: Duration) -> Coordinator {
    let shutdown = CancellationToken::new();
    let started = start_job(
        Job::parse(job).expect("job"),
        RunOptions {
            lease_ttl,
            shutdown: shutdown.clone(),
            ..RunOptions::local(out.to_path_buf(), TOKEN.into())
        },
    )
    .await
    .expect("starts");
    let Started::Running(mut running) = started else {
        panic!("a new pack is not complete")
    };
    let addr = running.listening.grpc;
    let run = tokio::spawn(async move {
        let summary = running.complete().await;
        running.stop().await;
        summary
    });
    Coordinator {
        addr,
        run,
        shutdown,
    }
}

/// The client with the test token on every call.
pub type Client = CoordinatorClient<
    InterceptedService<
        Channel,
        fn(tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status>,
    >,
>;

fn with_token(mut req: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
    req.metadata_mut().insert(
        AUTH_HEADER,
        format!("Bearer {TOKEN}").parse().expect("header"),
    );
    Ok(req)
}

/// A client for the coordinator at `addr`.
pub async fn client(addr: SocketAddr) -> Client {
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .expect("url")
        .connect()
        .await
        .expect("connect");
    let check: fn(tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> = with_token;
    CoordinatorClient::with_interceptor(channel, check)
}

/// One hand-driven session.
pub struct Rogue {
    tx: mpsc::Sender<WorkerMessage>,
    inbound: Streaming<pregen_proto::v1::CoordinatorMessage>,
    /// The coordinator's Welcome: the identity it gave and its key.
    pub welcome: Welcome,
}

impl Rogue {
    /// Says Hello as `name` and reads the Welcome.
    pub async fn join(client: &mut Client, name: &str) -> Rogue {
        Self::try_join(client, name).await.expect("welcome")
    }

    /// Says Hello as `name`: the session, or the coordinator's refusal.
    pub async fn try_join(client: &mut Client, name: &str) -> Result<Rogue, tonic::Status> {
        Self::try_join_with_key(client, name, "").await
    }

    /// Says Hello as `name` presenting `key`: the session, or the refusal.
    pub async fn try_join_with_key(
        client: &mut Client,
        name: &str,
        key: &str,
    ) -> Result<Rogue, tonic::Status> {
        let (tx, rx) = mpsc::channel(8);
        // The coordinator answers the call once Hello is in.
        let hello = Hello {
            protocol_version: PROTOCOL_VERSION,
            generator_version: pregen_games::GENERATOR_VERSION.into(),
            worker_name: name.into(),
            threads: 1,
            worker_key: key.into(),
        };
        tx.send(WorkerMessage {
            kind: Some(Out::Hello(hello)),
        })
        .await
        .expect("send");
        let mut inbound = client.session(ReceiverStream::new(rx)).await?.into_inner();
        let welcome = match inbound.message().await?.and_then(|m| m.kind) {
            Some(In::Welcome(welcome)) => welcome,
            other => panic!("expected a Welcome, got {other:?}"),
        };
        Ok(Rogue {
            tx,
            inbound,
            welcome,
        })
    }

    /// Sends one message.
    pub async fn send(&self, kind: Out) {
        self.tx
            .send(WorkerMessage { kind: Some(kind) })
            .await
            .expect("send");
    }

    /// The next message (`None` at the end of the stream); panics on an error.
    pub async fn next(&mut self) -> Option<In> {
        self.inbound
            .message()
            .await
            .expect("message")
            .and_then(|m| m.kind)
    }

    /// Sends one message; false if the session is closed already.
    pub async fn offer(&self, kind: Out) -> bool {
        self.tx
            .send(WorkerMessage { kind: Some(kind) })
            .await
            .is_ok()
    }

    /// The next message, or the error that ended the session.
    pub async fn next_or_refusal(&mut self) -> Result<Option<In>, tonic::Status> {
        Ok(self.inbound.message().await?.and_then(|m| m.kind))
    }

    /// Asks for a lease and returns it.
    pub async fn lease(&mut self) -> LeaseGrant {
        self.send(Out::LeaseRequest(LeaseRequest {})).await;
        match self.next().await {
            Some(In::Grant(grant)) => grant,
            other => panic!("expected a lease, got {other:?}"),
        }
    }

    /// Sends a batch of results.
    pub async fn results(&self, results: Vec<SeedResult>) {
        self.send(Out::Results(Results { results })).await;
    }

    /// Reads until the coordinator ends the session with an error (at most
    /// 30 s).
    pub async fn refusal(&mut self) -> tonic::Status {
        let read = async {
            loop {
                match self.inbound.message().await {
                    Ok(Some(_)) => continue,
                    Ok(None) => panic!("stream ended without an error"),
                    Err(status) => return status,
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(30), read)
            .await
            .expect("the coordinator refuses within 30 s")
    }
}
