//! Work past the pack in a job with strata: seeds computed beyond each
//! stratum's last level, as a share of the seeds the pack holds, for small
//! strata (10 cube strata of 20 levels, the shipped example scaled down) and
//! large ones (10 tilt strata of 10,000), by two workers over loopback gRPC.
//! The figures are the manifest's (`seeds.tried`, `seeds.computed`, per
//! stratum `seeds` and `computed`); targets: at most 10% and 1%.
//!
//! `cargo bench -p pregen-cli --bench strata -- [ROUNDS] [TILT_COUNT]`
//! (defaults: 3 rounds, 10,000 levels per tilt stratum)

mod common;

use std::path::{Path, PathBuf};

use pregen_coordinator::Job;
use pregen_pack::PackDir;

use common::{median, run_two_workers};

/// Runs `job` with two workers of `threads` threads: (seeds in the pack,
/// seeds computed, seconds).
async fn run(job: Job, threads: usize, out: PathBuf) -> (u64, u64, f64) {
    let (summary, elapsed) = run_two_workers(job, threads, out).await;
    let manifest = PackDir::new(&summary.dir)
        .read_manifest()
        .expect("manifest");
    let per_stratum: Vec<(u64, u64)> = manifest
        .strata
        .iter()
        .map(|s| (s.seeds, s.computed))
        .collect();
    assert_eq!(
        manifest.seeds.tried, summary.in_pack,
        "the run line and the manifest agree"
    );
    assert_eq!(manifest.seeds.computed, summary.seeds);
    assert_eq!(
        per_stratum.iter().map(|s| s.0).sum::<u64>(),
        manifest.seeds.tried
    );
    (
        manifest.seeds.tried,
        manifest.seeds.computed,
        elapsed.as_secs_f64(),
    )
}

/// The job of `examples/cube.toml` (or any strata job) with `count` levels.
fn scaled(path: &Path, count: u64) -> Job {
    let mut job = Job::load(path).expect("the example job");
    job.scale_count(count).expect("scales");
    job
}

fn tilt(per_stratum: u64) -> Job {
    let strata: String = (0..10)
        .map(|_| format!("[[strata]]\ncount = {per_stratum}\n"))
        .collect();
    Job::parse(&format!(
        "pack = \"tilt-strata\"\ngame = \"tilt\"\n\
         [params]\nwidth = 6\nheight = 6\npairs = 2\nmin_moves = 3\n{strata}"
    ))
    .expect("valid job")
}

/// A case's job, made afresh for each round.
type JobOf<'a> = Box<dyn Fn() -> Job + 'a>;

fn main() {
    let mut numbers = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse::<u64>().ok());
    let rounds = numbers.next().unwrap_or(3).max(1);
    let tilt_count = numbers.next().unwrap_or(10_000);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = (cores / 2).max(1);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let packs = tempfile::tempdir().expect("tempdir");
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/cube.toml");
    let cases: [(&str, JobOf<'_>, f64); 2] = [
        (
            "10 cube strata x 20",
            Box::new(|| scaled(&example, 200)),
            0.10,
        ),
        (
            "10 tilt strata x TILT",
            Box::new(move || tilt(tilt_count)),
            0.01,
        ),
    ];
    println!("2 workers x {threads} threads, {rounds} rounds");
    for (name, job, target) in cases {
        let name = name.replace("TILT", &tilt_count.to_string());
        let mut shares = Vec::new();
        for round in 1..=rounds {
            let dir = packs.path().join(format!("{}-{round}", shares.len()));
            let (in_pack, computed, secs) = rt.block_on(run(job(), threads, dir.clone()));
            let beyond = computed.saturating_sub(in_pack);
            let share = beyond as f64 / in_pack as f64;
            println!(
                "  {name}, round {round}: {in_pack} seeds in the pack, {computed} computed \
                 ({beyond} beyond, {:.2}%) in {secs:.1} s",
                share * 100.0
            );
            shares.push(share);
            let _ = std::fs::remove_dir_all(&dir);
        }
        let median = median(&mut shares);
        println!(
            "  {name}: seeds computed beyond the pack, median {:.2}% (target <= {:.0}%): {}",
            median * 100.0,
            target * 100.0,
            if median <= target { "met" } else { "NOT met" }
        );
    }
}
