//! The command line's conventions: exit statuses after a signal, the version,
//! a clear error for a tier the pack does not have; and the tests' own wait.

use std::process::Command;
use std::time::Duration;

use crate::common::{job_text, pregen, run_pack, serve, wait};

/// A coordinator stopped by a signal before its pack is written exits
/// 128 + the signal, as shells report it: 130 for Ctrl-C, 143 for SIGTERM.
#[test]
fn a_command_stopped_by_a_signal_exits_128_plus_the_signal() {
    for (signal, status) in [("INT", 130), ("TERM", 143)] {
        let dir = tempfile::tempdir().expect("tempdir");
        // No worker ever connects: the pack cannot finish on its own.
        let mut served = serve(dir.path(), &job_text(50), 15_000);
        let kill = Command::new("kill")
            .args([&format!("-{signal}"), &served.child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(kill.success());
        let exit = wait(&mut served.child, Duration::from_secs(60));
        assert_eq!(exit.code(), Some(status), "SIG{signal}: {exit:?}");
    }
}

#[test]
fn the_version_names_the_commit() {
    let out = pregen().arg("--version").output().expect("run pregen");
    assert!(out.status.success());
    let version = String::from_utf8(out.stdout).expect("utf-8");
    // "pregen 0.1.0 (commit 0123456789ab)", or "(unknown commit)" outside git.
    assert!(
        version.starts_with(&format!("pregen {} (", env!("CARGO_PKG_VERSION")))
            && version.trim_end().ends_with(')'),
        "{version}"
    );
    assert!(version.contains("commit"), "{version}");
}

#[test]
fn a_tier_the_pack_does_not_have_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pack = run_pack(dir.path(), &job_text(60), 1);
    let levels = |tier: &str| {
        pregen()
            .args(["analysis", "levels", "--tier", tier])
            .arg(&pack)
            .output()
            .expect("run pregen")
    };
    let missing = levels("99");
    assert_eq!(missing.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(stderr.contains("no tier 99"), "{stderr}");
    let present = levels("1");
    assert!(present.status.success());
    assert!(!present.stdout.is_empty());
}

/// `--count` on a job with strata scales their counts (the shipped cube
/// example: 10 strata of 10,000 become 10 of 2), and one level fewer than
/// the strata is refused by name.
#[test]
fn a_count_flag_scales_a_strata_job() {
    let dir = tempfile::tempdir().expect("tempdir");
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/cube.toml");
    let run = |count: &str| {
        pregen()
            .args(["run", "--no-progress", "--workers", "1", "--count", count])
            .args(["--pack", "small", "--out"])
            .arg(dir.path())
            .arg(example)
            .output()
            .expect("run pregen")
    };
    let refused = run("9");
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("fewer than the 10 strata"), "{stderr}");
    let out = run("20");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("small/manifest.json")).expect("manifest"),
    )
    .expect("json");
    let counts: Vec<u64> = manifest["strata"]
        .as_array()
        .expect("strata")
        .iter()
        .map(|s| s["count"].as_u64().expect("count"))
        .collect();
    assert_eq!(counts, [2; 10]);
    assert_eq!(manifest["job"]["count"], 20);
}

/// The tests' wait for a process ends as soon as the process stops working
/// (no CPU used for its limit), not at a fixed time: a slow machine slows a
/// pack's processes without failing their waits, and a hung one still fails.
#[test]
fn a_wait_fails_a_process_that_stops_working() {
    let mut idle = Command::new("sleep").arg("60").spawn().expect("sleep");
    let waited = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        wait(&mut idle, Duration::from_millis(500))
    }));
    let panic = waited.expect_err("an idle process fails the wait");
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(message.contains("used no CPU for"), "{message}");
    assert!(
        idle.try_wait().expect("reaped").is_some(),
        "the process is killed"
    );
}

/// `--workers` far above the cores is capped, with a warning, rather than
/// starting a thread pool for each.
#[test]
fn too_many_local_workers_are_capped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let job = crate::common::write_job(dir.path(), &job_text(20));
    let out = pregen()
        .args(["run", "--no-progress", "--workers", "1000", "--out"])
        .arg(dir.path().join("out"))
        .arg(&job)
        .output()
        .expect("run pregen");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert!(
        stderr.contains(&format!(
            "--workers 1000 is above 4 per core on this machine's {cores} cores: capped at {}",
            4 * cores
        )),
        "{stderr}"
    );
}
