//! The solver's tests: against a plain search, with and without each
//! pruning, and the fallback's bound.

use super::*;
use crate::rng::Rng;
use crate::sokoban::{Method, SokobanParams};

#[test]
fn a_matching_redone_for_one_row_costs_what_a_new_one_does() {
    let mut rng = Rng::new(7);
    for trial in 0..2_000 {
        let n = 1 + (trial % 14) as usize;
        // Small costs with ties, and some pairs no push joins.
        let mut cost = vec![0i64; n * n];
        for c in &mut cost {
            *c = if rng.below(6) == 0 {
                UNMATCHED
            } else {
                rng.below(9) as i64
            };
        }
        let mut kept = Matching::default();
        let total = kept.solve(n, &|i, j| cost[i * n + j]);
        assert_eq!(total, hungarian(n, |i, j| cost[i * n + j]));
        let row = rng.below(n as u64) as usize;
        for j in 0..n {
            cost[row * n + j] = if rng.below(6) == 0 {
                UNMATCHED
            } else {
                rng.below(9) as i64
            };
        }
        let mut again = Matching::default();
        let redone = again.rematch(&kept, n, row, &|i, j| cost[i * n + j]);
        assert_eq!(
            redone,
            hungarian(n, |i, j| cost[i * n + j]),
            "trial {trial}"
        );
    }
}

/// The reverse-play level of `seed`, with its board and start (`None`
/// when the seed makes no level).
fn reverse_level(params: &SokobanParams, seed: u64) -> Option<(Level, Board, Start)> {
    let level = params.reverse().generate(&mut Rng::new(seed)).ok()?.level;
    let (board, start) = (Board::new(&level), Start::of(&level));
    Some((level, board, start))
}

/// The reverse-play levels of `seeds` that make one, each with
/// `fewest + seed % 4` boxes: (seed, level, board, start).
fn reverse_levels(
    seeds: std::ops::Range<u64>,
    fewest: usize,
) -> impl Iterator<Item = (u64, Level, Board, Start)> {
    seeds.filter_map(move |seed| {
        let params = SokobanParams {
            method: Method::Reverse,
            boxes: fewest + (seed % 4) as usize,
            ..Default::default()
        };
        let (level, board, start) = reverse_level(&params, seed)?;
        Some((seed, level, board, start))
    })
}

/// The distances per side of a box are never shorter than those of a
/// player who walks anywhere, and longer where a passage leaves the
/// player behind the box: along every fewest-pushes solution of
/// reverse-play levels, both bounds stay within the pushes left, and the
/// sided one is never the lower; on a level whose boxes enter the goal
/// room by a one-cell passage it is higher from the start.
#[test]
fn distances_per_side_bound_no_lower_and_stay_admissible() {
    let mut higher = 0;
    for (seed, level, sided, start) in reverse_levels(0..60, 3) {
        let anywhere = Board::with_sides(&level, false);
        let budget = Budget::nodes(u64::MAX);
        let Ok(Some(path)) =
            Search::new(&sided, &budget).run(&start, Mode::FewestPushes, 3_000_000)
        else {
            panic!("seed {seed}: reverse play is solvable within the nodes");
        };
        let mut boxes = start.boxes.clone();
        let mut player = usize::from(start.player);
        for (done, &(b, d)) in path.iter().enumerate() {
            let left = (path.len() - done) as u32;
            let with = sided.lower_bound(&boxes, player).expect("solvable");
            let without = anywhere.lower_bound(&boxes, player).expect("solvable");
            assert!(without <= with && with <= left, "seed {seed}, push {done}");
            higher += usize::from(without < with);
            let i = boxes.iter().position(|&x| x == b).expect("a box");
            boxes[i] = step(usize::from(b), usize::from(d), level.width) as u16;
            player = usize::from(b);
        }
    }
    let passage = Level::from_xsb(
        " ####\n##  ####\n#   ...#\n#   ...#\n#   # ##\n#   #@ #### ####\n\
         ##### $   ###  #\n    #  ##$ $   #\n   ###     $$  #\n   # $  ##   ###\n\
         \x20  #    ######\n   ######\n",
    )
    .expect("an XSB level");
    let start = Start::of(&passage);
    let player = usize::from(start.player);
    let with = Board::with_sides(&passage, true).lower_bound(&start.boxes, player);
    let without = Board::with_sides(&passage, false).lower_bound(&start.boxes, player);
    assert!(without < with, "{without:?} against {with:?}");
    assert!(
        higher > 0,
        "no position of the reverse levels had a higher bound"
    );
}

/// PI-corral pruning keeps the fewest pushes: on reverse-play levels of
/// 4 to 7 boxes, the pruned search finds the same push count as the full
/// one (itself checked against a plain search in `tests.rs`), with fewer
/// nodes in all; and the move search that reuses the push search's
/// positions finds as few moves as one on its own.
#[test]
fn pi_corral_pruning_keeps_the_fewest_pushes() {
    let mut nodes = [0u64; 2];
    let mut levels = 0;
    for (seed, level, board, start) in reverse_levels(0..120, 4) {
        let budget = Budget::nodes(u64::MAX);
        let mut found = [None, None];
        for (i, pruned) in [false, true].into_iter().enumerate() {
            let mut search = Search::new(&board, &budget);
            search.pi_corrals = pruned;
            let Ok(path) = search.run(&start, Mode::FewestPushes, 3_000_000) else {
                break;
            };
            let path = path.expect("reverse play is solvable");
            level
                .replay(&board.lurd(&start, &path))
                .expect("the pushes replay");
            found[i] = Some(path.len());
            nodes[i] += search.nodes;
        }
        if found[0].is_none() {
            continue;
        }
        assert_eq!(found[0], found[1], "seed {seed}:\n{}", level.to_xsb());
        // The move search, with and without what the push search learnt.
        let mut plain = Search::new(&board, &budget);
        plain.pi_corrals = false;
        let cap = found[0].unwrap_or(0) as u32;
        let path = plain
            .run(&start, Mode::Moves { weight: 4, cap }, u64::MAX)
            .ok()
            .flatten()
            .expect("the move search finds it");
        let answer = solve(&level, &Budget::nodes(3_000_000)).expect("solved");
        assert!(answer.push_optimal && answer.move_optimal, "seed {seed}");
        assert_eq!(
            (answer.pushes, answer.moves),
            (cap, board.lurd(&start, &path).len() as u32),
            "seed {seed}:\n{}",
            level.to_xsb()
        );
        levels += 1;
    }
    eprintln!(
        "{levels} levels: {} nodes in full, {} pruned",
        nodes[0], nodes[1]
    );
    assert!(levels >= 60, "{levels} levels");
    assert!(nodes[1] < nodes[0], "{nodes:?}");
}

/// A time limit that has passed stops the search at its first node and
/// builds no board: on a 60x60 room of 100 boxes a board takes a good
/// share of a second and the matching a millisecond a node, so reading
/// the clock every 1024 nodes let `solve --time-limit 1` run 10 s.
#[test]
fn a_passed_time_limit_stops_the_search_before_any_board() {
    let mut text = String::new();
    for y in 0..60 {
        for x in 0..60 {
            let rim = x == 0 || y == 0 || x == 59 || y == 59;
            let inner = (2..58).contains(&x) && (2..58).contains(&y);
            let i = (y * 60 + x) as usize;
            text.push(match () {
                () if rim => '#',
                () if inner && i % 7 == 3 && y < 30 && (x + y) % 2 == 0 && x < 30 => '$',
                () if inner && i % 7 == 3 && y >= 30 && (x + y) % 2 == 0 && x < 30 => '.',
                () if (x, y) == (40, 40) => '@',
                () => ' ',
            });
        }
        text.push('\n');
    }
    let level = Level::from_xsb(&text).expect("an XSB level");
    assert!(level.boxes.len() >= 50, "{} boxes", level.boxes.len());
    let level = playable(&level).expect("playable");
    let board = Board::new(&level);
    let start = Start::of(&level);
    let budget = Budget {
        time_limit: Some(Instant::now()),
        ..Budget::nodes(u64::MAX)
    };
    let mut search = Search::new(&board, &budget);
    search.soft_stop = budget.time_limit;
    let stopped = search.run(&start, Mode::FewestPushes, u64::MAX);
    assert!(matches!(stopped, Err(Stop::Budget)), "{stopped:?}");
    assert!(search.nodes <= 1, "{} nodes after the limit", search.nodes);
    assert!(
        search.frozen.boards.is_empty(),
        "a board built after the limit"
    );
}

/// Boxes frozen on goals as walls keep the fewest pushes and moves: on
/// reverse-play levels of 5 and 6 boxes and on a level whose goals end in
/// a dead-end corridor, the push and move searches find the same counts
/// with no board built (the level's bound alone), with the boards'
/// memory spent after the first (positions then keep their parent's
/// board, and closed ones reopen) and as built by default; the corridor
/// level, filled out of order, takes far fewer nodes with them.
#[test]
fn frozen_boxes_as_walls_keep_the_fewest_pushes_and_moves() {
    let corridor = Level::from_xsb(CORRIDOR).expect("an XSB level");
    let mut levels: Vec<(String, Level)> = vec![("corridor".into(), corridor)];
    for boxes in 5..=6 {
        levels.extend(
            reverse_levels(0..30, boxes)
                .map(|(seed, level, _, _)| (format!("{boxes}/{seed}"), level)),
        );
    }
    let mut nodes = [0u64; 3];
    let mut corridor_nodes = [0u64; 3];
    let mut past_memory = 0;
    for (name, level) in &levels {
        let board = Board::new(level);
        let start = Start::of(level);
        let budget = Budget::nodes(u64::MAX);
        let one_board = board.bytes() + 1;
        let mut found = Vec::new();
        for (i, limit) in [0, one_board, FROZEN_BOARDS_BYTES].into_iter().enumerate() {
            let mut search = Search::new(&board, &budget);
            search.frozen = FrozenBoards::new(limit);
            let Ok(Some(pushes)) = search.run(&start, Mode::FewestPushes, 3_000_000) else {
                panic!("{name}: solvable within the nodes");
            };
            level
                .replay(&board.lurd(&start, &pushes))
                .expect("the pushes replay");
            nodes[i] += search.nodes;
            if name == "corridor" {
                corridor_nodes[i] = search.nodes;
                assert_eq!(search.frozen.boards.is_empty(), i == 0, "{name}: boards");
            }
            past_memory += usize::from(search.frozen.full);
            let cap = pushes.len() as u32;
            let moves = fewest_moves(&mut search, &start, cap);
            found.push((cap, board.lurd(&start, &moves).len()));
            if name == "corridor" && i == 1 {
                assert!(search.frozen.full, "{name}: only one board fits");
            }
        }
        assert!(
            found.windows(2).all(|w| w[0] == w[1]),
            "{name}: {found:?}\n{}",
            level.to_xsb()
        );
    }
    eprintln!(
        "{} levels: nodes {nodes:?}, the corridor's {corridor_nodes:?}, \
         {past_memory} runs past the memory",
        levels.len()
    );
    assert!(nodes[2] < nodes[0], "{nodes:?}");
    assert!(
        2 * corridor_nodes[2] < corridor_nodes[0],
        "{corridor_nodes:?}"
    );
    assert!(past_memory > 0);
}

/// A dead-end goal corridor to be filled in order (six boxes).
const CORRIDOR: &str =
    "#########\n#.#     #\n#.# $ $ #\n#.#$  $ #\n#.  $   #\n#.. $ @ #\n#########\n";

/// The move search's answer under `cap` pushes, the fewest.
fn fewest_moves(search: &mut Search<'_>, start: &Start, cap: u32) -> Vec<Push> {
    search
        .run(start, Mode::Moves { weight: 4, cap }, u64::MAX)
        .ok()
        .flatten()
        .expect("the move search finds it")
}

/// Boxes that must leave their goals: the bound charges them, the
/// pushes and moves found stay the fewest, with the check and without.
#[test]
fn boxes_that_must_leave_their_goals_raise_the_bound_not_the_pushes() {
    // Microban's #93: the four goal boxes about the player shut the
    // rooms where the other boxes are; each must leave and come back.
    let rooms = Level::from_xsb(
        " #########\n##   #   ##\n#    #    #\n#  $ # $  #\n#   *.*   #\n\
         ####.@.####\n#   *.*   #\n#  $ # $  #\n#    #    #\n##   #   ##\n #########\n",
    )
    .expect("an XSB level");
    let board = Board::new(&rooms);
    let start = Start::of(&rooms);
    let mut boxes = start.boxes.clone();
    boxes.sort_unstable();
    let budget = Budget::nodes(u64::MAX);
    let bounds = [false, true].map(|check| {
        let mut search = Search::new(&board, &budget);
        search.leave_check = check;
        let bound = search.bound_on(0, &boxes, usize::from(start.player));
        (bound, search.leaving.len())
    });
    assert_eq!(bounds[0].1, 0);
    assert_eq!(bounds[1].1, 4, "{bounds:?}");
    assert_eq!(bounds[1].0, bounds[0].0.map(|b| b + 8), "{bounds:?}");

    let corridor = Level::from_xsb(CORRIDOR).expect("an XSB level");
    let mut levels: Vec<(String, Level)> = vec![("corridor".into(), corridor)];
    levels
        .extend(reverse_levels(0..40, 5).map(|(seed, level, _, _)| (format!("5+/{seed}"), level)));
    let mut charged = 0;
    for (name, level) in &levels {
        let board = Board::new(level);
        let start = Start::of(level);
        let mut found = Vec::new();
        for check in [false, true] {
            let mut search = Search::new(&board, &budget);
            search.leave_check = check;
            let Ok(Some(pushes)) = search.run(&start, Mode::FewestPushes, 3_000_000) else {
                panic!("{name}: solvable within the nodes");
            };
            charged += search.owed.iter().filter(|&&o| o > 0).count();
            let cap = pushes.len() as u32;
            let moves = fewest_moves(&mut search, &start, cap);
            level
                .replay(&board.lurd(&start, &moves))
                .expect("the moves replay");
            found.push((cap, board.lurd(&start, &moves).len()));
        }
        assert_eq!(found[0], found[1], "{name}\n{}", level.to_xsb());
    }
    assert!(charged > 0, "no position had a box that must leave");
}

/// the fallback's answer is never worse than the greedy search's
/// first one, in pushes and then moves, and it often is better; phase 1's
/// bound, wherever it stops, is at or below the proven optimum.
#[test]
fn the_fallback_improves_on_greedy_and_the_bound_holds() {
    let params = SokobanParams {
        method: Method::Reverse,
        boxes: 6,
        ..Default::default()
    };
    let (mut levels, mut better) = (0, 0);
    let mut totals = [0u32; 5];
    for seed in 0..60 {
        let Some((level, board, start)) = reverse_level(&params, seed) else {
            continue;
        };
        let budget = Budget::nodes(u64::MAX);
        let mut exact = Search::new(&board, &budget);
        let optimum = exact
            .run(&start, Mode::FewestPushes, 2_000_000)
            .ok()
            .flatten()
            .expect("solvable")
            .len() as u32;
        if exact.nodes < 60 {
            continue;
        }
        for limit in [10, exact.nodes / 3, exact.nodes / 2] {
            let mut cut = Search::new(&board, &budget);
            assert!(cut.run(&start, Mode::FewestPushes, limit).is_err());
            assert!(
                cut.proven <= optimum,
                "seed {seed}: {} > {optimum}",
                cut.proven
            );
        }
        let cost = |path: &[Push]| (path.len() as u32, board.lurd(&start, path).len() as u32);
        let mut greedy = Search::new(&board, &budget);
        let first = greedy
            .run(&start, Mode::Greedy, 200_000)
            .ok()
            .flatten()
            .expect("found");
        let mut fallback = Search::new(&board, &budget);
        let improved = fallback
            .fallback(&start, 400_000)
            .ok()
            .flatten()
            .expect("found");
        let (first, improved) = (cost(&first), cost(&improved));
        assert!(
            improved <= first,
            "seed {seed}: {improved:?} after {first:?}"
        );
        assert!(improved.0 >= optimum, "seed {seed}");
        level
            .replay(
                &board.lurd(
                    &start,
                    &fallback
                        .fallback(&start, 400_000)
                        .ok()
                        .flatten()
                        .expect("found"),
                ),
            )
            .expect("the fallback's answer wins");
        levels += 1;
        better += usize::from(improved < first);
        for (t, v) in totals
            .iter_mut()
            .zip([first.0, first.1, improved.0, improved.1, optimum])
        {
            *t += v;
        }
    }
    eprintln!(
        "the fallback improved {better} of {levels}: greedy {} pushes {} moves, \
         improved {} pushes {} moves, optimum {} pushes",
        totals[0], totals[1], totals[2], totals[3], totals[4]
    );
    assert!(levels >= 15, "{levels} levels");
    assert!(
        better * 2 >= levels,
        "the fallback improved {better} of {levels}"
    );
}
