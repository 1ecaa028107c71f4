//! What the coordinator's work on a worker's level costs beside making it.
//!
//! `cargo bench -p pregen-games --bench check -- [LEVELS] [GAME...]` makes
//! LEVELS accepted levels of each game named (default: every game; default
//! params) and prints, per game, the
//! mean time to make one (generate and verify, rejected seeds included), the
//! mean time of `PreparedGame::check` on it, of `PreparedGame::made_by` (the
//! level made again from its seed, for the games that regenerate) and of the
//! built-in rating model's `rate`, measured in the same run.

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
    println!(
        "game\tlevels\tmake_ms_per_level\tcheck_ms_per_level\tcheck_share\t\
         regenerate_ms_per_level\trate_us_per_level"
    );
    for kind in GameKind::all().filter(|k| named.is_empty() || named.iter().any(|n| *n == k.name()))
    {
        let game = kind
            .prepare(&serde_json::json!({}))
            .expect("default params");
        let started = Instant::now();
        let mut levels = Vec::new();
        let mut seeds = Vec::new();
        let mut seed = 0;
        while levels.len() < wanted && seed < 100 * wanted as u64 {
            if let Ok(level) = game.run(seed, &budget).result {
                levels.push(level);
                seeds.push(seed);
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
        let per = |started: Instant| {
            started.elapsed().as_secs_f64() * 1e3 / (rounds * levels.len().max(1)) as f64
        };
        let check = per(started);
        let started = Instant::now();
        for _ in 0..rounds {
            for (level, &seed) in levels.iter().zip(&seeds) {
                game.made_by(seed, &level.level_json, &budget)
                    .expect("a game's own level is its seed's");
            }
        }
        let regenerate = if game.regenerates() {
            format!("{:.4}", per(started))
        } else {
            "-".into()
        };
        let model = kind.default_model().expect("the built-in model");
        let started = Instant::now();
        let mut sum = 0.0;
        for _ in 0..rounds {
            for level in &levels {
                sum += model
                    .rate(pregen_games::rating::Model::features(
                        &level.metrics,
                        level.moves,
                    ))
                    .expect("rated");
            }
        }
        let rate = per(started) * 1e3;
        println!(
            "{}\t{}\t{make:.3}\t{check:.4}\t{:.2}%\t{regenerate}\t{rate:.3}",
            kind.name(),
            levels.len(),
            100.0 * check / make
        );
        std::hint::black_box(sum);
    }
}
