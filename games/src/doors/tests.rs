use std::collections::BTreeSet;

use super::census::Census;
use super::grade::{CRITERIA, SOLUTION_CAP, grade, is_good, score};
use super::layout::{lay_out, read_back};
use super::level::{Features, Level, Rules, notation, uniqueness_key};
use super::mcts::Search;
use super::{Doors, DoorsParams, Puzzle, Unique, preset};
use crate::rng::Rng;
use crate::run::run_game;
use crate::{Budget, Game, GameKind};

fn level(rooms: usize, colours: usize, doors: &[(u8, u8, u8)], buttons: &[(u8, u8)]) -> Level {
    Level {
        rooms,
        colours,
        required: 1,
        doors: doors.to_vec(),
        buttons: buttons.to_vec(),
        grid: Vec::new(),
    }
}

fn search(rooms: usize, colours: usize) -> Search {
    DoorsParams {
        rooms,
        colours,
        ..DoorsParams::default()
    }
    .search()
    .expect("Table 3 has the row")
}

/// Three rooms in a ring with one colour: out through room 1 or room 2.
fn ring() -> Level {
    level(3, 1, &[(0, 1, 0), (0, 2, 1), (1, 2, 0)], &[(1, 1)])
}

/// A corridor 0-1-2 with both kinds of door between 1 and 2 and the button
/// at the end: two solutions of five moves.
fn corridor() -> Level {
    level(3, 1, &[(0, 1, 0), (1, 2, 0), (1, 2, 1)], &[(2, 1)])
}

#[test]
fn renamed_rooms_and_colours_share_the_structure_key() {
    use super::level::structure_key;
    // Rooms 1 and 2 swapped, colours 2 and 3 swapped; colour 1 is required.
    let a = level(3, 3, &[(0, 1, 0), (1, 2, 2), (0, 2, 3)], &[(1, 3), (2, 1)]);
    let b = level(3, 3, &[(0, 2, 0), (1, 2, 3), (0, 1, 2)], &[(2, 2), (1, 1)]);
    let mut b = b;
    b.doors.sort_unstable();
    b.buttons.sort_unstable();
    assert_eq!(structure_key(&a), structure_key(&b));
    let f = Features {
        rooms: 3,
        colours: 3,
    };
    assert_ne!(f.bits(&a), f.bits(&b));
    // Renaming the required colour makes another level.
    let c = level(3, 3, &[(0, 1, 0), (1, 2, 1), (0, 2, 3)], &[(1, 3), (2, 2)]);
    assert_ne!(structure_key(&a), structure_key(&c));
}

#[test]
fn table_1_has_100_points_80_of_them_structure() {
    let total: f64 = CRITERIA.iter().map(|c| c.1).sum();
    let structure: f64 = CRITERIA[..17].iter().map(|c| c.1).sum();
    assert_eq!((total, structure), (100.0, 80.0));
    let g = grade(&ring(), &mut Rng::new(1));
    let names: Vec<&str> = g.points.iter().map(|p| p.0).collect();
    let table: Vec<&str> = CRITERIA.iter().map(|c| c.0).collect();
    assert_eq!(names, table);
}

#[test]
fn the_rules_give_moves_solutions_and_replays() {
    let ring = ring();
    let rules = Rules::new(&ring);
    let shortest = rules.shortest().expect("solvable");
    assert_eq!(notation(&shortest), "R1 B1 R0");
    assert_eq!(shortest.len() as u32, rules.distance_to_win()[Rules::START]);
    let solutions = rules.solutions(SOLUTION_CAP);
    let texts: BTreeSet<String> = solutions.iter().map(|s| notation(s)).collect();
    assert_eq!(texts.len(), solutions.len(), "solutions are distinct");
    assert!(texts.contains("R1 B1 R2 R0"));
    for s in &texts {
        ring.replay(s).expect("every solution wins");
    }
    assert!(ring.replay("R1 R0").is_err(), "not out without colour 1");
    assert!(ring.replay("R2").is_err(), "door 0-2 is locked at first");
    assert_eq!(uniqueness_key(&solutions)[0], "101");
}

#[test]
fn solutions_are_every_simple_path_of_the_state_graph() {
    // Cross-check Algorithm 2 against a plain enumeration of move sequences
    // that never revisit a state, on every (3, 1) level.
    let f = Features {
        rooms: 3,
        colours: 1,
    };
    for bits in 0..1u64 << f.count() {
        let level = f.level(bits, 1);
        let rules = Rules::new(&level);
        let mut expected = BTreeSet::new();
        let mut stack = vec![(Rules::START, vec![Rules::START], String::new())];
        while let Some((s, path, text)) = stack.pop() {
            if rules.wins(s) {
                expected.insert(text);
                continue;
            }
            for &(m, t) in &rules.moves[s] {
                if !path.contains(&t) {
                    let step = notation(&[(m, t)]);
                    let text = if text.is_empty() {
                        step
                    } else {
                        format!("{text} {step}")
                    };
                    let mut path = path.clone();
                    path.push(t);
                    stack.push((t, path, text));
                }
            }
        }
        let found: BTreeSet<String> = rules
            .solutions(usize::MAX)
            .iter()
            .map(|s| notation(s))
            .collect();
        // Parallel doors give equal texts; compare the sets.
        assert_eq!(found, expected, "level {bits}");
    }
}

#[test]
fn a_good_level_has_every_structure_point_and_a_defect_does_not() {
    let good = corridor();
    assert!(is_good(&good), "score {}", score(&good));
    let g = grade(&good, &mut Rng::new(7));
    assert_eq!(g.structure, 80.0);
    assert!(!g.defect());
    // Every solution of the ring is too short: a defect.
    let g = grade(&ring(), &mut Rng::new(7));
    assert!(g.defect());
    assert!(score(&ring()) < 1.0);
    // The required button in the start room: 3 points short, a defect.
    let lazy = level(3, 1, &[(0, 1, 0), (1, 2, 0), (1, 2, 1)], &[(0, 1)]);
    let g = grade(&lazy, &mut Rng::new(7));
    assert!(g.defect());
    assert_eq!(
        g.points[3],
        ("the required colour is not in the start room", 0.0)
    );
    assert!(score(&lazy) < 1.0);
}

#[test]
fn the_score_is_one_exactly_for_good_levels() {
    let f = Features {
        rooms: 3,
        colours: 2,
    };
    for bits in (0..1u64 << f.count()).step_by(5) {
        let level = f.level(bits, 1);
        let g = grade(&level, &mut Rng::new(bits));
        assert_eq!(is_good(&level), !g.defect(), "level {bits}: {level:?}");
    }
}

#[test]
fn the_limited_information_agent_walks_into_a_trap() {
    // Room 2 is behind a blue door and holds the red button: pressing it
    // there shuts the agent in. The way out is red from room 3.
    let trap = level(
        4,
        2,
        &[(0, 1, 0), (1, 2, 2), (1, 3, 0)],
        &[(1, 2), (2, 1), (3, 1)],
    );
    let g = grade(&trap, &mut Rng::new(3));
    assert_eq!(g.points[19], ("the limited-information agent wins", 0.0));
    let g = grade(&corridor(), &mut Rng::new(3));
    assert_eq!(g.points[19], ("the limited-information agent wins", 5.0));
}

#[test]
fn census_counts_stay_pinned() {
    let count = |rooms, colours| {
        let f = Features { rooms, colours };
        let c = Census::count(f, 0..1 << f.count());
        (c.levels, c.good, c.unique.len(), c.structures.len())
    };
    assert_eq!(count(2, 1), (16, 1, 1, 1));
    assert_eq!(count(3, 1), (512, 14, 5, 7));
    // Split in two, merged: the same counts.
    let f = Features {
        rooms: 3,
        colours: 2,
    };
    let half = 1u64 << (f.count() - 1);
    let merged = Census::count(f, 0..half).merge(Census::count(f, half..2 * half));
    assert_eq!(
        (merged.levels, merged.good, merged.unique.len()),
        (32768, 124, 39)
    );
}

#[test]
fn the_search_is_deterministic_and_finds_good_levels() {
    let s = search(3, 2);
    for seed in 0..10 {
        let a = s.run(&mut Rng::new(seed), &Budget::nodes(0)).expect("runs");
        let b = s.run(&mut Rng::new(seed), &Budget::nodes(0)).expect("runs");
        assert_eq!(a, b);
        assert_eq!(a.score, 1.0, "seed {seed}");
        assert!(is_good(&s.features.level(a.bits, 1)));
    }
    // (2, 1) has a single good level; small trees must still end.
    let s = search(2, 1);
    let out = s.run(&mut Rng::new(1), &Budget::nodes(0)).expect("runs");
    assert_eq!(
        s.features.level(out.bits, 1),
        level(2, 1, &[(0, 1, 0), (0, 1, 1)], &[(1, 1)])
    );
}

#[test]
fn layouts_hold_their_levels_and_round_trip_as_text() {
    for (rooms, colours) in [(3, 1), (4, 2), (5, 2)] {
        let s = search(rooms, colours);
        for seed in 0..3 {
            let mut rng = Rng::new(seed);
            let out = s.run(&mut rng, &Budget::nodes(0)).expect("runs");
            let mut level = s.features.level(out.bits, 1);
            let grid = lay_out(&level, &mut rng).expect("lays out");
            assert_eq!(read_back(rooms, colours, &grid), Ok(level.clone()));
            for room in 0..rooms {
                let digit = char::from(b'0' + room as u8);
                assert!(grid.iter().any(|row| row.contains(digit)), "room {room}");
            }
            assert_eq!(
                grid.iter().map(|r| r.matches('@').count()).sum::<usize>(),
                1
            );
            level.grid = grid;
            assert_eq!(Level::from_text(&level.to_text()), Ok(level.clone()));
        }
    }
}

#[test]
fn bad_text_is_refused_with_its_place() {
    let err = |text: &str| Level::from_text(text).expect_err("refused").to_string();
    assert!(err("").contains("empty"));
    assert!(err("rooms 2 colours 1\n###\n").contains("rooms N colours B required R"));
    assert!(err("rooms 2 colours 1 required 2\n###\n").contains("required 1..=colours"));
    assert!(err("rooms 2 colours 1 required 1\n#?#\n").contains("line 2, column 2"));
    assert!(err("rooms 2 colours 1 required 1\n#0#\n").contains("room"));
}

#[test]
fn the_game_accepts_good_levels_and_rejects_duplicates_by_its_key() {
    let params = DoorsParams {
        rooms: 3,
        colours: 1,
        ..DoorsParams::default()
    };
    Doors::validate(&params).expect("valid");
    let mut keys = BTreeSet::new();
    for seed in 0..6 {
        let outcome = run_game::<Doors>(&params, seed, &Budget::nodes(0));
        let c = outcome.result.expect("accepted");
        assert_eq!(c.metrics["defect"], 0.0);
        assert_eq!(c.metrics["grade_structure"], 80.0);
        let puzzle: Puzzle = serde_json::from_str(&c.level_json).expect("json");
        Doors::replay(&puzzle, &c.solution).expect("replays");
        assert_eq!(
            Doors::from_text(&c.layout).expect("text").level,
            puzzle.level
        );
        keys.insert(c.canonical.expect("keyed"));
    }
    assert!(keys.len() < 6, "(3, 1) has 5 classes by the source's key");
    let by_description = DoorsParams {
        unique: Unique::Description,
        ..params.clone()
    };
    let a = run_game::<Doors>(&by_description, 0, &Budget::nodes(0));
    assert_ne!(a.result.expect("accepted").canonical, None);
}

#[test]
fn params_are_checked_by_name() {
    let check = |text: &str| {
        GameKind::of::<Doors>()
            .validate_params(&serde_json::from_str(text).expect("json"))
            .map_err(|e| e.to_string())
    };
    assert!(check("{}").is_ok());
    assert!(
        check(r#"{"rooms": 9}"#)
            .expect_err("too many")
            .contains("rooms must be 2..=8")
    );
    assert!(
        check(r#"{"rooms": 3, "colours": 3}"#)
            .expect_err("no preset")
            .contains("Table 3")
    );
    assert!(
        check(r#"{"rooms": 3, "colours": 3, "epsilon": 0.3, "threshold": 0.99, "random_moves": 0.3, "brain": 500, "depth": 10, "moves": 30}"#)
            .is_ok()
    );
    assert!(
        check(r#"{"required": 3}"#)
            .expect_err("no colour 3")
            .contains("required")
    );
    assert!(
        check(r#"{"colour": 3}"#).is_err(),
        "unknown fields are refused"
    );
}

#[test]
fn presets_follow_table_3() {
    let p = preset(4, 2).expect("row");
    assert_eq!((p.brain, p.depth, p.moves), (2000, 30, 30));
    assert_eq!(preset(9, 1), None);
}

/// (rooms, colours, seed, the first 16 hex digits of the level hash).
const GOLDEN: &[(usize, usize, u64, &str)] = &[
    (3, 2, 0, "ebb9df0a257c3166"),
    (3, 2, 1, "e9ce42840dbb6a91"),
    (3, 2, 2, "197b2fb42ddd3c5f"),
    (4, 2, 0, "35dcf1a28497ec16"),
    (4, 2, 1, "9ab4c66cd7a9d287"),
    (4, 2, 2, "93d3114261e21258"),
];

#[test]
fn golden_level_hashes() {
    let mut got = Vec::new();
    for (rooms, colours) in [(3, 2), (4, 2)] {
        for seed in 0..3 {
            let params = DoorsParams {
                rooms,
                colours,
                ..DoorsParams::default()
            };
            let c = run_game::<Doors>(&params, seed, &Budget::nodes(0))
                .result
                .expect("accepted");
            got.push((rooms, colours, seed, c.level_hash[..16].to_string()));
        }
    }
    let want: Vec<(usize, usize, u64, String)> = GOLDEN
        .iter()
        .map(|&(n, b, s, h)| (n, b, s, h.to_string()))
        .collect();
    assert_eq!(got, want);
}

/// Golden ratings: the difficulty of the golden levels of 4 rooms. A change
/// here re-tiers every doors pack: bump `GENERATOR_VERSION` with it.
#[test]
fn golden_ratings() {
    let params = DoorsParams {
        rooms: 4,
        ..DoorsParams::default()
    };
    let got: Vec<(u64, f64)> = (0..3)
        .map(|seed| {
            let c = run_game::<Doors>(&params, seed, &Budget::nodes(0))
                .result
                .expect("accepted");
            (seed, c.difficulty)
        })
        .collect();
    assert_eq!(got, GOLDEN_RATINGS, "golden doors ratings changed");
}

const GOLDEN_RATINGS: &[(u64, f64)] = &[(0, 22.0), (1, 19.75), (2, 23.25)];

/// Every one-tile change of a real level's text is read or refused, never a
/// panic (a changed room cell once indexed out of bounds).
#[test]
fn every_one_tile_change_of_a_level_text_is_read_or_refused() {
    let game = GameKind::of::<Doors>()
        .prepare(&serde_json::json!({}))
        .expect("params");
    let level = (0..50)
        .find_map(|seed| game.run(seed, &Budget::nodes(1_000_000)).result.ok())
        .expect("a level");
    let text = level.layout;
    let tiles: Vec<char> = "#0123456789+ABCDEFGHabcdefgh@px^".chars().collect();
    let mut panics = Vec::new();
    for (i, c) in text.char_indices().filter(|(_, c)| *c != '\n') {
        for &t in tiles.iter().filter(|&&t| t != c) {
            let mut changed = text.clone();
            changed.replace_range(i..i + c.len_utf8(), &t.to_string());
            let read = std::panic::catch_unwind(|| {
                if let Ok(l) = Level::from_text(&changed) {
                    let _ = l.replay("R1");
                    let _ = Rules::new(&l).shortest();
                }
            });
            if read.is_err() {
                panics.push(format!("byte {i}: `{c}` -> `{t}`"));
            }
        }
    }
    assert!(
        panics.is_empty(),
        "{} panics, e.g. {:?}",
        panics.len(),
        &panics[..panics.len().min(5)]
    );
}
