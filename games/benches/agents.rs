//! What the agents cost, and whether a tier predicts how they fare.
//!
//! `cargo bench -p pregen-games --bench agents -- [GAME] [LEVELS] [PARAMS]`
//! (defaults: tilt, 2,000 levels of the game's default params; PARAMS is a
//! JSON object, or an array of them sharing the levels equally, each from
//! its own seed range; cube's default is its ten overall difficulties, as
//! its example job's strata)
//!
//! The levels are the first LEVELS accepted seeds, cut into 10 equal tiers
//! by difficulty (ties by seed), as a pack's tiers are. Every level carries
//! its agents' figures in its metrics ([`pregen_games::agents`]); the bench
//! prints per tier the mean of each, then Spearman's rank correlation of
//! the tier with each agent's per-tier mean (the target is |r| >= 0.9), and
//! what the agents cost: the mean time to play a level again beside the mean
//! time to make one without them (generate and verify, rejected seeds
//! included), measured in the same run.
//!
//! `--csv=PATH` also writes every level's seed, difficulty, moves and
//! metrics, one row each, for studying a rating without playing again.

use std::time::Instant;

use pregen_games::agents::METRICS;
use pregen_games::{Budget, Candidate, GameKind};

/// The params the levels are drawn from, as JSON: an object, or an array
/// of objects (strata) sharing the levels equally.
fn strata(game: &str, given: Option<&String>) -> Vec<serde_json::Value> {
    let value = match given {
        Some(text) => serde_json::from_str(text).expect("params: a JSON object or array"),
        None if game == "cube" => (1..=10)
            .map(|d| serde_json::json!({ "difficulty": d }))
            .collect(),
        None => serde_json::json!({}),
    };
    match value {
        serde_json::Value::Array(strata) => strata,
        one => vec![one],
    }
}

/// Ranks with ties sharing their mean rank.
fn ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut rank = vec![0.0; values.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
            j += 1;
        }
        for &k in &order[i..=j] {
            rank[k] = (i + j) as f64 / 2.0;
        }
        i = j + 1;
    }
    rank
}

/// Spearman's rank correlation; 0 when either side is constant.
fn spearman(a: &[f64], b: &[f64]) -> f64 {
    let (a, b) = (ranks(a), ranks(b));
    let n = a.len() as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let cov: f64 = a.iter().zip(&b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let va: f64 = a.iter().map(|x| (x - ma).powi(2)).sum();
    let vb: f64 = b.iter().map(|y| (y - mb).powi(2)).sum();
    if va == 0.0 || vb == 0.0 {
        0.0
    } else {
        cov / (va * vb).sqrt()
    }
}

/// Every level's seed, difficulty, moves and metrics, one row each.
fn write_csv(path: &str, levels: &[(u64, Candidate)]) {
    let names: Vec<&String> = levels
        .first()
        .map(|l| l.1.metrics.keys().collect())
        .unwrap_or_default();
    let mut out = String::from("seed,difficulty,moves");
    for name in &names {
        out.push(',');
        out.push_str(name);
    }
    out.push('\n');
    for (seed, c) in levels {
        out.push_str(&format!("{seed},{},{}", c.difficulty, c.moves));
        for name in &names {
            out.push_str(&format!(
                ",{}",
                c.metrics.get(*name).copied().unwrap_or(f64::NAN)
            ));
        }
        out.push('\n');
    }
    std::fs::write(path, out).expect("write the CSV");
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let words: Vec<&String> = args
        .iter()
        .filter(|a| a.parse::<u64>().is_err() && !a.starts_with("--"))
        .collect();
    let game_name = words
        .iter()
        .find(|a| !a.starts_with(['{', '[']))
        .map_or("tilt", |a| a.as_str());
    let given = words.iter().find(|a| a.starts_with(['{', '['])).copied();
    let wanted = args
        .iter()
        .find_map(|a| a.parse::<usize>().ok())
        .unwrap_or(2_000);
    let kind = GameKind::from_name(game_name).expect("a game");
    let strata = strata(game_name, given);
    let budget = Budget::nodes(200_000);
    let mut levels: Vec<(u64, Candidate)> = Vec::new();
    let mut seeds = Vec::new();
    let mut make_ms = 0.0;
    let mut agents_ms = 0.0;
    for (i, params) in strata.iter().enumerate() {
        let game = kind.prepare(params).expect("valid params");
        // Stratum i takes its share of the levels from its own seed range.
        let share = wanted * (i + 1) / strata.len() - wanted * i / strata.len();
        let first = i as u64 * 1_000_000_000;
        let mut seed = first;
        let mut taken = 0;
        while taken < share {
            let started = Instant::now();
            let outcome = game.run(seed, &budget);
            make_ms += started.elapsed().as_secs_f64() * 1e3;
            if let Ok(c) = outcome.result {
                let started = Instant::now();
                let again = kind.play_agents(&c).expect("the level reads back");
                agents_ms += started.elapsed().as_secs_f64() * 1e3;
                let again = again.expect("a game with agents").metrics();
                for (key, value) in &again {
                    assert_eq!(c.metrics.get(key), Some(value), "{key} at seed {seed}");
                }
                levels.push((seed, c));
                taken += 1;
            }
            seed += 1;
        }
        seeds.push(format!("{first}..{seed}"));
    }
    levels.sort_by(|a, b| {
        a.1.difficulty
            .total_cmp(&b.1.difficulty)
            .then(a.0.cmp(&b.0))
    });
    if let Some(path) = args.iter().find_map(|a| a.strip_prefix("--csv=")) {
        write_csv(path, &levels);
    }
    let n = levels.len() as f64;
    println!(
        "{game_name}, params {}: {wanted} levels (seeds {})",
        serde_json::Value::Array(strata.clone()),
        seeds.join(", ")
    );
    println!(
        "agents: {:.4} ms per level beside {:.4} ms to make one without them ({:.1}%)",
        agents_ms / n,
        (make_ms - agents_ms) / n,
        100.0 * agents_ms / (make_ms - agents_ms)
    );
    let names: Vec<&str> = METRICS.iter().map(|m| m.name).collect();
    println!("| tier | difficulty | moves p50 | {} |", names.join(" | "));
    println!("|---|---|---|{}", "---|".repeat(names.len()));
    let size = levels.len().div_ceil(10);
    let mut means: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    for (t, tier) in levels.chunks(size).enumerate() {
        let mut moves: Vec<u32> = tier.iter().map(|l| l.1.moves).collect();
        moves.sort_unstable();
        let mut row = format!(
            "| {} | {:.2} .. {:.2} | {} |",
            t + 1,
            tier[0].1.difficulty,
            tier[tier.len() - 1].1.difficulty,
            moves[moves.len() / 2]
        );
        for (k, name) in names.iter().enumerate() {
            let mean = tier.iter().map(|l| l.1.metrics[*name]).sum::<f64>() / tier.len() as f64;
            means[k].push(mean);
            row.push_str(&format!(" {mean:.3} |"));
        }
        println!("{row}");
    }
    let tiers: Vec<f64> = (1..=means[0].len()).map(|t| t as f64).collect();
    for (k, name) in names.iter().enumerate() {
        let across: Vec<f64> = levels.iter().map(|l| l.1.metrics[*name]).collect();
        let difficulty: Vec<f64> = levels.iter().map(|l| l.1.difficulty).collect();
        println!(
            "Spearman, tier with the per-tier mean of {name}: {:.3} (across levels, difficulty with it: {:.3})",
            spearman(&tiers, &means[k]),
            spearman(&difficulty, &across)
        );
    }
}
