//! The pipeline's throughput over loopback gRPC against a plain in-process loop
//! over the same seeds on the same cores, measured in one run.
//!
//! `cargo bench -p pregen-coordinator --bench pipeline -- [COUNT]`

use std::net::SocketAddr;
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

async fn pipeline(count: u64, cores: usize) -> (f64, u64) {
    let dir = tempfile::tempdir().expect("tempdir");
    let started = Instant::now();
    let summary = run_job(
        job(count),
        RunOptions {
            out: dir.path().to_path_buf(),
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            token: "bench".into(),
            local_workers: 1,
            threads_per_worker: cores,
            lease_ttl: Duration::from_secs(30),
            progress: false,
            on_listening: None,
            shutdown: CancellationToken::new(),
        },
    )
    .await
    .expect("pipeline run");
    (started.elapsed().as_secs_f64(), summary.progress.seeds)
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
    let count: u64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(10_000);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    // Warm up caches and the allocator with a small pack.
    rt.block_on(pipeline(200, cores));
    let (t_pipe, seeds) = rt.block_on(pipeline(count, cores));
    let (t_loop, accepted) = plain_loop(seeds, cores);
    println!("{count}-level tilt pack on {cores} cores");
    println!(
        "  pipeline (loopback gRPC, commit log, Parquet): {seeds} seeds in {t_pipe:.2} s = {:.0} seeds/s",
        seeds as f64 / t_pipe
    );
    println!(
        "  plain in-process loop over the same seeds:     {seeds} seeds in {t_loop:.2} s = {:.0} seeds/s ({accepted} accepted)",
        seeds as f64 / t_loop
    );
    println!(
        "  pipeline / plain loop throughput ratio: {:.3}",
        t_loop / t_pipe
    );
}
