//! Sokoban on one core: the MCTS generator's time and memory per puzzle, the
//! reverse generator's verified levels per second, the solver's speed.
//!
//! `cargo bench -p pregen-games --bench sokoban -- [mcts|reverse|solver|player|variety|all] [N]`
//! - `mcts`: N puzzles (default 5) of 6x6 at 100,000 and at 500,000 iterations
//!   (generation only): seconds per puzzle, tree nodes, the process's peak
//!   resident memory, the source's score;
//! - `reverse`: N seeds (default 500) of 10x10 with 4 boxes through the whole
//!   run (generate, exact solve, rate): verified levels per second;
//! - `solver`: the levels of the first N (default 200) reverse seeds, solved
//!   again: nodes per second, time per level, pushes and moves;
//! - `player`: the levels of the first N (default 2,000) reverse seeds with
//!   `player_on_goal` true and false: how many start with the player on a goal;
//! - `variety`: the levels of the first N (default 300) MCTS seeds under the
//!   source's score and under the defaults (a third argument sets
//!   `displacement_weight`): boxes and pushes by tier.

use std::time::Instant;

use pregen_games::rng::Rng;
use pregen_games::sokoban::{Sokoban, SokobanParams, solve};
use pregen_games::{Budget, GameKind};

/// The process's peak resident set in MiB (Linux), if known.
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn percentile(sorted: &[f64], p: usize) -> f64 {
    sorted[(sorted.len() * p / 100).min(sorted.len() - 1)]
}

fn mcts(puzzles: u64) {
    for iterations in [100_000u64, 500_000] {
        let params = SokobanParams {
            iterations,
            ..SokobanParams::default()
        };
        let generator = params.mcts();
        let mut secs = Vec::new();
        let (mut score, mut nodes, mut boxes) = (0.0, 0usize, 0usize);
        for seed in 0..puzzles {
            let t = Instant::now();
            let found = generator
                .generate(&mut Rng::new(seed), &Budget::nodes(0))
                .expect("a puzzle");
            secs.push(t.elapsed().as_secs_f64());
            score += found.score;
            nodes = nodes.max(found.tree_nodes);
            boxes += found.level.boxes.len();
        }
        secs.sort_by(f64::total_cmp);
        let n = puzzles as f64;
        println!(
            "mcts 6x6, {iterations} iterations, {puzzles} puzzles: {:.3} s mean, {:.3} s max per puzzle; \
             tree up to {nodes} nodes; peak RSS {:.0} MiB; mean score {:.3}, mean boxes {:.1}",
            secs.iter().sum::<f64>() / n,
            secs.last().copied().unwrap_or(0.0),
            peak_rss_mib().unwrap_or(f64::NAN),
            score / n,
            boxes as f64 / n,
        );
    }
}

fn reverse(seeds: u64) -> Vec<String> {
    let params = serde_json::json!({ "method": "reverse" });
    let game = GameKind::of::<Sokoban>()
        .prepare(&params)
        .expect("valid params");
    let budget = Budget::nodes(200_000);
    let started = Instant::now();
    let mut accepted = Vec::new();
    let mut rejected = 0;
    for seed in 0..seeds {
        match game.run(seed, &budget).result {
            Ok(c) => accepted.push(c.layout),
            Err(_) => rejected += 1,
        }
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "reverse 10x10/4: {} verified levels ({rejected} rejected) from {seeds} seeds in {secs:.2} s: \
         {:.1} verified levels/s on one core",
        accepted.len(),
        accepted.len() as f64 / secs
    );
    accepted
}

/// How often reverse play starts the player on a goal, allowed or not.
fn player_start(seeds: u64) {
    for allowed in [true, false] {
        let params = serde_json::json!({ "method": "reverse", "player_on_goal": allowed });
        let game = GameKind::of::<Sokoban>()
            .prepare(&params)
            .expect("valid params");
        let budget = Budget::nodes(200_000);
        let (mut levels, mut on_goal) = (0, 0);
        for seed in 0..seeds {
            if let Ok(c) = game.run(seed, &budget).result {
                levels += 1;
                on_goal += usize::from(c.layout.contains('+'));
            }
        }
        println!(
            "reverse 10x10/4, player_on_goal = {allowed}: {on_goal} of {levels} levels ({:.1}%) start with the player on a goal",
            100.0 * on_goal as f64 / levels.max(1) as f64
        );
    }
}

/// The MCTS generator's levels under the source's score (any box count,
/// which the score fills to the most) and under today's defaults (a box
/// count drawn per seed, displacement scored): boxes and pushes by tier.
fn variety(seeds: u64, weight: Option<f64>) {
    let mut defaults = serde_json::json!({ "method": "mcts" });
    if let Some(w) = weight {
        defaults["displacement_weight"] = w.into();
    }
    let settings = [
        (
            "source's score",
            serde_json::json!({ "method": "mcts", "draw_boxes": false, "displacement_weight": 0.0 }),
        ),
        ("defaults", defaults),
    ];
    for (name, params) in settings {
        let game = GameKind::of::<Sokoban>()
            .prepare(&params)
            .expect("valid params");
        let budget = Budget::nodes(200_000);
        let mut levels: Vec<(f64, u64, u32, u32)> = Vec::new();
        for seed in 0..seeds {
            if let Ok(c) = game.run(seed, &budget).result {
                levels.push((
                    c.difficulty,
                    seed,
                    c.metrics["boxes"] as u32,
                    c.metrics["pushes"] as u32,
                ));
            }
        }
        levels.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let boxes_seen = |tier: &[(f64, u64, u32, u32)]| {
            (1..=15)
                .filter_map(|b| {
                    let n = tier.iter().filter(|l| l.2 == b).count();
                    (n > 0).then(|| format!("{b}: {n}"))
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let pushes = |tier: &[(f64, u64, u32, u32)]| {
            let mut p: Vec<u32> = tier.iter().map(|l| l.3).collect();
            p.sort_unstable();
            (p[0], p[p.len() / 2], p[p.len() - 1])
        };
        let (lo, mid, hi) = pushes(&levels);
        println!(
            "mcts 6x6, {name}: {} levels from {seeds} seeds; boxes {}; pushes min {lo}, p50 {mid}, max {hi}; {} of one push",
            levels.len(),
            boxes_seen(&levels),
            levels.iter().filter(|l| l.3 == 1).count(),
        );
        println!("| tier | difficulty | boxes (levels) | pushes min / p50 / max |");
        println!("|---|---|---|---|");
        for (t, tier) in levels.chunks(levels.len().div_ceil(10)).enumerate() {
            let (lo, mid, hi) = pushes(tier);
            println!(
                "| {} | {:.1} .. {:.1} | {} | {lo} / {mid} / {hi} |",
                t + 1,
                tier[0].0,
                tier[tier.len() - 1].0,
                boxes_seen(tier)
            );
        }
    }
}

fn solver(levels: &[String]) {
    let budget = Budget::nodes(1_000_000);
    let mut ms = Vec::new();
    let (mut nodes, mut pushes, mut moves) = (0u64, 0u64, 0u64);
    let started = Instant::now();
    for text in levels {
        let level = pregen_games::sokoban::level::Level::from_xsb(text).expect("parses");
        let t = Instant::now();
        let a = solve::solve(&level, &budget).expect("solves");
        ms.push(t.elapsed().as_secs_f64() * 1e3);
        nodes += a.nodes;
        pushes += u64::from(a.pushes);
        moves += u64::from(a.moves);
    }
    let secs = started.elapsed().as_secs_f64();
    ms.sort_by(f64::total_cmp);
    let n = levels.len().max(1) as f64;
    println!(
        "solver on {} reverse 10x10/4 levels: {:.0} nodes/s; ms per level median {:.2}, p99 {:.1}, max {:.1}; \
         mean {:.0} nodes, {:.1} pushes, {:.1} moves",
        levels.len(),
        nodes as f64 / secs,
        percentile(&ms, 50),
        percentile(&ms, 99),
        ms.last().copied().unwrap_or(0.0),
        nodes as f64 / n,
        pushes as f64 / n,
        moves as f64 / n,
    );
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let what = args.first().map_or("all", String::as_str);
    let n = args.get(1).and_then(|a| a.parse::<u64>().ok());
    match what {
        "mcts" => mcts(n.unwrap_or(5)),
        "reverse" => drop(reverse(n.unwrap_or(500))),
        "solver" => solver(&reverse(n.unwrap_or(200))),
        "player" => player_start(n.unwrap_or(2_000)),
        "variety" => variety(n.unwrap_or(300), args.get(2).and_then(|a| a.parse().ok())),
        _ => {
            let levels = reverse(n.unwrap_or(500));
            solver(&levels);
            mcts(5);
        }
    }
}
