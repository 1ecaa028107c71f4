//! Prints accepted tilt levels per second on one core and the status mix.
//! `cargo run --release -p pregen-games --example throughput -- [SEEDS]`

use std::collections::BTreeMap;
use std::time::Instant;

use pregen_games::{Budget, GameKind};

fn main() {
    let seeds: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(20_000);
    let params = serde_json::json!({});
    let budget = Budget::nodes(200_000);
    let started = Instant::now();
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    let mut moves = Vec::new();
    let mut states = Vec::new();
    let (mut gen_ms, mut solve_ms, mut nodes) = (0.0, 0.0, 0u64);
    let mut by_status: BTreeMap<&str, (f64, u64)> = BTreeMap::new();
    for seed in 0..seeds {
        let out = GameKind::Tilt.run(&params, seed, &budget);
        gen_ms += out.generate_ms;
        solve_ms += out.solve_ms;
        nodes += out.nodes;
        let e = by_status.entry(match &out.result { Ok(_) => "accepted", Err(r) => r.status() }).or_default();
        e.0 += out.solve_ms;
        e.1 += 1;
        let key = match &out.result {
            Ok(c) => {
                moves.push(c.moves);
                states.push(c.metrics["states"] as u64);
                "accepted".to_string()
            }
            Err(r) => r.to_string().split(':').take(2).collect::<Vec<_>>().join(":"),
        };
        *counts.entry(key).or_default() += 1;
    }
    let secs = started.elapsed().as_secs_f64();
    let accepted = counts.get("accepted").copied().unwrap_or(0);
    println!("{seeds} seeds in {secs:.2} s: {accepted} accepted, {:.0} accepted/s/core, {:.0} seeds/s", accepted as f64 / secs, seeds as f64 / secs);
    for (k, v) in &counts {
        println!("  {v:>7}  {k}");
    }
    println!("generate {gen_ms:.0} ms, solve {solve_ms:.0} ms, accepted nodes {nodes}");
    for (k, (ms, n)) in &by_status {
        println!("  solve {k}: {ms:.0} ms over {n}");
    }
    states.sort_unstable();
    if !states.is_empty() {
        let total: u64 = states.iter().sum();
        println!("states: median {} p90 {} p99 {} max {} mean {}", states[states.len() / 2], states[states.len() * 9 / 10], states[states.len() * 99 / 100], states[states.len() - 1], total / states.len() as u64);
    }
    moves.sort_unstable();
    if !moves.is_empty() {
        println!("moves: median {} p90 {} max {}", moves[moves.len() / 2], moves[moves.len() * 9 / 10], moves[moves.len() - 1]);
    }
}
