use super::level::{Door, Key, Level, Passage, Room, Switch};
use super::solve::{Action, analyse};
use super::*;
use crate::reason::Code;
use crate::{Budget, run_game};

fn budget() -> Budget {
    Budget::nodes(1_000_000)
}

/// Three rooms in a row: 0 | 1 | 2, doors 0 (0-1) and 1 (1-2).
fn corridor() -> Level {
    Level {
        width: 10,
        height: 4,
        rooms: vec![
            Room {
                x: 1,
                y: 1,
                w: 2,
                h: 2,
            },
            Room {
                x: 4,
                y: 1,
                w: 2,
                h: 2,
            },
            Room {
                x: 7,
                y: 1,
                w: 2,
                h: 2,
            },
        ],
        doors: vec![
            Door {
                x: 3,
                y: 1,
                a: 0,
                b: 1,
                passage: Passage::Both,
            },
            Door {
                x: 6,
                y: 1,
                a: 1,
                b: 2,
                passage: Passage::Both,
            },
        ],
        start: 0,
        exit: 2,
        keys: Vec::new(),
        switches: Vec::new(),
    }
}

#[test]
fn an_open_map_needs_one_action() {
    let level = corridor();
    let a = analyse(&level, &budget()).expect("solvable");
    assert_eq!(a.solution, vec![Action::Exit]);
    assert_eq!(a.dead_states, 0);
    assert_eq!(a.states, 1);
}

#[test]
fn a_locked_door_needs_its_key_and_the_text_form_round_trips() {
    let mut level = corridor();
    level.keys.push(Key {
        room: 1,
        x: 4,
        y: 2,
        chest: None,
        opens: vec![1],
    });
    let a = analyse(&level, &budget()).expect("solvable");
    assert_eq!(a.solution, vec![Action::Key(0), Action::Exit]);
    let text = level.to_text();
    assert_eq!(
        text,
        "##########\n#S.+..AE.#\n#..#a.#..#\n##########\n\
         start 0 exit 2\ndoor 0 3,1 0-1\ndoor 1 6,1 1-2\nkey a 4,2 opens 1\n"
    );
    assert_eq!(Level::from_text(&text), Ok(level.clone()));
    let json = serde_json::to_string(&level).expect("json");
    assert_eq!(serde_json::from_str::<Level>(&json).expect("parse"), level);
    replay::replay(&level, "a exit").expect("replays");
    assert!(replay::replay(&level, "exit").is_err());
}

#[test]
fn a_key_out_of_reach_makes_the_level_unsolvable() {
    let mut level = corridor();
    level.keys.push(Key {
        room: 2,
        x: 8,
        y: 2,
        chest: None,
        opens: vec![1],
    });
    assert_eq!(analyse(&level, &budget()), Err(Rejection::Unsolvable));
}

#[test]
fn a_switch_opens_one_door_and_closes_another() {
    let mut level = corridor();
    // Door 1 opens only while switch 0 is on; door 0 only while it is off.
    level.switches.push(Switch {
        room: 1,
        x: 4,
        y: 2,
        on: vec![1],
        off: vec![0],
    });
    let a = analyse(&level, &budget()).expect("solvable");
    assert_eq!(a.solution, vec![Action::Switch(0), Action::Exit]);
    assert_eq!(a.dead_states, 0);
    replay::replay(&level, "0 exit").expect("replays");
    // Flipping twice is allowed and still wins.
    replay::replay(&level, "0 0 0 exit").expect("replays");
}

#[test]
fn a_drop_past_the_key_is_a_dead_end() {
    // 0 -> 1 is a drop; the key for the door 1-2 lies in room 0.
    let mut level = corridor();
    level.doors[0].passage = Passage::AToB;
    level.keys.push(Key {
        room: 0,
        x: 1,
        y: 2,
        chest: None,
        opens: vec![1],
    });
    let a = analyse(&level, &budget()).expect("solvable");
    assert_eq!(a.solution, vec![Action::Key(0), Action::Exit]);
    // Dropping into room 1 without the key strands the player.
    assert_eq!(a.dead_states, 1, "{a:?}");
    let refused = Dungeon::solve(&level, &budget());
    assert!(
        matches!(&refused, Err(r) if r.code() == Some(super::reasons::DEAD_END)),
        "{refused:?}"
    );
}

#[test]
fn a_chest_needs_its_key_first() {
    let mut level = corridor();
    level.keys.push(Key {
        room: 1,
        x: 4,
        y: 2,
        chest: None,
        opens: Vec::new(),
    });
    level.keys.push(Key {
        room: 0,
        x: 1,
        y: 2,
        chest: Some(0),
        opens: vec![1],
    });
    let a = analyse(&level, &budget()).expect("solvable");
    assert_eq!(
        a.solution,
        vec![Action::Key(0), Action::Key(1), Action::Exit]
    );
    assert!(replay::replay(&level, "b a exit").is_err());
    replay::replay(&level, "a b exit").expect("replays");
}

#[test]
fn bsp_room_counts_match_the_seed_for_small_grids() {
    // Source 004 Table I: 7x7 always 4 rooms, 7x12 always 6, 12x12 always 9.
    for (w, h, rooms) in [(7, 7, 4), (7, 12, 6), (12, 7, 6), (12, 12, 9)] {
        let params = DungeonParams {
            width: w,
            height: h,
            ..DungeonParams::default()
        };
        for seed in 0..50 {
            let level = generate::generate(&params, &mut crate::rng::Rng::new(seed), &budget())
                .expect("generates");
            assert_eq!(level.rooms.len(), rooms, "{w}x{h} seed {seed}");
        }
    }
}

#[test]
fn generated_levels_verify_replay_and_round_trip() {
    let params = DungeonParams {
        chains: true,
        ..DungeonParams::default()
    };
    let mut accepted = 0;
    let mut keys = 0;
    let mut switches = 0;
    let mut drops = 0;
    for seed in 0..60 {
        let level = generate::generate(&params, &mut crate::rng::Rng::new(seed), &budget())
            .expect("generates");
        level.check().expect("well formed");
        assert_eq!(
            Level::from_text(&level.to_text()),
            Ok(level.clone()),
            "seed {seed}"
        );
        let solved = Dungeon::solve(&level, &budget()).expect("solvable, no dead end");
        assert_eq!(solved.analysis.dead_states, 0);
        replay::replay(&level, &solved.solution).expect("replays");
        keys += level.keys.len();
        switches += level.switches.len();
        drops += level
            .doors
            .iter()
            .filter(|d| d.passage != Passage::Both)
            .count();
        accepted += usize::from(run_game::<Dungeon>(&params, seed, &budget()).result.is_ok());
    }
    assert!(accepted > 50, "{accepted} of 60 accepted");
    assert!(
        keys > 60 && switches > 60 && drops > 20,
        "{keys} keys, {switches} switches, {drops} drops"
    );
}

#[test]
fn malformed_text_is_refused_with_a_position() {
    let text = corridor().to_text();
    for (bad, what) in [
        (text.replace("#S", "#?"), "unknown character"),
        (
            text.replace("door 1 6,1 1-2", "door 1 6,1 0-2"),
            "does not join",
        ),
        (text.replace("+", "."), "grid does not match"),
        (
            text.replace("start 0 exit 2", "start 0 exit 9"),
            "different rooms",
        ),
        (
            text.replace("door 1 6,1 1-2\n", "door 1 6,1 1-2\nkey a 1,1 opens 1\n"),
            "share a cell",
        ),
    ] {
        let err = Level::from_text(&bad).expect_err(what);
        assert!(err.to_string().contains(what), "{err} (wanted {what})");
    }
}

/// Golden seeds: (params, seed) -> level hash. A change here changes every
/// dungeon pack: bump `GENERATOR_VERSION` with it.
#[test]
fn golden_level_hashes() {
    let mut got = Vec::new();
    for (w, h) in [(12, 12), (22, 22)] {
        let params = DungeonParams {
            width: w,
            height: h,
            ..DungeonParams::default()
        };
        for seed in 0..10u64 {
            if let Ok(c) = run_game::<Dungeon>(&params, seed, &budget()).result {
                got.push(format!(
                    "{w}x{h} {seed} {} {}",
                    c.moves,
                    &c.level_hash[..16]
                ));
            }
        }
    }
    assert_eq!(got, GOLDEN, "golden dungeon levels changed");
}

const GOLDEN: &[&str] = &[
    "12x12 0 12 31c5f0b547706106",
    "12x12 1 11 f81c2cd665e2a1e3",
    "12x12 2 9 739ae8203a527396",
    "12x12 3 11 034fa7e08a8b5eb9",
    "12x12 4 6 36a36d55f8e425cf",
    "12x12 5 7 e77bafd05f840bd7",
    "12x12 6 2 dfe167db1c59ddd4",
    "12x12 7 9 f4e21c9a5ac5c2ed",
    "12x12 8 9 09bf19b684a3bd94",
    "12x12 9 8 339d905dc4fd1fbe",
    "22x22 0 9 e3d544619417cd56",
    "22x22 1 13 d281a74243b568d2",
    "22x22 2 12 0d4b6dd6debca7aa",
    "22x22 3 13 c19eea5022f2cf15",
    "22x22 4 7 75cf8f7c69d27b02",
    "22x22 5 6 9dc2e4073e168ef6",
    "22x22 6 9 8cf66a54f36a215f",
    "22x22 7 11 89413a8a3a7d0484",
    "22x22 8 12 604776a1ed7b99a2",
    "22x22 9 14 30862230ca75f973",
];

/// A grid large enough for more rooms than the solver's 64-bit room sets
/// refuses its seeds as `cap hit`, naming the count, never panics (or, in
/// a release build, wraps its shifts into wrong answers).
#[test]
fn a_map_of_more_than_64_rooms_is_refused_not_solved() {
    let params = DungeonParams {
        width: 64,
        height: 64,
        min_room: 2,
        ..DungeonParams::default()
    };
    let mut refused = 0;
    for seed in 0..5 {
        let outcome = run_game::<Dungeon>(&params, seed, &budget());
        match outcome.result {
            Ok(level) => assert!(!level.layout.is_empty()),
            Err(rejection) => {
                let reason = rejection.reason().expect("a reason");
                assert_eq!(reason.code, Code::CapHit, "{reason}");
                assert!(reason.detail.contains("more than 64"), "{reason}");
                refused += 1;
            }
        }
    }
    assert!(
        refused > 0,
        "a 64x64 grid of 2-cell rooms has more than 64 rooms"
    );
}
