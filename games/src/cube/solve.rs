//! The exact solver: a breadth-first search over (cube, monk's region) with a
//! transposition table, fewest turns first.
//!
//! After every walk the monk has collected all karma it can reach, so a state
//! is the cube (karma taken off) and the Top region the monk can walk in; the
//! monk may turn from any cell of that region, which fixes the row and column
//! it cannot turn and where it stands after the turn.

use crate::reason::Code;
use std::cmp::Reverse;

use rustc_hash::FxHashMap;

use super::geometry::Turn;
use super::level::{Cell, EXIT, Level, START};
use crate::{Budget, Rejection};

/// Top cells in column 0 and column 2 (bit `y * 3 + x`).
const COL0: u16 = 0b001_001_001;
const COL2: u16 = 0b100_100_100;
const TOP: u16 = 0x1ff;

/// Top cells next to a cell of `m`.
fn neighbours(m: u16) -> u16 {
    (((m << 1) & !COL0) | ((m >> 1) & !COL2) | (m << 3) | (m >> 3)) & TOP
}

/// Grows `from` over `walkable` to the cells the monk can reach.
fn flood(from: u16, walkable: u16) -> u16 {
    let mut r = from;
    loop {
        let grown = (r | neighbours(r)) & (walkable | from);
        if grown == r {
            return r;
        }
        r = grown;
    }
}

/// Top cells holding `kind`, as a mask.
fn top_mask(cells: &[Cell; 54], kind: impl Fn(Cell) -> bool) -> u16 {
    (0..9).fold(0, |m, i| m | u16::from(kind(cells[i])) << i)
}

/// Top cells the monk can walk to from `from` (a 9-bit mask, `y * 3 + x`).
pub(crate) fn region(cells: &[Cell; 54], from: usize) -> u16 {
    flood(1 << from, top_mask(cells, Cell::walkable))
}

/// Whether a soldier on Top touches the monk's region: a walkable path joins
/// them, and the monk dies.
pub(crate) fn in_danger(cells: &[Cell; 54], region: u16) -> bool {
    neighbours(region) & top_mask(cells, |c| c == Cell::Soldier) != 0
}

/// Takes the karma of `region` (it becomes path); returns how much.
pub(crate) fn collect(cells: &mut [Cell; 54], region: u16) -> u32 {
    let mut taken = 0;
    for (i, c) in cells.iter_mut().enumerate().take(9) {
        if region >> i & 1 == 1 && *c == Cell::Karma {
            *c = Cell::Path;
            taken += 1;
        }
    }
    taken
}

/// Whether `turn` moves the monk's row or column (then it is not allowed).
pub(crate) fn moves_monk(turn: Turn, monk: usize) -> bool {
    match turn {
        Turn::Row(y) => usize::from(y) == monk / 3,
        Turn::Column(x) => usize::from(x) == monk % 3,
    }
}

/// Cells packed two bits each: path 0, obstacle 1, karma 2, soldier 3.
pub(super) fn pack(cells: &[Cell; 54]) -> u128 {
    cells
        .iter()
        .enumerate()
        .fold(0u128, |k, (i, c)| k | (*c as u128) << (2 * i))
}

/// The stickers a turn moves, as (from, to) pairs, and the mask of their bits.
type Moved = (Vec<(u8, u8)>, u128);

fn moved(turn: Turn) -> &'static Moved {
    static MOVED: std::sync::OnceLock<Vec<Moved>> = std::sync::OnceLock::new();
    let all = MOVED.get_or_init(|| {
        Turn::ALL
            .iter()
            .map(|t| {
                let pairs: Vec<(u8, u8)> = t
                    .permutation()
                    .iter()
                    .enumerate()
                    .filter(|&(i, &to)| usize::from(to) != i)
                    .map(|(i, &to)| (i as u8, to))
                    .collect();
                let mask = pairs.iter().fold(0u128, |m, &(i, _)| m | 3 << (2 * i));
                (pairs, mask)
            })
            .collect()
    });
    &all[turn.index()]
}

/// A turn applied to a packed cube: only the stickers it moves are touched.
fn turn_packed(turn: Turn, key: u128) -> u128 {
    let (pairs, mask) = moved(turn);
    pairs.iter().fold(key & !mask, |out, &(i, to)| {
        out | (key >> (2 * i) & 3) << (2 * to)
    })
}

/// Top masks of a packed cube: (walkable, soldiers, karma).
fn top_masks(key: u128) -> (u16, u16, u16) {
    let (mut walk, mut soldiers, mut karma) = (0u16, 0u16, 0u16);
    for i in 0..9 {
        match key >> (2 * i) & 3 {
            0 => walk |= 1 << i,
            2 => {
                walk |= 1 << i;
                karma |= 1 << i;
            }
            3 => soldiers |= 1 << i,
            _ => {}
        }
    }
    (walk, soldiers, karma)
}

/// Clears the karma of Top cells `taken` (they become path).
fn take_karma(key: u128, taken: u16) -> u128 {
    (0..9)
        .filter(|i| taken >> i & 1 == 1)
        .fold(key, |k, i| k & !(3u128 << (2 * i)))
}

/// Every turn the monk can make from its region `reach` of the packed cube
/// `key`: from each part of the region a turn leaves it standing in, a turn
/// that does not move its row or column and after which no soldier reaches
/// it. Calls `each(step, cube after, region after, karma taken)`, the
/// karma in reach taken off the cube, until it returns `false`.
pub(super) fn each_turn(key: u128, reach: u16, mut each: impl FnMut(Step, u128, u16, u32) -> bool) {
    for turn in Turn::ALL {
        let turned = turn_packed(turn, key);
        let (walk, soldiers, karma_cells) = top_masks(turned);
        // Cells of the region already turned from to the same place.
        let mut done = 0u16;
        for from in 0..9 {
            if reach >> from & 1 == 0 || moves_monk(turn, from) || done >> from & 1 == 1 {
                continue;
            }
            let next_reach = flood(1 << from, walk);
            done |= next_reach;
            if neighbours(next_reach) & soldiers != 0 {
                continue;
            }
            let taken = next_reach & karma_cells;
            let next = take_karma(turned, taken);
            if !each(Step { from, turn }, next, next_reach, taken.count_ones()) {
                return;
            }
        }
    }
}

/// One step of a solution: walk to `from` (a Top cell), then turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// Where the monk turns from: `y * 3 + x` on Top.
    pub from: usize,
    /// The turn.
    pub turn: Turn,
}

/// What the search found.
#[derive(Debug, Clone, PartialEq)]
pub struct Analysis {
    /// A solution (with the fewest turns when `optimal`); a final walk to the
    /// exit follows it.
    pub steps: Vec<Step>,
    /// States reached.
    pub states: usize,
    /// Whether the solution is proven shortest.
    pub optimal: bool,
}

impl Analysis {
    /// The solution string: `@x,y TURN ... @2,2`.
    pub fn notation(&self) -> String {
        let mut parts: Vec<String> = self
            .steps
            .iter()
            .flat_map(|s| [format!("@{},{}", s.from % 3, s.from / 3), s.turn.name()])
            .collect();
        parts.push(format!("@{},{}", EXIT.0, EXIT.1));
        parts.join(" ")
    }

    /// Walks in the solution (the final one included), skipping walks that do
    /// not move the monk.
    pub fn walks(&self) -> u32 {
        let mut at = START.1 * 3 + START.0;
        let mut walks = 0;
        for s in &self.steps {
            walks += u32::from(s.from != at);
            at = s.from;
        }
        walks + u32::from(at != EXIT.1 * 3 + EXIT.0)
    }
}

/// The greedy fallback gets this fraction of the node budget.
const GREEDY_SHARE: u64 = 4;

/// Searches for the fewest turns that win; when the node budget runs out
/// first, a greedy search (most karma first, then fewest turns) looks for any
/// solution within a quarter of that budget, reported with `optimal: false`.
///
/// `Err(Unsolvable)` when no sequence of legal turns wins (the breadth-first
/// search was complete), `Err(Rejected)` when both searches run out of nodes
/// or the monk starts in danger, `Err(Timeout)` on the watchdog.
pub fn solve(level: &Level, budget: &Budget) -> Result<Analysis, Rejection> {
    match search(level, budget, false) {
        Err(out) if out.is_out_of_nodes() => {
            let reason = out.reason().map_or("", |r| r.detail.as_str());
            let greedy = budget.with_nodes(budget.max_nodes / GREEDY_SHARE);
            search(level, &greedy, true).map_err(|e| match e {
                Rejection::Unsolvable | Rejection::Refused(_) => Rejection::refused(
                    Code::BudgetExhausted,
                    format!(
                        "{reason}; the greedy fallback found nothing in {} nodes",
                        greedy.max_nodes
                    ),
                ),
                other => other,
            })
        }
        other => other,
    }
}

fn search(level: &Level, budget: &Budget, greedy: bool) -> Result<Analysis, Rejection> {
    let mut cells = level.array();
    let start = START.1 * 3 + START.0;
    let exit = EXIT.1 * 3 + EXIT.0;
    let reach = region(&cells, start);
    if in_danger(&cells, reach) {
        return Err(Rejection::refused(super::reasons::STARTS_IN_DANGER, ""));
    }
    let goal = level.karma_goal;
    let taken = collect(&mut cells, reach);
    // States: (cube, region) with the karma collected so far; parents: (state, step).
    let mut states: Vec<(u128, u16)> = vec![(pack(&cells), reach)];
    let mut collected: Vec<u32> = vec![taken];
    let mut parent: Vec<(u32, Option<Step>)> = vec![(u32::MAX, None)];
    let mut index: FxHashMap<(u128, u16), u32> = FxHashMap::default();
    index.insert(states[0], 0);
    let won = |karma: u32, reach: u16| karma >= goal && reach >> exit & 1 == 1;
    let mut found = won(taken, reach).then_some(0usize);
    // Breadth-first: states in order; greedy: most karma, then fewest turns.
    let mut next_in_order = 0usize;
    let mut depth: Vec<u32> = vec![0];
    let mut heap = std::collections::BinaryHeap::from([(taken, Reverse(0u32), Reverse(0u32))]);
    let mut expanded = 0u64;
    while found.is_none() {
        let head = if greedy {
            match heap.pop() {
                Some((_, _, Reverse(id))) => id as usize,
                None => break,
            }
        } else if next_in_order < states.len() {
            next_in_order += 1;
            next_in_order - 1
        } else {
            break;
        };
        if expanded >= budget.max_nodes {
            return Err(Rejection::out_of_nodes(budget.max_nodes));
        }
        expanded += 1;
        if expanded % 256 == 255 && budget.expired() {
            return Err(Rejection::Timeout);
        }
        let (key, reach) = states[head];
        let karma = collected[head];
        each_turn(key, reach, |step, next_key, next_reach, taken| {
            let state = (next_key, next_reach);
            if index.contains_key(&state) {
                return true;
            }
            let karma = karma + taken;
            let id = states.len() as u32;
            index.insert(state, id);
            states.push(state);
            collected.push(karma);
            depth.push(depth[head] + 1);
            parent.push((head as u32, Some(step)));
            if greedy {
                heap.push((karma, Reverse(depth[head] + 1), Reverse(id)));
            }
            if won(karma, next_reach) {
                found = Some(states.len() - 1);
                return false;
            }
            true
        });
    }
    let Some(mut at) = found else {
        return Err(Rejection::Unsolvable);
    };
    let mut steps = Vec::new();
    while let (p, Some(step)) = parent[at] {
        steps.push(step);
        at = p as usize;
    }
    steps.reverse();
    Ok(Analysis {
        steps,
        states: states.len(),
        optimal: !greedy,
    })
}
