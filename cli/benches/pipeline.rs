//! The pipeline's throughput over loopback gRPC against a plain in-process loop
//! over the same seeds on the same cores, measured in one run: each round runs
//! both, the pipeline first in odd rounds and the loop first in even ones, so
//! that a noisy machine slows both alike; the median ratio of their seeds per
//! second is the figure. Which side goes first matters on a shared machine (the
//! same side twice in a row tends to be slower), so an even number of rounds
//! balances the two orders.
//!
//! The job turns the cross-check off: its second runs (1% of the seeds by
//! default, run by the coordinator itself when there is one worker) are more
//! game work by design, not the pipeline's cost; the plain loop runs each seed
//! once. The `cross_check` bench measures what it costs. Both sides use the
//! `pregen` binary's allocator (mimalloc).
//!
//! Each round also prints the game's own time per seed on both sides (generate
//! and solve, as timed around the game's call: the workers' figures from the
//! pack's Parquet files, the loop's from its outcomes), which splits a ratio
//! under 1 into the game running slower in the pipeline (its threads share
//! the cores with the coordinator's) and work around the game.
//!
//! Each round also counts the pipeline's CPU around the game: what its threads
//! other than the worker's game threads (`pregen-worker-N`) used during the
//! run (the async threads, the blocking threads that check levels and write
//! the log, the pool that writes the pack), as a share of the process's CPU
//! meanwhile. Read per thread from `/proc`, it moves far less with other
//! tenants' load than the ratios do, so it shows a change in the pipeline's
//! own work that the ratios cannot resolve. (A thread that ends within the
//! run is not counted; the runtime here keeps its blocking threads for the
//! whole bench so that none does.)
//!
//! The summary ends with the cores each side kept busy (CPU seconds a second
//! of wall time): both near 2 on two cores, or the side that idles is not
//! measured at its best and the ratio says so too.
//!
//! With six rounds or more, each median comes with a 95% confidence interval
//! that assumes nothing of the rounds' distribution (order statistics): the
//! figure clears a line when the interval does. On the 2-core machine of
//! docs/scale.md, 30 rounds gave intervals 6 to 8 points wide.
//!
//! `cargo bench -p pregen-cli --bench pipeline -- [COUNT] [ROUNDS]`
//! (defaults: 10,000 levels, 8 rounds)

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pregen_coordinator::Job;
use pregen_coordinator::server::{RunOptions, Started, start_job};
use pregen_games::{Budget, GameKind};
use pregen_pack::read::{f64_column, read_batches};
use pregen_worker::{WorkerConfig, run_worker};
use rayon::prelude::*;
use tokio_util::sync::CancellationToken;

use common::{cpu_seconds, median, median_interval, thread_cpu};

/// The allocator of the `pregen` binary, so that both sides run as shipped.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn job(count: u64) -> Job {
    Job::parse(&format!(
        "pack = \"bench\"\ngame = \"tilt\"\ncount = {count}\ncross_check = 0\n"
    ))
    .expect("valid job")
}

/// One timed run.
struct Timed {
    /// Seconds from start to finish.
    wall: f64,
    seeds: u64,
    /// Levels accepted.
    accepted: u64,
    /// Of the wall time, the part spent writing the pack (the pipeline's).
    writing: f64,
    /// CPU seconds the process used meanwhile, all threads.
    cpu: f64,
    /// Seconds inside the game's calls, all seeds (the threads' sum).
    game: f64,
    /// CPU seconds of the threads other than the game's (the pipeline's).
    around: f64,
}

async fn pipeline(count: u64, cores: usize, out: PathBuf) -> Timed {
    let threads = thread_cpu();
    let started = Instant::now();
    let cpu = cpu_seconds();
    let started_job = start_job(
        job(count),
        RunOptions {
            lease_ttl: Duration::from_secs(30),
            ..RunOptions::local(out, "bench".into())
        },
    )
    .await
    .expect("pipeline starts");
    let Started::Running(mut running) = started_job else {
        panic!("a new pack is not complete")
    };
    let mut config = WorkerConfig::new(format!("http://{}", running.listening.grpc), "bench");
    config.threads = cores;
    let worker = tokio::spawn(run_worker(config, CancellationToken::new()));
    let summary = running.complete().await.expect("pipeline run");
    worker
        .await
        .expect("worker joins")
        .expect("worker ends well");
    running.stop().await;
    let (wall, cpu) = (started.elapsed().as_secs_f64(), cpu_used(cpu));
    let around = thread_cpu()
        .into_iter()
        .filter(|(_, (name, _))| !name.starts_with("pregen-worker"))
        .map(|(tid, (_, now))| now - threads.get(&tid).map_or(0.0, |(_, before)| *before))
        .sum();
    Timed {
        wall,
        seeds: summary.progress.seeds,
        accepted: summary.accepted,
        writing: summary.writing.as_secs_f64(),
        cpu,
        game: game_seconds(&summary.dir),
        around,
    }
}

/// The same seeds, run by rayon in this process, nothing else: one seed at a
/// time to each thread that is free (`with_max_len(1)`), as the worker's
/// feed hands them out. Left to split the range itself, rayon kept only
/// 1.76 to 1.98 of the two cores busy (about 1.92 in most rounds; near the
/// end one thread is still on a long piece of the range while the other
/// finds nothing left to take), where this loop keeps 1.99: it ran some 4%
/// slower than the seeds allow and flattered the pipeline by as much.
fn plain_loop(seeds: u64, cores: usize) -> Timed {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(cores)
        .build()
        .expect("pool");
    let game = GameKind::from_name("tilt")
        .and_then(|g| g.prepare(&job(1).params_json()))
        .expect("valid params");
    let started = Instant::now();
    let cpu = cpu_seconds();
    let (accepted, game_ms) = pool.install(|| {
        (0..usize::try_from(seeds).expect("a seed count that fits memory"))
            .into_par_iter()
            .with_max_len(1)
            .map(|seed| {
                let outcome = game.run(seed as u64, &Budget::nodes(200_000));
                (
                    u64::from(outcome.result.is_ok()),
                    outcome.generate_ms + outcome.solve_ms,
                )
            })
            .reduce(|| (0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1))
    });
    Timed {
        wall: started.elapsed().as_secs_f64(),
        seeds,
        accepted,
        writing: 0.0,
        cpu: cpu_used(cpu),
        game: game_ms / 1000.0,
        around: 0.0,
    }
}

/// Seconds the pack's seeds spent in the game, as the workers timed them:
/// `generate_ms` plus `solve_ms` over its levels and rejects.
fn game_seconds(pack: &Path) -> f64 {
    let mut files = vec![pack.join(pregen_pack::dir::REJECTS_FILE)];
    let parts = pregen_pack::dir::PackDir::new(pack).level_parts();
    files.extend(
        parts
            .expect("the pack's parts")
            .into_iter()
            .map(|(_, part)| part),
    );
    let mut ms = 0.0;
    for file in files {
        for batch in read_batches(&file).expect("a Parquet file") {
            for name in ["generate_ms", "solve_ms"] {
                ms += f64_column(&batch, name, &file)
                    .expect("a float column")
                    .iter()
                    .sum::<f64>();
            }
        }
    }
    ms / 1000.0
}

/// CPU seconds used since `before` (NaN where they cannot be read).
fn cpu_used(before: Option<f64>) -> f64 {
    before
        .zip(cpu_seconds())
        .map_or(f64::NAN, |(before, now)| now - before)
}

fn main() {
    let mut numbers = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse::<u64>().ok());
    let count = numbers.next().unwrap_or(10_000);
    let rounds = numbers.next().unwrap_or(8).max(1);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // Blocking threads kept for the whole bench: one that ended within a run
    // would take its CPU out of the count around the game.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_keep_alive(Duration::from_secs(24 * 3600))
        .build()
        .expect("runtime");
    // Packs are kept until the end: deleting thousands of files just before
    // creating as many slows some filesystems down (ext4 skips recently freed
    // inodes), which would measure the disk's bookkeeping, not the pipeline.
    let packs = tempfile::tempdir().expect("tempdir");
    // Warm up caches and the allocator with a small pack.
    let mut last_seeds = rt
        .block_on(pipeline(200, cores, packs.path().join("warm-up")))
        .seeds
        * count
        / 200;
    println!("{count}-level tilt pack on {cores} cores, {rounds} rounds");
    println!("  pipeline = loopback gRPC, commit log, Parquet and release files (cross-check off)");
    let mut ratios = Vec::new();
    let mut work_ratios = Vec::new();
    let mut cpu_ratios = Vec::new();
    let mut game_ratios = Vec::new();
    let mut around_shares = Vec::new();
    let (mut pipe_busy, mut loop_busy) = (Vec::new(), Vec::new());
    for round in 1..=rounds {
        let out = packs.path().join(format!("round-{round}"));
        // The loop runs the seeds the pipeline tried; in even rounds, when it
        // goes first, those of the round before (they differ by a few seeds).
        let (pipe, loop_run);
        if round % 2 == 1 {
            pipe = rt.block_on(pipeline(count, cores, out));
            loop_run = plain_loop(pipe.seeds, cores);
        } else {
            loop_run = plain_loop(last_seeds, cores);
            pipe = rt.block_on(pipeline(count, cores, out));
        }
        last_seeds = pipe.seeds;
        let pipe_rate = pipe.seeds as f64 / pipe.wall;
        let loop_rate = loop_run.seeds as f64 / loop_run.wall;
        let ratio = pipe_rate / loop_rate;
        let work_ratio = pipe.seeds as f64 / (pipe.wall - pipe.writing) / loop_rate;
        // Seeds per CPU second, the same way round: what the pipeline's work
        // costs beside the game's, less moved by other tenants' load than
        // the wall time (the loop's seeds differ by a few in even rounds).
        let cpu_ratio = (pipe.seeds as f64 / pipe.cpu) / (loop_run.seeds as f64 / loop_run.cpu);
        // The game's time per seed, the loop's over the pipeline's: under 1
        // when the game itself ran slower in the pipeline.
        let game_ratio = (loop_run.game / loop_run.seeds as f64) / (pipe.game / pipe.seeds as f64);
        let around_share = pipe.around / pipe.cpu;
        println!(
            "  round {round}: pipeline {} seeds in {:.2} s ({pipe_rate:.0} seeds/s, of which \
             pack files {:.2} s), plain loop {} seeds ({} accepted) in {:.2} s \
             ({loop_rate:.0} seeds/s); ratio {ratio:.3}, without the pack files {work_ratio:.3}; \
             CPU {:.2} s against {:.2} s, seeds per CPU second {cpu_ratio:.3}; \
             game time per seed {:.0} us against {:.0} us, ratio {game_ratio:.3}; \
             around the game {:.2} s of CPU, {:.1}%",
            pipe.seeds,
            pipe.wall,
            pipe.writing,
            loop_run.seeds,
            loop_run.accepted,
            loop_run.wall,
            pipe.cpu,
            loop_run.cpu,
            1e6 * pipe.game / pipe.seeds as f64,
            1e6 * loop_run.game / loop_run.seeds as f64,
            pipe.around,
            100.0 * around_share,
        );
        ratios.push(ratio);
        work_ratios.push(work_ratio);
        cpu_ratios.push(cpu_ratio);
        game_ratios.push(game_ratio);
        around_shares.push(around_share);
        pipe_busy.push(pipe.cpu / pipe.wall);
        loop_busy.push(loop_run.cpu / loop_run.wall);
    }
    let spread = |v: &[f64]| {
        let (lo, hi) = v
            .iter()
            .fold((f64::MAX, f64::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)));
        let interval = median_interval(v).map_or(String::new(), |(a, b)| {
            format!("95% interval {a:.3} to {b:.3}, ")
        });
        format!(
            "{:.3} ({interval}rounds {lo:.3} to {hi:.3})",
            median(&mut v.to_vec())
        )
    };
    println!(
        "  pipeline / plain loop throughput ratio, median: {}; without writing the pack: {}",
        spread(&ratios),
        spread(&work_ratios)
    );
    println!(
        "  pipeline / plain loop seeds per CPU second, median: {}",
        spread(&cpu_ratios)
    );
    println!(
        "  plain loop / pipeline game time per seed, median: {}",
        spread(&game_ratios)
    );
    println!(
        "  the pipeline's CPU around the game (threads other than the game's), share, median: {}",
        spread(&around_shares)
    );
    println!(
        "  cores kept busy (CPU seconds per second), median: pipeline {}; plain loop {}",
        spread(&pipe_busy),
        spread(&loop_busy)
    );
}
