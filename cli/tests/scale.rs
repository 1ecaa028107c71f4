//! The scale paths at small size: the load client against a real
//! coordinator, the tail overtaken by speculation when one worker is much
//! slower, and the pack the same whatever the sort spilled.

use std::time::Duration;

use pregen_coordinator::Job;
use pregen_coordinator::server::{RunOptions, RunSummary, Started, start_job};
use pregen_worker::{WorkerConfig, run_worker};
use tokio_util::sync::CancellationToken;

use crate::common::{PackContent, pregen};

#[test]
fn the_load_test_commits_every_result_and_writes_the_pack() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = pregen()
        .args(["load-test", "--sessions", "40", "--count", "3000", "--out"])
        .arg(dir.path())
        .output()
        .expect("run pregen load-test");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.starts_with("sessions 40: "), "{stdout}");
    assert!(stdout.contains("results per CPU-second"), "{stdout}");
    let manifest: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.path().join("load-test/manifest.json")).expect("manifest"),
    )
    .expect("manifest JSON");
    assert_eq!(manifest["counts"]["accepted"], 3000);
    assert_eq!(manifest["job"]["game"], "synthetic");
    // Bad input is named, by the load test or by the coordinator's job check.
    for (flag, value, says) in [
        ("--accept-rate", "0", "--accept-rate must be above 0"),
        (
            "--level-bytes",
            "2000000",
            "level_bytes must be 0..=1000000",
        ),
    ] {
        let out = pregen()
            .args([
                "load-test",
                "--sessions",
                "2",
                "--count",
                "10",
                flag,
                value,
                "--out",
            ])
            .arg(dir.path())
            .output()
            .expect("run pregen load-test");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
    }
}

/// A pack of 1,600 synthetic seeds asleep for 2 ms each, every one accepted.
fn sleepy_job() -> Job {
    Job::parse(
        "pack = \"tail\"\ngame = \"synthetic\"\ncount = 1600\nseeds_per_lease = 512\n\
         [params]\ncost_us = 2000\nbusy = false\naccept_rate = 1.0\n",
    )
    .expect("job")
}

/// Runs `job` with one worker per entry of `workers` (threads, slowdown).
async fn run(job: Job, out: &std::path::Path, workers: &[(usize, u32)]) -> RunSummary {
    let Started::Running(mut running) = start_job(
        job,
        RunOptions {
            lease_ttl: Duration::from_secs(60),
            ..RunOptions::local(out.to_path_buf(), "t".into())
        },
    )
    .await
    .expect("start") else {
        panic!("a new pack is not complete")
    };
    let stop = CancellationToken::new();
    let watch = running.watch();
    let mut handles = Vec::new();
    // In order: each worker has its session before the next starts.
    for (i, &(threads, slowdown)) in workers.iter().enumerate() {
        let mut config = WorkerConfig::new(format!("http://{}", running.listening.grpc), "t");
        config.threads = threads;
        config.slowdown = slowdown;
        config.name = format!("w{}", i + 1);
        handles.push(tokio::spawn(run_worker(config, stop.clone())));
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while watch.progress().sessions <= i {
            assert!(
                std::time::Instant::now() < deadline,
                "worker w{} has no session",
                i + 1
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    let summary = running.complete().await.expect("the pack is written");
    stop.cancel();
    for h in handles {
        let _ = h.await;
    }
    running.stop().await;
    summary
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_workers_last_lease_is_copied_and_the_pack_is_the_same() {
    let one = tempfile::tempdir().expect("tempdir");
    run(sleepy_job(), one.path(), &[(4, 1)]).await;
    let both = tempfile::tempdir().expect("tempdir");
    // The slow worker, connected first, takes 200 ms a seed: it always has a
    // lease out (its first, 4 seeds before any cost is known, takes as long
    // as the fast worker's whole pack) when the fast one runs out of seeds.
    let summary = run(sleepy_job(), both.path(), &[(1, 100), (4, 1)]).await;
    assert!(
        summary.progress.speculative >= 1,
        "no lease was copied: {:?}",
        summary.progress
    );
    PackContent::read(&both.path().join("tail"))
        .assert_same(&PackContent::read(&one.path().join("tail")));
}
