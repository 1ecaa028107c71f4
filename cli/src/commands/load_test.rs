//! `pregen load-test`: how many results per second one coordinator takes.
//!
//! Starts `pregen serve` as a child process on a loopback port with a pack of
//! the `synthetic` game at no cost per seed, opens N worker sessions against
//! it (the load client of the worker crate: real protocol, one connection per
//! session, seeds run inline) and reports what the coordinator committed, its
//! CPU time and its peak memory. The checks are the ones of a real run: every
//! accepted level re-derived by the coordinator, the cross-check, the durable
//! commit log.

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;
use pregen_worker::{LoadConfig, run_load};

/// The pack folder a load test writes to, under `--out`.
const PACK: &str = "load-test";

/// Flags of `pregen load-test`.
#[derive(Args)]
pub struct LoadTestArgs {
    /// Worker sessions, each on a connection of its own (the open-file
    /// limit must allow two descriptors per session).
    #[arg(long, default_value_t = 100)]
    sessions: usize,
    /// Accepted levels the pack wants; about count / accept-rate results are
    /// sent.
    #[arg(long, default_value_t = 300_000)]
    count: u64,
    /// Share of seeds the synthetic game accepts (each accepted level is
    /// checked by the coordinator).
    #[arg(long, default_value_t = 0.3)]
    accept_rate: f64,
    /// Characters of payload per level.
    #[arg(long, default_value_t = 64)]
    level_bytes: u32,
    /// Most seeds per lease.
    #[arg(long, default_value_t = 1024)]
    seeds_per_lease: u64,
    /// Share of seeds run a second time by another session.
    #[arg(long, default_value_t = 0.01)]
    cross_check: f64,
    /// Output root; the pack goes to `<out>/load-test/`, replaced on every run.
    #[arg(long, default_value = "out")]
    out: PathBuf,
}

/// What one load test measured.
struct Measured {
    results: u64,
    /// From the coordinator listening to every session told it is finished.
    ingest: Duration,
    /// The coordinator's CPU time over `ingest`.
    ingest_cpu: Duration,
    /// The coordinator's CPU time over its whole life (with the pack written).
    total_cpu: Duration,
    /// The coordinator's peak resident memory while taking results.
    ingest_rss_bytes: u64,
    /// The coordinator's peak resident memory, the pack written.
    peak_rss_bytes: u64,
    /// The load client's own CPU time.
    client_cpu: Duration,
    /// The coordinator's closing report.
    report: String,
}

/// Runs the load test and prints its table.
pub async fn run(args: LoadTestArgs) -> Result<()> {
    crate::init_logs("warn");
    if args.sessions == 0 {
        bail!("--sessions must be at least 1");
    }
    if !(args.accept_rate > 0.0 && args.accept_rate <= 1.0) {
        bail!(
            "--accept-rate must be above 0 and at most 1 (got {})",
            args.accept_rate
        );
    }
    let root = args.out.join(PACK);
    if root.exists() {
        std::fs::remove_dir_all(&root)
            .with_context(|| format!("cannot clear {}", root.display()))?;
    }
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let job = args.out.join(format!("{PACK}.toml"));
    std::fs::write(&job, job_text(&args))
        .with_context(|| format!("cannot write {}", job.display()))?;
    let m = measure(&args, &job).await?;
    let per_cpu = m.results as f64 / m.ingest_cpu.as_secs_f64().max(1e-9);
    println!(
        "sessions {}: {} results in {:.2} s = {:.0} results/s; coordinator CPU {:.2} s \
         = {:.0} results per CPU-second ({:.2} cores busy); peak RSS {:.0} MB; \
         with the pack written: CPU {:.2} s, peak RSS {:.0} MB; load client CPU {:.2} s",
        args.sessions,
        m.results,
        m.ingest.as_secs_f64(),
        m.results as f64 / m.ingest.as_secs_f64().max(1e-9),
        m.ingest_cpu.as_secs_f64(),
        per_cpu,
        m.ingest_cpu.as_secs_f64() / m.ingest.as_secs_f64().max(1e-9),
        m.ingest_rss_bytes as f64 / 1e6,
        m.total_cpu.as_secs_f64(),
        m.peak_rss_bytes as f64 / 1e6,
        m.client_cpu.as_secs_f64(),
    );
    eprint!("{}", m.report);
    Ok(())
}

fn job_text(args: &LoadTestArgs) -> String {
    format!(
        "# Written by `pregen load-test`: the synthetic game at no cost per seed.\n\
         pack = \"{PACK}\"\n\
         game = \"synthetic\"\n\
         count = {}\n\
         seeds_per_lease = {}\n\
         cross_check = {}\n\n\
         [params]\n\
         cost_us = 0\n\
         accept_rate = {}\n\
         level_bytes = {}\n",
        args.count, args.seeds_per_lease, args.cross_check, args.accept_rate, args.level_bytes
    )
}

async fn measure(args: &LoadTestArgs, job: &std::path::Path) -> Result<Measured> {
    let token = super::run::loopback_token()?;
    let exe = std::env::current_exe().context("cannot find the pregen binary")?;
    let mut child = Command::new(exe)
        .arg("serve")
        .arg(job)
        .arg("--out")
        .arg(&args.out)
        .args(["--listen", "127.0.0.1:0", "--idle-exit-s", "60"])
        .args(["--max-connections", &(args.sessions + 16).to_string()])
        .env("PREGEN_TOKEN", &token)
        .env("PREGEN_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot start the coordinator (`pregen serve`)")?;
    let stderr = child.stderr.take().map(|mut e| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = e.read_to_string(&mut text);
            text
        })
    });
    let stdout = child.stdout.take();
    let mut coordinator = Coordinator(child);
    let address = match listening_address(stdout) {
        Ok(address) => address,
        Err(e) => {
            let _ = coordinator.0.wait();
            let said = stderr.and_then(|t| t.join().ok()).unwrap_or_default();
            bail!("{e}: {}", said.trim());
        }
    };
    let pid = coordinator.0.id();
    let started = Instant::now();
    let at_start = Usage::of(pid).context("cannot read the coordinator's usage in /proc")?;
    let client_at_start = Usage::of_self();
    let load = run_load(LoadConfig {
        coordinator: format!("http://{address}"),
        token,
        sessions: args.sessions,
        leases_ahead: 1,
    })
    .await;
    let ingest = started.elapsed();
    let after_ingest = Usage::of(pid).unwrap_or(at_start);
    let client_cpu = Usage::of_self().cpu.saturating_sub(client_at_start.cpu);
    // Until it exits, the coordinator's last usage seen is its usage.
    let (status, last) = tokio::task::spawn_blocking(move || {
        let mut last = after_ingest;
        loop {
            if let Some(usage) = Usage::of(pid) {
                last = usage;
            }
            match coordinator.0.try_wait() {
                Ok(Some(status)) => return Ok((status, last)),
                Ok(None) => std::thread::sleep(Duration::from_millis(10)),
                Err(e) => return Err(e),
            }
        }
    })
    .await?
    .context("waiting for the coordinator")?;
    let report = stderr.and_then(|t| t.join().ok()).unwrap_or_default();
    let load = load.with_context(|| format!("the load failed; the coordinator said:\n{report}"))?;
    if !status.success() {
        bail!("the coordinator failed ({status}):\n{report}");
    }
    Ok(Measured {
        results: load.results,
        ingest,
        ingest_cpu: after_ingest.cpu.saturating_sub(at_start.cpu),
        total_cpu: last.cpu,
        ingest_rss_bytes: after_ingest.peak_rss_bytes,
        peak_rss_bytes: last.peak_rss_bytes,
        client_cpu,
        report,
    })
}

/// Reads the coordinator's stdout up to `listening on ADDR`.
fn listening_address(stdout: Option<std::process::ChildStdout>) -> Result<String> {
    let stdout = stdout.context("the coordinator has no stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    for line in lines.by_ref() {
        if let Some(address) = line?.strip_prefix("listening on ") {
            let address = address.trim().to_string();
            // Drain the rest so the coordinator never blocks on a full pipe.
            std::thread::spawn(move || lines.for_each(drop));
            return Ok(address);
        }
    }
    bail!("the coordinator exited before listening")
}

/// The coordinator's process, killed if the load test ends early.
struct Coordinator(Child);

impl Drop for Coordinator {
    fn drop(&mut self) {
        // Of a process already waited for, nothing is killed.
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// A process's CPU time and peak memory, from `/proc`.
#[derive(Clone, Copy)]
struct Usage {
    cpu: Duration,
    peak_rss_bytes: u64,
}

impl Usage {
    /// Of process `pid`; `None` once it has exited.
    fn of(pid: u32) -> Option<Usage> {
        Self::read(&format!("/proc/{pid}"))
    }

    fn of_self() -> Usage {
        Self::read("/proc/self").unwrap_or(Usage {
            cpu: Duration::ZERO,
            peak_rss_bytes: 0,
        })
    }

    fn read(dir: &str) -> Option<Usage> {
        let stat = std::fs::read_to_string(format!("{dir}/stat")).ok()?;
        // The fields after the command name (which may hold spaces): utime
        // and stime, fields 14 and 15 of the line, are 11 and 12 here, in
        // USER_HZ, which Linux fixes at 100 for /proc.
        let rest = stat.rsplit_once(')')?.1;
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok());
        let cpu = Duration::from_millis((ticks(11)? + ticks(12)?) * 10);
        let status = std::fs::read_to_string(format!("{dir}/status")).ok()?;
        let kib = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))?
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse::<u64>()
            .ok()?;
        Some(Usage {
            cpu,
            peak_rss_bytes: kib * 1024,
        })
    }
}
