//! The game protocol's cost, through the whole pipeline (coordinator, two
//! workers of one thread each over loopback gRPC, the coordinator's check of
//! every level, the pack written):
//!
//! - a program that answers every seed at once with one fixed level (a
//!   Python script of a dozen lines): seeds per second, and per core (the
//!   machine's cores share the workers, the programs and the coordinator);
//!   target: at least 20,000 seeds/s per core; beside it, the pipeline's
//!   own ceiling, the native synthetic game at no cost under the same job;
//! - the conformance game, tilt through `pregen game-server tilt`, against
//!   native tilt: levels per second, and their ratio; target: at least 0.7.
//!
//! `cargo bench -p pregen-cli --bench external -- [ROUNDS] [FIXED_SEEDS] [TILT_LEVELS]`
//! (defaults: 3 rounds, 20,000 seeds, 5,000 levels)

mod common;

use std::path::Path;

use pregen_coordinator::Job;

use common::{median, median_interval, run_two_workers};

/// A game program that accepts every seed at once with a fixed level stamped
/// with its seed, answering without parsing JSON: the protocol's own cost
/// and nothing else. (The very same level at every seed would measure the
/// duplicate audit instead: a level met at two seeds is run again by the
/// coordinator, by design.)
const FIXED: &str = r#"import sys, hashlib
HEAD = '"outcome":{"status":"accepted","generate_ms":0,"solve_ms":0,"nodes":1,"level":{"difficulty":1.0,"moves":1,"moves_optimal":true,"layout":"ab\\n","solution":"x","metrics":{},'
DESCRIBE = '"describe":{"protocol":1,"name":"fixed","version":"1","text_format":"fixed","params":{},"metrics":[]}}\n'
OK = '{"ok":true}}\n'
out = sys.stdout
for line in sys.stdin:
    at = line.index('"id":') + 5
    head = '{"id":' + line[at:line.index(',', at)] + ','
    if '"generate"' in line:
        at = line.index('"seed":') + 7
        level = '{"seed":' + line[at:line.index(',', at)] + '}'
        digest = hashlib.sha256(level.encode()).hexdigest()
        level = level.replace('"', '\\"')
        out.write(head + HEAD + '"level_json":"' + level + '","level_hash":"' + digest + '"}}}\n')
    elif '"check"' in line:
        out.write(head + '"check":' + OK)
    elif '"prepare"' in line:
        out.write(head + '"prepare":' + OK)
    else:
        out.write(head + DESCRIBE)
    out.flush()
"#;

fn fixed_job(dir: &Path, seeds: u64) -> Job {
    std::fs::write(dir.join("fixed.py"), FIXED).expect("write the program");
    let mut job = Job::parse(&format!(
        "pack = \"fixed\"\ngame = \"external\"\ncount = {seeds}\nseeds_per_lease = 512\n\
         cross_check = 0.0\nmax_seeds = {seeds}\n[external]\ncommand = [\"python3\", \"fixed.py\"]\n"
    ))
    .expect("job");
    job.resolve_program(Some(dir)).expect("the program starts");
    job
}

/// The pipeline's own ceiling: the native synthetic game at no cost, every
/// seed accepted, under the fixed program's job.
fn bare_job(seeds: u64) -> Job {
    Job::parse(&format!(
        "pack = \"bare\"\ngame = \"synthetic\"\ncount = {seeds}\nseeds_per_lease = 512\n\
         cross_check = 0.0\nmax_seeds = {seeds}\n[params]\ncost_us = 0\naccept_rate = 1.0\n"
    ))
    .expect("job")
}

fn tilt_job(dir: &Path, levels: u64, external: bool) -> Job {
    let game = if external {
        format!(
            "game = \"external\"\n[external]\ncommand = [{:?}, \"game-server\", \"tilt\"]\n",
            env!("CARGO_BIN_EXE_pregen")
        )
    } else {
        "game = \"tilt\"\n".to_string()
    };
    let (head, table) = game.split_once('\n').expect("two parts");
    let mut job = Job::parse(&format!(
        "pack = \"tilt\"\ncount = {levels}\nseeds_per_lease = 256\n{head}\n\
         [params]\nwidth = 5\nheight = 5\npairs = 2\nmin_moves = 3\n{table}"
    ))
    .expect("job");
    job.resolve_program(Some(dir)).expect("the program starts");
    job
}

#[tokio::main]
async fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let rounds = args.first().copied().unwrap_or(3) as usize;
    let fixed_seeds = args.get(1).copied().unwrap_or(20_000);
    let tilt_levels = args.get(2).copied().unwrap_or(5_000);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut fixed, mut native, mut served, mut ratios) = (vec![], vec![], vec![], vec![]);
    let mut bare = vec![];
    for round in 0..rounds {
        let out = dir.path().join(format!("r{round}"));
        let (summary, elapsed) =
            run_two_workers(fixed_job(dir.path(), fixed_seeds), 1, out.join("fixed")).await;
        assert_eq!(summary.in_pack, fixed_seeds, "every seed accepted");
        fixed.push(summary.seeds as f64 / elapsed.as_secs_f64());
        let (summary, elapsed) = run_two_workers(bare_job(fixed_seeds), 1, out.join("bare")).await;
        bare.push(summary.seeds as f64 / elapsed.as_secs_f64());
        let (a, ea) =
            run_two_workers(tilt_job(dir.path(), tilt_levels, false), 1, out.join("n")).await;
        let (b, eb) =
            run_two_workers(tilt_job(dir.path(), tilt_levels, true), 1, out.join("e")).await;
        assert_eq!(a.in_pack, b.in_pack, "the same pack");
        let (n, s) = (
            tilt_levels as f64 / ea.as_secs_f64(),
            tilt_levels as f64 / eb.as_secs_f64(),
        );
        native.push(n);
        served.push(s);
        ratios.push(s / n);
        eprintln!(
            "round {round}: fixed {:.0} seeds/s (native, no cost: {:.0}); tilt native {n:.0} levels/s, through the protocol {s:.0} ({:.3})",
            fixed[round],
            bare[round],
            s / n
        );
    }
    let show = |name: &str, values: &mut Vec<f64>, unit: &str| {
        let interval = median_interval(values)
            .map(|(lo, hi)| format!(" (95% interval {lo:.3} .. {hi:.3})"))
            .unwrap_or_else(|| format!(" (of {:?})", values));
        println!("{name}: median {:.3} {unit}{interval}", median(values));
    };
    let mut per_core: Vec<f64> = fixed.iter().map(|f| f / cores).collect();
    show("fixed program, seeds/s", &mut fixed, "");
    show(
        &format!("fixed program, seeds/s per core ({cores} cores)"),
        &mut per_core,
        "",
    );
    show("native synthetic at no cost, seeds/s", &mut bare, "");
    show("tilt native, levels/s", &mut native, "");
    show("tilt through game-server, levels/s", &mut served, "");
    show("through the protocol / native", &mut ratios, "");
}
