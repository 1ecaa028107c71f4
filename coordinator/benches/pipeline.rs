//! The pipeline's throughput over loopback gRPC against a plain in-process loop
//! over the same seeds on the same cores, measured in one run: rounds alternate
//! the two so that a noisy machine slows both alike; the median ratio is the
//! figure.
//!
//! `cargo bench -p pregen-coordinator --bench pipeline -- [COUNT] [ROUNDS]`

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use pregen_coordinator::Job;
use pregen_coordinator::server::{RunOptions, run_job};
use pregen_games::{Budget, GameKind};
use rayon::prelude::*;
use tokio_util::sync::CancellationToken;

fn job(count: u64) -> Job {
    Job::parse(&format!(
        "pack = \"bench\"\ngame = \"tilt\"\ncount = {count}\n"
    ))
    .expect("valid job")
}

/// Wall time, seeds tried, and of the wall time the part spent writing the pack.
async fn pipeline(count: u64, cores: usize, out: PathBuf) -> (f64, u64, f64) {
    let started = Instant::now();
    let summary = run_job(
        job(count),
        RunOptions {
            out,
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            token: "bench".into(),
            local_workers: 1,
            threads_per_worker: cores,
            lease_ttl: Duration::from_secs(30),
            progress: false,
            metrics: None,
            on_listening: None,
            shutdown: CancellationToken::new(),
        },
    )
    .await
    .expect("pipeline run");
    (
        started.elapsed().as_secs_f64(),
        summary.progress.seeds,
        summary.writing.as_secs_f64(),
    )
}

/// The same seeds, run by rayon in this process, nothing else.
fn plain_loop(seeds: u64, cores: usize) -> (f64, u64) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(cores)
        .build()
        .expect("pool");
    let params = job(1).params_json();
    let started = Instant::now();
    let accepted = pool.install(|| {
        (0..seeds)
            .into_par_iter()
            .filter(|&seed| {
                GameKind::Tilt
                    .run(&params, seed, &Budget::nodes(200_000))
                    .result
                    .is_ok()
            })
            .count() as u64
    });
    (started.elapsed().as_secs_f64(), accepted)
}

fn main() {
    let mut numbers = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse::<u64>().ok());
    let count = numbers.next().unwrap_or(10_000);
    let rounds = numbers.next().unwrap_or(3).max(1);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    // Packs are kept until the end: deleting thousands of files just before
    // creating as many slows some filesystems down (ext4 skips recently freed
    // inodes), which would measure the disk's bookkeeping, not the pipeline.
    let packs = tempfile::tempdir().expect("tempdir");
    // Warm up caches and the allocator with a small pack.
    rt.block_on(pipeline(200, cores, packs.path().join("warm-up")));
    println!("{count}-level tilt pack on {cores} cores, {rounds} rounds");
    println!("  pipeline = loopback gRPC, commit log, Parquet and release files");
    let mut ratios = Vec::new();
    let mut work_ratios = Vec::new();
    for round in 1..=rounds {
        let out = packs.path().join(format!("round-{round}"));
        let (t_pipe, seeds, t_write) = rt.block_on(pipeline(count, cores, out));
        let (t_loop, accepted) = plain_loop(seeds, cores);
        let ratio = t_loop / t_pipe;
        let work_ratio = t_loop / (t_pipe - t_write);
        println!(
            "  round {round}: {seeds} seeds ({accepted} accepted): pipeline {t_pipe:.2} s \
             ({:.0} seeds/s, of which pack files {t_write:.2} s), plain loop {t_loop:.2} s \
             ({:.0} seeds/s); ratio {ratio:.3}, without the pack files {work_ratio:.3}",
            seeds as f64 / t_pipe,
            seeds as f64 / t_loop,
        );
        ratios.push(ratio);
        work_ratios.push(work_ratio);
    }
    println!(
        "  pipeline / plain loop throughput ratio (median): {:.3}, without writing the pack: {:.3}",
        median(&mut ratios),
        median(&mut work_ratios)
    );
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}
