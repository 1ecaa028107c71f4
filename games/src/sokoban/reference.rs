//! A plain search the solver is checked against: uniform-cost search over
//! (player cell, box set), one step at a time, cost (pushes, moves) in
//! lexicographic order. No lower bound, no deadlock pruning, no shared code
//! with the solver beyond the level's own rules.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use super::level::{Dir, Level};

/// The fewest (pushes, moves): `Some(None)` when no solution exists, `None`
/// when more than `max_states` states were seen.
pub(crate) fn fewest_pushes_then_moves(
    level: &Level,
    max_states: usize,
) -> Option<Option<(u32, u32)>> {
    type State = (usize, Vec<usize>);
    let start: State = (level.player, level.boxes.clone());
    let mut best: HashMap<State, (u32, u32)> = HashMap::new();
    best.insert(start.clone(), (0, 0));
    let mut open = BinaryHeap::new();
    open.push(Reverse(((0u32, 0u32), start)));
    while let Some(Reverse((cost, (player, boxes)))) = open.pop() {
        if best.get(&(player, boxes.clone())) != Some(&cost) {
            continue;
        }
        if boxes == level.goals {
            return Some(Some(cost));
        }
        for d in Dir::ALL {
            let Some(to) = level.step(player, d).filter(|&t| level.open(t)) else {
                continue;
            };
            let mut next = boxes.clone();
            let mut pushes = cost.0;
            if let Ok(i) = boxes.binary_search(&to) {
                let Some(beyond) = level
                    .step(to, d)
                    .filter(|&b| level.open(b) && boxes.binary_search(&b).is_err())
                else {
                    continue;
                };
                next[i] = beyond;
                next.sort_unstable();
                pushes += 1;
            }
            let c = (pushes, cost.1 + 1);
            let state = (to, next);
            if best.get(&state).is_none_or(|&old| c < old) {
                if best.len() >= max_states {
                    return None;
                }
                best.insert(state.clone(), c);
                open.push(Reverse((c, state)));
            }
        }
    }
    Some(None)
}
