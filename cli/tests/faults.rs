//! Determinism under faults: several worker processes, a worker killed with
//! SIGKILL mid-lease, the coordinator killed and restarted.

use std::time::Duration;

use crate::common::{
    COUNT, PackContent, TOKEN, job_text, killed_and_rerun, pregen, reference, run_once, serve,
    serve_with, serve_with_a_worker_killed, wait, wait_for_segments, worker, write_job,
};

const LIMIT: Duration = Duration::from_secs(240);

/// With the sort's memory at 1 MiB, the pack's records spill in many runs
/// (merged as they come): no byte changes.
#[test]
fn three_worker_processes_give_the_same_pack_as_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut served = serve_with(
        dir.path(),
        &job_text(COUNT),
        15_000,
        &["--sort-memory".as_ref(), "1".as_ref()],
    );
    let mut workers: Vec<_> = (1..=3)
        .map(|i| worker(&served.url, &format!("w{i}"), TOKEN))
        .collect();
    assert!(wait(&mut served.child, LIMIT).success(), "serve failed");
    for w in &mut workers {
        assert!(wait(w, LIMIT).success(), "worker failed");
    }
    PackContent::read(&dir.path().join("out/e2e")).assert_same(reference());
}

#[test]
fn worker_killed_mid_lease_costs_only_its_lease() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pack = serve_with_a_worker_killed(dir.path(), &job_text(COUNT), LIMIT);
    let content = PackContent::read(&pack);
    content.assert_same(reference());
    assert!(
        content.levels.iter().any(|r| r.attempt >= 2),
        "the killed worker's lease was re-issued"
    );
}

#[test]
fn coordinator_killed_and_restarted_resumes_to_the_same_pack() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (pack, stderr) = killed_and_rerun(dir.path(), &job_text(COUNT), LIMIT);
    assert!(
        stderr.contains("resumed from the commit log"),
        "the rerun resumed: {stderr}"
    );
    PackContent::read(&pack).assert_same(reference());
    // A third run finds the pack complete and does nothing.
    let job = dir.path().join("job.toml");
    let third = run_once(dir.path(), &job)
        .wait_with_output()
        .expect("third run");
    assert!(String::from_utf8_lossy(&third.stderr).contains("already complete"));
}

#[test]
fn worker_drains_on_sigterm_and_returns_its_lease() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pack = dir.path().join("out/e2e");
    let mut served = serve(dir.path(), &job_text(COUNT), 15_000);
    let mut leaving = worker(&served.url, "leaving", TOKEN);
    wait_for_segments(&pack, 1, LIMIT);
    let term = std::process::Command::new("kill")
        .args(["-TERM", &leaving.id().to_string()])
        .status()
        .expect("kill -TERM");
    assert!(term.success());
    let status = wait(&mut leaving, LIMIT);
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut leaving.stderr.take().expect("stderr"), &mut stderr)
        .expect("read");
    assert!(
        status.success(),
        "a draining worker exits cleanly: {stderr}"
    );
    assert!(stderr.contains("drained on shutdown"), "{stderr}");
    // The returned lease is re-issued at once (the lease TTL is 15 s, the test is far quicker).
    let mut next = worker(&served.url, "next", TOKEN);
    assert!(wait(&mut served.child, LIMIT).success(), "serve failed");
    assert!(wait(&mut next, LIMIT).success(), "worker failed");
    PackContent::read(&pack).assert_same(reference());
}

/// A job with strata: three worker processes give the pack one gives, each
/// stratum holds its count, and its seeds stay in its own range.
#[test]
fn strata_pack_is_the_same_with_three_workers_as_with_one() {
    let job = "pack = \"e2e\"\ngame = \"tilt\"\nseeds_per_lease = 16\n\
               [params]\nwidth = 5\nheight = 5\nmin_moves = 3\n\
               [budget]\nmax_nodes = 50000\nwatchdog_ms = 60000\n\
               [[strata]]\ncount = 60\nparams = { pairs = 1 }\n\
               [[strata]]\ncount = 90\nparams = { pairs = 2 }\n";
    let one = tempfile::tempdir().expect("tempdir");
    let reference = PackContent::read(&crate::common::run_pack(one.path(), job, 1));
    let many = tempfile::tempdir().expect("tempdir");
    let mut served = serve(many.path(), job, 15_000);
    let mut workers: Vec<_> = (1..=3)
        .map(|i| worker(&served.url, &format!("w{i}"), TOKEN))
        .collect();
    assert!(wait(&mut served.child, LIMIT).success(), "serve failed");
    for w in &mut workers {
        assert!(wait(w, LIMIT).success(), "worker failed");
    }
    PackContent::read(&many.path().join("out/e2e")).assert_same(&reference);
    let second = 1u64 << 40;
    let in_first = reference.levels.iter().filter(|r| r.seed < second).count();
    assert_eq!((in_first, reference.levels.len()), (60, 150));
}

/// Unmounts a small tmpfs when dropped.
struct SmallDisk(std::path::PathBuf);

impl SmallDisk {
    /// A tmpfs of `size` at `at`, or `None` where mounting is not allowed.
    fn mount(at: &std::path::Path, size: &str) -> Option<SmallDisk> {
        std::fs::create_dir_all(at).expect("mount point");
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .status()
            .is_ok_and(|s| s.success());
        mounted.then(|| SmallDisk(at.to_path_buf()))
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// A disk that fills mid-run: the run stops with a clear error and a
/// non-zero status once writes have failed for `--write-give-up-s`, nothing
/// it wrote is damaged, and a rerun with space resumes to the same pack.
#[test]
fn a_full_disk_stops_the_run_cleanly_and_a_rerun_finishes_the_same_pack() {
    let dir = tempfile::tempdir().expect("tempdir");
    let small = dir.path().join("small");
    let Some(disk) = SmallDisk::mount(&small, "256k") else {
        eprintln!("not run: mounting a tmpfs needs root");
        return;
    };
    let job = write_job(dir.path(), &job_text(COUNT));
    let full = pregen()
        .args(["run", "--no-progress", "--write-give-up-s", "2", "--out"])
        .arg(&small)
        .arg(&job)
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&full.stderr);
    assert_eq!(full.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("the commit log could not be written for"),
        "{stderr}"
    );
    // Space freed: the pack folder moves to a roomy disk and the run resumes.
    let roomy = dir.path().join("roomy");
    std::fs::create_dir_all(&roomy).expect("roomy");
    let copied = std::process::Command::new("cp")
        .arg("-a")
        .arg(small.join("e2e"))
        .arg(&roomy)
        .status()
        .expect("cp");
    assert!(copied.success());
    drop(disk);
    let rerun = pregen()
        .args(["run", "--no-progress", "--out"])
        .arg(&roomy)
        .arg(&job)
        .output()
        .expect("rerun");
    assert!(
        rerun.status.success(),
        "{}",
        String::from_utf8_lossy(&rerun.stderr)
    );
    PackContent::read(&roomy.join("e2e")).assert_same(reference());
}

/// The cross-check's key is kept beside the commit log: a pack written again
/// from its log samples the same seeds, finds them settled in the log and runs
/// none of them again.
#[test]
fn a_resumed_run_keeps_the_cross_checks_sample() {
    let dir = tempfile::tempdir().expect("tempdir");
    let job = job_text(400).replace("count = 400\n", "count = 400\ncross_check = 0.2\n");
    let pack = crate::common::run_pack(dir.path(), &job, 1);
    let confirmed = |pack: &std::path::Path| {
        let manifest: serde_json::Value =
            serde_json::from_slice(&std::fs::read(pack.join("manifest.json")).expect("manifest"))
                .expect("JSON");
        manifest["cross_check"]["confirmed"]
            .as_u64()
            .expect("confirmed")
    };
    let first = confirmed(&pack);
    assert!(first > 100, "{first} seeds confirmed");
    let key = std::fs::read_to_string(pack.join("commit/cross-check.key")).expect("key kept");
    assert_eq!(key.len(), 32);
    let segments = crate::common::segments(&pack);
    // Everything but the log goes: the next run writes the pack from it.
    for entry in std::fs::read_dir(&pack).expect("pack") {
        let path = entry.expect("entry").path();
        if path.file_name() != Some("commit".as_ref()) {
            if path.is_dir() {
                std::fs::remove_dir_all(&path).expect("rm");
            } else {
                std::fs::remove_file(&path).expect("rm");
            }
        }
    }
    let again = crate::common::run_pack(dir.path(), &job, 1);
    assert_eq!(
        confirmed(&again),
        first,
        "the same sample, settled by the log"
    );
    assert_eq!(
        crate::common::segments(&again),
        segments,
        "nothing ran again, so nothing new was logged"
    );
}

/// `--threads` far above the cores is capped at them with a
/// warning (`--threads 100000` once started that many spinning threads),
/// and SIGTERM stops a worker that is still trying to reach its
/// coordinator; a second signal stops a draining one at once.
#[test]
fn a_worker_caps_its_threads_and_stops_on_a_signal() {
    use std::process::Stdio;
    let signal = |child: &std::process::Child, name: &str| {
        let status = std::process::Command::new("kill")
            .args([name, &child.id().to_string()])
            .status()
            .expect("kill");
        assert!(status.success());
    };
    // Nothing listens on port 1: the worker keeps retrying.
    let unreachable = |threads: &str, stderr: Stdio| {
        pregen()
            .args([
                "worker",
                "--coordinator",
                "http://127.0.0.1:1",
                "--token",
                "t",
            ])
            .args(["--threads", threads, "--connect-timeout-s", "600"])
            .stderr(stderr)
            .spawn()
            .expect("spawn the worker")
    };
    let mut child = unreachable("100000", Stdio::piped());
    std::thread::sleep(Duration::from_millis(700));
    signal(&child, "-TERM");
    let status = crate::common::wait(&mut child, Duration::from_secs(60));
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().expect("stderr"), &mut stderr)
        .expect("read");
    assert!(status.success(), "{status}: {stderr}");
    assert!(stderr.contains("--threads 100000 is above"), "{stderr}");
    assert!(stderr.contains("capped at"), "{stderr}");

    // Two signals: the second stops the worker whatever it is doing.
    let mut child = unreachable("1", Stdio::null());
    std::thread::sleep(Duration::from_millis(500));
    signal(&child, "-INT");
    signal(&child, "-INT");
    let status = crate::common::wait(&mut child, Duration::from_secs(60));
    assert!(status.code().is_some(), "{status}");
}
