//! The tilt verifier: a breadth-first search over every reachable state.
//!
//! Exploring the whole state graph (not stopping at the first win) gives, in one
//! pass, the optimal move count, the number of optimal solutions, and, by a
//! reverse search from the winning moves, which states are dead ends; from that,
//! the share of first moves that lose.

use std::hash::BuildHasher;

use hashbrown::HashTable;
use hashbrown::hash_table::Entry;
use rustc_hash::FxBuildHasher;
#[cfg(test)]
use rustc_hash::FxHashMap;

use super::level::{Dir, Level};
use super::rules::{Board, State, StateKey, Step};
use crate::{Budget, Rejection};

const NONE: u32 = u32::MAX;
const LOST: u32 = u32::MAX - 1;
const WIN: u32 = u32::MAX - 2;

/// What the full search found.
#[derive(Debug, Clone, PartialEq)]
pub struct Analysis {
    /// One optimal solution.
    pub solution: Vec<Dir>,
    /// The optimal move count.
    pub moves: u32,
    /// How many distinct optimal move sequences win (saturating).
    pub optimal_solutions: u64,
    /// States reachable from the start (won states not counted).
    pub states: usize,
    /// Reachable states from which no win is reachable.
    pub dead_states: usize,
    /// Moves available at the start (tilts that change something).
    pub first_moves: u32,
    /// Of those, the ones that lose at once or lead to a dead state.
    pub losing_first_moves: u32,
    /// States expanded.
    pub nodes: u64,
}

impl Analysis {
    /// The share of reachable states from which no win is reachable.
    pub fn dead_state_share(&self) -> f64 {
        self.dead_states as f64 / self.states as f64
    }
}

/// Explores every state reachable from the level's start.
///
/// `Err(Unsolvable)` when no win exists (proven: the search was complete),
/// `Err(Rejected)` when the node budget runs out, `Err(Timeout)` on the watchdog.
pub fn analyse(level: &Level, budget: &Budget) -> Result<Analysis, Rejection> {
    let (board, start) = Board::new(level);
    // A level starts at rest: no pull or meeting is pending before the first move.
    if board.settle_start(&start) != Some(start) {
        return Err(Rejection::refused(super::reasons::NOT_AT_REST, ""));
    }
    if board.fits_u64() {
        explore::<u64>(&board, &start, budget)
    } else {
        explore::<u128>(&board, &start, budget)
    }
}

/// The breadth-first search behind [`analyse`], over keys of type `K`.
fn explore<K: StateKey>(
    board: &Board,
    start: &State,
    budget: &Budget,
) -> Result<Analysis, Rejection> {
    let mut keys: Vec<K> = vec![board.key(start)];
    // State ids by key; the table holds ids only (4 bytes a slot), keys live in `keys`.
    let hash = |key: K| FxBuildHasher.hash_one(key);
    let mut index: HashTable<u32> = HashTable::new();
    index.insert_unique(hash(keys[0]), 0, |&id| hash(keys[id as usize]));
    let mut ways = vec![1u64];
    let mut parent = vec![(NONE, 0u8)];
    let mut succ: Vec<[u32; 4]> = Vec::new();
    let mut best: Option<(u32, u32, u8)> = None; // (moves, state, dir) of the first win found
    let mut optimal_solutions = 0u64;
    // The queue holds states in order of depth: `layer_end` is the index of the
    // first state one move deeper than the state at `head`.
    let mut head = 0usize;
    let mut depth = 0u32;
    let mut layer_end = 1usize;
    while head < keys.len() {
        if head == layer_end {
            depth += 1;
            layer_end = keys.len();
        }
        if head as u64 >= budget.max_nodes {
            return Err(Rejection::out_of_nodes(budget.max_nodes));
        }
        if head % 1024 == 1023 && budget.expired() {
            return Err(Rejection::Timeout);
        }
        let state = board.unkey(keys[head]);
        let here = head as u32;
        let lines = board.lines(&state);
        let mut out = [NONE; 4];
        for d in Dir::ALL {
            out[d.index()] = match board.tilt_from(&state, &lines, d) {
                Step::NoChange => NONE,
                Step::Lost => LOST,
                Step::Moved(next) if board.is_won(&next) => {
                    let moves = depth + 1;
                    match best {
                        None => {
                            best = Some((moves, here, d.index() as u8));
                            optimal_solutions = ways[head];
                        }
                        Some((m, _, _)) if m == moves => {
                            optimal_solutions = optimal_solutions.saturating_add(ways[head])
                        }
                        Some(_) => {}
                    }
                    WIN
                }
                Step::Moved(next) => {
                    let key = board.key(&next);
                    let id = match index.entry(
                        hash(key),
                        |&id| keys[id as usize] == key,
                        |&id| hash(keys[id as usize]),
                    ) {
                        Entry::Occupied(e) => *e.get(),
                        Entry::Vacant(e) => {
                            let id = keys.len() as u32;
                            keys.push(key);
                            ways.push(0);
                            parent.push((here, d.index() as u8));
                            e.insert(id);
                            id
                        }
                    };
                    if id as usize >= layer_end {
                        ways[id as usize] = ways[id as usize].saturating_add(ways[head]);
                    }
                    id
                }
            };
        }
        succ.push(out);
        head += 1;
    }
    let Some((moves, at, dir)) = best else {
        return Err(Rejection::Unsolvable);
    };
    let solution = trace_back(&parent, moves, at, dir);
    let alive = alive_states(&succ);
    let dead_states = alive.iter().filter(|&&a| !a).count();
    let (first_moves, losing_first_moves) = first_moves(&succ[0], &alive);
    Ok(Analysis {
        solution,
        moves,
        optimal_solutions,
        states: keys.len(),
        dead_states,
        first_moves,
        losing_first_moves,
        nodes: keys.len() as u64,
    })
}

/// The moves from the start to the win found: the last move `dir` from
/// state `at`, then each state's parent move back to the start.
fn trace_back(parent: &[(u32, u8)], moves: u32, mut at: u32, mut dir: u8) -> Vec<Dir> {
    let mut solution = Vec::with_capacity(moves as usize);
    loop {
        solution.push(Dir::ALL[usize::from(dir)]);
        let (p, d) = parent[at as usize];
        if p == NONE {
            break;
        }
        (at, dir) = (p, d);
    }
    solution.reverse();
    solution
}

/// The start's moves that change anything, and those of them that lose (at
/// once, or into a state from which no win is reachable).
fn first_moves(start: &[u32; 4], alive: &[bool]) -> (u32, u32) {
    let mut first_moves = 0;
    let mut losing_first_moves = 0;
    for &t in start {
        match t {
            NONE => {}
            WIN => first_moves += 1,
            LOST => {
                first_moves += 1;
                losing_first_moves += 1;
            }
            t => {
                first_moves += 1;
                losing_first_moves += u32::from(!alive[t as usize]);
            }
        }
    }
    (first_moves, losing_first_moves)
}

/// Sweeps over the undecided states before [`alive_states`] falls back to a
/// reverse search; levels of the default params need 5 to 8.
const SWEEPS: usize = 12;

/// Marks the states from which a win is reachable.
///
/// A state is alive when a move wins or leads to an alive state. Sweeps over
/// the states in reverse breadth-first order settle a state once one of its
/// successors is settled; each sweep visits only the states still undecided,
/// a shrinking list (about two thirds stay undecided after the
/// first; under 3% are dead). Sweeps need no predecessor lists, which makes them
/// cheaper than a reverse search on all but long chains of back edges; those
/// go to [`reverse_search`] after [`SWEEPS`] sweeps.
fn alive_states(succ: &[[u32; 4]]) -> Vec<bool> {
    let n = succ.len();
    let mut alive = vec![false; n];
    let settles = |alive: &[bool], s: u32| {
        succ[s as usize]
            .iter()
            .any(|&t| t == WIN || ((t as usize) < n && alive[t as usize]))
    };
    let mut undecided: Vec<u32> = (0..n as u32).rev().collect();
    for _ in 0..SWEEPS {
        let before = undecided.len();
        undecided.retain(|&s| {
            let live = settles(&alive, s);
            alive[s as usize] = live;
            !live
        });
        if undecided.len() == before {
            return alive;
        }
    }
    reverse_search(succ, &mut alive);
    alive
}

/// Completes `alive` (a set of states known to be alive that includes every
/// state with a winning move) by a search backwards along predecessor lists.
fn reverse_search(succ: &[[u32; 4]], alive: &mut [bool]) {
    crate::search::mark_reverse_reachable(alive, |s| succ[s]);
}

/// Whether some tilt sequence of at most `moves` moves wins: a breadth-first
/// search cut at that depth, cheap for small `moves`. The generator uses it to
/// refuse levels that are too easy before paying for a full [`analyse`].
pub fn wins_within(level: &Level, moves: u32) -> bool {
    let (board, start) = Board::new(level);
    let mut frontier = vec![start];
    let mut seen = rustc_hash::FxHashSet::default();
    seen.insert(board.key::<u128>(&start));
    for _ in 0..moves {
        let mut next_frontier = Vec::new();
        for state in &frontier {
            for d in Dir::ALL {
                if let Step::Moved(next) = board.tilt(state, d) {
                    if board.is_won(&next) {
                        return true;
                    }
                    if seen.insert(board.key::<u128>(&next)) {
                        next_frontier.push(next);
                    }
                }
            }
        }
        frontier = next_frontier;
    }
    false
}

/// The source's verifier, kept as an independent cross-check of [`analyse`]:
/// depth-first search with iterative deepening, pruning a state already seen
/// with at least as many moves left. Returns the optimal move count up to `max_moves`.
#[cfg(test)]
pub fn iterative_deepening_moves(level: &Level, max_moves: u32) -> Option<u32> {
    let (board, start) = Board::new(level);
    if board.settle_start(&start) != Some(start) {
        return None;
    }
    for limit in 1..=max_moves {
        let mut seen: FxHashMap<u128, u32> = FxHashMap::default();
        if deepen(&board, &start, limit, &mut seen) {
            return Some(limit);
        }
    }
    None
}

#[cfg(test)]
fn deepen(board: &Board, state: &State, left: u32, seen: &mut FxHashMap<u128, u32>) -> bool {
    for d in Dir::ALL {
        if let Step::Moved(next) = board.tilt(state, d) {
            if board.is_won(&next) {
                return true;
            }
            if left > 1 {
                let key: u128 = board.key(&next);
                if seen.get(&key).is_some_and(|&l| l >= left - 1) {
                    continue;
                }
                seen.insert(key, left - 1);
                if deepen(board, &next, left - 1, seen) {
                    return true;
                }
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chain where each state's only way on leads to the state before it,
    /// which sweeps settle one state at a time: the reverse search finishes it.
    #[test]
    fn long_back_edge_chains_fall_back_to_the_reverse_search() {
        let n = 3 * SWEEPS;
        let mut succ = vec![[NONE, NONE, LOST, WIN]];
        succ.extend((1..n as u32).map(|i| [i - 1, NONE, NONE, LOST]));
        // Two dead states that only reach each other.
        let dead = n as u32;
        succ.push([dead + 1, LOST, NONE, NONE]);
        succ.push([dead, NONE, NONE, NONE]);
        let alive = alive_states(&succ);
        assert!(alive[..n].iter().all(|&a| a));
        assert!(!alive[n] && !alive[n + 1]);
        let mut only_wins: Vec<bool> = succ.iter().map(|out| out.contains(&WIN)).collect();
        reverse_search(&succ, &mut only_wins);
        assert_eq!(only_wins, alive);
    }
}
