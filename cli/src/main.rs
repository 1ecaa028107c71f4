//! `pregen`: run a pack on this machine, serve a job to remote workers, run a
//! worker, or read a finished pack. CLI glue only: each command parses its
//! flags in `commands/`, builds a config and calls one library function.

mod commands;
mod flags;
mod progress;

use std::io::IsTerminal;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicI32, Ordering};

use clap::{Parser, Subcommand, ValueEnum};
use tokio_util::sync::CancellationToken;

use commands::{
    analysis, archive, census, game_server, load_test, release, retier, run, serve, solve, web,
    worker,
};

/// Pregenerates verified puzzle levels: a coordinator hands seed ranges to
/// workers over gRPC and writes a Parquet dataset, tiers, campaigns and release
/// files to `<out>/<pack>/`.
#[derive(Parser)]
#[command(name = "pregen", version = VERSION, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// How log lines are written to stderr: `text` (coloured only on a
    /// terminal, never with NO_COLOR set) or `json`, one object per line,
    /// for log collectors. The level is set by PREGEN_LOG (e.g. `info`).
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
}

/// How log lines are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

static LOG_FORMAT: OnceLock<LogFormat> = OnceLock::new();

/// The crate's version and the commit it was built from (build.rs).
const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("PREGEN_COMMIT"), ")");

/// The signal that stopped the command (SIGINT or SIGTERM), or 0.
static STOPPED_BY: AtomicI32 = AtomicI32::new(0);

/// mimalloc rather than the system allocator: a coordinator taking hundreds
/// of thousands of results a second on many threads keeps its resident memory
/// near its heap (glibc's per-thread arenas held twice the heap and more).
/// Built without transparent huge pages (the crate's `no_thp` feature): with
/// them, a 100,000-level `pregen run` peaked 60 to 75 MB higher and spent
/// twice the system time zeroing fresh 2 MB pages (docs/scale.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Subcommand)]
enum Command {
    /// Run a whole pack on this machine: coordinator plus local workers over
    /// loopback gRPC, with a progress bar. Rerun the same command to resume.
    Run(run::RunArgs),
    /// Serve a job to remote workers (`pregen worker`); exits when the pack is written.
    Serve(serve::ServeArgs),
    /// Run a worker against a coordinator until its job is done (SIGTERM drains).
    Worker(worker::WorkerArgs),
    /// Solve level files in a game's text form (made by pregen or by hand) and
    /// print a table: file, level, moves, pushes (sokoban), proven optimal,
    /// search nodes, time, solution. Sokoban files may be XSB collections.
    Solve(solve::SolveArgs),
    /// Count every doors level for (rooms, colours): how many are good (no
    /// defect, planar), how many of those differ by the source's solution key
    /// (source document 001's Table 3 "total unique" column) and how many by
    /// more than a renaming of rooms and colours (`unique = "structure"`).
    /// Walks all 2^M levels on all cores, so M = n(n-1)(b+1)/2 + bn may be 26
    /// at most.
    DoorsCensus(census::CensusArgs),
    /// Write one reproducible archive (`.tar.zst`) of a finished pack's
    /// release files (`<pack>/release/...`) and a release manifest
    /// (`<pack>/manifest.json`, checksums by those paths), for a release
    /// pipeline. Every file is checked against release/SHA256SUMS first;
    /// nothing of the run (timings, workers) goes in, so the same job gives
    /// the same archive bytes with any number of workers and restarts.
    Archive(archive::ArchiveArgs),
    /// Check a release (pack folder, unpacked archive or `.tar.zst`) with
    /// this binary alone.
    Release {
        #[command(subcommand)]
        command: release::ReleaseCommand,
    },
    /// Measure how many results per second one coordinator takes: starts
    /// `pregen serve` on a loopback port with a pack of the `synthetic` game
    /// at no cost per seed, opens N worker sessions that stream results as
    /// fast as it accepts them, and prints results/s, the coordinator's CPU
    /// time and peak memory. The pack goes to `<out>/load-test/`.
    LoadTest(load_test::LoadTestArgs),
    /// Rate a finished pack's levels again with another rating model and
    /// write the pack anew (tiers, campaigns, Parquet, release files) into a
    /// new folder, from its commit log, without running a seed: the same
    /// bytes as a run of the job with that model from the start.
    Retier(retier::RetierArgs),
    /// Serve a built-in game over the game protocol on stdin and stdout (JSON
    /// lines: describe, generate, check; docs/external.md): the answers a game
    /// program in any language gives, given by pregen's own game.
    GameServer(game_server::GameServerArgs),
    /// Write the games in the browser into a folder: the WebAssembly module
    /// this binary carries, `pregen.js` and the pages that rebuild a
    /// seed-only release and play its levels (docs/web.md). No Rust
    /// toolchain needed; serve the folder beside a release, not in it.
    Web(web::WebArgs),
    /// Read a finished pack.
    Analysis {
        #[command(subcommand)]
        command: analysis::AnalysisCommand,
    },
    /// Print an example job file.
    ExampleJob,
}

#[tokio::main]
async fn main() {
    let cli = Cli::parse();
    let _ = LOG_FORMAT.set(cli.log_format);
    let result = match cli.command {
        Command::Run(args) => run::run(args).await,
        Command::Serve(args) => serve::run(args).await,
        Command::Worker(args) => worker::run(args).await,
        Command::Solve(args) => solve::run(args),
        Command::DoorsCensus(args) => census::run(args),
        Command::Archive(args) => archive::run(args),
        Command::Release { command } => {
            init_logs("warn");
            release::run(command)
        }
        Command::Retier(args) => retier::run(args),
        Command::LoadTest(args) => load_test::run(args).await,
        Command::GameServer(args) => {
            init_logs("warn");
            game_server::run(args)
        }
        Command::Web(args) => web::run(args),
        Command::Analysis { command } => {
            init_logs("warn");
            analysis::run(command)
        }
        Command::ExampleJob => {
            print!("{}", include_str!("../../examples/demo.toml"));
            Ok(())
        }
    };
    // No game program, nor anything it forked, outlives the command.
    pregen_games::external::stop_all();
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        // Stopped by a signal: the shell's convention, 128 + its number.
        match STOPPED_BY.load(Ordering::Relaxed) {
            0 => std::process::exit(1),
            signal => std::process::exit(128 + signal),
        }
    }
}

/// Logs to stderr at `default` level unless `PREGEN_LOG` says otherwise.
fn init_logs(default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("PREGEN_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = match LOG_FORMAT.get().copied().unwrap_or(LogFormat::Text) {
        LogFormat::Json => logs.json().try_init(),
        LogFormat::Text => logs.with_ansi(colour()).try_init(),
    };
}

/// Colour codes only for a terminal, and never when NO_COLOR is set.
fn colour() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Signal numbers (the same on every Unix).
mod libc_signal {
    pub const INT: i32 = 2;
    pub const TERM: i32 = 15;
}

/// A token cancelled on SIGINT or SIGTERM (a second one exits at once,
/// with status 128 + the signal). The handlers are in place when
/// this returns, so a signal sent once the command says it is ready (e.g.
/// `listening on`) is never lost, even where the signal was ignored before.
fn cancel_on_signals() -> CancellationToken {
    use tokio::signal::unix::{SignalKind, signal};
    let token = CancellationToken::new();
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        return token;
    };
    let t = token.clone();
    tokio::spawn(async move {
        let signal = tokio::select! {
            _ = int.recv() => libc_signal::INT,
            _ = term.recv() => libc_signal::TERM,
        };
        STOPPED_BY.store(signal, Ordering::Relaxed);
        t.cancel();
        // A second signal stops at once: a drain waiting on a long seed
        // (or a program that will not end) cannot hold the command.
        let again = tokio::select! {
            _ = int.recv() => libc_signal::INT,
            _ = term.recv() => libc_signal::TERM,
        };
        eprintln!("stopped at once by a second signal");
        pregen_games::external::stop_all();
        std::process::exit(128 + again);
    });
    token
}
