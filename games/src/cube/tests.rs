use super::geometry::{Face, Turn, cell};
use super::level::{Cell, Level};
use super::*;
use crate::{Budget, run_game};

fn budget() -> Budget {
    Budget::nodes(2_000_000)
}

/// All obstacles except the given Top path cells; karma where asked.
fn level(paths: &[usize], karma: &[usize], goal: u32) -> Level {
    let mut cells = vec![Cell::Obstacle; 54];
    for &p in paths {
        cells[p] = Cell::Path;
    }
    for &k in karma {
        cells[k] = Cell::Karma;
    }
    Level {
        cells,
        karma_goal: goal,
        difficulty: 0,
    }
}

#[test]
fn an_open_top_wins_without_turning() {
    let top: Vec<usize> = (0..9).collect();
    let l = level(&top, &[4], 1);
    let a = solve::solve(&l, &budget()).expect("solvable");
    assert!(a.steps.is_empty());
    assert_eq!(a.notation(), "@2,2");
    replay::replay(&l, "@2,2").expect("replays");
}

#[test]
fn karma_behind_needs_the_right_turn_and_the_net_round_trips() {
    // Top: a path along row 0 and column 2 to the exit, one karma on Left.
    // Row 1 left-to-right brings Left's column x = 1 to Top row 1, Left (1, 0)
    // landing on Top (2, 1), on the monk's way to the exit.
    let paths: Vec<usize> = vec![0, 1, 2, 5, 8];
    let l = level(&paths, &[cell(Face::Left, 1, 0)], 1);
    let a = solve::solve(&l, &budget()).expect("solvable");
    assert_eq!(a.steps.len(), 1, "{}", a.notation());
    assert_eq!(a.steps[0].turn, Turn::Row(1));
    replay::replay(&l, &a.notation()).expect("replays");
    assert!(replay::replay(&l, "@2,2").is_err(), "no karma yet");
    let text = l.to_text();
    assert_eq!(Level::from_text(&text), Ok(l.clone()), "{text}");
    let json = serde_json::to_string(&l).expect("json");
    assert_eq!(serde_json::from_str::<Level>(&json).expect("parse"), l);
}

#[test]
fn a_turn_that_lets_a_soldier_reach_the_monk_is_illegal() {
    let top: Vec<usize> = (0..9).collect();
    let mut l = level(&top, &[cell(Face::Left, 2, 1)], 1);
    // A soldier on Left (1, 1): row 1 left-to-right brings it to Top (1, 1)
    // beside the karma, where it sees the monk.
    l.cells[cell(Face::Left, 1, 1)] = Cell::Soldier;
    l.cells[cell(Face::Left, 0, 1)] = Cell::Path;
    assert!(replay::replay(&l, "@0,0 R1 @2,2").is_err());
    // Solvable another way or not at all; never through the soldier.
    match solve::solve(&l, &budget()) {
        Ok(a) => replay::replay(&l, &a.notation()).expect("the solver's answer replays"),
        Err(Rejection::Unsolvable) => {}
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn the_monk_may_not_turn_its_own_row_or_column() {
    let top: Vec<usize> = (0..9).collect();
    let l = level(&top, &[cell(Face::Left, 2, 0)], 1);
    assert!(replay::replay(&l, "@0,0 R0 @2,2").is_err());
    assert!(replay::replay(&l, "@0,0 C0 @2,2").is_err());
}

#[test]
fn generated_levels_solve_replay_and_round_trip_at_every_difficulty() {
    for difficulty in 1..=10 {
        let params = CubeParams {
            difficulty,
            ..CubeParams::default()
        };
        let mut accepted = 0;
        for seed in 0..12 {
            let out = run_game::<Cube>(&params, seed, &Budget::nodes(100_000));
            let Ok(c) = out.result else { continue };
            accepted += 1;
            let l: Level = serde_json::from_str(&c.level_json).expect("json");
            assert_eq!(l.difficulty, difficulty);
            assert_eq!(l.karma(), 17 - difficulty);
            assert_eq!(
                l.cells.iter().filter(|&&x| x == Cell::Soldier).count() as u32,
                difficulty
            );
            assert_eq!(Level::from_text(&c.layout), Ok(l.clone()));
            replay::replay(&l, &c.solution).expect("replays");
            assert!(
                c.difficulty >= f64::from(10 * difficulty)
                    && c.difficulty <= f64::from(10 * difficulty + 4)
            );
        }
        assert!(
            accepted >= 6,
            "difficulty {difficulty}: {accepted} of 12 accepted"
        );
    }
}

/// Golden seeds: a game client rebuilds any level from (params, seed); these
/// 100 (difficulty, seed) -> level-hash pairs pin the generator. A change here
/// changes every cube pack: bump `GENERATOR_VERSION` with it.
#[test]
fn golden_level_hashes() {
    let mut got = Vec::new();
    for difficulty in 1..=10 {
        let params = CubeParams {
            difficulty,
            ..CubeParams::default()
        };
        let mut seed = 0;
        let mut found = 0;
        while found < 10 {
            if let Ok(c) = run_game::<Cube>(&params, seed, &Budget::nodes(200_000)).result {
                got.push(format!(
                    "{difficulty} {seed} {} {}",
                    c.moves,
                    &c.level_hash[..16]
                ));
                found += 1;
            }
            seed += 1;
        }
    }
    assert_eq!(got, GOLDEN, "golden cube levels changed");
}

const GOLDEN: &[&str] = &[
    "1 0 4 faf8eaea4167eca0",
    "1 1 5 add2949ea990d8be",
    "1 2 3 f612c79a91344b9e",
    "1 3 4 1eb48b8af0d6e900",
    "1 4 4 0cc34720275c7665",
    "1 5 2 abd39604f9a65c01",
    "1 6 4 7fc13d2b2e497dca",
    "1 7 3 5dbcc0948d4f9232",
    "1 8 2 28347de02abfddae",
    "1 9 2 2dd00536836aecb9",
    "2 0 4 cb55bee1f1db0350",
    "2 2 2 da7716550b7f3d14",
    "2 3 3 280c70eed93743bf",
    "2 4 2 c842c409601bc51f",
    "2 5 1 077bd1cda3acdfa2",
    "2 6 5 966a0871ca8e0249",
    "2 7 5 4d87bccc509eac24",
    "2 8 2 c5f693a20f927514",
    "2 9 5 8a02f725e3edbad2",
    "2 10 3 5e4d495e4d0d30f9",
    "3 0 6 82cc7323c905784c",
    "3 1 5 f7b8eb5238268396",
    "3 2 4 aadb6f2388855ac8",
    "3 3 5 83cc7ff65034c1b6",
    "3 4 3 d23a15403402a455",
    "3 5 5 dd1d316ea680cc7b",
    "3 6 6 715f1e0f6c9a19d6",
    "3 7 3 9e327edd390f3dc4",
    "3 8 3 dd2ae2600248733c",
    "3 9 5 63ae6cfdc553d267",
    "4 0 3 5cf06ea74f408bff",
    "4 1 5 e22446153f5df6a1",
    "4 2 8 ac350d03eef602af",
    "4 3 5 1be8d60481c7dde1",
    "4 4 5 fcd1661f679655a2",
    "4 5 6 95486c026ccaa7e8",
    "4 6 5 54136628a27b89fd",
    "4 7 5 d88903fe7e2c4073",
    "4 8 4 49e530721ac12a16",
    "4 9 4 e9a91b9adee4d6aa",
    "5 0 8 1e8668e1771dbcd0",
    "5 1 5 27a6229de70d01ba",
    "5 2 5 8a430787fa3673e7",
    "5 3 3 658fbce6a2b45797",
    "5 4 5 87b980a24db5442d",
    "5 6 2 291abef59db8236c",
    "5 7 7 e0303637c649c9cd",
    "5 8 6 2d31e99d916a247f",
    "5 9 7 03b96af8c118fad6",
    "5 10 5 a9b37641771e0b18",
    "6 0 4 8372f3c3e681c948",
    "6 1 6 7703b1d0c7dfb608",
    "6 2 7 0b0e2b7f210ab9a8",
    "6 3 5 d3928b709c8564e7",
    "6 4 8 712583ede9258e4f",
    "6 5 8 b4499c89b5901047",
    "6 6 6 60718d9dad0f32dd",
    "6 7 4 c59fdcdaa405e093",
    "6 8 7 5e2775f4ee87d649",
    "6 9 6 25bc28b6e6b36bc6",
    "7 0 7 a20879347a74cec8",
    "7 1 9 aa88ca7893907699",
    "7 3 7 b8a1c36f71cd449f",
    "7 4 6 0401eaccde786ce5",
    "7 6 8 6dc03557be36ed26",
    "7 7 8 3dbc98a463beea83",
    "7 8 5 6082e663d72058cd",
    "7 9 8 88e0421de3d42de9",
    "7 11 7 7da3d362189f6f41",
    "7 12 8 ddfb575c2c6dd2be",
    "8 0 11 1ea6a31619616176",
    "8 1 9 6ce74ca6b9f168f1",
    "8 3 11 4ccf5f7297bb827b",
    "8 6 8 262466c1164489d6",
    "8 7 12 d51e85b8d0120bfe",
    "8 8 4 705d1690abb8ce57",
    "8 9 5 a5a326a901374bfb",
    "8 10 6 4b477cd4b71f9ddd",
    "8 11 6 e9cc5a69a20c3949",
    "8 12 6 1a8025b102ba83e7",
    "9 0 9 2807085b0ef9dfe4",
    "9 1 11 60c08c8f275922f5",
    "9 2 11 6e045672ef71fc93",
    "9 3 8 d3065758b0de3187",
    "9 4 13 f71c7aa2470adf72",
    "9 7 11 67f0a9e52696a944",
    "9 8 7 03cf6e28fd3cf03c",
    "9 9 8 de6545d26c1cb206",
    "9 10 8 e4b5c35e0de01916",
    "9 11 6 f79f77037d5f8b6a",
    "10 1 7 928367dfe2a46545",
    "10 3 11 1be69af296aef88f",
    "10 4 10 c08eaf227f1bb7e5",
    "10 5 6 c675fa3bdc7a6037",
    "10 7 9 22ebde198b5795e9",
    "10 8 9 d2a6eb70a321c1d2",
    "10 9 10 d85cddea30f1f550",
    "10 10 9 1eeb8b3defae0ccf",
    "10 11 8 3808e05e90dff412",
    "10 12 6 43a24ea0ae66b732",
];

#[test]
fn a_small_budget_falls_back_to_a_greedy_solution_flagged_not_optimal() {
    let params = CubeParams {
        difficulty: 9,
        ..CubeParams::default()
    };
    let mut checked = 0;
    for seed in 0..40 {
        let Ok(level) = generate::generate(&params, &mut crate::rng::Rng::new(seed)) else {
            continue;
        };
        let Ok(best) = solve::solve(&level, &Budget::nodes(200_000)) else {
            continue;
        };
        if best.states < 2_000 {
            continue;
        }
        match solve::solve(&level, &Budget::nodes(500)) {
            Ok(quick) => {
                assert!(!quick.optimal);
                assert!(quick.steps.len() >= best.steps.len());
                replay::replay(&level, &quick.notation()).expect("the greedy answer replays");
                checked += 1;
            }
            Err(r) => assert!(r.is_out_of_nodes(), "{r}"),
        }
    }
    assert!(checked >= 3, "{checked} levels fell back to greedy");
}

/// a pack accepts only proven shortest solutions unless the job
/// lets the greedy fallback's answers in, and the coordinator's check holds a
/// worker to it.
#[test]
fn a_level_without_a_proven_shortest_solution_is_rejected() {
    let strict = CubeParams {
        difficulty: 10,
        ..CubeParams::default()
    };
    let lenient = CubeParams {
        prove_optimal: false,
        ..strict.clone()
    };
    let budget = Budget::nodes(200_000);
    // Seed 0 of difficulty 10 outruns the exact search (its golden entry went).
    let refused = run_game::<Cube>(&strict, 0, &budget)
        .result
        .expect_err("rejected");
    assert_eq!(
        refused.code(),
        Some(super::reasons::NOT_PROVEN_SHORTEST),
        "{refused}"
    );
    let greedy = run_game::<Cube>(&lenient, 0, &budget)
        .result
        .expect("accepted");
    assert!(!greedy.moves_optimal);
    let kind = crate::GameKind::of::<Cube>();
    let json = |p: &CubeParams| serde_json::json!({ "difficulty": p.difficulty, "prove_optimal": p.prove_optimal });
    let strict_game = kind.prepare(&json(&strict)).expect("params");
    let lenient_game = kind.prepare(&json(&lenient)).expect("params");
    assert_eq!(lenient_game.check(&greedy), Ok(()));
    let err = strict_game.check(&greedy).expect_err("not proven");
    assert!(err.to_string().contains("not proven fewest"), "{err}");
}
