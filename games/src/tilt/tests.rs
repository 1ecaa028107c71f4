use super::level::{Dir, Level};
use super::solve::{analyse, iterative_deepening_moves};
use super::*;
use crate::reason::Status;
use crate::{Budget, GameKind, run_game};

fn level(text: &str) -> Level {
    Level::from_text(text).expect("test level parses")
}

fn budget() -> Budget {
    Budget::nodes(1_000_000)
}

/// Solves `text` and checks the optimal move count and that the solution replays.
fn check_moves(text: &str, expected: Option<u32>) {
    let l = level(text);
    match (analyse(&l, &budget()), expected) {
        (Ok(a), Some(m)) => {
            assert_eq!(a.moves, m, "optimal moves of\n{text}");
            let solution: String = a.solution.iter().map(|d| d.letter()).collect();
            replay::replay(&l, &solution).expect("optimal solution replays");
        }
        (Err(Rejection::Unsolvable), None) => {}
        (got, want) => panic!("level\n{text}\ngave {got:?}, expected {want:?} moves"),
    }
}

#[test]
fn slides_pair_and_win() {
    // One tilt left brings the 1s together.
    check_moves("#####\n#1..#\n#..1#\n#####\n", Some(1));
    check_moves("######\n#1...#\n####.#\n#1...#\n######\n", Some(2));
    check_moves("######\n#1..1#\n######\n", Some(1));
}

#[test]
fn puddles_dirty_fruits_but_not_obstacles() {
    // The only way to pair crosses the puddle: unsolvable.
    check_moves("######\n#1~.1#\n######\n", None);
    // An obstacle on a puddle blocks; the stone rests on it.
    let l = level("#######\n#1.s.1#\n#######\n");
    assert_eq!(l.obstacles.len(), 1);
    check_moves("#######\n#1.s.1#\n#######\n", None);
}

#[test]
fn hedgehog_eats_fruit_but_not_obstacles() {
    // Tilting right slides the fruit into the hedgehog: lost; left pairs.
    check_moves("#######\n#1..1H#\n#######\n", Some(1));
    // A fruit wedged between two hedgehogs cannot move without being eaten.
    check_moves("#######\n#H1H..#\n###..1#\n#######\n", None);
    let l = level("######\n#S.H.#\n#1..1#\n######\n");
    let a = analyse(&l, &budget()).expect("solvable");
    assert_eq!(a.moves, 1);
}

#[test]
fn gates_let_objects_through_one_way() {
    // The gate between (2,1) and (3,1) only lets objects cross rightwards.
    check_moves("######\n#1..1#\n######\ngate 2,1 >\n", Some(1));
    let l = level("#####\n#..1#\n#1###\n#####\ngate 1,1 >\n");
    assert!(!l.gate_forbids(super::level::Pos { x: 1, y: 1 }, Dir::Right));
    assert!(l.gate_forbids(super::level::Pos { x: 2, y: 1 }, Dir::Left));
}

#[test]
fn anteater_pulls_first_fruit_in_sight() {
    // The anteater looks down column 1; the fruit at (1,3) is pulled to (1,2)
    // after any move, next to the other 1.
    let l = level("#####\n#>..#\n#.1.#\n#...#\n#1..#\n#####\n");
    let a = analyse(&l, &budget()).expect("solvable");
    assert!(a.moves >= 1);
}

#[test]
fn breadth_first_agrees_with_iterative_deepening_on_generated_levels() {
    let params = TiltParams {
        width: 5,
        height: 5,
        max_moves: 12,
        min_moves: 1,
        ..TiltParams::default()
    };
    let mut compared = 0;
    for seed in 0..300u64 {
        let mut rng = crate::rng::Rng::new(seed);
        let Ok(l) = generate::generate(&params, &mut rng) else {
            continue;
        };
        let bfs = analyse(&l, &budget());
        let ids = iterative_deepening_moves(&l, 12);
        match bfs {
            Ok(a) if a.moves <= 12 => {
                assert_eq!(Some(a.moves), ids, "seed {seed}\n{}", l.to_text());
                compared += 1;
            }
            Ok(_) => assert_eq!(ids, None, "seed {seed}"),
            Err(Rejection::Unsolvable) => assert_eq!(ids, None, "seed {seed}"),
            Err(e) => panic!("seed {seed}: {e}"),
        }
    }
    assert!(compared > 50, "only {compared} solvable levels compared");
}

#[test]
fn every_accepted_level_replays_and_round_trips() {
    let params = TiltParams::default();
    let mut accepted = 0;
    for seed in 0..400u64 {
        let out = run_game::<Tilt>(&params, seed, &budget());
        let Ok(c) = out.result else { continue };
        accepted += 1;
        let l: Level = serde_json::from_str(&c.level_json).expect("json parses");
        assert_eq!(
            Level::from_text(&c.layout).expect("text parses"),
            l,
            "text round trip, seed {seed}"
        );
        assert_eq!(l.to_text(), c.layout);
        assert_eq!(serde_json::to_string(&l).expect("serializes"), c.level_json);
        replay::replay(&l, &c.solution)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{}{}", c.layout, c.solution));
        assert_eq!(c.solution.len() as u32, c.moves);
        assert!((params.min_moves..=params.max_moves).contains(&c.moves));
    }
    assert!(accepted > 40, "only {accepted} accepted of 400");
}

#[test]
fn replay_refuses_wrong_solutions() {
    let l = level("#####\n#1..#\n#..1#\n#####\n");
    assert!(replay::replay(&l, "DL").is_ok() || replay::replay(&l, "LD").is_ok());
    let err = replay::replay(&l, "U").expect_err("does not win");
    assert!(matches!(err, GameError::NotWon { moves: 1, .. }), "{err}");
    assert!(replay::replay(&l, "X").is_err());
}

#[test]
fn malformed_text_is_refused_with_position() {
    let err = Level::from_text("####\n#1?#\n####\n").expect_err("unknown char");
    assert!(
        matches!(
            err,
            GameError::Parse {
                line: 2,
                column: 3,
                ..
            }
        ),
        "{err}"
    );
    assert!(
        Level::from_text("####\n#1.#\n####\n").is_err(),
        "one fruit of a colour"
    );
    assert!(Level::from_text("#1..1\n#####\n").is_err(), "open border");
}

#[test]
fn params_are_validated_by_name() {
    let bad = serde_json::json!({"pairs": 9});
    let err = GameKind::of::<Tilt>()
        .validate_params(&bad)
        .expect_err("too many pairs");
    assert!(err.to_string().contains("pairs"), "{err}");
    let unknown = serde_json::json!({"colour": 1});
    let err = GameKind::of::<Tilt>()
        .validate_params(&unknown)
        .expect_err("unknown field");
    assert!(err.to_string().contains("colour"), "{err}");
    let feature = serde_json::json!({"features": ["lava"]});
    let err = GameKind::of::<Tilt>()
        .validate_params(&feature)
        .expect_err("unknown feature");
    assert!(
        err.to_string().contains("hedgehogs"),
        "lists the allowed values: {err}"
    );
}

/// Golden seeds: (params, seed) -> level hash. A change here changes every pack:
/// bump `GENERATOR_VERSION` with it.
#[test]
fn golden_level_hashes() {
    let params = TiltParams::default();
    let mut got = Vec::new();
    for seed in 0..40u64 {
        if let Ok(c) = run_game::<Tilt>(&params, seed, &budget()).result {
            got.push((seed, c.moves, c.level_hash[..16].to_string()));
        }
    }
    let expected: &[(u64, u32, &str)] = GOLDEN;
    let got_ref: Vec<(u64, u32, &str)> = got.iter().map(|(s, m, h)| (*s, *m, h.as_str())).collect();
    assert_eq!(got_ref, expected, "golden tilt levels changed");
}

/// Golden ratings: the difficulty of the first golden levels. A change here
/// re-tiers every tilt pack: bump `GENERATOR_VERSION` with it.
#[test]
fn golden_ratings() {
    let params = TiltParams::default();
    let got: Vec<(u64, f64)> = GOLDEN[..6]
        .iter()
        .map(|&(seed, _, _)| {
            let c = run_game::<Tilt>(&params, seed, &budget())
                .result
                .expect("a golden level");
            (seed, c.difficulty)
        })
        .collect();
    assert_eq!(got, GOLDEN_RATINGS, "golden tilt ratings changed");
}

const GOLDEN_RATINGS: &[(u64, f64)] = &[
    (0, 13.242048),
    (3, 10.962661),
    (5, 16.26082),
    (8, 9.320625),
    (13, 9.653085),
    (14, 12.87347),
];

const GOLDEN: &[(u64, u32, &str)] = &[
    (0, 6, "1842d89591169979"),
    (3, 5, "434cd1a907827904"),
    (5, 10, "050a48cbe752f9ac"),
    (8, 5, "15a0a2063da573ad"),
    (13, 4, "aca58c6ec2c92578"),
    (14, 6, "4224f8dd1540967c"),
    (17, 7, "a699ed5da9bdfc1f"),
    (19, 7, "1cc671760dd08795"),
    (20, 9, "e2f09a6941f0f7ca"),
    (32, 5, "e7af1b6657d71534"),
    (34, 7, "f7df0b0cabf1b6f1"),
    (39, 5, "c415d5e00714c830"),
];

/// Random walks on generated levels: every tilt of the compiled rules (the
/// solver's) must agree with the literal one-cell-at-a-time rules of `replay`.
#[test]
fn compiled_rules_agree_with_literal_rules_on_random_walks() {
    use super::rules::{Board, GONE, Step};
    /// Fruits as (colour, cell) and obstacle cells, both sorted.
    type Snapshot = (Vec<(u8, u8)>, Vec<u8>);
    fn literal(l: &Level) -> Snapshot {
        let mut fruits: Vec<_> = l
            .fruits
            .iter()
            .map(|f| (f.colour, rules::cell(f.at)))
            .collect();
        let mut obstacles: Vec<_> = l.obstacles.iter().map(|o| rules::cell(o.at)).collect();
        fruits.sort_unstable();
        obstacles.sort_unstable();
        (fruits, obstacles)
    }
    let params = TiltParams {
        obstacle_density: 0.2,
        pairs: 3,
        ..TiltParams::default()
    };
    let (mut moved, mut lost, mut still) = (0, 0, 0);
    for seed in 0..200u64 {
        let mut rng = crate::rng::Rng::new(seed);
        let Ok(start) = generate::generate(&params, &mut rng) else {
            continue;
        };
        let (board, mut state) = Board::new(&start);
        let mut colours: Vec<u8> = start.fruits.iter().map(|f| f.colour).collect();
        colours.sort_unstable();
        let compiled = |s: &rules::State| -> Snapshot {
            let mut fruits: Vec<_> = (0..board.fruits)
                .filter(|&i| s.pos[i] != GONE)
                .map(|i| (colours[i], s.pos[i]))
                .collect();
            let mut obstacles = s.pos[board.fruits..board.objects].to_vec();
            fruits.sort_unstable();
            obstacles.sort_unstable();
            (fruits, obstacles)
        };
        let mut current = start.clone();
        for _ in 0..40 {
            if current.fruits.is_empty() {
                break;
            }
            let d = Dir::ALL[rng.index(4)];
            let literal_step = replay::play(&current, &d.letter().to_string());
            match (board.tilt(&state, d), literal_step) {
                (Step::Moved(next), Ok(after)) => {
                    assert_eq!(compiled(&next), literal(&after), "seed {seed}");
                    (state, current) = (next, after);
                    moved += 1;
                }
                (Step::NoChange, Err(e)) if e.to_string().contains("changes nothing") => still += 1,
                (Step::Lost, Err(e)) if !e.to_string().contains("changes nothing") => {
                    lost += 1;
                    break;
                }
                (step, literal) => panic!(
                    "seed {seed}: compiled {step:?}, literal {literal:?} tilting {}\n{}",
                    d.letter(),
                    current.to_text()
                ),
            }
        }
    }
    assert!(
        moved > 1000 && lost > 20 && still > 100,
        "{moved} {lost} {still}"
    );
}

/// The whole analysis (reachable states, dead states, first moves and the
/// losing ones, optimal moves and how many optimal solutions) agrees with a
/// plain breadth-first search that expands states with the literal rules of
/// `replay` and finds the dead states by repeating "alive if a move wins or
/// leads to an alive state" until nothing changes.
#[test]
fn analysis_agrees_with_a_plain_search_under_the_literal_rules() {
    use std::collections::HashMap;

    use super::level::Pos;

    /// Fruits as (colour, place) and obstacle places, both sorted.
    type Key = (Vec<(u8, Pos)>, Vec<Pos>);
    fn key(l: &Level) -> Key {
        let mut fruits: Vec<_> = l.fruits.iter().map(|f| (f.colour, f.at)).collect();
        let mut obstacles: Vec<_> = l.obstacles.iter().map(|o| o.at).collect();
        fruits.sort_unstable();
        obstacles.sort_unstable();
        (fruits, obstacles)
    }
    #[derive(Clone, Copy, PartialEq)]
    enum Move {
        Still,
        Lost,
        Won,
        To(usize),
    }
    const MAX_STATES: usize = 3000;
    let params = TiltParams {
        width: 5,
        height: 5,
        min_moves: 1,
        max_moves: 30,
        ..TiltParams::default()
    };
    let (mut compared, mut with_dead, mut with_losing) = (0, 0, 0);
    'levels: for seed in 0..300u64 {
        let mut rng = crate::rng::Rng::new(seed);
        let Ok(start) = generate::generate(&params, &mut rng) else {
            continue;
        };
        let analysis = analyse(&start, &budget());
        if matches!(&analysis, Err(r) if r.status() == Status::Rejected) {
            continue;
        }
        let mut ids: HashMap<Key, usize> = HashMap::from([(key(&start), 0)]);
        let mut states = vec![start.clone()];
        let mut depth = vec![0u32];
        let mut ways = vec![1u64];
        let mut moves: Vec<[Move; 4]> = Vec::new();
        while moves.len() < states.len() {
            if states.len() > MAX_STATES {
                continue 'levels;
            }
            let s = moves.len();
            let mut out = [Move::Still; 4];
            for d in Dir::ALL {
                out[d.index()] = match replay::play(&states[s], &d.letter().to_string()) {
                    Ok(after) if after.fruits.is_empty() => Move::Won,
                    Ok(after) => {
                        let t = *ids.entry(key(&after)).or_insert_with(|| {
                            states.push(after);
                            depth.push(depth[s] + 1);
                            ways.push(0);
                            states.len() - 1
                        });
                        if depth[t] == depth[s] + 1 {
                            ways[t] = ways[t].saturating_add(ways[s]);
                        }
                        Move::To(t)
                    }
                    Err(e) if e.to_string().contains("changes nothing") => Move::Still,
                    Err(_) => Move::Lost,
                };
            }
            moves.push(out);
        }
        let mut alive = vec![false; states.len()];
        let mut changed = true;
        while changed {
            changed = false;
            for (s, out) in moves.iter().enumerate() {
                let live = out.iter().any(|&m| match m {
                    Move::Won => true,
                    Move::To(t) => alive[t],
                    _ => false,
                });
                if live && !alive[s] {
                    alive[s] = true;
                    changed = true;
                }
            }
        }
        let winning: Vec<usize> = (0..states.len())
            .filter(|&s| moves[s].contains(&Move::Won))
            .collect();
        let Some(best) = winning.iter().map(|&s| depth[s] + 1).min() else {
            assert!(
                matches!(analysis, Err(Rejection::Unsolvable)),
                "seed {seed}: no win by the literal rules, analysis {analysis:?}"
            );
            continue;
        };
        let a = analysis.unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let optimal: u64 = winning
            .iter()
            .filter(|&&s| depth[s] + 1 == best)
            .map(|&s| ways[s] * moves[s].iter().filter(|&&m| m == Move::Won).count() as u64)
            .sum();
        let first: Vec<Move> = moves[0].into_iter().filter(|&m| m != Move::Still).collect();
        let losing = first
            .iter()
            .filter(|&&m| m == Move::Lost || matches!(m, Move::To(t) if !alive[t]))
            .count() as u32;
        let dead = alive.iter().filter(|&&live| !live).count();
        let text = start.to_text();
        assert_eq!(a.states, states.len(), "states, seed {seed}\n{text}");
        assert_eq!(a.dead_states, dead, "dead states, seed {seed}\n{text}");
        assert_eq!(a.first_moves, first.len() as u32, "seed {seed}\n{text}");
        assert_eq!(a.losing_first_moves, losing, "seed {seed}\n{text}");
        assert_eq!(a.moves, best, "optimal moves, seed {seed}\n{text}");
        assert_eq!(
            a.optimal_solutions, optimal,
            "optimal solutions, seed {seed}\n{text}"
        );
        compared += 1;
        with_dead += usize::from(dead > 0);
        with_losing += usize::from(losing > 0);
    }
    assert!(
        compared > 100 && with_dead > 20 && with_losing > 10,
        "compared {compared}, with dead states {with_dead}, with losing first moves {with_losing}"
    );
}
