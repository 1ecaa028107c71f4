//! Helpers: job files, the `pregen` binary, and a pack's deterministic content.

pub mod browser;
pub mod needs;
pub mod rogue;
pub mod s3;

use pregen_pack::PackDir;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, UInt32Type, UInt64Type};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

pub const TOKEN: &str = "test-token";

/// The job every multi-process test runs (same pack name, so release files match).
pub fn job_text(count: u64) -> String {
    format!(
        "pack = \"e2e\"\ngame = \"tilt\"\ncount = {count}\nseeds_per_lease = 32\n\
         [params]\nwidth = 5\nheight = 5\npairs = 2\nmin_moves = 3\n\
         [budget]\nmax_nodes = 50000\nwatchdog_ms = 60000\n"
    )
}

/// Levels of [`job_text`]'s pack: enough that a one-thread worker needs well
/// over a second, several commit-log flushes (one per 200 ms), so that the
/// fault tests strike while the run is under way.
pub const COUNT: u64 = 4000;

pub fn write_job(dir: &Path, text: &str) -> PathBuf {
    std::fs::create_dir_all(dir).expect("create dir");
    let path = dir.join("job.toml");
    std::fs::write(&path, text).expect("write job");
    path
}

/// Runs `command` to its end; its stdout, after checking it succeeded (its
/// stderr in the failure).
pub fn succeeds(command: &mut Command) -> String {
    let out = command.output().expect("run the command");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// Runs `pregen` with `args` and a file; its stdout, after checking it succeeded.
pub fn pregen_stdout(args: &[&str], path: &Path) -> String {
    succeeds(pregen().args(args).arg(path))
}

/// `pregen analysis report PACK -o PAGE` with `flags`: the page's HTML.
pub fn report_html(pack: &Path, page: &Path, flags: &[&str]) -> String {
    let out = pregen()
        .args(["analysis", "report"])
        .args(flags)
        .arg("-o")
        .arg(page)
        .arg(pack)
        .output()
        .expect("run pregen");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(page).expect("the report")
}

pub fn pregen() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pregen"));
    cmd.env("PREGEN_LOG", "warn");
    cmd
}

/// Runs `pregen run` to completion and returns the pack folder.
pub fn run_pack(root: &Path, job: &str, workers: usize) -> PathBuf {
    let job_path = write_job(root, job);
    let out = pregen()
        .args([
            "run",
            "--no-progress",
            "--workers",
            &workers.to_string(),
            "--out",
        ])
        .arg(root.join("out"))
        .arg(&job_path)
        .output()
        .expect("run pregen");
    assert!(
        out.status.success(),
        "pregen run failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    root.join("out/e2e")
}

/// Runs `job` with `pregen run` (one thread) in `root`, SIGKILLs it once
/// its commit log holds two segments (checking the pack was not yet
/// written), and runs it again: the pack's folder and the rerun's stderr
/// (the job file is `root/job.toml`).
pub fn killed_and_rerun(root: &Path, job: &str, limit: Duration) -> (PathBuf, String) {
    let job = write_job(root, job);
    let pack = root.join("out/e2e");
    let mut first = run_once(root, &job);
    wait_for_segments(&pack, 2, limit);
    first.kill().expect("SIGKILL the coordinator");
    first.wait().expect("reap");
    assert!(
        !PackDir::new(&pack).is_complete(),
        "killed before the pack was written"
    );
    let second = run_once(root, &job).wait_with_output().expect("rerun");
    let stderr = String::from_utf8_lossy(&second.stderr).into_owned();
    assert!(second.status.success(), "rerun failed: {stderr}");
    (pack, stderr)
}

/// `pregen run` of the job file `job` on one thread, into `root/out`, its
/// stderr piped.
pub fn run_once(root: &Path, job: &Path) -> Child {
    pregen()
        .args(["run", "--no-progress", "--threads", "1", "--out"])
        .arg(root.join("out"))
        .arg(job)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn run")
}

/// The reference pack of [`job_text`]`(COUNT)`, made once per test binary.
pub fn reference() -> &'static PackContent {
    static REFERENCE: OnceLock<PackContent> = OnceLock::new();
    REFERENCE.get_or_init(|| {
        let dir = tempfile::tempdir().expect("tempdir").keep();
        PackContent::read(&run_pack(&dir, &job_text(COUNT), 1))
    })
}

/// A `pregen serve` process and the address it listens on (killed when
/// dropped, so that a failed test leaves no coordinator behind).
pub struct Served {
    pub child: Child,
    pub url: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn serve(root: &Path, job: &str, lease_ttl_ms: u64) -> Served {
    serve_with(root, job, lease_ttl_ms, &[])
}

/// [`serve`] with more arguments.
pub fn serve_with(root: &Path, job: &str, lease_ttl_ms: u64, extra: &[&std::ffi::OsStr]) -> Served {
    let job_path = write_job(root, job);
    let mut child = pregen()
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--token",
            TOKEN,
            "--lease-ttl-ms",
            &lease_ttl_ms.to_string(),
            "--out",
        ])
        .arg(root.join("out"))
        .args(extra)
        .arg(&job_path)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn serve");
    let stdout = child.stdout.take().expect("stdout");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("read address");
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected line `{line}`"))
        .to_string();
    Served {
        child,
        url: format!("http://{addr}"),
    }
}

pub fn worker(url: &str, name: &str, token: &str) -> Child {
    pregen()
        .args([
            "worker",
            "--coordinator",
            url,
            "--token",
            token,
            "--threads",
            "1",
            "--name",
            name,
        ])
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn worker")
}

/// Serves `job` under `root` with a worker killed (SIGKILL) once the commit
/// log holds a segment and another that finishes the pack: the pack's folder.
pub fn serve_with_a_worker_killed(root: &Path, job: &str, limit: Duration) -> PathBuf {
    let pack = root.join("out/e2e");
    let mut served = serve(root, job, 2_000);
    let mut victim = worker(&served.url, "victim", TOKEN);
    wait_for_segments(&pack, 1, limit);
    victim.kill().expect("SIGKILL the worker");
    victim.wait().expect("reap");
    let mut survivor = worker(&served.url, "survivor", TOKEN);
    assert!(wait(&mut served.child, limit).success(), "serve failed");
    assert!(wait(&mut survivor, limit).success(), "survivor failed");
    pack
}

/// How many times its stall limit a wait lasts at most, however busy the
/// process keeps: a wait still ends by itself.
const WAIT_CAP: u32 = 10;

/// Waits for `child` to exit while it keeps working: `limit` is how long it
/// may go without using any CPU time (a slow or busy machine slows the work
/// but does not fail the wait), and ten times `limit` the most a wait
/// lasts. Past either, kills it and panics.
pub fn wait(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let started = Instant::now();
    let mut last_work = (cpu_ticks(child.id()), Instant::now());
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return status;
        }
        let now = Instant::now();
        let ticks = cpu_ticks(child.id());
        if ticks.is_none() || ticks != last_work.0 {
            last_work = (ticks, now);
        }
        let (stalled, capped) = (
            now - last_work.1 >= limit,
            now - started >= limit * WAIT_CAP,
        );
        if stalled || capped {
            let _ = child.kill();
            let _ = child.wait();
            if capped {
                panic!("process did not finish within {:?}", limit * WAIT_CAP);
            }
            panic!("process used no CPU for {limit:?} and did not finish");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The CPU time a process has used, in clock ticks (`None` where
/// `/proc` does not say, which leaves a wait to its cap of time alone).
fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command, which is in parentheses and may hold spaces.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    // utime and stime: fields 14 and 15 of the line, 12 and 13 after it.
    let (user, system) = (fields.get(11)?, fields.get(12)?);
    Some(user.parse::<u64>().ok()? + system.parse::<u64>().ok()?)
}

/// Waits until the commit log holds at least `n` segments.
pub fn wait_for_segments(pack: &Path, n: usize, limit: Duration) {
    let deadline = Instant::now() + limit;
    while segments(pack) < n {
        if Instant::now() >= deadline {
            panic!("no commit segments after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

pub fn segments(pack: &Path) -> usize {
    std::fs::read_dir(pack.join("commit"))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().starts_with("seg-"))
                .count()
        })
        .unwrap_or(0)
}

/// One level row, deterministic columns only.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelRow {
    pub tier: u32,
    pub seed: u64,
    pub difficulty: f64,
    pub moves: u32,
    pub layout: String,
    pub level_json: String,
    pub solution: String,
    pub level_hash: String,
    pub attempt: u32,
}

/// What must be identical between two runs of one job.
#[derive(Debug, Clone, PartialEq)]
pub struct PackContent {
    pub levels: Vec<LevelRow>,
    pub release_sums: String,
    pub campaigns_sha: String,
    /// (campaign, position, seed) of every campaign row.
    pub campaigns: Vec<(u64, u32, u64)>,
    pub reject_seeds: Vec<(u64, String, String)>,
}

impl PackContent {
    pub fn read(pack: &Path) -> PackContent {
        assert!(
            PackDir::new(pack).is_complete(),
            "{} has no _SUCCESS",
            pack.display()
        );
        let mut levels = Vec::new();
        let parts = PackDir::new(pack).level_parts().expect("level files");
        for (tier, path) in parts {
            for batch in batches(&path) {
                let s = |n: &str| batch.column_by_name(n).expect(n).as_string::<i32>().clone();
                let (layout, json, solution, hash) =
                    (s("layout"), s("level_json"), s("solution"), s("level_hash"));
                let seed = batch
                    .column_by_name("seed")
                    .expect("seed")
                    .as_primitive::<UInt64Type>()
                    .clone();
                let diff = batch
                    .column_by_name("difficulty")
                    .expect("difficulty")
                    .as_primitive::<Float64Type>()
                    .clone();
                let moves = batch
                    .column_by_name("moves")
                    .expect("moves")
                    .as_primitive::<UInt32Type>()
                    .clone();
                let attempt = batch
                    .column_by_name("attempt")
                    .expect("attempt")
                    .as_primitive::<UInt32Type>()
                    .clone();
                for i in 0..batch.num_rows() {
                    levels.push(LevelRow {
                        tier,
                        seed: seed.value(i),
                        difficulty: diff.value(i),
                        moves: moves.value(i),
                        layout: layout.value(i).to_string(),
                        level_json: json.value(i).to_string(),
                        solution: solution.value(i).to_string(),
                        level_hash: hash.value(i).to_string(),
                        attempt: attempt.value(i),
                    });
                }
            }
        }
        let mut reject_seeds = Vec::new();
        for batch in batches(&pack.join(pregen_pack::dir::REJECTS_FILE)) {
            let seed = batch
                .column_by_name("seed")
                .expect("seed")
                .as_primitive::<UInt64Type>()
                .clone();
            let status = batch
                .column_by_name("status")
                .expect("status")
                .as_string::<i32>()
                .clone();
            let reason = batch
                .column_by_name("reason")
                .expect("reason")
                .as_string::<i32>()
                .clone();
            let detail = batch
                .column_by_name("reason_detail")
                .expect("reason_detail")
                .as_string::<i32>()
                .clone();
            for i in 0..batch.num_rows() {
                // The reason as the game gave it: `code: detail`.
                let reason = match detail.value(i) {
                    "" => reason.value(i).to_string(),
                    detail => format!("{}: {detail}", reason.value(i)),
                };
                reject_seeds.push((seed.value(i), status.value(i).to_string(), reason));
            }
        }
        let mut campaigns = Vec::new();
        for batch in batches(&pack.join(pregen_pack::dir::CAMPAIGNS_FILE)) {
            let u64s = |n: &str| {
                batch
                    .column_by_name(n)
                    .expect(n)
                    .as_primitive::<UInt64Type>()
                    .clone()
            };
            let (campaign, seed) = (u64s("campaign"), u64s("seed"));
            let position = batch
                .column_by_name("position")
                .expect("position")
                .as_primitive::<UInt32Type>()
                .clone();
            for i in 0..batch.num_rows() {
                campaigns.push((campaign.value(i), position.value(i), seed.value(i)));
            }
        }
        PackContent {
            campaigns,
            levels,
            release_sums: std::fs::read_to_string(
                PackDir::new(pack)
                    .release()
                    .join(pregen_pack::dir::SHA256SUMS),
            )
            .expect("SHA256SUMS"),
            campaigns_sha: pregen_pack::durable::sha256_file(
                &pack.join(pregen_pack::dir::CAMPAIGNS_FILE),
            )
            .expect("sha"),
            reject_seeds,
        }
    }

    /// Compares everything deterministic (attempt and timings may differ).
    pub fn assert_same(&self, other: &PackContent) {
        self.assert_same_levels(other);
        assert_eq!(
            self.release_sums, other.release_sums,
            "release files differ"
        );
        assert_eq!(
            self.campaigns_sha, other.campaigns_sha,
            "campaigns.parquet differs"
        );
    }

    /// [`PackContent::assert_same`] for the pack of another job that must
    /// make the same levels: the campaigns compared by their rows, not their
    /// file (whose provenance columns name the job), and the release files
    /// but for the seed files (whose header names what regenerates them).
    pub fn assert_same_but_job(&self, other: &PackContent) {
        let levels_only = |sums: &str| -> String {
            sums.lines()
                .filter(|l| !l.contains("  seeds/"))
                .map(|l| format!("{l}\n"))
                .collect()
        };
        assert_eq!(
            levels_only(&self.release_sums),
            levels_only(&other.release_sums),
            "release files differ"
        );
        self.assert_same_levels(other);
    }

    /// The levels, campaigns' rows and rejects.
    fn assert_same_levels(&self, other: &PackContent) {
        let strip = |rows: &[LevelRow]| {
            rows.iter()
                .map(|r| LevelRow {
                    attempt: 0,
                    ..r.clone()
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(self.levels.len(), other.levels.len(), "level count");
        assert!(
            strip(&self.levels) == strip(&other.levels),
            "level rows differ"
        );
        assert!(self.campaigns == other.campaigns, "campaigns differ");
        assert!(self.reject_seeds == other.reject_seeds, "rejects differ");
    }
}

fn batches(path: &Path) -> Vec<arrow_array::RecordBatch> {
    let file = File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    ParquetRecordBatchReaderBuilder::try_new(file)
        .expect("parquet")
        .build()
        .expect("reader")
        .collect::<Result<Vec<_>, _>>()
        .expect("batches")
}
