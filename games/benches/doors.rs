//! Seed 001's Table 3 with our generator: for each (n, b), RUNS runs of the
//! MCTS with the seed's settings; average grade, unique good levels found,
//! defects, time; the seed's figures beside.
//!
//! `cargo bench -p pregen-games --bench doors -- [RUNS] [n,b ...]` (default
//! 1,000 runs, rows (3,1) to (5,2)).

use std::collections::BTreeSet;
use std::time::Instant;

use pregen_games::Budget;
use pregen_games::doors::TABLE_3;
use pregen_games::doors::grade::{SOLUTION_CAP, grade};
use pregen_games::doors::level::{Features, Rules, uniqueness_key};
use pregen_games::doors::mcts::Search;
use pregen_games::rng::Rng;

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let runs: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let wanted: Vec<(usize, usize)> = args
        .iter()
        .skip(1)
        .filter_map(|a| a.split_once(','))
        .filter_map(|(n, b)| Some((n.parse().ok()?, b.parse().ok()?)))
        .collect();
    let rows: Vec<_> = TABLE_3
        .iter()
        .filter(|r| {
            if wanted.is_empty() {
                matches!(r.0, (3, 1) | (3, 2) | (4, 1) | (4, 2) | (5, 1) | (5, 2))
            } else {
                wanted.contains(&r.0)
            }
        })
        .collect();
    println!("doors: Table 3 with {runs} runs per row, one core");
    println!(
        "| n | b | avg grade (seed) | unique good found (seed) | defects (seed, per its runs) | s per row |"
    );
    println!("|---|---|---|---|---|---|");
    for &&((n, b), preset, seed_grade, seed_found, _, seed_defects) in &rows {
        let search = Search {
            features: Features {
                rooms: n,
                colours: b,
            },
            required: 1,
            random_moves: preset.random_moves,
            brain: preset.brain,
            depth: preset.depth,
            moves: preset.moves,
            epsilon: preset.epsilon,
            threshold: preset.threshold,
        };
        let started = Instant::now();
        let (mut total, mut defects) = (0.0, 0);
        let mut good = BTreeSet::new();
        for run in 0..runs as u64 {
            let mut rng = Rng::new(run);
            let out = search
                .run(&mut rng, &Budget::nodes(0))
                .expect("no deadline");
            let level = search.features.level(out.bits, 1);
            let g = grade(&level, &mut rng);
            total += g.total();
            if g.defect() {
                defects += 1;
            } else {
                good.insert(uniqueness_key(&Rules::new(&level).solutions(SOLUTION_CAP)));
            }
        }
        println!(
            "| {n} | {b} | {:.2} ({seed_grade:.2}) | {} ({seed_found}) | {defects} ({seed_defects} of {}) | {:.1} |",
            total / runs as f64,
            good.len(),
            preset.runs,
            started.elapsed().as_secs_f64()
        );
    }
}
