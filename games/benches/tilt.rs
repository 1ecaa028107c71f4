//! Tilt generation + verification throughput on one core.
//!
//! `cargo bench -p pregen-games --bench tilt -- [SEEDS]` prints accepted levels
//! per second per core for the default 6x6 params, the status mix, and the
//! reachable-state distribution of accepted levels.

use std::collections::BTreeMap;
use std::time::Instant;

use pregen_games::{Budget, GameKind};

fn main() {
    let seeds: u64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(20_000);
    let params = serde_json::json!({});
    let budget = Budget::nodes(200_000);
    let started = Instant::now();
    let mut statuses: BTreeMap<String, u64> = BTreeMap::new();
    let mut states = Vec::new();
    let (mut generate_ms, mut solve_ms) = (0.0, 0.0);
    for seed in 0..seeds {
        let out = GameKind::Tilt.run(&params, seed, &budget);
        generate_ms += out.generate_ms;
        solve_ms += out.solve_ms;
        let key = match &out.result {
            Ok(c) => {
                states.push(c.metrics["states"] as u64);
                "accepted".to_string()
            }
            Err(r) => r
                .to_string()
                .split(':')
                .take(2)
                .collect::<Vec<_>>()
                .join(":"),
        };
        *statuses.entry(key).or_default() += 1;
    }
    let secs = started.elapsed().as_secs_f64();
    let accepted = statuses.get("accepted").copied().unwrap_or(0);
    println!(
        "tilt 6x6 defaults, {seeds} seeds on one core in {secs:.2} s: {accepted} accepted = {:.0} accepted levels/s/core ({:.0} seeds/s)",
        accepted as f64 / secs,
        seeds as f64 / secs
    );
    println!("time: generate {generate_ms:.0} ms, verify {solve_ms:.0} ms");
    for (k, v) in &statuses {
        println!("  {v:>7}  {k}");
    }
    states.sort_unstable();
    if let (Some(&max), false) = (states.last(), states.is_empty()) {
        let at = |q: f64| states[((q * states.len() as f64) as usize).min(states.len() - 1)];
        let mean = states.iter().sum::<u64>() / states.len() as u64;
        println!(
            "reachable states of accepted levels: median {} p90 {} p99 {} max {max} mean {mean}",
            at(0.5),
            at(0.9),
            at(0.99)
        );
    }
}
