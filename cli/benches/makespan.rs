//! Makespan on a skewed workload against the ideal, in one run: pregen's
//! dynamic leases (sized from the cost seen, copied at the tail) versus a
//! static equal split of the seed range, what a Slurm array or a Kubernetes
//! Indexed Job gives.
//!
//! The workload is the `synthetic` game asleep (`busy = false`: a seed's cost
//! is spent sleeping, so many workers' time fits on a 2-core machine), every
//! seed accepted, costs drawn from a Pareto tail of shape 2 (infinite
//! variance), on W workers of T threads each, the last of them 10x slower
//! (it sleeps ten times each seed's time). The ideal is the total cost over
//! the capacity: sum of costs / (T * (W - 1) + T / 10). The static split
//! gives worker i the i-th W-th of the seeds and runs it on a rayon pool of T
//! threads (dynamic inside the worker, which favours it); pregen runs the same
//! seeds with W real workers over loopback gRPC, the cross-check off (it is
//! 1% extra work the split does not do). Makespan is from start to the last
//! result (for pregen: before the pack files are written).
//!
//! `cargo bench -p pregen-cli --bench makespan -- [SEEDS] [WORKERS] [THREADS] [MEAN_US]`
//! (defaults: 40,000 seeds, 8 workers, 4 threads, 5,000 us)

use std::time::{Duration, Instant};

use pregen_coordinator::Job;
use pregen_coordinator::server::{RunOptions, Started, start_job};
use pregen_games::synthetic::{SyntheticParams, seed_cost_us};
use pregen_games::{Budget, GameKind};
use pregen_worker::{WorkerConfig, run_worker};
use rayon::prelude::*;
use tokio_util::sync::CancellationToken;

/// How much slower the last worker is.
const SLOWDOWN: u32 = 10;

struct Setup {
    seeds: u64,
    workers: usize,
    threads: usize,
    mean_us: u64,
}

impl Setup {
    fn params(&self) -> SyntheticParams {
        SyntheticParams {
            cost_us: self.mean_us,
            cost_tail: 2.0,
            busy: false,
            accept_rate: 1.0,
            level_bytes: 16,
            ..SyntheticParams::default()
        }
    }

    fn job(&self) -> Job {
        let p = self.params();
        Job::parse(&format!(
            "pack = \"makespan\"\ngame = \"synthetic\"\ncount = {}\ncross_check = 0\n\
             seeds_per_lease = 4096\n\
             [params]\ncost_us = {}\ncost_tail = {}\nbusy = false\naccept_rate = 1.0\n\
             level_bytes = {}\n",
            self.seeds, p.cost_us, p.cost_tail, p.level_bytes
        ))
        .expect("valid job")
    }

    /// Threads' worth of capacity, the slow worker counted at its speed.
    fn capacity(&self) -> f64 {
        (self.threads * (self.workers - 1)) as f64 + self.threads as f64 / f64::from(SLOWDOWN)
    }
}

struct Pregen {
    makespan: Duration,
    speculative: u64,
    duplicates: u64,
    /// Results the slow worker sent.
    slow_results: u64,
}

async fn pregen(setup: &Setup, out: &std::path::Path) -> Pregen {
    let started = Instant::now();
    let Started::Running(mut running) = start_job(
        setup.job(),
        RunOptions {
            lease_ttl: Duration::from_secs(60),
            ..RunOptions::local(out.to_path_buf(), "bench".into())
        },
    )
    .await
    .expect("pipeline starts") else {
        panic!("a new pack is not complete")
    };
    let stop = CancellationToken::new();
    let workers: Vec<_> = (0..setup.workers)
        .map(|i| {
            let mut config =
                WorkerConfig::new(format!("http://{}", running.listening.grpc), "bench");
            config.threads = setup.threads;
            config.name = format!("w{}", i + 1);
            if i + 1 == setup.workers {
                config.slowdown = SLOWDOWN;
            }
            tokio::spawn(run_worker(config, stop.clone()))
        })
        .collect();
    let summary = running.complete().await.expect("pipeline run");
    let makespan = started.elapsed() - summary.writing;
    // Workers still running a copied lease's seeds are not waited for.
    stop.cancel();
    for worker in workers {
        let _ = worker.await;
    }
    running.stop().await;
    Pregen {
        makespan,
        speculative: summary.progress.speculative,
        duplicates: summary.progress.duplicate_results,
        // Workers are counted under the identity the coordinator issued,
        // `NAME#ID`.
        slow_results: summary
            .progress
            .per_worker
            .iter()
            .filter(|(who, _)| who.split('#').next() == Some(&format!("w{}", setup.workers)))
            .map(|(_, n)| n)
            .sum(),
    }
}

/// Worker i runs the i-th W-th of the seeds on its own T threads; the
/// makespan is the last worker's finish.
fn static_split(setup: &Setup) -> (Duration, Vec<Duration>) {
    let game = GameKind::from_name("synthetic")
        .and_then(|g| g.prepare(&setup.job().params_json()))
        .expect("valid params");
    let started = Instant::now();
    let per = setup.seeds.div_ceil(setup.workers as u64);
    let finishes: Vec<Duration> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..setup.workers)
            .map(|i| {
                let game = &game;
                scope.spawn(move || {
                    let slowdown = if i + 1 == setup.workers { SLOWDOWN } else { 1 };
                    let seeds = (i as u64 * per)..((i as u64 + 1) * per).min(setup.seeds);
                    let pool = rayon::ThreadPoolBuilder::new()
                        .num_threads(setup.threads)
                        .build()
                        .expect("pool");
                    pool.install(|| {
                        seeds.into_par_iter().for_each(|seed| {
                            let t = Instant::now();
                            let outcome = game.run(seed, &Budget::nodes(1));
                            assert!(outcome.result.is_ok());
                            if slowdown > 1 {
                                std::thread::sleep(t.elapsed() * (slowdown - 1));
                            }
                        });
                    });
                    started.elapsed()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("static worker"))
            .collect()
    });
    let makespan = finishes.iter().copied().max().unwrap_or_default();
    (makespan, finishes)
}

fn main() {
    let mut numbers = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse::<u64>().ok());
    let setup = Setup {
        seeds: numbers.next().unwrap_or(40_000),
        workers: numbers.next().unwrap_or(8).max(2) as usize,
        threads: numbers.next().unwrap_or(4).max(1) as usize,
        mean_us: numbers.next().unwrap_or(5_000),
    };
    let params = setup.params();
    let costs: Vec<u64> = (0..setup.seeds)
        .map(|seed| seed_cost_us(&params, seed))
        .collect();
    let total_s = costs.iter().sum::<u64>() as f64 / 1e6;
    let longest_s = costs.iter().copied().max().unwrap_or(0) as f64 / 1e6;
    let ideal = total_s / setup.capacity();
    println!(
        "{} synthetic seeds, Pareto(2) costs of mean {} us (total {total_s:.1} s of a thread, \
         longest seed {longest_s:.3} s), {} workers x {} threads, the last {SLOWDOWN}x slower",
        setup.seeds, setup.mean_us, setup.workers, setup.threads
    );
    println!(
        "  ideal = total / capacity = {total_s:.1} / {:.1} threads = {ideal:.2} s",
        setup.capacity()
    );
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let out = tempfile::tempdir().expect("tempdir");
    let dynamic = rt.block_on(pregen(&setup, out.path()));
    let secs = dynamic.makespan.as_secs_f64();
    println!(
        "  pregen (dynamic leases, speculation): {secs:.2} s = {:.3}x ideal \
         (the slow worker ran {} seeds; {} speculative copies, {} duplicate results)",
        secs / ideal,
        dynamic.slow_results,
        dynamic.speculative,
        dynamic.duplicates
    );
    let (split, finishes) = static_split(&setup);
    let secs = split.as_secs_f64();
    let fast = finishes[..finishes.len() - 1]
        .iter()
        .copied()
        .max()
        .unwrap_or_default();
    println!(
        "  static equal split: {secs:.2} s = {:.3}x ideal (fast workers done by {:.2} s, \
         the slow one at {:.2} s)",
        secs / ideal,
        fast.as_secs_f64(),
        finishes.last().copied().unwrap_or_default().as_secs_f64()
    );
}
