//! What the sampled cross-check costs: one job run with `cross_check = 0`
//! and with a share (default 1%), by two workers of different names over
//! loopback gRPC (so that sampled seeds go to the other worker, as on a
//! cluster), in one run: the order alternates between rounds so that a noisy
//! machine slows both alike; the median ratio of their levels per second is
//! the figure.
//!
//! `cargo bench -p pregen-cli --bench cross_check -- [COUNT] [ROUNDS] [SHARE %]`
//! (defaults: 10,000 tilt levels, 6 rounds, 1%)

mod common;

use std::path::PathBuf;

use pregen_coordinator::Job;

use common::{median, run_two_workers};

/// One timed run: levels per second, seeds confirmed by a second run.
async fn run(count: u64, share: f64, threads: usize, out: PathBuf) -> (f64, u64) {
    let job = Job::parse(&format!(
        "pack = \"bench\"\ngame = \"tilt\"\ncount = {count}\ncross_check = {share}\n"
    ))
    .expect("valid job");
    let (summary, elapsed) = run_two_workers(job, threads, out).await;
    let rate = summary.accepted as f64 / elapsed.as_secs_f64();
    (rate, summary.progress.cross_check.confirmed)
}

fn main() {
    let mut numbers = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse::<f64>().ok());
    let count = numbers.next().map_or(10_000, |n| n as u64);
    let rounds = numbers.next().map_or(6, |n| n as u64).max(1);
    let share = numbers.next().unwrap_or(1.0) / 100.0;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = (cores / 2).max(1);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let packs = tempfile::tempdir().expect("tempdir");
    rt.block_on(run(200, share, threads, packs.path().join("warm-up")));
    println!(
        "{count}-level tilt pack, 2 workers x {threads} threads, cross_check 0 vs {:.1}%, \
         {rounds} rounds",
        share * 100.0
    );
    let mut ratios = Vec::new();
    for round in 1..=rounds {
        let dir = |what: &str| packs.path().join(format!("round-{round}-{what}"));
        let (off, on);
        if round % 2 == 1 {
            off = rt.block_on(run(count, 0.0, threads, dir("off")));
            on = rt.block_on(run(count, share, threads, dir("on")));
        } else {
            on = rt.block_on(run(count, share, threads, dir("on")));
            off = rt.block_on(run(count, 0.0, threads, dir("off")));
        }
        let ratio = on.0 / off.0;
        println!(
            "  round {round}: off {:.0} levels/s, on {:.0} levels/s ({} seeds confirmed); \
             ratio {ratio:.3}",
            off.0, on.0, on.1
        );
        ratios.push(ratio);
    }
    let median = median(&mut ratios);
    let n = ratios.len();
    println!(
        "  with / without the cross-check, levels/s, median: {median:.3} (rounds {:.3} to {:.3})",
        ratios[0],
        ratios[n - 1]
    );
}
