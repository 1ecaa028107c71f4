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
