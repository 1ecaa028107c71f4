//! Packs in an object store (S3, against moto's server): written with the
//! same bytes as on disk for every game and release form, read in place by
//! every reading command, resumed by a coordinator with an empty disk after
//! a SIGKILL, kept from a second coordinator by the lease, and carried
//! through a store that stops answering or answers 503 for a while.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::s3::{Kind, Mode, Proxy, S3Server, remote, s3_servers, with_store};
use crate::common::{COUNT, PackContent, job_text, pregen, reference, run_pack, wait, write_job};

/// `pregen run JOB --out URL` (one worker, `flags` added) against `server`
/// through `endpoint`, spawned.
fn run_to(server: &S3Server, endpoint: &str, job: &Path, url: &str, flags: &[&str]) -> Command {
    let mut command = pregen();
    command
        .args(["run", "--no-progress", "--workers", "1", "--out", url])
        .args(flags)
        .arg(job);
    with_store(&mut command, server, endpoint);
    command
}

fn ok(command: &mut Command) -> String {
    let out = command.output().expect("run pregen");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{command:?}: {stderr}{stdout}");
    format!("{stdout}{stderr}")
}

/// The pack at `url` copied into `to` (commit log left out).
fn download(server: &S3Server, url: &str, to: &Path) -> PathBuf {
    remote(server, url)
        .download_all(to, |o| !o.name.starts_with("commit/"))
        .expect("download the pack");
    to.to_path_buf()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_game_packs_the_same_release_in_a_bucket_as_on_disk() {
    let servers = s3_servers();
    let dir = tempfile::tempdir().expect("tempdir");
    let forms = [
        ("text", ""),
        (
            "jsonl",
            "[release]\nformat = \"jsonl\"\nlevels_per_file = 5\n",
        ),
    ];
    for game in ["tilt", "sokoban", "cube", "doors", "dungeon"] {
        for (form, release) in forms {
            let root = dir.path().join(format!("{game}-{form}"));
            let job_text = format!(
                "pack = \"e2e\"\ngame = \"{game}\"\ncount = 12\nseeds_per_lease = 4\n\
                 [tiers]\nscheme = \"equal\"\ncount = 2\n[campaigns]\nlength = 2\n{release}"
            );
            let local = run_pack(&root, &job_text, 1);
            for server in &servers {
                let case = format!("{game} {form} on {}", server.kind().name());
                let copy = root.join(format!("copy-{}", server.kind().name()));
                packed_in_a_bucket(server, &root.join("job.toml"), &local, &copy, &case);
            }
        }
    }
}

#[test]
fn a_game_programs_pack_in_a_bucket_is_the_one_on_disk() {
    use crate::common::needs::{PYTHON, needs};
    if !needs(&[PYTHON]) {
        return;
    }
    let servers = s3_servers();
    let dir = tempfile::tempdir().expect("tempdir");
    let local = run_pack(dir.path(), &crate::external::rushhour_job(12, 0.01), 1);
    let job = dir.path().join("job.toml");
    for server in &servers {
        let endpoint = server.endpoint();
        let out = server.url(&format!("program-{}", server.kind().name()));
        let url = format!("{out}/e2e");
        ok(&mut run_to(server, &endpoint, &job, &out, &[]));
        let copy = download(server, &url, &dir.path().join(server.kind().name()));
        assert_eq!(
            read(&copy.join("release/SHA256SUMS")),
            read(&local.join("release/SHA256SUMS")),
            "{}",
            server.kind().name()
        );
        // Judged by the program the job names, never the manifest's command.
        let job = job.to_str().expect("a UTF-8 path");
        ok(with_store(
            pregen().args(["release", "verify", &url, "--job", job]),
            server,
            &endpoint,
        ));
        ok(with_store(
            pregen().args(["analysis", "verify", &url, "--job", job]),
            server,
            &endpoint,
        ));
    }
}

/// The job `job` run into `server`'s bucket: the same pack as `local`, read
/// in place by every reading command, archived to the bucket and verified
/// there, and found complete when run again.
fn packed_in_a_bucket(server: &S3Server, job: &Path, local: &Path, copy: &Path, case: &str) {
    let endpoint = server.endpoint();
    let out = server.url(&case.replace(' ', "-"));
    let url = format!("{out}/e2e");
    let said = ok(&mut run_to(server, &endpoint, job, &out, &[]));
    assert!(
        said.contains(&format!("wrote 12 levels to {url}")),
        "{case}: {said}"
    );
    let copy = download(server, &url, copy);
    assert_eq!(
        read(&copy.join("release/SHA256SUMS")),
        read(&local.join("release/SHA256SUMS")),
        "{case}"
    );
    PackContent::read(&copy).assert_same(&PackContent::read(local));
    assert!(copy.join("_SUCCESS").exists(), "{case}");

    // Read in place: every reading command takes the URL.
    let reads: [&[&str]; 4] = [
        &["analysis", "verify"],
        &["release", "verify"],
        &["analysis", "summary"],
        &["analysis", "levels"],
    ];
    for args in reads {
        ok(with_store(pregen().args(args).arg(&url), server, &endpoint));
    }
    let archive = format!("{out}/e2e-release.tar.zst");
    ok(with_store(
        pregen().args(["archive", &url, "-o", &archive]),
        server,
        &endpoint,
    ));
    let said = ok(with_store(
        pregen().args(["release", "verify", &archive]),
        server,
        &endpoint,
    ));
    assert!(
        said.contains("12 regenerated from their seeds"),
        "{case}: {said}"
    );

    // The same job again finds the pack complete.
    let again = ok(&mut run_to(server, &endpoint, job, &out, &[]));
    assert!(
        again.contains(&format!("{url} is already complete")),
        "{case}: {again}"
    );
}

#[test]
fn a_killed_coordinator_resumes_from_the_bucket_alone() {
    for server in s3_servers() {
        killed_and_resumed_from(&server);
    }
}

fn killed_and_resumed_from(server: &S3Server) {
    let server = server;
    let endpoint = server.endpoint();
    let dir = tempfile::tempdir().expect("tempdir");
    let job = write_job(dir.path(), &job_text(COUNT));
    let out = server.url("killed");
    let log = remote(&server, &format!("{out}/e2e/commit"));
    let segments = || {
        log.list()
            .map(|l| l.iter().filter(|o| o.name.starts_with("seg-")).count())
            .unwrap_or(0)
    };
    let flags = ["--threads", "1", "--store-lease-s", "2"];
    let mut first = run_to(&server, &endpoint, &job, &out, &flags)
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn run");
    let deadline = Instant::now() + Duration::from_secs(120);
    while segments() < 2 {
        assert!(Instant::now() < deadline, "no segments in the bucket");
        std::thread::sleep(Duration::from_millis(20));
    }
    first.kill().expect("SIGKILL the coordinator");
    first.wait().expect("reap");
    assert!(
        remote(&server, &out)
            .read("e2e/_SUCCESS")
            .expect("read")
            .is_none()
    );

    // Another folder, nothing on its disk: the log comes from the bucket.
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let said = ok(run_to(&server, &endpoint, &job, &out, &flags).current_dir(elsewhere.path()));
    assert!(said.contains("seeds resumed from the commit log"), "{said}");
    let copy = download(&server, &format!("{out}/e2e"), &dir.path().join("copy"));
    PackContent::read(&copy).assert_same(reference());
}

#[test]
fn a_second_coordinator_on_a_bucket_pack_is_kept_out() {
    for server in s3_servers() {
        second_coordinator_kept_out(&server);
    }
}

fn second_coordinator_kept_out(server: &S3Server) {
    let endpoint = server.endpoint();
    let dir = tempfile::tempdir().expect("tempdir");
    let job = write_job(dir.path(), &job_text(COUNT));
    let out = server.url("leased");
    let serve = |command: &mut Command| {
        command
            .args([
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--token",
                "t",
                "--store-lease-s",
                "2",
            ])
            .args(["--out", &out])
            .arg(&job);
        with_store(command, &server, &endpoint);
    };
    let mut first = pregen();
    serve(&mut first);
    let mut first = first
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("serve");
    let lease = remote(&server, &format!("{out}/e2e/commit"));
    let deadline = Instant::now() + Duration::from_secs(60);
    while lease.read("job.json").expect("read").is_none() {
        assert!(
            Instant::now() < deadline,
            "the first coordinator never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut second = pregen();
    serve(&mut second);
    let refused = second.output().expect("second serve");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    let _ = first.kill();
    let _ = first.wait();
    assert!(!refused.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("{out}/e2e/commit/LEASE is held by pid")),
        "{stderr}"
    );
    assert!(
        stderr.contains("another coordinator is using this pack"),
        "{stderr}"
    );
}

#[test]
fn a_store_that_stops_or_answers_503_for_a_while_costs_no_byte() {
    for mut server in s3_servers() {
        store_faults_cost_no_byte(&mut server);
    }
}

/// A run through a proxy that answers 503 for 1.5 s, then a store down for
/// 2 s: s3s-fs stopped and started again (its objects kept), moto's
/// connections refused by the proxy (moto keeps its objects in memory).
fn store_faults_cost_no_byte(server: &mut S3Server) {
    let proxy = Proxy::before(&server.endpoint());
    let dir = tempfile::tempdir().expect("tempdir");
    let job = write_job(dir.path(), &job_text(COUNT));
    let out = server.url("faults");
    let log = remote(&server, &format!("{out}/e2e/commit"));
    let mut run = run_to(&server, &proxy.endpoint, &job, &out, &["--threads", "1"])
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn run");
    let deadline = Instant::now() + Duration::from_secs(120);
    while log.list().map_or(0, |l| l.len()) < 3 {
        assert!(Instant::now() < deadline, "nothing in the bucket");
        std::thread::sleep(Duration::from_millis(20));
    }
    proxy.set(Mode::Busy);
    std::thread::sleep(Duration::from_millis(1500));
    if server.kind() == Kind::S3sFs {
        proxy.set(Mode::Pass);
        server.stop();
        std::thread::sleep(Duration::from_millis(2000));
        server.resume().expect("start the server again");
    } else {
        proxy.set(Mode::Down);
        std::thread::sleep(Duration::from_millis(2000));
        proxy.set(Mode::Pass);
    }
    let status = wait(&mut run, Duration::from_secs(120));
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut run.stderr.take().expect("stderr"), &mut stderr).ok();
    assert!(status.success(), "{stderr}");
    assert!(
        stderr.contains("the object store failed; trying again"),
        "{stderr}"
    );
    let copy = download(&server, &format!("{out}/e2e"), &dir.path().join("copy"));
    PackContent::read(&copy).assert_same(reference());
}

#[test]
fn a_bucket_that_does_not_exist_is_named_and_nothing_is_written() {
    for server in s3_servers() {
        missing_bucket_named(&server);
    }
}

fn missing_bucket_named(server: &S3Server) {
    let dir = tempfile::tempdir().expect("tempdir");
    let job = write_job(dir.path(), &job_text(20));
    let out = run_to(
        server,
        &server.endpoint(),
        &job,
        "s3://no-such-bucket/packs",
        &[],
    )
    .output()
    .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    // s3s-fs makes a bucket's folder on the first put: only moto refuses.
    if server.kind() == Kind::Moto {
        assert!(!out.status.success(), "{stderr}");
        assert!(stderr.contains("s3://no-such-bucket/packs/e2e"), "{stderr}");
        assert!(stderr.contains("NoSuchBucket"), "{stderr}");
    }
    let read = with_store(
        pregen().args(["analysis", "summary", &server.url("none")]),
        server,
        &server.endpoint(),
    )
    .output()
    .expect("summary");
    let stderr = String::from_utf8_lossy(&read.stderr);
    assert!(!read.status.success());
    assert!(
        stderr.contains("s3://pregen-test/none: no such pack"),
        "{stderr}"
    );
    // Credentials the server refuses (moto takes any): at once, named.
    if server.kind() == Kind::S3sFs {
        let out = run_to(server, &server.endpoint(), &job, &server.url("denied"), &[])
            .env("AWS_SECRET_ACCESS_KEY", "not-the-secret")
            .output()
            .expect("run");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{stderr}");
        assert!(
            stderr.contains("s3://pregen-test/denied/e2e/commit/LEASE: cannot write"),
            "{stderr}"
        );
        assert!(stderr.contains("SignatureDoesNotMatch"), "{stderr}");
        assert!(
            !stderr.contains("trying again"),
            "a refusal is not tried again: {stderr}"
        );
    }
}

#[test]
fn analysts_read_a_bucket_pack_in_place_with_pyarrow_polars_and_duckdb() {
    use crate::common::needs::{Need, needs};
    let readers = Need::Python(&["pyarrow", "polars", "duckdb", "duckdb_extension_httpfs"]);
    if !needs(&[readers]) {
        return;
    }
    // Against moto only: s3s-fs answers 500 to a suffix range longer than
    // the object (its seek goes before the file's start), which polars
    // sends for a small file's footer; S3 clamps it.
    for server in s3_servers().iter().filter(|s| s.kind() == Kind::Moto) {
        read_in_place(server);
    }
}

fn read_in_place(server: &S3Server) {
    let endpoint = server.endpoint();
    let dir = tempfile::tempdir().expect("tempdir");
    let job = write_job(dir.path(), &job_text(300));
    let out = server.url("analysts");
    ok(&mut run_to(&server, &endpoint, &job, &out, &[]));
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../analysis/python/read_bucket.py"
    );
    let mut python = Command::new("python3");
    python.arg(script).arg(format!("{out}/e2e"));
    let said = ok(with_store(&mut python, &server, &endpoint));
    assert!(said.contains("manifest: 300 levels"), "{said}");
}
