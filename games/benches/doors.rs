//! Source 001's Table 3 with our generator: for each (n, b), RUNS runs of the
//! MCTS with the source's settings; average grade, unique good levels found,
//! defects, time; the source's figures beside.
//!
//! `cargo bench -p pregen-games --bench doors -- [RUNS] [n,b ...]` (default
//! 1,000 runs, rows (3,1) to (5,2)).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use pregen_games::Budget;
use pregen_games::doors::grade::{CRITERIA, SOLUTION_CAP, grade};
use pregen_games::doors::level::{Rules, uniqueness_key};
use pregen_games::doors::mcts::Search;
use pregen_games::doors::planar::is_planar;
use pregen_games::doors::{DoorsParams, TABLE_3};
use pregen_games::rng::Rng;

/// One run's figures.
struct Run {
    grade: f64,
    /// The good level's uniqueness key.
    key: Option<Vec<String>>,
    /// A defect's criteria short of full points.
    lost: Option<Vec<&'static str>>,
}

fn one_run(search: &Search, run: u64) -> Run {
    let mut rng = Rng::new(run);
    let out = search
        .run(&mut rng, &Budget::nodes(0))
        .expect("no deadline");
    let level = search.features.level(out.bits, 1);
    let g = grade(&level, &mut rng);
    let good = !g.defect() && is_planar(&level.adjacency());
    Run {
        grade: g.total(),
        key: good.then(|| uniqueness_key(&Rules::new(&level).solutions(SOLUTION_CAP))),
        lost: g.defect().then(|| {
            g.points
                .iter()
                .zip(&CRITERIA)
                .take(17)
                .filter(|(p, c)| p.1 < c.1 - 1e-9)
                .map(|(p, _)| p.0)
                .collect()
        }),
    }
}

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
    println!(
        "doors: Table 3 with {runs} runs per row on {} threads",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!(
        "| n | b | avg grade (seed) | unique good found (seed) | defects (seed, per its runs) | s per row |"
    );
    println!("|---|---|---|---|---|---|");
    for &&((n, b), preset, seed_grade, seed_found, _, seed_defects) in &rows {
        let search = DoorsParams {
            rooms: n,
            colours: b,
            ..DoorsParams::default()
        }
        .search()
        .expect("a Table 3 row");
        let started = Instant::now();
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        // Each run is its own seed; threads take every `threads`-th run.
        let rows: Vec<Run> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let search = &search;
                    scope.spawn(move || {
                        (t..runs)
                            .step_by(threads)
                            .map(|run| one_run(search, run as u64))
                            .collect::<Vec<Run>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().expect("no panic"))
                .collect()
        });
        let total: f64 = rows.iter().map(|r| r.grade).sum();
        let defects = rows.iter().filter(|r| r.lost.is_some()).count();
        let good: BTreeSet<&Vec<String>> = rows.iter().filter_map(|r| r.key.as_ref()).collect();
        let mut lost: BTreeMap<&str, usize> = BTreeMap::new();
        for name in rows.iter().filter_map(|r| r.lost.as_ref()).flatten() {
            *lost.entry(name).or_default() += 1;
        }
        println!(
            "| {n} | {b} | {:.2} ({seed_grade:.2}) | {} ({seed_found}) | {defects} ({seed_defects} of {}) | {:.1} |",
            total / runs as f64,
            good.len(),
            preset.runs,
            started.elapsed().as_secs_f64()
        );
        if !lost.is_empty() {
            eprintln!("  defects by criterion: {lost:?}");
        }
    }
}
