//! The exact solver, independent of both generators.
//!
//! Phase 1 finds the fewest pushes: A* over (box set, player region), the region
//! named by its lowest cell, with the minimum-cost matching of boxes to goals
//! (lone-box push distances, per side of the box the player walks on) as the
//! admissible, consistent lower bound. Dead squares (cells from which a lone
//! box can reach no goal) and freeze deadlocks
//! (boxes locked against walls and each other off a goal) are pruned; where a
//! position has a PI-corral, only its pushes are expanded ([`Search::pi_corral`]
//! says why that keeps the fewest pushes), which also prunes corrals that can
//! never open.
//!
//! Phase 2 finds the fewest moves for that push count: the same search over
//! (box set, exact player cell) with costs (pushes, moves) in lexicographic
//! order, pruning every state whose push bound exceeds phase 1's answer, and
//! every state phase 1 reached with fewer pushes (whose bound it reuses).
//!
//! When phase 1 runs out of nodes (or time, under a caller's time limit, of
//! which it leaves a quarter for what follows), the fallback looks for any
//! solution with a greedy best-first search, then spends what is left of its
//! nodes on weighted searches pruned by the best answer so far, for fewer
//! pushes and then fewer moves; the answer is flagged `push_optimal: false`
//! and carries phase 1's proven lower bound on the pushes. When phase 2 runs
//! out, phase 1's solution stands with `move_optimal: false`.
//!
//! Boxes frozen on goals (locked there for good) are walls for the bound
//! of every position below them: a board per set of such boxes gives the
//! others the distances of the floor left ([`FrozenBoards`]), which sees a
//! goal corridor filled out of order as a deadlock. A box on a goal that
//! must leave it (a wall there would shut another box from every goal, or
//! a goal from every box: [`Search::must_leave`]) costs two pushes on that
//! goal, and counts as a push not made in the push search's order among
//! equal f (deeper first).
//!
//! Boxes on goals in pockets the player can never enter (sealed by walls)
//! are already solved: they become walls for the search. Such a pocket with a
//! box off a goal, or a goal without a box, makes the level unsolvable.
//!
//! Modules: [`board`] (the level's static analysis: dead squares, distances
//! per side), [`matching`] (the Hungarian method, kept and redone for one
//! box), [`bound`] (a position's bound, and a child's from its parent's),
//! [`region`] (the player's region, and the region after a push), [`corral`]
//! (PI-corrals), [`frozen`] (boards of boxes frozen on goals, and the
//! positions kept for the move search), [`positions`] (the table of positions
//! a search stores).

use crate::clock::Instant;
use crate::reason::Code;
use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hash::BuildHasher;

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

use super::level::{Dir, Level};
use crate::search::Bfs;
use crate::{Budget, Rejection};
use board::*;
use expand::Pushed;
use frozen::*;
use matching::*;

pub(super) use matching::hungarian;

mod board;
mod bound;
mod corral;
mod expand;
mod frozen;
mod matching;
mod positions;
mod region;
#[cfg(test)]
mod tests;

/// Boxes from which the move search reuses the push search's positions: with
/// fewer, a new matching costs less than finding the position's region to look
/// it up (10x10 levels of 4 boxes solve 20% slower with it).
const KNOWN_MIN_BOXES: usize = 6;

/// Boxes from which a pushed position's bound comes from its parent's
/// matching, one augmenting path, rather than a matching anew.
const REMATCH_MIN_BOXES: usize = 5;

/// Boxes from which a bound charges the boxes that must leave their goals
/// ([`Search::must_leave`]); with fewer it costs more than it saves.
const LEAVING_MIN_BOXES: usize = 5;

/// [`FrozenBoards::plus`]'s answers: not asked yet, and `None`.
const PLUS_UNKNOWN: u32 = u32::MAX;
const PLUS_NONE: u32 = u32::MAX - 1;

/// A lone box's push distance that no push sequence achieves.
const FAR: u16 = u16::MAX;

/// Memory the boards with frozen boxes as walls may take, per solve.
const FROZEN_BOARDS_BYTES: usize = 64 << 20;

/// The fallback's weights on the lower bound, in quarters (4 would be A*):
/// each run is pruned by the best answer the runs before it found.
const FALLBACK_WEIGHTS: [u32; 4] = [12, 8, 6, 5];

/// What the solver found.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The solution in LURD.
    pub solution: String,
    /// Its pushes.
    pub pushes: u32,
    /// Its moves (pushes included).
    pub moves: u32,
    /// Whether no solution has fewer pushes.
    pub push_optimal: bool,
    /// Whether no solution with this push count has fewer moves.
    pub move_optimal: bool,
    /// Fewest pushes any solution can have, as far as the search proved
    /// (equal to `pushes` when `push_optimal`).
    pub lower_bound: u32,
    /// States expanded, both phases.
    pub nodes: u64,
    /// States expanded by the push-optimal search alone (the search effort).
    pub push_nodes: u64,
    /// The push bound of the start position (lone-box distances matched to
    /// goals): how far the level looks from solved before any push.
    pub start_bound: u32,
}

/// Solves `level` within `budget` (`max_nodes` per phase, a quarter of it
/// for the fallback).
pub fn solve(level: &Level, budget: &Budget) -> Result<Answer, Rejection> {
    let level = playable(level)?;
    let board = Board::new(&level);
    let start = Start::of(&level);
    if start.boxes.iter().any(|&b| board.dead[b as usize]) {
        return Err(Rejection::Unsolvable);
    }
    let mut search = Search::new(&board, budget);
    let began = Instant::now();
    search.soft_stop = budget
        .time_limit
        .map(|end| began + end.saturating_duration_since(began) * 3 / 4);
    let phase1 = search.run(&start, Mode::FewestPushes, budget.max_nodes);
    search.soft_stop = budget.time_limit;
    let (pushes, push_optimal) = match phase1 {
        Ok(Some(path)) => (path, true),
        Ok(None) => return Err(Rejection::Unsolvable),
        Err(Stop::Timeout) => return Err(Rejection::Timeout),
        Err(Stop::Budget) => match search.fallback(&start, budget.max_nodes / 4) {
            Ok(Some(path)) => (path, false),
            Ok(None) => return Err(Rejection::Unsolvable),
            Err(Stop::Timeout) => return Err(Rejection::Timeout),
            Err(Stop::Budget) => {
                return Err(if budget.out_of_time() {
                    Rejection::refused(super::reasons::TIME_LIMIT, "")
                } else {
                    Rejection::out_of_nodes(budget.max_nodes)
                });
            }
        },
    };
    let push_nodes = search.nodes;
    let lower_bound = if push_optimal {
        pushes.len() as u32
    } else {
        search.proven
    };
    let mut best = (pushes, false);
    if push_optimal {
        if start.boxes.len() >= KNOWN_MIN_BOXES {
            search.keep_known();
        }
        let cap = best.0.len() as u32;
        match search.run(&start, Mode::Moves { weight: 4, cap }, budget.max_nodes) {
            Ok(Some(path)) => best = (path, true),
            Ok(None) => {
                return Err(Rejection::refused(
                    Code::Internal,
                    "the move search lost the push-optimal solution",
                ));
            }
            Err(Stop::Timeout) => return Err(Rejection::Timeout),
            Err(Stop::Budget) => {}
        }
    }
    let (path, move_optimal) = best;
    let solution = board.lurd(&start, &path);
    let moves = solution.len() as u32;
    Ok(Answer {
        solution,
        pushes: path.len() as u32,
        moves,
        push_optimal,
        move_optimal: push_optimal && move_optimal,
        lower_bound,
        nodes: search.nodes,
        push_nodes,
        start_bound: search.start_bound.unwrap_or(0),
    })
}

/// The level the search plays: boxes on goals in pockets the player can never
/// enter become walls. `Unsolvable` when such a pocket holds a box off a goal
/// or a goal without a box.
fn playable(level: &Level) -> Result<Cow<'_, Level>, Rejection> {
    let open = |c: usize| {
        Dir::ALL
            .into_iter()
            .filter_map(move |d| level.step(c, d).filter(|&n| level.open(n)))
    };
    let mut reached = vec![false; level.walls.len()];
    for c in Bfs::new(level.walls.len(), [level.player], open).order() {
        reached[c] = true;
    }
    let sealed = |c: &usize| !reached[*c];
    if !level.boxes.iter().any(sealed) && !level.goals.iter().any(sealed) {
        return Ok(Cow::Borrowed(level));
    }
    let mut live = level.clone();
    live.boxes.retain(|c| reached[*c]);
    live.goals.retain(|c| reached[*c]);
    let solved_pockets = level
        .boxes
        .iter()
        .filter(|c| sealed(c))
        .eq(level.goals.iter().filter(|c| sealed(c)));
    if !solved_pockets {
        return Err(Rejection::Unsolvable);
    }
    for (c, wall) in live.walls.iter_mut().enumerate() {
        *wall |= !reached[c];
    }
    Ok(Cow::Owned(live))
}

/// Whether the lone-box analysis already proves `level` unsolvable: a box on a
/// dead square or no matching of boxes to goals.
pub fn trivially_unsolvable(level: &Level) -> bool {
    let board = Board::new(level);
    let boxes: Vec<u16> = level.boxes.iter().map(|&b| b as u16).collect();
    boxes.iter().any(|&b| board.dead[b as usize])
        || board.lower_bound(&boxes, level.player).is_none()
}

/// The start position.
struct Start {
    boxes: Vec<u16>,
    player: u16,
}

impl Start {
    fn of(level: &Level) -> Start {
        Start {
            boxes: level.boxes.iter().map(|&b| b as u16).collect(),
            player: level.player as u16,
        }
    }
}

/// One push: the box's cell before it and the direction (index into [`Dir::ALL`]).
type Push = (u16, u8);

/// What a search optimises.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    /// A* on pushes; states keyed by the player's region.
    FewestPushes,
    /// Best-first on the lower bound: any solution, fast.
    Greedy,
    /// Fewer moves among solutions of at most `cap` pushes: best-first on
    /// `4 x pushes + weight x bound`, then moves; states keyed by the
    /// player's cell. With `weight` 4 (A*) and `cap` the fewest pushes, the
    /// first solution has the fewest moves for them.
    Moves { weight: u32, cap: u32 },
}

/// Why a search stopped without an answer.
#[derive(Debug)]
enum Stop {
    /// Out of nodes, or past the caller's time limit.
    Budget,
    /// The watchdog fired.
    Timeout,
}

/// The states of one search: boxes (sorted, `k` per state) and the player, in
/// flat arrays; the table holds ids only.
struct Search<'a> {
    board: &'a Board,
    budget: &'a Budget,
    /// Past this instant a run stops as if out of nodes (the caller's time
    /// limit, or the share of it a phase may use).
    soft_stop: Option<Instant>,
    nodes: u64,
    /// Work done, all runs: expansions plus the matching bounds' cost.
    work: u64,
    /// The largest `pushes + bound` the push-optimal search expanded: no
    /// solution has fewer pushes.
    proven: u32,
    /// The push bound of the start position, as the first push search saw it.
    start_bound: Option<u32>,
    k: usize,
    boxes: Vec<u16>,
    player: Vec<u16>,
    parent: Vec<u32>,
    push: Vec<Push>,
    pushes: Vec<u32>,
    moves: Vec<u32>,
    bound: Vec<u32>,
    /// The board each state's bound is taken on ([`FrozenBoards`]).
    table: Vec<u32>,
    /// The boxes each state's bound charges for having to leave their goals
    /// ([`Search::must_leave`]).
    owed: Vec<u8>,
    closed: Vec<bool>,
    /// Whether a cheaper path means fewer (pushes, moves) or fewer pushes alone.
    by_moves: bool,
    /// Whether the run is one of the exact searches (A* on pushes, or on
    /// moves under the fewest pushes), whose answers are proven.
    exact: bool,
    /// Whether push-counting runs expand only a PI-corral's pushes when the
    /// position has one (off only to cross-check the pruning).
    pi_corrals: bool,
    /// Whether bounds charge the boxes that must leave their goals (off
    /// only to cross-check it).
    leave_check: bool,
    /// The boxes of the position being bounded that must leave their goals,
    /// and scratch for finding them: the goals some box reaches.
    leaving: Vec<u16>,
    reached: Vec<bool>,
    /// The boxes that must leave their goals in the expanded position, as
    /// its matching charges them.
    matched_leaving: Vec<u16>,
    /// The positions of the push-optimal search that found the fewest
    /// pushes, for the move search that follows it.
    known: Option<Known>,
    index: HashTable<u32>,
    // Scratch.
    occupied: Vec<bool>,
    wall: Vec<bool>,
    stamp: Vec<u32>,
    walk: Vec<u32>,
    /// The expanded position's region: cells stamped with its flood's epoch.
    reach: Vec<u32>,
    epoch: u32,
    queue: Vec<u16>,
    /// The matching of the position being expanded (`matched`: its id, or
    /// `ROOT` for none yet), from which its pushes' positions are matched
    /// again (`rematched`) one box at a time.
    matching: Matching,
    matched: u32,
    rematched: Matching,
    /// Scratch for the matchings of positions not one push from the
    /// expanded one's.
    fresh: Matching,
    kept: Kept,
    /// The pushed box's row and cell when the last child's bound was
    /// matched again from the expanded position's matching.
    last_rematch: Option<(usize, u16)>,
    /// Per cell, the unreachable area it belongs to (`u32::MAX`: none), for
    /// the PI-corral analysis; `areas_stamp` says which expansion set it.
    area: Vec<u32>,
    area_stamp: Vec<u32>,
    /// Buffers an expansion reuses rather than allocates.
    scratch: Expansion,
    frozen: FrozenBoards,
    /// The boxes a bound is matched over (those not frozen on goals): the
    /// expanded position's (`rest_of`: its id, or `ROOT` for none yet) and
    /// its child's.
    rest: Vec<u16>,
    rest_of: u32,
    rest_child: Vec<u16>,
}

/// A push an expansion may make: the box's index and cell, the direction,
/// the cell it goes to, and the steps the player walks to make it.
type Child = (usize, usize, usize, usize, u32);

/// Buffers of one expansion, kept between expansions so that the push
/// search allocates only for the positions it stores.
#[derive(Default)]
struct Expansion {
    /// The pushes of the position being expanded.
    children: Vec<Child>,
    /// Per unreachable area, the boxes next to it; whether it holds a goal.
    next_to: Vec<Vec<usize>>,
    goal_in: Vec<bool>,
    /// The areas and the boxes of the corral being grown.
    inside: Vec<bool>,
    members: Vec<bool>,
    /// The pushes of the corral being grown, and of the smallest PI-corral.
    pushes: Vec<(usize, usize)>,
    corral: Vec<(usize, usize)>,
}

const ROOT: u32 = u32::MAX;

impl<'a> Search<'a> {
    fn new(board: &'a Board, budget: &'a Budget) -> Search<'a> {
        Search {
            board,
            budget,
            soft_stop: None,
            nodes: 0,
            work: 0,
            proven: 0,
            start_bound: None,
            k: board.goals,
            boxes: Vec::new(),
            player: Vec::new(),
            parent: Vec::new(),
            push: Vec::new(),
            pushes: Vec::new(),
            moves: Vec::new(),
            bound: Vec::new(),
            table: Vec::new(),
            owed: Vec::new(),
            closed: Vec::new(),
            by_moves: false,
            exact: false,
            pi_corrals: true,
            leave_check: true,
            leaving: Vec::new(),
            reached: Vec::new(),
            matched_leaving: Vec::new(),
            known: None,
            index: HashTable::new(),
            occupied: vec![false; board.cells],
            wall: vec![false; board.cells],
            stamp: vec![0; board.cells],
            walk: vec![0; board.cells],
            reach: vec![0; board.cells],
            epoch: 0,
            queue: Vec::new(),
            area: vec![u32::MAX; board.cells],
            area_stamp: vec![0; board.cells],
            scratch: Expansion::default(),
            matching: Matching::default(),
            matched: ROOT,
            rematched: Matching::default(),
            fresh: Matching::default(),
            kept: Kept::default(),
            last_rematch: None,
            frozen: FrozenBoards::new(FROZEN_BOARDS_BYTES),
            rest: Vec::new(),
            rest_of: ROOT,
            rest_child: Vec::new(),
        }
    }

    /// The table of the position `boxes` (marked in `occupied`), whose
    /// parent's table is `parent`: the parent's frozen boxes (frozen still)
    /// and every other box frozen on its goal.
    fn table_of(&mut self, boxes: &[u16], parent: u32) -> u32 {
        let board = self.board;
        let mut set = std::mem::take(&mut self.frozen.set);
        set.clear();
        let inherited = self.frozen.cells(parent);
        let mut group = Vec::new();
        for &b in boxes {
            let frozen = inherited.binary_search(&b).is_ok()
                || (board.goal[b as usize] && {
                    group.clear();
                    board.frozen(b as usize, &self.occupied, &mut self.wall, &mut group)
                });
            if frozen {
                set.push(b);
            }
        }
        self.frozen.set = set;
        self.frozen.table(board, parent)
    }

    fn clear(&mut self) {
        self.boxes.clear();
        self.player.clear();
        self.parent.clear();
        self.push.clear();
        self.pushes.clear();
        self.moves.clear();
        self.bound.clear();
        self.table.clear();
        self.owed.clear();
        self.closed.clear();
        self.index.clear();
        self.matched = ROOT;
        self.rest_of = ROOT;
        self.kept.children.clear();
    }

    fn state_boxes(&self, id: u32) -> &[u16] {
        &self.boxes[id as usize * self.k..(id as usize + 1) * self.k]
    }

    fn hash(boxes: &[u16], player: u16) -> u64 {
        FxBuildHasher.hash_one((boxes, player))
    }

    /// The boxes the bound just taken charged for having to leave their
    /// goals, for the order of the push search.
    fn owed_now(&self) -> u8 {
        self.leaving.len().min(usize::from(u8::MAX)) as u8
    }

    /// The heap key of a state: smaller pops first.
    fn priority(mode: Mode, pushes: u32, moves: u32, bound: u32, owed: u8) -> u64 {
        let (first, second) = match mode {
            // Deeper first among equal f: reaches goals sooner. A box that
            // must leave its goal counts as a push not made (the bound
            // charges it the least it costs; it often costs more).
            Mode::FewestPushes => (
                pushes + bound,
                u32::MAX - pushes - (u32::from(u8::MAX) - u32::from(owed)),
            ),
            Mode::Greedy => (bound, pushes),
            // Every push left is a move: moves + bound never overestimates
            // the moves left on a fewest-pushes path, and never falls.
            Mode::Moves { weight, .. } => (4 * pushes + weight * bound, moves + bound),
        };
        (u64::from(first) << 32) | u64::from(second)
    }

    /// Runs one search from `start`; the pushes of the best solution, `None`
    /// when the level is proven unsolvable.
    fn run(&mut self, start: &Start, mode: Mode, limit: u64) -> Result<Option<Vec<Push>>, Stop> {
        self.clear();
        self.by_moves = matches!(mode, Mode::Moves { .. });
        self.exact = matches!(mode, Mode::FewestPushes | Mode::Moves { weight: 4, .. });
        let board = self.board;
        let Some((mut boxes, h0)) = self.root(start, mode) else {
            return Ok(None);
        };
        let mut open = BinaryHeap::new();
        open.push(Reverse((
            Self::priority(mode, 0, 0, h0, self.owed[0]),
            0u32,
        )));
        let work_before = self.work;
        // The clock is read every 1024 units of work, nodes and the
        // matching's cost alike, so a level of 100 boxes stops on time too.
        let mut next_clock = self.work;
        self.frozen.stop = match (self.soft_stop, self.budget.time_limit) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let matching_cost = (self.k as u64).pow(3) >> 14;
        let mut child = vec![0u16; self.k];
        while let Some(Reverse((priority, id))) = open.pop() {
            let i = id as usize;
            let (g, m, h) = (self.pushes[i], self.moves[i], self.bound[i]);
            if self.closed[i] || priority != Self::priority(mode, g, m, h, self.owed[i]) {
                continue; // expanded already, or superseded by a cheaper path
            }
            self.closed[i] = true;
            if h == 0 && self.state_boxes(id).iter().all(|&b| board.goal[b as usize]) {
                return Ok(Some(self.path(id)));
            }
            if mode == Mode::FewestPushes {
                self.proven = self.proven.max(g + h);
            }
            self.tick(work_before.saturating_add(limit), &mut next_clock)?;
            boxes.copy_from_slice(self.state_boxes(id));
            for &b in &boxes {
                self.occupied[b as usize] = true;
            }
            let lowest = if self.by_moves {
                self.flood_walking(self.player[i] as usize)
            } else {
                self.flood(self.player[i] as usize)
            };
            let reach_epoch = self.epoch;
            for &c in &self.queue {
                self.reach[c as usize] = reach_epoch;
            }
            let children = self.pushes_from(&boxes, reach_epoch, mode);
            for &(bi, b, d, to, walk) in &children {
                self.last_rematch = None;
                let push = Pushed {
                    id,
                    bi,
                    b,
                    to,
                    reach_epoch,
                    lowest,
                };
                let Some(((h, t, owed), key_player)) =
                    self.after_push(mode, &boxes, push, &mut child, matching_cost)
                else {
                    continue;
                };
                let (g2, m2) = (g + 1, m + walk + 1);
                if let Mode::Moves { cap, .. } = mode
                    && g2 + h > cap
                {
                    continue;
                }
                if let Some(cid) = self.insert(
                    &child,
                    key_player,
                    id,
                    (b as u16, d as u8),
                    g2,
                    m2,
                    (h, t, owed),
                ) {
                    open.push(Reverse((
                        Self::priority(mode, g2, m2, h, self.owed[cid as usize]),
                        cid,
                    )));
                    if let Some((row, to)) = self.last_rematch {
                        self.kept.keep(
                            (id, &self.rest, &self.matched_leaving),
                            &self.matching,
                            (cid, row, to),
                            &self.rematched,
                        );
                    }
                }
            }
            self.scratch.children = children;
            for &b in &boxes {
                self.occupied[b as usize] = false;
            }
        }
        Ok(None)
    }

    /// The fallback when the push-optimal search gave up: a greedy search
    /// for any solution, then weighted searches, each pruned by the best
    /// answer so far, for fewer pushes and then fewer moves, while `limit`
    /// (all runs together) and the time limit last. `None`: proven
    /// unsolvable.
    fn fallback(&mut self, start: &Start, limit: u64) -> Result<Option<Vec<Push>>, Stop> {
        let work_before = self.work;
        let Some(first) = self.run(start, Mode::Greedy, limit)? else {
            return Ok(None);
        };
        let cost = |search: &Self, path: &[Push]| {
            (
                path.len() as u32,
                search.board.lurd(start, path).len() as u32,
            )
        };
        let mut best = (cost(self, &first), first);
        for weight in FALLBACK_WEIGHTS {
            let left = limit.saturating_sub(self.work - work_before);
            if left == 0 {
                break;
            }
            let cap = best.0.0;
            match self.run(start, Mode::Moves { weight, cap }, left) {
                Ok(Some(path)) => {
                    let found = cost(self, &path);
                    if found < best.0 {
                        best = (found, path);
                    }
                }
                Ok(None) => {}
                Err(Stop::Budget) => break,
                Err(Stop::Timeout) => return Err(Stop::Timeout),
            }
        }
        Ok(Some(best.1))
    }

    /// The pushes leading to state `id`.
    fn path(&self, mut id: u32) -> Vec<Push> {
        let mut path = Vec::new();
        while self.parent[id as usize] != ROOT {
            path.push(self.push[id as usize]);
            id = self.parent[id as usize];
        }
        path.reverse();
        path
    }
}
