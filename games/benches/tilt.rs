//! Tilt generation + verification throughput on one core.
//!
//! `cargo bench -p pregen-games --bench tilt -- [SEEDS]` prints accepted levels
//! per second per core for the default 6x6 params, the status mix, and the
//! reachable-state distribution of accepted levels.

use std::collections::BTreeMap;
use std::time::Instant;

use pregen_games::tilt::Tilt;
use pregen_games::{Budget, GameKind};
use sha2::{Digest, Sha256};

fn main() {
    let seeds: u64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(20_000);
    let params = serde_json::json!({});
    let budget = Budget::nodes(200_000);
    let started = Instant::now();
    let mut statuses: BTreeMap<String, (u64, f64)> = BTreeMap::new();
    let mut states = Vec::new();
    let (mut generate_ms, mut solve_ms) = (0.0, 0.0);
    // Everything but timings, so that a speed change that alters results shows.
    let mut digest = Sha256::new();
    for seed in 0..seeds {
        let out = GameKind::of::<Tilt>()
            .prepare(&params)
            .expect("valid params")
            .run(seed, &budget);
        match &out.result {
            Ok(c) => digest.update(format!(
                "{} {} {} {:?}\n",
                c.level_hash, c.solution, c.difficulty, c.metrics
            )),
            Err(r) => digest.update(format!("{r}\n")),
        }
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
        let entry = statuses.entry(key).or_default();
        entry.0 += 1;
        entry.1 += out.generate_ms + out.solve_ms;
    }
    let secs = started.elapsed().as_secs_f64();
    let accepted = statuses.get("accepted").map_or(0, |s| s.0);
    println!(
        "tilt 6x6 defaults, {seeds} seeds on one core in {secs:.2} s: {accepted} accepted = {:.0} accepted levels/s/core ({:.0} seeds/s)",
        accepted as f64 / secs,
        seeds as f64 / secs
    );
    let digest: String = digest.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    println!("outcome digest (levels, solutions, metrics, verdicts): {digest}");
    println!("time: generate {generate_ms:.0} ms, verify {solve_ms:.0} ms");
    println!("  seeds    ms  status");
    for (k, (n, ms)) in &statuses {
        println!("  {n:>7}  {ms:>7.0}  {k}");
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
