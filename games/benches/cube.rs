//! Cube generation + verification time per level for each overall difficulty,
//! on one core.
//!
//! `cargo bench -p pregen-games --bench cube -- [SEEDS] [MAX_NODES]` (defaults
//! 1,000 seeds per difficulty and the job default of 200,000 search states).

use std::time::Instant;

use pregen_games::cube::Cube;
use pregen_games::{Budget, GameKind};

fn percentile(sorted: &[f64], p: usize) -> f64 {
    sorted[(sorted.len() * p / 100).min(sorted.len() - 1)]
}

fn main() {
    let mut numbers = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse::<u64>().ok());
    let seeds = numbers.next().unwrap_or(1_000);
    let max_nodes = numbers.next().unwrap_or(200_000);
    let budget = Budget::nodes(max_nodes);
    println!("cube, {seeds} seeds per difficulty on one core, {max_nodes} search states at most");
    println!(
        "| d | accepted | rejected (reasons) | ms per seed: median, p99, max | mean turns | mean states |"
    );
    println!("|---|---|---|---|---|---|");
    let started = Instant::now();
    for d in 1..=10 {
        let params = serde_json::json!({ "difficulty": d });
        let mut ms = Vec::new();
        let mut accepted = 0u64;
        let (mut turns, mut states) = (0.0, 0.0);
        let mut reasons = std::collections::BTreeMap::<String, u64>::new();
        for seed in 0..seeds {
            let t = Instant::now();
            let out = GameKind::of::<Cube>()
                .prepare(&params)
                .expect("valid params")
                .run(seed, &budget);
            ms.push(t.elapsed().as_secs_f64() * 1e3);
            match out.result {
                Ok(c) => {
                    accepted += 1;
                    turns += f64::from(c.moves);
                    states += c.metrics["states"];
                }
                Err(r) => {
                    let head: String = r
                        .to_string()
                        .split(':')
                        .take(2)
                        .collect::<Vec<_>>()
                        .join(":");
                    *reasons.entry(head).or_default() += 1;
                }
            }
        }
        ms.sort_by(f64::total_cmp);
        let n = accepted.max(1) as f64;
        println!(
            "| {d} | {accepted} | {} | {:.2}, {:.1}, {:.0} | {:.1} | {:.0} |",
            reasons
                .iter()
                .map(|(r, c)| format!("{c} {r}"))
                .collect::<Vec<_>>()
                .join("; "),
            percentile(&ms, 50),
            percentile(&ms, 99),
            ms.last().copied().unwrap_or(0.0),
            turns / n,
            states / n,
        );
    }
    println!("total {:.1} s", started.elapsed().as_secs_f64());
}
