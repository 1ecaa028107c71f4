use super::level::{self, Level, parse_collection, print_collection};
use std::collections::BTreeSet;

use super::{Sokoban, mcts, reference, solve};
use crate::rng::Rng;
use crate::{Budget, GameError, Rejection};

const SMALL: &str = "\
#####
#@$.#
#####
";

#[test]
fn xsb_round_trips_and_a_push_solves() {
    let level = Level::from_xsb(SMALL).expect("parses");
    assert_eq!((level.width, level.height), (5, 3));
    assert_eq!(level.boxes, vec![7]);
    assert_eq!(level.goals, vec![8]);
    assert_eq!(level.to_xsb(), SMALL);
    assert_eq!(Level::from_xsb(&level.to_xsb()), Ok(level.clone()));
    level.replay("R").expect("one push solves it");
    assert!(
        level.replay("r").is_err(),
        "a push must be written upper case"
    );
    assert!(level.replay("").is_err(), "not solved yet");
    let json = serde_json::to_string(&level).expect("json");
    assert_eq!(serde_json::from_str::<Level>(&json).expect("parse"), level);
}

#[test]
fn replay_follows_the_rules() {
    let level = Level::from_xsb(
        "\
######
#    #
# $$ #
#@.. #
######
",
    )
    .expect("parses");
    // Pushing a box into the other box is refused, as is walking into a wall.
    assert!(matches!(
        level.replay("uR"),
        Err(GameError::Replay { index: 1, .. })
    ));
    assert!(matches!(
        level.replay("l"),
        Err(GameError::Replay { index: 0, .. })
    ));
    // Up twice, right, push the left box down; up, right, push the other down.
    level.replay("uurDurD").expect("solves");
    let end = level.play("uurD").expect("plays");
    assert_eq!(end.boxes, vec![15, 20]);
}

#[test]
fn malformed_xsb_is_refused_with_line_and_column() {
    for (text, line, column, what) in [
        ("#####\n# $.#\n#####\n", 1, 1, "no player"),
        ("#####\n#@$ #\n#####\n", 1, 1, "1 boxes but 0 goals"),
        ("#####\n#@$x#\n#####\n", 2, 4, "unknown character"),
        ("#####\n#@$. \n#####\n", 2, 5, "not closed"),
        ("#####\n#@$.#\n#####\n#@###\n", 4, 2, "second player"),
    ] {
        match Level::from_xsb(text) {
            Err(GameError::Parse {
                line: l,
                column: c,
                message,
            }) => {
                assert!(message.contains(what), "{message} (wanted {what})");
                assert_eq!((l, c), (line, column), "{what}");
            }
            other => panic!("{what}: {other:?}"),
        }
    }
}

#[test]
fn collections_keep_titles_and_round_trip() {
    let text = "\
; Tiny
#####
#@$.#
#####

Title: Two boxes
######
#@$ .#
# $ .#
######
";
    let levels = parse_collection(text).expect("parses");
    assert_eq!(levels.len(), 2);
    assert_eq!(levels[0].title, "Tiny");
    assert_eq!(levels[1].title, "Two boxes");
    assert_eq!(levels[1].level.boxes.len(), 2);
    let printed = print_collection(&levels);
    assert_eq!(parse_collection(&printed).expect("reparses"), levels);
    // An error inside the second level names the file's line.
    let bad = text.replace("# $ .#", "# $ ?#");
    match parse_collection(&bad) {
        Err(GameError::Parse { line, column, .. }) => assert_eq!((line, column), (9, 5)),
        other => panic!("{other:?}"),
    }
}

/// A random small level: a `w`x`h` room inside a wall ring, some inner walls,
/// `boxes` boxes and goals, the player on a free cell.
fn random_level(rng: &mut Rng, w: usize, h: usize, boxes: usize) -> Option<Level> {
    let (gw, gh) = (w + 2, h + 2);
    let mut walls = vec![true; gw * gh];
    for y in 1..=h {
        for x in 1..=w {
            walls[y * gw + x] = rng.chance(0.2);
        }
    }
    let mut free: Vec<usize> = (0..gw * gh).filter(|&c| !walls[c]).collect();
    if free.len() < 2 * boxes + 1 {
        return None;
    }
    rng.shuffle(&mut free);
    let mut goals = free[..boxes].to_vec();
    let mut box_cells = free[boxes..2 * boxes].to_vec();
    goals.sort_unstable();
    box_cells.sort_unstable();
    let level = Level {
        width: gw,
        height: gh,
        walls,
        goals,
        boxes: box_cells,
        player: free[2 * boxes],
    };
    // Through XSB, so unreachable floor is walled off the same way as in files.
    Level::from_xsb(&level.to_xsb()).ok()
}

#[test]
fn solver_agrees_with_a_plain_search_on_small_levels() {
    let mut rng = Rng::new(2026);
    let budget = Budget::nodes(200_000);
    let (mut solvable, mut unsolvable) = (0, 0);
    let mut tried = 0;
    while solvable < 150 || unsolvable < 50 {
        tried += 1;
        assert!(tried < 5_000, "too few usable random levels");
        let (w, h, n) = [(4, 4, 2), (5, 4, 2), (5, 5, 3), (6, 4, 3)][rng.index(4)];
        let Some(level) = random_level(&mut rng, w, h, n) else {
            continue;
        };
        let Some(reference) = reference::fewest_pushes_then_moves(&level, 500_000) else {
            continue;
        };
        match (reference, solve::solve(&level, &budget)) {
            (None, Err(Rejection::Unsolvable)) => unsolvable += 1,
            (Some((pushes, moves)), Ok(answer)) => {
                let xsb = level.to_xsb();
                assert!(answer.push_optimal && answer.move_optimal, "{xsb}");
                assert_eq!((answer.pushes, answer.moves), (pushes, moves), "{xsb}");
                level
                    .replay(&answer.solution)
                    .expect("the solution replays");
                let written = answer.solution.chars().filter(char::is_ascii_uppercase);
                assert_eq!(written.count() as u32, pushes, "{xsb}");
                solvable += 1;
            }
            (reference, solver) => panic!(
                "{}\nreference {reference:?}, solver {solver:?}",
                level.to_xsb()
            ),
        }
    }
}

#[test]
fn unsolvable_levels_are_proven_so_a_dead_square_at_once() {
    // Two boxes side by side against the top wall, one off its goal.
    let frozen = Level::from_xsb(
        "\
#######
#  $$ #
#  .  #
# @ . #
#######
",
    )
    .expect("parses");
    assert_eq!(
        solve::solve(&frozen, &Budget::nodes(10_000)),
        Err(Rejection::Unsolvable)
    );
    // A box in a corner off its goal: a dead square at the start.
    let corner = Level::from_xsb("#####\n#$  #\n# @.#\n#####\n").expect("parses");
    assert!(solve::trivially_unsolvable(&corner));
    assert_eq!(
        solve::solve(&corner, &Budget::nodes(10)),
        Err(Rejection::Unsolvable)
    );
}

#[test]
fn a_small_budget_gives_the_best_found_flagged_not_optimal() {
    let level = Level::from_xsb(
        "\
########
#      #
# $$$$ #
#@....##
########
",
    )
    .expect("parses");
    let exact = solve::solve(&level, &Budget::nodes(1_000_000)).expect("solves");
    assert!(exact.push_optimal && exact.move_optimal);
    let mut budget = 1;
    let rough = loop {
        match solve::solve(&level, &Budget::nodes(budget)) {
            Ok(a) => break a,
            Err(r) if r.is_out_of_nodes() => budget *= 2,
            Err(other) => panic!("{other:?}"),
        }
    };
    assert!(
        !rough.push_optimal || !rough.move_optimal,
        "{rough:?} with {budget} nodes"
    );
    assert!(rough.pushes >= exact.pushes);
    level
        .replay(&rough.solution)
        .expect("the best found still replays");
}

/// A shape's smallest form under the 8 symmetries, moved to the origin.
fn shape_form(cells: &[(i32, i32)]) -> Vec<(i32, i32)> {
    (0..8)
        .map(|s| {
            let mut t: Vec<(i32, i32)> = cells
                .iter()
                .map(|&(x, y)| {
                    let (x, y) = if s & 4 != 0 { (y, x) } else { (x, y) };
                    (
                        if s & 1 != 0 { -x } else { x },
                        if s & 2 != 0 { -y } else { y },
                    )
                })
                .collect();
            let mx = t.iter().map(|c| c.0).min().unwrap_or(0);
            let my = t.iter().map(|c| c.1).min().unwrap_or(0);
            t.iter_mut().for_each(|c| *c = (c.0 - mx, c.1 - my));
            t.sort_unstable();
            t
        })
        .min()
        .unwrap_or_default()
}

#[test]
fn the_cut_outs_are_the_twelve_free_pentominoes() {
    // Grow shapes a cell at a time from one cell, as the source's Figure 4.5 does.
    let mut shapes = BTreeSet::from([vec![(0, 0)]]);
    for _ in 1..5 {
        let mut next = BTreeSet::new();
        for shape in &shapes {
            for &(x, y) in shape {
                for (dx, dy) in [(1, 0), (-1, 0), (0, 1), (0, -1)] {
                    let c = (x + dx, y + dy);
                    if !shape.contains(&c) {
                        let mut grown = shape.clone();
                        grown.push(c);
                        next.insert(shape_form(&grown));
                    }
                }
            }
        }
        shapes = next;
    }
    assert_eq!(shapes.len(), 12);
    let ours: BTreeSet<Vec<(i32, i32)>> = mcts::PENTOMINOES
        .iter()
        .map(|p| shape_form(&p.map(|(x, y)| (i32::from(x), i32::from(y)))))
        .collect();
    assert_eq!(ours, shapes);
}

#[test]
fn canonical_forms_ignore_symmetry_position_and_the_players_walk() {
    let level = Level::from_xsb(
        "\
#######
#@ $ .#
#  #  #
#######
",
    )
    .expect("parses");
    let walked = Level::from_xsb(
        "\
########
##.#  @#
#  $   #
#      #
########
",
    );
    // Not the same level: a different shape.
    assert_ne!(level.canonical(), walked.expect("parses").canonical());
    for s in 0..8 {
        let mut t = level.transformed(s);
        assert_eq!(t.canonical(), level.canonical(), "symmetry {s}");
        // The player elsewhere in the same region: still the same level.
        t.player = t.player_region_min();
        assert_eq!(t.canonical(), level.canonical());
    }
    let mut moved = level.clone();
    moved.player += 1;
    assert_eq!(moved.canonical(), level.canonical());
    // A wider frame around the same level changes nothing.
    let framed = Level::from_xsb("#########\n##@ $ .##\n##  #  ##\n#########\n").expect("parses");
    assert_eq!(framed.canonical(), level.canonical());
}

fn run(params: serde_json::Value, seed: u64) -> crate::Candidate {
    crate::GameKind::of::<Sokoban>()
        .prepare(&params)
        .expect("valid params")
        .run(seed, &Budget::nodes(200_000))
        .result
        .unwrap_or_else(|r| panic!("seed {seed}: {r}"))
}

#[test]
fn both_generators_give_solved_replayable_deterministic_levels() {
    for params in [
        serde_json::json!({ "method": "reverse" }),
        serde_json::json!({ "method": "mcts", "iterations": 2000 }),
    ] {
        for seed in 0..4 {
            let c = run(params.clone(), seed);
            let level = Level::from_xsb(&c.layout).expect("the layout is XSB");
            level.replay(&c.solution).expect("replays");
            assert!(c.canonical.is_some());
            assert_eq!(run(params.clone(), seed), c, "same seed, same level");
            let pushes = c.metrics["pushes"];
            assert!(pushes >= 1.0, "{}", c.layout);
        }
    }
}

/// (generator, seed) -> the first 16 hex digits of the level hash: any change
/// to a generator's output for a seed shows here (bump GENERATOR_VERSION then).
/// `mcts-source` is the source's score alone (no drawn box count, no
/// displacement term): the same boards as before either came, its hashes
/// changed only by the `displacement` figure the JSON form now records.
const GOLDEN: &[(&str, u64, &str)] = &[
    ("mcts", 0, "303ac38547f3a035"),
    ("mcts", 1, "8a4c832d0303b8f4"),
    ("mcts", 2, "64a3aa7f447a06cb"),
    ("mcts", 3, "c7f11603346c35aa"),
    ("mcts", 4, "4e91d61f8a1cbd31"),
    ("mcts", 5, "21b56c872f7d1856"),
    ("mcts-source", 0, "b7b17802e795e336"),
    ("mcts-source", 1, "1df908f8a14c02fe"),
    ("mcts-source", 2, "19dd4007e3bef49b"),
    ("mcts-source", 3, "f391844e185251ce"),
    ("mcts-source", 4, "fcc695c558cf6467"),
    ("mcts-source", 5, "b6eb7056ae44f934"),
    ("reverse", 0, "12f28121c03ea25f"),
    ("reverse", 1, "9f57f8ffd20919ab"),
    ("reverse", 2, "f2a1484304dad577"),
    ("reverse", 3, "e850143bba9e357f"),
    ("reverse", 4, "7efc5576ae8a0446"),
    ("reverse", 5, "16f5ed27825a7137"),
];

/// Golden ratings: the difficulty of the reverse generator's first levels
/// and the push search's nodes (a term of it). A change here re-tiers every
/// sokoban pack, though no level changes: bump `GENERATOR_VERSION` with it.
#[test]
fn golden_ratings() {
    let got: Vec<(u64, f64, f64)> = (0..6)
        .map(|seed| {
            let c = run(serde_json::json!({ "method": "reverse" }), seed);
            (seed, c.difficulty, c.metrics["push_nodes"])
        })
        .collect();
    assert_eq!(got, GOLDEN_RATINGS, "golden sokoban ratings changed");
}

const GOLDEN_RATINGS: &[(u64, f64, f64)] = &[
    (0, 0.387872, 5.0),
    (1, 0.369615, 12.0),
    (2, 0.739719, 14.0),
    (3, 0.615926, 33.0),
    (4, 0.493153, 17.0),
    (5, 0.35278, 6.0),
];

#[test]
fn golden_level_hashes() {
    let mut got = Vec::new();
    for name in ["mcts", "mcts-source", "reverse"] {
        for seed in 0..6 {
            let params = match name {
                "mcts-source" => serde_json::json!({
                    "method": "mcts", "iterations": 3000,
                    "draw_boxes": false, "displacement_weight": 0.0,
                }),
                method => serde_json::json!({ "method": method, "iterations": 3000 }),
            };
            let c = run(params, seed);
            got.push((name, seed, c.level_hash[..16].to_string()));
        }
    }
    let want: Vec<(&str, u64, String)> = GOLDEN
        .iter()
        .map(|&(m, s, h)| (m, s, h.to_string()))
        .collect();
    assert_eq!(got, want);
}

/// The MCTS levels vary in boxes and pushes (the
/// source's score gives every level `max_boxes` and few pushes).
#[test]
fn mcts_levels_vary_in_boxes_and_pushes() {
    let (mut boxes, mut pushes) = (Vec::new(), Vec::new());
    for seed in 0..12 {
        let c = run(
            serde_json::json!({ "method": "mcts", "iterations": 3000 }),
            seed,
        );
        boxes.push(c.metrics["boxes"] as u32);
        pushes.push(c.metrics["pushes"] as u32);
        assert!(
            c.metrics["displacement"] <= c.metrics["pushes"],
            "the displacement bounds the pushes from below: {}",
            c.layout
        );
    }
    boxes.sort_unstable();
    boxes.dedup();
    assert!(boxes.len() >= 3, "box counts {boxes:?}");
    assert!(pushes.iter().max() > Some(&10), "pushes {pushes:?}");
}

#[test]
fn levels_beyond_the_solvers_limits_are_refused_not_crashed_on() {
    let side = level::MAX_SIDE + 2;
    let mut rows = vec!["#".repeat(side)];
    for y in 1..side - 1 {
        let mut row = vec![' '; side];
        (row[0], row[side - 1]) = ('#', '#');
        if y == 1 {
            (row[1], row[2], row[3]) = ('@', '$', '.');
        }
        rows.push(row.into_iter().collect());
    }
    rows.push("#".repeat(side));
    let err = Level::from_xsb(&rows.join("\n")).expect_err("too large");
    assert!(err.to_string().contains("at most 128x128"), "{err}");

    // 11 rows of 10 boxes beside their goals.
    let wall = "#".repeat(23);
    let mut rows = vec![wall.clone(), format!("#@{}#", " ".repeat(20))];
    rows.extend((0..11).map(|_| format!("# {}#", "$.".repeat(10))));
    rows.push(wall);
    let err = Level::from_xsb(&rows.join("\n")).expect_err("too many");
    assert!(err.to_string().contains("at most 100"), "{err}");
}

/// boxes on goals in pockets the player can never enter (Microban
/// #155 "The Dungeon" has seven) are read, left out of the search, and kept in
/// the level; anything else sealed away is unsolvable, not malformed.
#[test]
fn sealed_pockets_of_solved_boxes_are_playable() {
    let dungeon = "\
#####
#*#*#
#####
#@$.#
#####
";
    let level = Level::from_xsb(dungeon).expect("a sealed solved box is fine");
    assert_eq!(level.boxes.len(), 3);
    assert_eq!(level.to_xsb(), dungeon, "the pockets stay in the level");
    let answer = solve::solve(&level, &Budget::nodes(1_000)).expect("solvable");
    assert_eq!((answer.pushes, answer.solution.as_str()), (1, "R"));
    level
        .replay(&answer.solution)
        .expect("wins on the whole level");
    // A sealed box off its goal, or a sealed goal without a box, can never be
    // fixed: the solver's verdict, with the reading left to succeed.
    for sealed in [
        "#####\n#$#.#\n#####\n#@$.#\n#####\n",
        "######\n#$# .#\n######\n#@$. #\n######\n",
    ] {
        let level = Level::from_xsb(sealed).expect("reads");
        assert_eq!(
            solve::solve(&level, &Budget::nodes(1_000)),
            Err(Rejection::Unsolvable),
            "{sealed}"
        );
    }
}

/// one malformed level in a collection is that level's verdict; the
/// levels around it are read.
#[test]
fn a_malformed_level_does_not_sink_its_collection() {
    let text = "; one\n#####\n#@$.#\n#####\n\n; two\n#####\n#@$?#\n#####\n\n; three\n######\n#@$ .#\n######\n";
    let levels = level::read_collection(text).expect("levels");
    let titles: Vec<&str> = levels.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(titles, ["one", "two", "three"]);
    assert!(levels[0].1.is_ok() && levels[2].1.is_ok());
    match &levels[1].1 {
        Err(GameError::Parse { line, column, .. }) => assert_eq!((*line, *column), (8, 4)),
        other => panic!("{other:?}"),
    }
    assert!(
        parse_collection(text).is_err(),
        "the strict reader still refuses"
    );
}

/// with a time limit already passed, the solver stops as if out of
/// nodes (a `rejected` verdict naming the limit, or the fallback's answer),
/// never a watchdog `timeout`.
#[test]
fn a_time_limit_stops_like_a_budget() {
    let params = super::SokobanParams {
        method: super::Method::Reverse,
        boxes: 6,
        ..Default::default()
    };
    let level = (0..200)
        .filter_map(|seed| params.reverse().generate(&mut Rng::new(seed)).ok())
        .map(|g| g.level)
        .find(|l| solve::solve(l, &Budget::nodes(1_000_000)).is_ok_and(|a| a.push_nodes > 1_000))
        .expect("a level worth 1,000 nodes");
    let past = std::time::Instant::now();
    let budget = Budget {
        max_nodes: u64::MAX,
        deadline: None,
        cpu_deadline: None,
        time_limit: Some(past),
    };
    match solve::solve(&level, &budget) {
        Ok(answer) => {
            assert!(!answer.push_optimal);
            level.replay(&answer.solution).expect("wins");
        }
        Err(r) if r.code() == Some(super::reasons::TIME_LIMIT) => {}
        Err(other) => panic!("{other:?}"),
    }
}

/// `pregen solve --time-limit` holds for the agents too: past the limit
/// they stop and publish no figures (a 40x40 room of 30 boxes kept them
/// busy for most of a minute); a pack's run, with no limit, gets them all.
#[test]
fn the_agents_stop_at_the_callers_time_limit() {
    use crate::Game;
    let puzzle = super::Puzzle {
        level: Level::from_xsb("######\n#@$ .#\n######\n").expect("parses"),
        generator: Default::default(),
    };
    let metrics = crate::Metrics::from([("pushes".to_string(), 2.0)]);
    let past = Some(std::time::Instant::now());
    assert_eq!(Sokoban::agents(&puzzle, 3, &metrics, past), None);
    let figures = Sokoban::agents(&puzzle, 3, &metrics, None).expect("no limit");
    assert!(figures.search_won);
}

/// reverse play never starts the player on a goal unless asked to;
/// the coordinator's check refuses a worker's level that does.
#[test]
fn reverse_play_keeps_the_player_off_goals_by_default() {
    let count = |player_on_goal: bool| {
        let params = super::SokobanParams {
            method: super::Method::Reverse,
            player_on_goal,
            ..Default::default()
        };
        (0..300)
            .filter_map(|seed| params.reverse().generate(&mut Rng::new(seed)).ok())
            .filter(|g| g.level.goals.contains(&g.level.player))
            .count()
    };
    assert_eq!(count(false), 0);
    assert!(
        count(true) > 10,
        "Boxoban's procedure alone puts the player on goals"
    );
    let params = super::SokobanParams {
        method: super::Method::Reverse,
        boxes: 2,
        ..Default::default()
    };
    let on_goal = super::Puzzle {
        level: Level::from_xsb("######\n#+$  #\n#  $.#\n######\n").expect("parses"),
        generator: Default::default(),
    };
    use crate::Game;
    assert!(super::Sokoban::fits(&params, &on_goal, 3).is_err());
}
