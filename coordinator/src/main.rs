//! `pregen`: run a pack on this machine, serve a job to remote workers, run a
//! worker, or read a finished pack. CLI glue only; the work lives in the
//! coordinator, worker and analysis libraries.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use pregen_coordinator::Job;
use pregen_coordinator::job::TierScheme;
use pregen_coordinator::server::{RunOptions, RunSummary, ServerTls, run_job};
use pregen_worker::{WorkerConfig, run_worker};
use tokio_util::sync::CancellationToken;

/// Pregenerates verified puzzle levels: a coordinator hands seed ranges to
/// workers over gRPC and writes a Parquet dataset, tiers, campaigns and release
/// files to `<out>/<pack>/`.
#[derive(Parser)]
#[command(version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a whole pack on this machine: coordinator plus local workers over
    /// loopback gRPC, with a progress bar. Rerun the same command to resume.
    Run {
        #[command(flatten)]
        job: JobArgs,
        /// Local worker processes' worth of sessions to run.
        #[arg(long, default_value_t = 1)]
        workers: usize,
        /// Threads per local worker (default: all cores shared among workers).
        #[arg(long)]
        threads: Option<usize>,
        /// Do not draw the progress bar.
        #[arg(long)]
        no_progress: bool,
        /// Serve Prometheus metrics at http://ADDR/metrics (e.g. 127.0.0.1:9100).
        #[arg(long, value_name = "ADDR")]
        metrics: Option<SocketAddr>,
    },
    /// Serve a job to remote workers (`pregen worker`); exits when the pack is written.
    Serve {
        #[command(flatten)]
        job: JobArgs,
        /// Address to listen on.
        #[arg(long, default_value = "0.0.0.0:50051")]
        listen: SocketAddr,
        /// Shared token workers must present.
        #[arg(long, env = "PREGEN_TOKEN", hide_env_values = true)]
        token: String,
        /// Re-issue a lease not heard of for this long (ms).
        #[arg(long, default_value_t = 15_000)]
        lease_ttl_ms: u64,
        /// Serve Prometheus metrics at http://ADDR/metrics (e.g. 0.0.0.0:9100).
        #[arg(long, value_name = "ADDR")]
        metrics: Option<SocketAddr>,
        /// Serve gRPC over TLS with this certificate chain (PEM, leaf first);
        /// workers then connect to `https://HOST:PORT`.
        #[arg(long, value_name = "PEM", requires = "tls_key")]
        tls_cert: Option<PathBuf>,
        /// The TLS certificate's private key (PEM).
        #[arg(long, value_name = "PEM", requires = "tls_cert")]
        tls_key: Option<PathBuf>,
    },
    /// Run a worker against a coordinator until its job is done (SIGTERM drains).
    Worker {
        /// Coordinator URL.
        #[arg(long, env = "PREGEN_COORDINATOR")]
        coordinator: String,
        /// Shared token.
        #[arg(long, env = "PREGEN_TOKEN", hide_env_values = true)]
        token: String,
        /// Threads for candidates (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
        /// Name stored in the `worker` column (default: host-pid).
        #[arg(long)]
        name: Option<String>,
        /// Give up when the coordinator is unreachable this long (seconds).
        #[arg(long, default_value_t = 60)]
        connect_timeout_s: u64,
        /// For an `https://` coordinator: a CA certificate (PEM) to trust
        /// besides the system's roots.
        #[arg(long, value_name = "PEM")]
        tls_ca: Option<PathBuf>,
    },
    /// Solve level files in a game's text form (made by pregen or by hand) and
    /// print a table: file, level, moves, pushes (sokoban), proven optimal,
    /// search nodes, time, solution. Sokoban files may be XSB collections.
    Solve {
        /// The game: cube, doors, dungeon, sokoban or tilt.
        #[arg(long)]
        game: String,
        /// Search nodes allowed per level.
        #[arg(long, default_value_t = 1_000_000)]
        max_nodes: u64,
        /// Level files: one level each, or XSB collections for sokoban.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Count every doors level for (rooms, colours): how many are good (no
    /// defect, planar), how many of those differ by the seed's solution key
    /// (seed 001's Table 3 "total unique" column) and how many by more than a
    /// renaming of rooms and colours (`unique = "structure"`). Walks all 2^M
    /// levels on all cores, so M = n(n-1)(b+1)/2 + bn may be 26 at most.
    DoorsCensus {
        /// Rooms (n).
        #[arg(long)]
        rooms: usize,
        /// Colours (b).
        #[arg(long)]
        colours: usize,
    },
    /// Write one reproducible archive (`.tar.zst`) of a finished pack's
    /// release files and manifest, for a release pipeline. Every file is
    /// checked against release/SHA256SUMS first; the same release files
    /// always give the same archive bytes.
    Archive {
        /// The pack's folder (`<out>/<pack>`).
        pack: PathBuf,
        /// The archive to write (default: `<pack>-release.tar.zst` here).
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
    /// Read a finished pack.
    Analysis {
        #[command(subcommand)]
        command: AnalysisCommand,
    },
    /// Print an example job file.
    ExampleJob,
}

#[derive(Subcommand)]
enum AnalysisCommand {
    /// Counts by tier and status, percentiles of difficulty, moves and times.
    Summary {
        /// The pack's folder (`<out>/<pack>`).
        pack: PathBuf,
    },
    /// Replay every level under its game's rules and check its hash; exits
    /// non-zero if any level fails.
    Verify {
        /// The pack's folder (`<out>/<pack>`).
        pack: PathBuf,
    },
    /// Print the pack's levels in the game's text form (XSB for sokoban), as
    /// one collection file: tier by tier, easiest first, each headed by a `;`
    /// line with its id, tier and difficulty.
    Levels {
        /// The pack's folder (`<out>/<pack>`).
        pack: PathBuf,
        /// Only this tier (1-based).
        #[arg(long)]
        tier: Option<u32>,
    },
    /// Write a self-contained HTML report of the pack (no scripts, nothing
    /// fetched): overview, a table per tier with the game's metrics, and charts
    /// of difficulty, moves, times, rejections and the campaigns' ramp.
    Report {
        /// The pack's folder (`<out>/<pack>`).
        pack: PathBuf,
        /// Where to write the page; `-` for standard output.
        #[arg(short, long, default_value = "report.html")]
        output: PathBuf,
    },
}

/// The job: a TOML file, any field of which a flag overrides.
#[derive(Args)]
struct JobArgs {
    /// Job file (TOML); see `pregen example-job`.
    job: Option<PathBuf>,
    /// Output root; the pack goes to `<out>/<pack>/`.
    #[arg(long, default_value = "out")]
    out: PathBuf,
    /// Pack name.
    #[arg(long)]
    pack: Option<String>,
    /// Game: cube, doors, dungeon, sokoban or tilt.
    #[arg(long)]
    game: Option<String>,
    /// Accepted levels wanted.
    #[arg(long)]
    count: Option<u64>,
    /// First seed.
    #[arg(long)]
    first_seed: Option<u64>,
    /// Seeds per lease.
    #[arg(long)]
    seeds_per_lease: Option<u64>,
    /// Give up after this many seeds per stratum without enough levels.
    #[arg(long)]
    max_seeds: Option<u64>,
    /// Search nodes per level.
    #[arg(long)]
    max_nodes: Option<u64>,
    /// Wall-clock watchdog per level (ms).
    #[arg(long)]
    watchdog_ms: Option<u64>,
    /// Equal-size tiers.
    #[arg(long)]
    tiers: Option<u32>,
    /// A game param, `key=value` with a TOML value (repeatable), e.g. `pairs=3`.
    #[arg(long = "param", value_name = "KEY=VALUE")]
    params: Vec<String>,
}

impl JobArgs {
    fn load(&self) -> Result<Job> {
        let mut table = match &self.job {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read job file {}", path.display()))?;
                text.parse::<toml::Table>()
                    .map_err(|e| anyhow::anyhow!("invalid job {}: {e}", path.display()))?
            }
            None => toml::Table::new(),
        };
        let mut set = |k: &str, v: Option<toml::Value>| {
            if let Some(v) = v {
                table.insert(k.to_string(), v);
            }
        };
        set("pack", self.pack.clone().map(toml::Value::String));
        set("game", self.game.clone().map(toml::Value::String));
        set("count", self.count.map(|v| toml::Value::Integer(v as i64)));
        set(
            "first_seed",
            self.first_seed.map(|v| toml::Value::Integer(v as i64)),
        );
        set(
            "seeds_per_lease",
            self.seeds_per_lease.map(|v| toml::Value::Integer(v as i64)),
        );
        set(
            "max_seeds",
            self.max_seeds.map(|v| toml::Value::Integer(v as i64)),
        );
        let job_text = toml::to_string(&table)?;
        let mut job = Job::parse(&job_text).with_context(|| match &self.job {
            Some(p) => format!("job file {}", p.display()),
            None => "job flags (give a job file or --pack, --game and --count)".into(),
        })?;
        if let Some(n) = self.max_nodes {
            job.budget.max_nodes = n;
        }
        if let Some(ms) = self.watchdog_ms {
            job.budget.watchdog_ms = ms;
        }
        if let Some(t) = self.tiers {
            job.tiers = TierScheme::Equal { count: t };
        }
        for kv in &self.params {
            let (k, v) = kv
                .split_once('=')
                .with_context(|| format!("--param `{kv}` is not KEY=VALUE"))?;
            let value: toml::Value = format!("v = {v}")
                .parse::<toml::Table>()
                .ok()
                .and_then(|mut t| t.remove("v"))
                .unwrap_or_else(|| toml::Value::String(v.to_string()));
            job.params.insert(k.trim().to_string(), value);
        }
        job.validate().context("job after flags")?;
        Ok(job)
    }
}

fn init_logs(default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("PREGEN_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

/// Cancels the token on SIGINT or SIGTERM.
fn cancel_on_signals() -> CancellationToken {
    let token = CancellationToken::new();
    let t = token.clone();
    tokio::spawn(async move {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => return,
            };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        t.cancel();
    });
    token
}

fn report(summary: &RunSummary) {
    if summary.already_complete {
        eprintln!(
            "{} is already complete; nothing to do",
            summary.dir.display()
        );
        return;
    }
    let secs = summary.elapsed.as_secs_f64();
    eprintln!(
        "wrote {} levels to {} in {:.1} s (pack files {:.2} s; {} seeds tried, {:.0} levels/s{})",
        summary.accepted,
        summary.dir.display(),
        secs,
        summary.writing.as_secs_f64(),
        summary.seeds,
        summary.accepted as f64 / secs.max(1e-9),
        if summary.resumed_seeds > 0 {
            format!(
                ", {} seeds resumed from the commit log",
                summary.resumed_seeds
            )
        } else {
            String::new()
        },
    );
    if summary.progress.mismatches > 0 {
        eprintln!(
            "warning: {} results disagreed with earlier results for the same seed",
            summary.progress.mismatches
        );
    }
}

#[tokio::main]
async fn main() {
    if let Err(e) = real_main().await {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

async fn real_main() -> Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Run {
            job,
            workers,
            threads,
            no_progress,
            metrics,
        } => {
            init_logs("warn");
            let spec = job.load()?;
            if workers == 0 {
                bail!("--workers must be at least 1 (use `pregen serve` for remote workers only)");
            }
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            let token = format!("local-{:x}", std::process::id() as u64 ^ 0x5eed_5eed);
            let summary = run_job(
                spec,
                RunOptions {
                    out: job.out,
                    listen: SocketAddr::from(([127, 0, 0, 1], 0)),
                    token,
                    local_workers: workers,
                    threads_per_worker: threads.unwrap_or((cores / workers).max(1)),
                    lease_ttl: Duration::from_secs(15),
                    progress: !no_progress,
                    metrics,
                    tls: None,
                    on_listening: Some(Box::new(|l| {
                        if let Some(m) = l.metrics {
                            eprintln!("metrics on http://{m}/metrics");
                        }
                    })),
                    shutdown: cancel_on_signals(),
                },
            )
            .await?;
            report(&summary);
        }
        Command::Serve {
            job,
            listen,
            token,
            lease_ttl_ms,
            metrics,
            tls_cert,
            tls_key,
        } => {
            init_logs("info");
            let spec = job.load()?;
            if token.is_empty() {
                bail!("--token (or PREGEN_TOKEN) must not be empty");
            }
            let tls = match (tls_cert, tls_key) {
                (Some(cert), Some(key)) => Some(ServerTls {
                    cert: read_file(&cert)?,
                    key: read_file(&key)?,
                }),
                _ => None,
            };
            let summary = run_job(
                spec,
                RunOptions {
                    out: job.out,
                    listen,
                    token,
                    local_workers: 0,
                    threads_per_worker: 1,
                    lease_ttl: Duration::from_millis(lease_ttl_ms),
                    progress: false,
                    metrics,
                    tls,
                    on_listening: Some(Box::new(|l| {
                        println!("listening on {}", l.grpc);
                        if let Some(m) = l.metrics {
                            println!("metrics on http://{m}/metrics");
                        }
                    })),
                    shutdown: cancel_on_signals(),
                },
            )
            .await?;
            report(&summary);
        }
        Command::Worker {
            coordinator,
            token,
            threads,
            name,
            connect_timeout_s,
            tls_ca,
        } => {
            init_logs("info");
            let mut config = WorkerConfig::new(coordinator, token);
            if let Some(path) = tls_ca {
                config.tls_ca = Some(read_file(&path)?);
            }
            if let Some(t) = threads {
                config.threads = t;
            }
            if let Some(n) = name {
                config.name = n;
            }
            config.connect_timeout = Duration::from_secs(connect_timeout_s);
            let report = run_worker(config, cancel_on_signals()).await?;
            eprintln!(
                "worker done: {} results, {} leases, {} sessions{}",
                report.results,
                report.leases,
                report.sessions,
                if report.drained {
                    " (drained on shutdown)"
                } else {
                    ""
                }
            );
        }
        Command::Archive { pack, output } => {
            let dest = match output {
                Some(path) => path,
                None => PathBuf::from(pregen_coordinator::archive::default_archive_name(&pack)?),
            };
            let written = pregen_coordinator::archive::write_release_archive(&pack, &dest)?;
            println!(
                "wrote {}: {} files, {} bytes ({} before compression), sha256 {}",
                written.path.display(),
                written.files,
                written.archive_bytes,
                written.bytes,
                written.sha256
            );
        }
        Command::Analysis {
            command: AnalysisCommand::Summary { pack },
        } => {
            let summary = pregen_analysis::summarize(&pack)?;
            print_out(&summary.to_string())?;
        }
        Command::Analysis {
            command: AnalysisCommand::Levels { pack, tier },
        } => print_out(&pregen_analysis::print_levels(&pack, tier)?)?,
        Command::Analysis {
            command: AnalysisCommand::Report { pack, output },
        } => {
            let html = pregen_analysis::report(&pack)?;
            if output.as_os_str() == "-" {
                print_out(&html)?;
            } else {
                std::fs::write(&output, &html)
                    .with_context(|| format!("cannot write {}", output.display()))?;
                eprintln!("wrote {} ({} KB)", output.display(), html.len() / 1024);
            }
        }
        Command::Analysis {
            command: AnalysisCommand::Verify { pack },
        } => {
            let verified = pregen_analysis::verify(&pack)?;
            for (id, why) in &verified.failures {
                eprintln!("{id}: {why}");
            }
            if !verified.failures.is_empty() {
                anyhow::bail!(
                    "{} of {} levels failed",
                    verified.failures.len(),
                    verified.levels
                );
            }
            println!(
                "{} levels replayed to a win under the rules; hashes match",
                verified.levels
            );
        }
        Command::ExampleJob => print!("{}", include_str!("../../examples/demo.toml")),
        Command::Solve {
            game,
            max_nodes,
            files,
        } => {
            let game = pregen_games::GameKind::from_name(&game)?;
            let budget = pregen_games::Budget::nodes(max_nodes);
            println!("file\tlevel\tmoves\tpushes\toptimal\tnodes\tms\tsolution");
            let (mut levels, mut failed) = (0, 0);
            for file in &files {
                let text = std::fs::read_to_string(file)
                    .with_context(|| format!("cannot read {}", file.display()))?;
                let solved = game.solve_text(&text, &budget).with_context(|| {
                    format!("{} is not a {} level file", file.display(), game.name())
                })?;
                for level in solved {
                    levels += 1;
                    let title = if level.title.is_empty() {
                        "-"
                    } else {
                        level.title.as_str()
                    };
                    let ms = level.ms;
                    match level.verdict {
                        Ok(s) => println!(
                            "{}\t{title}\t{}\t{}\t{}\t{}\t{:.1}\t{}",
                            file.display(),
                            s.moves,
                            s.metrics
                                .get("pushes")
                                .map_or("-".into(), |p| p.to_string()),
                            s.optimal,
                            s.nodes,
                            ms,
                            s.solution
                        ),
                        Err(e) => {
                            failed += 1;
                            println!("{}\t{title}\t-\t-\t-\t-\t{ms:.1}\t{e}", file.display());
                        }
                    }
                }
            }
            if failed > 0 {
                anyhow::bail!("{failed} of {levels} levels not solved");
            }
        }
        Command::DoorsCensus { rooms, colours } => doors_census(rooms, colours)?,
    }
    Ok(())
}

fn doors_census(rooms: usize, colours: usize) -> Result<()> {
    use pregen_games::doors::census::{Census, MAX_FEATURES};
    use pregen_games::doors::level::Features;
    use rayon::prelude::*;
    if !(2..=8).contains(&rooms) || !(1..=8).contains(&colours) {
        bail!("rooms must be 2..=8 and colours 1..=8");
    }
    let features = Features { rooms, colours };
    let m = features.count();
    if m > MAX_FEATURES {
        bail!(
            "rooms = {rooms}, colours = {colours} make 2^{m} levels; a census walks at most 2^{MAX_FEATURES}"
        );
    }
    let started = std::time::Instant::now();
    let total = 1u64 << m;
    let chunk = (total / 256).max(1);
    let census = (0..total.div_ceil(chunk))
        .into_par_iter()
        .map(|i| Census::count(features, i * chunk..((i + 1) * chunk).min(total)))
        .reduce(Census::default, Census::merge);
    println!("rooms\tcolours\tlevels\tgood\tunique good\tgood structures\tseconds");
    println!(
        "{rooms}\t{colours}\t{}\t{}\t{}\t{}\t{:.1}",
        census.levels,
        census.good,
        census.unique.len(),
        census.structures.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Writes to stdout; a reader that went away (`| head`) ends the output quietly.
fn print_out(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// A file's bytes, or an error naming it.
fn read_file(path: &std::path::Path) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))
}
