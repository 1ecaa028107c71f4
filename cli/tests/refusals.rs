//! Bad input is refused with a clear error and nothing is written or lost.

use pregen_pack::PackDir;
use std::net::SocketAddr;
use std::time::Duration;

use pregen_coordinator::Job;
use pregen_coordinator::server::{RunOptions, Started, start_job};
use pregen_proto::v1::coordinator_client::CoordinatorClient;
use pregen_proto::v1::coordinator_message::Kind as In;
use pregen_proto::v1::worker_message::Kind as Out;
use pregen_proto::v1::{Hello, LeaseRequest, Results, SeedResult, WorkerMessage, seed_result};
use pregen_proto::{AUTH_HEADER, PROTOCOL_VERSION};
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::CancellationToken;

use crate::common::{TOKEN, job_text, pregen, serve, wait, worker, write_job};

#[test]
fn malformed_job_file_is_refused_naming_the_field_and_nothing_is_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (job, field) in [
        ("pack = \"x\"\ngame = \"tilt\"\ncount = 0\n", "count"),
        ("pack = \"x\"\ngame = \"chess\"\ncount = 5\n", "game"),
        (
            "pack = \"x\"\ngame = \"tilt\"\ncount = 5\n[params]\nwidth = 12\n",
            "width",
        ),
        (
            "pack = \"x\"\ngame = \"tilt\"\ncount = 5\n[budget]\nmax_nodes = \"many\"\n",
            "max_nodes",
        ),
        (
            "pack = \"x\"\ngame = \"tilt\"\ncount = 5\n[tiers]\nscheme = \"median\"\n",
            "thresholds",
        ),
        ("this is not toml", "job"),
    ] {
        let path = write_job(dir.path(), job);
        let out = pregen()
            .args(["run", "--no-progress", "--out"])
            .arg(dir.path().join("out"))
            .arg(&path)
            .output()
            .expect("run");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "accepted a bad job: {job}");
        assert!(
            stderr.contains(field),
            "error should name `{field}`: {stderr}"
        );
        assert!(
            !dir.path().join("out").exists(),
            "nothing written for a bad job"
        );
    }
}

#[test]
fn wrong_token_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut served = serve(dir.path(), &job_text(50), 15_000);
    let mut intruder = worker(&served.url, "intruder", "not-the-token");
    let status = wait(&mut intruder, Duration::from_secs(60));
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut intruder.stderr.take().expect("stderr"), &mut stderr)
        .expect("read");
    assert!(!status.success());
    assert!(stderr.contains("wrong token"), "{stderr}");
    assert_eq!(
        crate::common::segments(&dir.path().join("out/e2e")),
        0,
        "nothing recorded"
    );
    served.child.kill().expect("kill serve");
}

#[tokio::test]
async fn result_outside_the_lease_is_refused_and_nothing_is_recorded() {
    let dir = tempfile::tempdir().expect("tempdir");
    let job = Job::parse(&job_text(50)).expect("job");
    let shutdown = CancellationToken::new();
    let started = start_job(
        job,
        RunOptions {
            out: dir.path().to_path_buf(),
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            token: TOKEN.into(),
            lease_ttl: Duration::from_secs(15),
            metrics: None,
            tls: None,
            shutdown: shutdown.clone(),
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
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .expect("url")
        .connect()
        .await
        .expect("connect");
    let mut client = CoordinatorClient::with_interceptor(channel, |mut req: tonic::Request<()>| {
        req.metadata_mut().insert(
            AUTH_HEADER,
            format!("Bearer {TOKEN}").parse().expect("header"),
        );
        Ok(req)
    });
    let (tx, rx) = tokio::sync::mpsc::channel(8);
    let msg = |kind| WorkerMessage { kind: Some(kind) };
    tx.send(msg(Out::Hello(Hello {
        protocol_version: PROTOCOL_VERSION,
        generator_version: pregen_games::GENERATOR_VERSION.into(),
        worker_name: "rogue".into(),
        threads: 1,
    })))
    .await
    .expect("send");
    tx.send(msg(Out::LeaseRequest(LeaseRequest {})))
        .await
        .expect("send");
    let mut inbound = client
        .session(ReceiverStream::new(rx))
        .await
        .expect("session")
        .into_inner();
    assert!(matches!(
        inbound
            .message()
            .await
            .expect("welcome")
            .and_then(|m| m.kind),
        Some(In::Welcome(_))
    ));
    let Some(In::Grant(grant)) = inbound.message().await.expect("grant").and_then(|m| m.kind)
    else {
        panic!("expected a lease")
    };
    let outside = grant.first_seed + grant.seed_count + 7;
    tx.send(msg(Out::Results(Results {
        results: vec![SeedResult {
            lease_id: grant.lease_id,
            seed: outside,
            status: seed_result::Status::Unsolvable as i32,
            ..Default::default()
        }],
    })))
    .await
    .expect("send");
    let err = loop {
        match inbound.message().await {
            Ok(Some(_)) => continue,
            Ok(None) => panic!("stream ended without an error"),
            Err(status) => break status,
        }
    };
    assert_eq!(err.code(), tonic::Code::InvalidArgument);
    assert!(
        err.message()
            .contains(&format!("seed {outside} is outside lease")),
        "{}",
        err.message()
    );

    // A wrong protocol version is refused too.
    let (tx2, rx2) = tokio::sync::mpsc::channel(8);
    tx2.send(msg(Out::Hello(Hello {
        protocol_version: 99,
        ..Default::default()
    })))
    .await
    .expect("send");
    let err = client
        .session(ReceiverStream::new(rx2))
        .await
        .expect_err("old protocol");
    assert_eq!(err.code(), tonic::Code::FailedPrecondition);
    assert!(err.message().contains("protocol 99"), "{}", err.message());

    shutdown.cancel();
    let result = run.await.expect("join");
    assert!(result.is_err(), "interrupted run reports it");
    let (_, records) = pregen_coordinator::commit_log::CommitLog::open(
        &dir.path().join("e2e/commit"),
        &Job::parse(&job_text(50)).expect("job"),
    )
    .expect("log opens");
    assert!(records.is_empty(), "the refused result was not recorded");
}

/// Doors with 3 rooms and 1 colour has 5 levels unique by the source's key: a
/// job for 6 gives up at `max_seeds` with a clear error, writes no pack and
/// keeps its commit log, which a run with a higher limit resumes.
#[test]
fn a_job_that_cannot_finish_gives_up_at_max_seeds_and_keeps_its_work() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out_dir = dir.path().join("out");
    let job = "pack = \"few\"\ngame = \"doors\"\ncount = 6\nseeds_per_lease = 8\n\
               [params]\nrooms = 3\ncolours = 1\n";
    let path = write_job(dir.path(), job);
    let out = pregen()
        .args(["run", "--no-progress", "--max-seeds", "64", "--out"])
        .arg(&out_dir)
        .arg(&path)
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a pack of 6 cannot exist");
    assert!(
        stderr.contains("max_seeds reached: 5 distinct levels accepted of 6 wanted after 64 seeds"),
        "{stderr}"
    );
    let pack = out_dir.join("few");
    assert!(!PackDir::new(&pack).is_complete());
    assert!(pack.join("commit").exists(), "the tried seeds are kept");
    // The limit is not part of the job: a higher one resumes the same log.
    let out = pregen()
        .args(["run", "--no-progress", "--max-seeds", "96", "--out"])
        .arg(&out_dir)
        .arg(&path)
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("of 6 wanted after 96 seeds"), "{stderr}");
}
