//! An outside judge of sokoban difficulty: the `soukoban` crate's
//! push-optimal A* (a second, independent search) solves the levels of each
//! tier; its time per level is the effort, and its push count is checked
//! against pregen's solver on every level it solves.
//!
//! `cargo run --release --manifest-path checks/crosscheck/Cargo.toml -- [LEVELS] [LIMIT_S] [PARAMS]`
//! (defaults: 500 levels of `{"method": "reverse"}`, 10 s per level)
//!
//! The levels are the first LEVELS accepted seeds, cut into 10 equal tiers by
//! difficulty (ties by seed), as a pack's tiers are.

use std::str::FromStr;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use pregen_games::{Budget, GameKind};
use soukoban::level::Level;
use soukoban::solver::{Algorithm, Solver, Strategy};

/// One level as both solvers saw it.
struct Judged {
    seed: u64,
    difficulty: f64,
    /// pregen's pushes (proven fewest).
    pushes: u32,
    /// The outside solver's pushes, if it finished within the limit.
    outside: Option<u32>,
    /// Its time, the limit when it did not finish.
    seconds: f64,
}

/// Solves `xsb` with the outside solver in a thread stopped after `limit`:
/// its pushes (None when it did not finish) and its time.
fn outside(xsb: &str, limit: Duration) -> (Option<u32>, f64) {
    let level = Level::from_str(xsb).expect("the outside solver reads XSB");
    let solver = Solver::new(level.map().clone(), Strategy::PushOptimal);
    let stopper = solver.clone();
    let (done, finished) = mpsc::channel();
    let started = Instant::now();
    let search = std::thread::spawn(move || {
        let found = solver
            .search(Algorithm::AStar)
            .ok()
            .map(|a| a.shifts() as u32);
        let _ = done.send(());
        found
    });
    if finished.recv_timeout(limit).is_err() {
        stopper.request_stop();
    }
    let found = search.join().expect("the outside search ends");
    let seconds = started.elapsed().as_secs_f64();
    if seconds > limit.as_secs_f64() {
        return (None, limit.as_secs_f64());
    }
    (found, seconds)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut numbers = args.iter().filter_map(|a| a.parse::<f64>().ok());
    let wanted = numbers.next().unwrap_or(500.0) as usize;
    let limit = Duration::from_secs_f64(numbers.next().unwrap_or(10.0));
    let params: serde_json::Value = args
        .iter()
        .find(|a| a.starts_with('{'))
        .map_or(serde_json::json!({ "method": "reverse" }), |a| {
            serde_json::from_str(a).expect("params: a JSON object")
        });
    let game = GameKind::from_name("sokoban")
        .and_then(|g| g.prepare(&params))
        .expect("valid params");
    let budget = Budget::nodes(200_000);
    let mut judged = Vec::new();
    let mut seed = 0;
    while judged.len() < wanted {
        if let Ok(c) = game.run(seed, &budget).result {
            let (found, seconds) = outside(&c.layout, limit);
            judged.push(Judged {
                seed,
                difficulty: c.difficulty,
                pushes: c.metrics["pushes"] as u32,
                outside: found,
                seconds,
            });
        }
        seed += 1;
    }
    judged.sort_by(|a, b| {
        a.difficulty
            .total_cmp(&b.difficulty)
            .then(a.seed.cmp(&b.seed))
    });
    println!(
        "sokoban, params {params}: {wanted} levels (seeds 0..{seed}), the soukoban crate's \
         push-optimal A* at most {} s a level",
        limit.as_secs_f64()
    );
    println!(
        "| tier | difficulty | pushes p50 | outside solver finished | its ms p50 | its ms p90 | pushes agree |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (t, tier) in judged.chunks(judged.len().div_ceil(10)).enumerate() {
        let mut ms: Vec<f64> = tier.iter().map(|j| j.seconds * 1e3).collect();
        ms.sort_by(f64::total_cmp);
        let mut pushes: Vec<u32> = tier.iter().map(|j| j.pushes).collect();
        pushes.sort_unstable();
        let finished = tier.iter().filter(|j| j.outside.is_some()).count();
        let agree = tier.iter().filter(|j| j.outside == Some(j.pushes)).count();
        println!(
            "| {} | {:.2} .. {:.2} | {} | {finished} of {} | {:.1} | {:.1} | {agree} of {finished} |",
            t + 1,
            tier[0].difficulty,
            tier[tier.len() - 1].difficulty,
            pushes[pushes.len() / 2],
            tier.len(),
            ms[ms.len() / 2],
            ms[ms.len() * 9 / 10],
        );
    }
    let disagree: Vec<u64> = judged
        .iter()
        .filter(|j| j.outside.is_some_and(|p| p != j.pushes))
        .map(|j| j.seed)
        .collect();
    println!("levels where the two solvers' push counts differ: {disagree:?}");
}
