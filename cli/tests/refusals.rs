//! Bad input is refused with a clear error and nothing is written or lost.

use pregen_pack::PackDir;
use std::time::Duration;

use pregen_coordinator::Job;
use pregen_proto::v1::worker_message::Kind as Out;
use pregen_proto::v1::{Hello, SeedResult, WorkerMessage, seed_result};
use tokio_stream::wrappers::ReceiverStream;

use crate::common::rogue::{Rogue, client, coordinator};
use crate::common::{job_text, pregen, serve, wait, worker, write_job};

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
        // A type error names the file's own line.
        (
            "pack = \"x\"\ngame = \"tilt\"\n\n\ncount = 5\n[budget]\nmax_nodes = \"many\"\n",
            "line 7",
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
    let coordinator = coordinator(dir.path(), &job_text(50), Duration::from_secs(15)).await;
    let mut client = client(coordinator.addr).await;
    let mut rogue = Rogue::join(&mut client, "rogue").await;
    let grant = rogue.lease().await;
    let outside = grant.first_seed + grant.seed_count + 7;
    rogue
        .results(vec![SeedResult {
            lease_id: grant.lease_id,
            seed: outside,
            status: seed_result::Status::Unsolvable as i32,
            ..Default::default()
        }])
        .await;
    let err = rogue.refusal().await;
    assert_eq!(err.code(), tonic::Code::InvalidArgument);
    assert!(
        err.message()
            .contains(&format!("seed {outside} is outside lease")),
        "{}",
        err.message()
    );

    // A wrong protocol version is refused too.
    let (tx, rx) = tokio::sync::mpsc::channel(8);
    tx.send(WorkerMessage {
        kind: Some(Out::Hello(Hello {
            protocol_version: 99,
            ..Default::default()
        })),
    })
    .await
    .expect("send");
    let err = client
        .session(ReceiverStream::new(rx))
        .await
        .expect_err("old protocol");
    assert_eq!(err.code(), tonic::Code::FailedPrecondition);
    assert!(err.message().contains("protocol 99"), "{}", err.message());

    // A connection that never says Hello is closed.
    let (_tx, rx) = tokio::sync::mpsc::channel::<WorkerMessage>(8);
    let err = client
        .session(ReceiverStream::new(rx))
        .await
        .expect_err("no Hello");
    assert_eq!(err.code(), tonic::Code::DeadlineExceeded);
    assert!(
        err.message().contains("no Hello within"),
        "{}",
        err.message()
    );

    coordinator.shutdown.cancel();
    let result = coordinator.run.await.expect("join");
    // Reported as interrupted, not as a log that cannot be resumed.
    assert!(
        matches!(
            result,
            Err(pregen_coordinator::CoordinatorError::Interrupted {
                committed: 0,
                wanted: 50
            })
        ),
        "{result:?}"
    );
    let records = pregen_coordinator::CommitLog::read(
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

/// Ten connections that never speak take every place under the cap, yet a
/// real worker gets in once they are closed and finishes the pack.
#[test]
fn silent_connections_are_closed_and_a_worker_still_gets_in() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cap = std::ffi::OsString::from("--max-connections");
    let places = std::ffi::OsString::from("4");
    let mut served = crate::common::serve_with(dir.path(), &job_text(50), 15_000, &[&cap, &places]);
    let addr = served.url.trim_start_matches("http://").to_string();
    let silent: Vec<std::net::TcpStream> = (0..10)
        .map(|_| std::net::TcpStream::connect(&addr).expect("connect"))
        .collect();
    let mut honest = worker(&served.url, "honest", crate::common::TOKEN);
    assert!(wait(&mut honest, Duration::from_secs(90)).success());
    assert!(wait(&mut served.child, Duration::from_secs(30)).success());
    assert!(PackDir::new(dir.path().join("out/e2e")).is_complete());
    drop(silent);
}

/// With no worker at all, `--idle-exit-s` ends the coordinator with a clear
/// error and a non-zero status, and the commit log stays for a resume.
#[test]
fn an_empty_room_ends_the_coordinator_at_the_idle_limit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let job = write_job(dir.path(), &job_text(50));
    let mut child = pregen()
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--token",
            "t",
            "--idle-exit-s",
            "2",
            "--out",
        ])
        .arg(dir.path().join("out"))
        .arg(&job)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn serve");
    let status = wait(&mut child, Duration::from_secs(60));
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().expect("stderr"), &mut stderr)
        .expect("read");
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("no worker connected for 2 s"), "{stderr}");
    assert!(dir.path().join("out/e2e/commit/job.json").exists());
}

/// Limits of zero, seeds TOML cannot hold and numbers JSON cannot hold are
/// refused by name; a busy port or a TLS key that is not one stops `serve`
/// before it writes anything.
#[test]
fn bad_flags_are_refused_by_name_and_leave_nothing_behind() {
    let dir = tempfile::tempdir().expect("tempdir");
    let job = write_job(dir.path(), &job_text(50));
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let busy = taken.local_addr().expect("address").to_string();
    let junk = dir.path().join("junk.pem");
    std::fs::write(&junk, "not a key").expect("write");
    let junk = junk.to_str().expect("utf-8").to_string();
    let cases: [(&[&str], &str); 9] = [
        (
            &["serve", "--token", "t", "--max-connections", "0"],
            "--max-connections",
        ),
        (
            &["serve", "--token", "t", "--lease-ttl-ms", "0"],
            "--lease-ttl-ms",
        ),
        (
            &["serve", "--token", "t", "--write-give-up-s", "0"],
            "--write-give-up-s",
        ),
        (
            &["serve", "--token", "t", "--idle-exit-s", "0"],
            "--idle-exit-s",
        ),
        (
            &["run", "--first-seed", "9223372036854775808"],
            "--first-seed",
        ),
        (&["run", "--param", "min_moves=inf"], "params.min_moves"),
        (
            &["serve", "--token", "t", "--listen", &busy],
            "cannot listen on",
        ),
        (
            &[
                "serve",
                "--token",
                "t",
                "--listen",
                "127.0.0.1:0",
                "--metrics",
                &busy,
            ],
            "cannot serve metrics",
        ),
        (
            &[
                "serve",
                "--token",
                "t",
                "--listen",
                "127.0.0.1:0",
                "--tls-cert",
                &junk,
                "--tls-key",
                &junk,
            ],
            "TLS",
        ),
    ];
    for (args, named) in cases {
        let out = pregen()
            .args(args)
            .arg("--out")
            .arg(dir.path().join("out"))
            .arg(&job)
            .output()
            .expect("run pregen");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} was accepted");
        assert!(stderr.contains(named), "{args:?}: {stderr}");
        assert!(
            !dir.path().join("out").exists(),
            "{args:?} left files behind"
        );
    }
}
