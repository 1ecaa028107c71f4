//! What the coordinator's check of a worker's level costs beside making it.
//!
//! `cargo bench -p pregen-games --bench check -- [LEVELS] [GAME...]` makes
//! LEVELS accepted levels of each game named (default: every game; default
//! params) and prints, per game, the
//! mean time to make one (generate and verify, rejected seeds included) and
//! the mean time of `PreparedGame::check` on it, measured in the same run.

use std::time::Instant;

use pregen_games::{Budget, GameKind};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let wanted: usize = args.iter().find_map(|a| a.parse().ok()).unwrap_or(200);
    let named: Vec<&String> = args
        .iter()
        .filter(|a| GameKind::from_name(a).is_ok())
        .collect();
    let budget = Budget::nodes(2_000_000);
    println!("game\tlevels\tmake_ms_per_level\tcheck_ms_per_level\tcheck_share");
    for kind in GameKind::all().filter(|k| named.is_empty() || named.iter().any(|n| *n == k.name()))
    {
        let game = kind
            .prepare(&serde_json::json!({}))
            .expect("default params");
        let started = Instant::now();
        let mut levels = Vec::new();
        let mut seed = 0;
        while levels.len() < wanted && seed < 100 * wanted as u64 {
            if let Ok(level) = game.run(seed, &budget).result {
                levels.push(level);
            }
            seed += 1;
        }
        let make = started.elapsed().as_secs_f64() * 1e3 / levels.len().max(1) as f64;
        // Each level checked several times, so that a game's few levels give
        // a steady mean.
        let rounds = 10;
        let started = Instant::now();
        for _ in 0..rounds {
            for level in &levels {
                game.check(level)
                    .expect("a game's own level passes its check");
            }
        }
        let check = started.elapsed().as_secs_f64() * 1e3 / (rounds * levels.len().max(1)) as f64;
        println!(
            "{}\t{}\t{make:.3}\t{check:.4}\t{:.2}%",
            kind.name(),
            levels.len(),
            100.0 * check / make
        );
    }
}
