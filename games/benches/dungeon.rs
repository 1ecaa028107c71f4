//! Dungeon generation + verification time per map for the source's grid sizes,
//! beside source 004's Table I, on one core.
//!
//! `cargo bench -p pregen-games --bench dungeon -- [SEEDS]` (default 1,000 per
//! size). As in the source, half the runs of a rectangular size swap width and
//! height. Time is the whole seed: map, agents (each change verified), and the
//! final verification with the dead-end proof.

use std::time::Instant;

use pregen_games::dungeon::Dungeon;
use pregen_games::{Budget, GameKind};

/// A row of source 004 Table I: grid, rooms (mean), complexity (mean), seconds
/// per map (mean, median).
type SeedRow = ((u16, u16), f64, f64, f64, f64);

const SEED_TABLE: [SeedRow; 7] = [
    ((7, 7), 4.0, 2.2, 0.001, 0.001),
    ((7, 12), 6.0, 3.1, 0.002, 0.002),
    ((12, 12), 9.0, 4.7, 0.015, 0.009),
    ((17, 12), 13.2, 7.0, 0.114, 0.059),
    ((17, 17), 19.1, 8.8, 0.366, 0.199),
    ((17, 22), 25.0, 9.9, 0.710, 0.365),
    ((22, 22), 32.1, 10.7, 1.272, 0.618),
];

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

fn main() {
    let seeds: u64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(1_000);
    let budget = Budget::nodes(1_000_000);
    println!("dungeon, default params, {seeds} seeds per size on one core");
    println!(
        "| grid  | rooms ours (seed) | complexity ours: mean, median (seed) | ms per map ours: mean, median, p99, max | seed ms: mean, median | accepted |"
    );
    println!("|---|---|---|---|---|---|");
    for ((w, h), s_rooms, s_complexity, s_mean, s_median) in SEED_TABLE {
        let mut ms = Vec::new();
        let mut rooms = Vec::new();
        let mut complexity = Vec::new();
        let mut accepted = 0;
        for seed in 0..seeds {
            let (width, height) = if seed % 2 == 1 { (h, w) } else { (w, h) };
            // Small maps may allow a complexity of 1; the table counts every map.
            let params =
                serde_json::json!({ "width": width, "height": height, "min_complexity": 1 });
            let started = Instant::now();
            let out = GameKind::of::<Dungeon>()
                .prepare(&params)
                .expect("valid params")
                .run(seed, &budget);
            ms.push(started.elapsed().as_secs_f64() * 1e3);
            if let Ok(c) = &out.result {
                accepted += 1;
                rooms.push(c.metrics["rooms"]);
                complexity.push(c.metrics["complexity"]);
            }
        }
        let mean_ms = mean(&ms);
        let max_ms = ms.iter().copied().fold(0.0, f64::max);
        let median_ms = median(&mut ms);
        let p99_ms = ms[(ms.len() * 99 / 100).min(ms.len() - 1)];
        println!(
            "| {w}x{h} | {:.1} ({s_rooms}) | {:.1}, {:.0} ({s_complexity}) | {mean_ms:.2}, {median_ms:.2}, {p99_ms:.2}, {max_ms:.1} | {:.0}, {:.0} | {accepted}/{seeds} |",
            mean(&rooms),
            mean(&complexity),
            median(&mut complexity),
            s_mean * 1e3,
            s_median * 1e3,
        );
    }
}
