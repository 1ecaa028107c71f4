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

use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hash::BuildHasher;
use std::time::Instant;

use hashbrown::HashTable;
use rustc_hash::{FxBuildHasher, FxHashMap};

use super::level::{Dir, Level};
use crate::search::Bfs;
use crate::{Budget, Rejection};

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
                    Rejection::Rejected("time limit reached before any solution was found".into())
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
                return Err(Rejection::Error(
                    "the move search lost the push-optimal solution".into(),
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

/// The static analysis of a level: floor, goals, dead squares, distances.
struct Board {
    width: usize,
    floor: Vec<bool>,
    goal: Vec<bool>,
    dead: Vec<bool>,
    goals: usize,
    /// The cell of each goal, in the order of `dist`.
    goal_cells: Vec<u16>,
    /// `dist[(g * cells + c) * SIDES + s]`: pushes bringing a lone box from
    /// `c` to goal `g`, the player on side `s` of it (see `side_of`).
    dist: Vec<u16>,
    /// `side_of[c * cells + p]`: with a lone box on `c`, the part of the
    /// floor about it the player at `p` walks in, named by the first
    /// direction from `c` into it (`NO_SIDE`: none, the box is out of reach).
    /// Empty on boards too large for it: every side is then side 0, and
    /// the distances are those of a player who walks anywhere.
    side_of: Vec<u8>,
    cells: usize,
}

/// Sides a lone box has: the four directions' parts of the floor, and one
/// for a player who cannot reach it (only a box on its goal costs nothing).
const SIDES: usize = 5;
const NO_SIDE: u8 = 4;

/// Boards up to this many cells have `side_of` (a byte per pair of cells).
const SIDED_CELLS: usize = 4096;

impl Board {
    fn new(level: &Level) -> Board {
        Board::with_sides(level, level.width * level.height <= SIDED_CELLS)
    }

    /// [`Board::new`], the distances taken per side of the box or (`sided`
    /// false) for a player who walks anywhere.
    fn with_sides(level: &Level, sided: bool) -> Board {
        let cells = level.width * level.height;
        let (w, h) = (level.width, level.height);
        // Cells on the grid's rim are never floor the player can use (XSB
        // parsing and the generators close every level in walls).
        let floor: Vec<bool> = (0..cells)
            .map(|c| {
                let (x, y) = (c % w, c / w);
                !level.walls[c] && x > 0 && y > 0 && x + 1 < w && y + 1 < h
            })
            .collect();
        let mut goal = vec![false; cells];
        for &g in &level.goals {
            goal[g] = true;
        }
        let mut board = Board {
            width: w,
            floor,
            goal,
            dead: vec![true; cells],
            goals: level.goals.len(),
            goal_cells: level.goals.iter().map(|&g| g as u16).collect(),
            dist: vec![FAR; level.goals.len() * cells * SIDES],
            side_of: Vec::new(),
            cells,
        };
        // For each cell, the parts the floor falls into with a box on it.
        // `around[c][d]`: the side of the neighbour in direction d.
        let mut around = vec![[NO_SIDE; 4]; cells];
        let mut queue = Vec::with_capacity(cells);
        if sided {
            board.side_of = vec![NO_SIDE; cells * cells];
        }
        for c in (0..cells).filter(|&c| board.floor[c]) {
            for d in 0..4 {
                let n = step(c, d, w);
                if !board.floor[n] || around[c][d] != NO_SIDE {
                    continue;
                }
                if board.side_of.is_empty() {
                    around[c][d] = 0;
                    continue;
                }
                let side = &mut board.side_of[c * cells..(c + 1) * cells];
                side[c] = d as u8; // the box's cell stops the fill (reset below)
                side[n] = d as u8;
                queue.clear();
                queue.push(n);
                let mut head = 0;
                while head < queue.len() {
                    let x = queue[head];
                    head += 1;
                    for dd in 0..4 {
                        let y = step(x, dd, w);
                        if board.floor[y] && side[y] == NO_SIDE {
                            side[y] = d as u8;
                            queue.push(y);
                        }
                    }
                }
                side[c] = NO_SIDE;
                for (e, slot) in around[c].iter_mut().enumerate() {
                    let m = step(c, e, w);
                    if side[m] == d as u8 && board.floor[m] {
                        *slot = d as u8;
                    }
                }
            }
        }
        // Pull each goal's box backwards: a box on `y`, the player on side
        // `s`, came from `x = y - d` pushed in direction d if the player
        // stood at `x - d` and `x` is on side `s` of `y`.
        for (g, &goal_cell) in level.goals.iter().enumerate() {
            let dist = &mut board.dist[g * cells * SIDES..(g + 1) * cells * SIDES];
            queue.clear();
            for s in 0..SIDES {
                if s == usize::from(NO_SIDE) || around[goal_cell].contains(&(s as u8)) {
                    dist[goal_cell * SIDES + s] = 0;
                    queue.push(goal_cell * SIDES + s);
                }
            }
            let mut head = 0;
            while head < queue.len() {
                let state = queue[head];
                head += 1;
                let (y, s) = (state / SIDES, state % SIDES);
                for d in 0..4 {
                    let back = (d + 2) % 4;
                    let x = step(y, back, w);
                    if !board.floor[x] || usize::from(around[y][back]) != s {
                        continue;
                    }
                    let stood = step(x, back, w);
                    if !board.floor[stood] {
                        continue;
                    }
                    let from = x * SIDES + usize::from(around[x][back]);
                    if dist[from] == FAR {
                        dist[from] = dist[state] + 1;
                        queue.push(from);
                    }
                }
            }
            for (state, &dd) in dist.iter().enumerate() {
                if dd != FAR {
                    board.dead[state / SIDES] = false;
                }
            }
        }
        board
    }

    /// This board with the boxes on `frozen` (sorted goal cells) as walls and
    /// their goals gone: what the other boxes play on once those can never
    /// move.
    fn with_frozen(&self, frozen: &[u16]) -> Board {
        let is_frozen = |c: usize| frozen.binary_search(&(c as u16)).is_ok();
        let level = Level {
            width: self.width,
            height: self.cells / self.width,
            walls: (0..self.cells)
                .map(|c| !self.floor[c] || is_frozen(c))
                .collect(),
            goals: (0..self.cells)
                .filter(|&c| self.goal[c] && !is_frozen(c))
                .collect(),
            boxes: Vec::new(),
            player: 0,
        };
        Board::new(&level)
    }

    /// Whether every goal of this board is reached from the same cells, on
    /// some side, as on `other`, which is this board without a wall on `x`.
    fn reaches_as(&self, other: &Board, x: usize) -> bool {
        let reaches = |board: &Board, g: usize, c: usize| {
            let at = (g * board.cells + c) * SIDES;
            board.dist[at..at + SIDES].iter().any(|&d| d != FAR)
        };
        self.goal_cells.iter().enumerate().all(|(g, cell)| {
            let Some(h) = other.goal_cells.iter().position(|c| c == cell) else {
                return false;
            };
            (0..self.cells).all(|c| c == x || reaches(self, g, c) == reaches(other, h, c))
        })
    }

    /// Bytes the board's tables take.
    fn bytes(&self) -> usize {
        self.side_of.len() + 2 * self.dist.len() + 3 * self.cells
    }

    /// The side of a lone box on `c` that the player at `p` walks on.
    fn side(&self, c: usize, p: usize) -> usize {
        if self.side_of.is_empty() {
            0
        } else {
            usize::from(self.side_of[c * self.cells + p])
        }
    }

    fn step(&self, c: usize, d: usize) -> usize {
        step(c, d, self.width)
    }

    /// The costs of matching `boxes` to goals (lone-box push distances, the
    /// player at `player`), the box of row `moved` standing at `to` instead
    /// (none: `usize::MAX`). A push leaves the other boxes' sides as they
    /// were: the player walked to it without crossing them.
    fn matching_cost<'b>(
        &'b self,
        boxes: &'b [u16],
        player: usize,
        moved: usize,
        to: u16,
    ) -> impl Fn(usize, usize) -> i64 + 'b {
        move |i, j| {
            let at = usize::from(if i == moved { to } else { boxes[i] });
            match self.dist[(j * self.cells + at) * SIDES + self.side(at, player)] {
                FAR => UNMATCHED,
                d => i64::from(d),
            }
        }
    }

    /// The minimum-cost matching of boxes to goals, the player at `player`;
    /// `None` when no perfect matching exists.
    fn lower_bound(&self, boxes: &[u16], player: usize) -> Option<u32> {
        let n = boxes.len();
        debug_assert_eq!(n, self.goals);
        let total = hungarian(n, self.matching_cost(boxes, player, usize::MAX, 0));
        (total < UNMATCHED).then_some(total as u32)
    }

    /// Whether the box just pushed to `to` is frozen in a group holding a box
    /// off its goal. `occupied` marks the boxes (with `to`); `wall` is scratch
    /// (all false on entry and exit).
    fn freeze_deadlock(&self, to: usize, occupied: &[bool], wall: &mut [bool]) -> bool {
        let mut group = Vec::new();
        self.frozen(to, occupied, wall, &mut group) && group.iter().any(|&b| !self.goal[b])
    }

    /// Whether the box at `b` can never move, treating cells in `wall` as walls;
    /// the boxes of the frozen group go to `group`.
    fn frozen(
        &self,
        b: usize,
        occupied: &[bool],
        wall: &mut [bool],
        group: &mut Vec<usize>,
    ) -> bool {
        let mark = group.len();
        group.push(b);
        wall[b] = true;
        let locked = [(0, 2), (1, 3)].iter().all(|&(d1, d2)| {
            let (a, c) = (self.step(b, d1), self.step(b, d2));
            let solid = |x: usize| !self.floor[x] || wall[x];
            solid(a)
                || solid(c)
                || (self.dead[a] && self.dead[c])
                || (occupied[a] && self.frozen(a, occupied, wall, group))
                || (occupied[c] && self.frozen(c, occupied, wall, group))
        });
        wall[b] = false;
        if !locked {
            group.truncate(mark);
        }
        locked
    }

    /// The LURD text of a push sequence from the start, walking shortest paths
    /// (ties broken in LURD order).
    fn lurd(&self, start: &Start, pushes: &[Push]) -> String {
        let mut occupied = vec![false; self.cells];
        for &b in &start.boxes {
            occupied[b as usize] = true;
        }
        let mut player = start.player as usize;
        let mut text = String::new();
        let mut from = vec![u8::MAX; self.cells];
        let mut queue = Vec::new();
        for &(b, d) in pushes {
            let (b, d) = (b as usize, d as usize);
            let stand = step(b, (d + 2) % 4, self.width);
            // Breadth-first from the player, remembering the step into each cell.
            from.fill(u8::MAX);
            from[player] = 4;
            queue.clear();
            queue.push(player);
            let mut head = 0;
            while head < queue.len() && from[stand] == u8::MAX {
                let c = queue[head];
                head += 1;
                for dd in 0..4 {
                    let n = self.step(c, dd);
                    if self.floor[n] && !occupied[n] && from[n] == u8::MAX {
                        from[n] = dd as u8;
                        queue.push(n);
                    }
                }
            }
            let mut walk = Vec::new();
            let mut c = stand;
            while c != player {
                let dd = from[c] as usize;
                walk.push(Dir::ALL[dd].letter(false));
                c = step(c, (dd + 2) % 4, self.width);
            }
            text.extend(walk.iter().rev());
            text.push(Dir::ALL[d].letter(true));
            occupied[b] = false;
            occupied[self.step(b, d)] = true;
            player = b;
        }
        text
    }
}

/// The neighbour of `c` in direction `d` (index into [`Dir::ALL`]: left, up,
/// right, down). Only called on cells inside the rim.
fn step(c: usize, d: usize, width: usize) -> usize {
    match d {
        0 => c - 1,
        1 => c - width,
        2 => c + 1,
        _ => c + width,
    }
}

/// A cost no real matching reaches.
const UNMATCHED: i64 = 1 << 32;

/// The minimum total cost of a perfect assignment of `n` rows to `n` columns
/// (Hungarian method with potentials, O(n^3)). Up to 31 rows its scratch is on
/// the stack: the MCTS generator calls it once a roll-out.
pub(super) fn hungarian(n: usize, cost: impl Fn(usize, usize) -> i64) -> i64 {
    const STACK: usize = 32;
    if n < STACK {
        let (mut u, mut v, mut minv) = ([0i64; STACK], [0i64; STACK], [0i64; STACK]);
        let (mut way, mut p) = ([0usize; STACK], [0usize; STACK]);
        let mut used = [false; STACK];
        let m = n + 1;
        hungarian_in(
            n,
            &cost,
            Scratch {
                u: &mut u[..m],
                v: &mut v[..m],
                way: &mut way[..m],
                p: &mut p[..m],
                minv: &mut minv[..m],
                used: &mut used[..m],
            },
        )
    } else {
        Matching::default().solve(n, &cost)
    }
}

/// The Hungarian method's arrays, `n + 1` long each.
/// `cost` with the boxes on `leaving` (the cell of row `i` is `cell(i)`)
/// charged two pushes on their own goals, the only goals a box is 0 from.
fn charge<'c>(
    cost: &'c impl Fn(usize, usize) -> i64,
    cell: impl Fn(usize) -> u16 + 'c,
    leaving: &'c [u16],
) -> impl Fn(usize, usize) -> i64 + 'c {
    move |i, j| match cost(i, j) {
        0 if leaving.contains(&cell(i)) => 2,
        c => c,
    }
}

struct Scratch<'a> {
    u: &'a mut [i64],
    v: &'a mut [i64],
    way: &'a mut [usize],
    /// `p[j]`: the row matched to column j (1-based; 0 = none).
    p: &'a mut [usize],
    minv: &'a mut [i64],
    used: &'a mut [bool],
}

/// The costs of `n` rows by `n` columns, row by row: the Hungarian method
/// looks a cost up many times, and the search's costs take a few look-ups
/// each.
fn fill_costs(n: usize, cost: &impl Fn(usize, usize) -> i64, matrix: &mut [i64]) {
    for (i, row) in matrix.chunks_exact_mut(n.max(1)).enumerate() {
        for (j, slot) in row.iter_mut().enumerate() {
            *slot = cost(i, j);
        }
    }
}

fn hungarian_in(n: usize, cost: &impl Fn(usize, usize) -> i64, mut s: Scratch<'_>) -> i64 {
    for i in 1..=n {
        add_row(i, n, cost, &mut s);
    }
    (1..=n).map(|j| cost(s.p[j] - 1, j - 1)).sum()
}

/// Matches row `i` (1-based), the only row without a column, along the
/// cheapest augmenting path, keeping the potentials feasible: the other
/// rows' matching stays of least cost, with row `i` added.
fn add_row(i: usize, n: usize, cost: &impl Fn(usize, usize) -> i64, s: &mut Scratch<'_>) {
    let Scratch {
        u,
        v,
        way,
        p,
        minv,
        used,
    } = s;
    // Slices of one length, so that a column is checked against it once.
    let (u, v, way, p) = (&mut u[..=n], &mut v[..=n], &mut way[..=n], &mut p[..=n]);
    let (minv, used) = (&mut minv[..=n], &mut used[..=n]);
    p[0] = i;
    let mut j0 = 0;
    minv.fill(i64::MAX);
    used.fill(false);
    loop {
        used[j0] = true;
        let i0 = p[j0];
        let mut delta = i64::MAX;
        let mut j1 = 0;
        for j in 1..=n {
            if !used[j] {
                let cur = cost(i0 - 1, j - 1) - u[i0] - v[j];
                if cur < minv[j] {
                    minv[j] = cur;
                    way[j] = j0;
                }
                if minv[j] < delta {
                    delta = minv[j];
                    j1 = j;
                }
            }
        }
        for j in 0..=n {
            if used[j] {
                u[p[j]] += delta;
                v[j] -= delta;
            } else {
                minv[j] -= delta;
            }
        }
        j0 = j1;
        if p[j0] == 0 {
            break;
        }
    }
    loop {
        let j1 = way[j0];
        p[j0] = p[j1];
        j0 = j1;
        if j0 == 0 {
            break;
        }
    }
}

/// A least-cost matching of boxes to goals kept whole (potentials and
/// assignment, 1-based, `n + 1` long each, and the costs), so that a position
/// one push away is matched again by one augmenting path, O(n^2), instead of
/// anew, O(n^3), with only the pushed box's costs taken anew.
#[derive(Default)]
struct Matching {
    /// The costs, `n` by `n`, row-major.
    costs: Vec<i64>,
    /// The row matched again's costs.
    line: Vec<i64>,
    u: Vec<i64>,
    v: Vec<i64>,
    way: Vec<usize>,
    p: Vec<usize>,
    minv: Vec<i64>,
    used: Vec<bool>,
}

impl Matching {
    fn scratch(&mut self, n: usize) -> Scratch<'_> {
        for v in [&mut self.u, &mut self.v, &mut self.minv] {
            v.resize(n + 1, 0);
        }
        self.way.resize(n + 1, 0);
        self.p.resize(n + 1, 0);
        self.used.resize(n + 1, false);
        Scratch {
            u: &mut self.u,
            v: &mut self.v,
            way: &mut self.way,
            p: &mut self.p,
            minv: &mut self.minv,
            used: &mut self.used,
        }
    }

    /// Matches `n` rows anew; the total cost.
    fn solve(&mut self, n: usize, cost: &impl Fn(usize, usize) -> i64) -> i64 {
        let mut costs = std::mem::take(&mut self.costs);
        costs.resize(n * n, 0);
        fill_costs(n, cost, &mut costs);
        let s = self.scratch(n);
        s.u.fill(0);
        s.v.fill(0);
        s.p.fill(0);
        let total = hungarian_in(n, &|i, j| costs[i * n + j], s);
        self.costs = costs;
        total
    }

    /// `from`'s matching with row `row` (0-based) given new costs: that row
    /// leaves its column and is matched again; the total cost.
    fn rematch(
        &mut self,
        from: &Matching,
        n: usize,
        row: usize,
        cost: &impl Fn(usize, usize) -> i64,
    ) -> i64 {
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        line.extend((0..n).map(|j| cost(row, j)));
        let costs = &from.costs;
        let cost = |i: usize, j: usize| {
            if i == row { line[j] } else { costs[i * n + j] }
        };
        let mut s = self.scratch(n);
        s.u.copy_from_slice(&from.u[..=n]);
        s.v.copy_from_slice(&from.v[..=n]);
        s.p.copy_from_slice(&from.p[..=n]);
        let i = row + 1;
        if let Some(j) = s.p.iter().skip(1).position(|&r| r == i) {
            s.p[j + 1] = 0;
        }
        // Feasible for the row's new costs: no reduced cost below zero.
        s.u[i] = (1..=n)
            .map(|j| cost(row, j - 1) - s.v[j])
            .min()
            .unwrap_or(0);
        add_row(i, n, &cost, &mut s);
        let total = (1..=n).map(|j| cost(s.p[j] - 1, j - 1)).sum();
        self.line = line;
        total
    }
}

/// The matchings of the children the last expansion matched again from its
/// own: the next expansion is often one of them (deeper first among equal
/// f), and starts from its kept matching instead of matching anew.
#[derive(Default)]
struct Kept {
    /// The expanded position, its rows (boxes not frozen, sorted) and costs.
    parent: u32,
    rows: Vec<u16>,
    costs: Vec<i64>,
    /// The boxes its matching (and so its children's) charges for having
    /// to leave their goals.
    leaving: Vec<u16>,
    /// Per child: its id, the pushed box's row and new cell; its `u`, `v`
    /// and `p` (`n + 1` each) and its row's costs (`n`), in turn, in
    /// `arrays`.
    children: Vec<(u32, usize, u16)>,
    arrays: Vec<i64>,
    /// Scratch: the kept rows' places in the child's order.
    perm: Vec<usize>,
}

impl Kept {
    /// Keeps `child`'s matching (`matched`, from `parent`'s `from` over
    /// the rows `rows`).
    fn keep(
        &mut self,
        (parent, rows, leaving): (u32, &[u16], &[u16]),
        from: &Matching,
        child: (u32, usize, u16),
        matched: &Matching,
    ) {
        let n = rows.len();
        if self.parent != parent || self.children.is_empty() {
            self.parent = parent;
            self.rows.clear();
            self.rows.extend_from_slice(rows);
            self.leaving.clear();
            self.leaving.extend_from_slice(leaving);
            self.costs.clear();
            self.costs.extend_from_slice(&from.costs[..n * n]);
            self.children.clear();
            self.arrays.clear();
        }
        self.children.push(child);
        self.arrays.extend_from_slice(&matched.u[..=n]);
        self.arrays.extend_from_slice(&matched.v[..=n]);
        self.arrays
            .extend(matched.p[..=n].iter().map(|&r| r as i64));
        self.arrays.extend_from_slice(&matched.line[..n]);
    }

    /// Puts the kept matching of `id` (its rows `rest`, sorted) in `into`,
    /// rows in `rest`'s order, and the boxes it charges in `leaving`; false
    /// when none is kept.
    fn restore(
        &mut self,
        id: u32,
        rest: &[u16],
        into: &mut Matching,
        leaving: &mut Vec<u16>,
    ) -> bool {
        let n = rest.len();
        let Some(k) = self.children.iter().position(|c| c.0 == id) else {
            return false;
        };
        if n != self.rows.len() {
            return false;
        }
        let (_, row, to) = self.children[k];
        self.perm.clear();
        for i in 0..n {
            let cell = if i == row { to } else { self.rows[i] };
            match rest.binary_search(&cell) {
                Ok(at) => self.perm.push(at),
                Err(_) => return false,
            }
        }
        let stride = 4 * n + 3;
        let a = &self.arrays[k * stride..(k + 1) * stride];
        let (u, v) = (&a[..=n], &a[n + 1..2 * n + 2]);
        let (p, line) = (&a[2 * n + 2..3 * n + 3], &a[3 * n + 3..]);
        into.costs.resize(n * n, 0);
        for (i, &to_row) in self.perm.iter().enumerate() {
            let from = if i == row {
                line
            } else {
                &self.costs[i * n..(i + 1) * n]
            };
            into.costs[to_row * n..(to_row + 1) * n].copy_from_slice(from);
        }
        leaving.clear();
        leaving.extend_from_slice(&self.leaving);
        let s = into.scratch(n);
        s.u[0] = u[0];
        for (i, &to_row) in self.perm.iter().enumerate() {
            s.u[to_row + 1] = u[i + 1];
        }
        s.v.copy_from_slice(v);
        for (slot, &r) in s.p.iter_mut().zip(p) {
            *slot = match r as usize {
                0 => 0,
                r => self.perm[r - 1] + 1,
            };
        }
        true
    }
}

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

/// The positions of a finished push-optimal search: boxes and player region,
/// the pushes of the cheapest path found to each (the fewest, for those it
/// expanded; never fewer than the fewest) and its bound.
struct Known {
    k: usize,
    boxes: Vec<u16>,
    region: Vec<u16>,
    pushes: Vec<u32>,
    bound: Vec<u32>,
    index: HashTable<u32>,
}

/// Boxes frozen on goals (by walls, dead squares and each other, as the
/// freeze deadlock test finds them) can never move again: for the rest of
/// the search they are walls, and their goals are filled. A board per set of
/// such boxes, built the first time a position has it, gives the other boxes
/// the distances of that floor: goals behind them out of reach (a dead-end
/// goal corridor filled out of order is a deadlock), detours around them.
///
/// Table 0 is the level's own board. A frozen box stays frozen, so a push
/// only adds walls, and a lone box's distance with more walls is never
/// shorter: the bound stays admissible and consistent. Past
/// [`FROZEN_BOARDS_BYTES`] no board is built; a position whose set has none
/// keeps its parent's (a subset of its walls, still admissible), and the
/// bound of a position then depends on the path that found it first, so
/// the exact searches reopen a closed position reached more cheaply.
struct FrozenBoards {
    /// Bytes the boards may take; 0: none are built (the level's board
    /// only, as if no box ever froze on a goal).
    limit: usize,
    /// Board `t` is `boards[t - 1]`, its frozen cells `cells[t - 1]`.
    boards: Vec<Board>,
    cells: Vec<Vec<u16>>,
    tables: FxHashMap<Vec<u16>, u32>,
    bytes: usize,
    /// Whether a set went without its board.
    full: bool,
    /// Per table, per cell: [`FrozenBoards::plus`]'s answer once known
    /// (`PLUS_NONE` for `None`, `PLUS_UNKNOWN` before it is asked).
    plus_one: Vec<Vec<u32>>,
    /// Scratch: the set being looked up.
    set: Vec<u16>,
    /// Past this moment no board is built (a board of a large level takes
    /// a good share of a second): a time limit of `pregen solve`, never set
    /// in a pack.
    stop: Option<Instant>,
}

impl FrozenBoards {
    fn new(limit: usize) -> FrozenBoards {
        FrozenBoards {
            stop: None,
            limit,
            boards: Vec::new(),
            cells: Vec::new(),
            tables: FxHashMap::default(),
            bytes: 0,
            full: false,
            plus_one: Vec::new(),
            set: Vec::new(),
        }
    }

    /// The frozen cells of table `t` (none for the level's board).
    fn cells(&self, t: u32) -> &[u16] {
        match t {
            0 => &[],
            t => &self.cells[t as usize - 1],
        }
    }

    /// The board of table `t`, `base` being the level's.
    fn board<'b>(&'b self, t: u32, base: &'b Board) -> &'b Board {
        match t {
            0 => base,
            t => &self.boards[t as usize - 1],
        }
    }

    /// The table of the set in `self.set` (sorted); `fallback` when it has no
    /// board and the memory for one is spent.
    fn table(&mut self, board: &Board, fallback: u32) -> u32 {
        if self.set.is_empty() || self.limit == 0 {
            return 0;
        }
        self.built(board).unwrap_or_else(|| {
            self.full = true;
            fallback
        })
    }

    /// The table of the set in `self.set` (sorted, not empty), its board
    /// built if there is room for it.
    fn built(&mut self, board: &Board) -> Option<u32> {
        if let Some(&t) = self.tables.get(self.set.as_slice()) {
            return Some(t);
        }
        if !self.room(board) || self.stopped() {
            return None;
        }
        let frozen = board.with_frozen(&self.set);
        Some(self.keep(frozen))
    }

    /// Whether the time for building boards is up.
    fn stopped(&self) -> bool {
        self.stop.is_some_and(|t| Instant::now() >= t)
    }

    /// Whether another board fits in the memory left.
    fn room(&self, board: &Board) -> bool {
        let average = self.bytes / self.boards.len().max(1);
        self.bytes + average.max(board.bytes()) <= self.limit
    }

    /// Keeps `frozen`, the board of the set in `self.set`; its table.
    fn keep(&mut self, frozen: Board) -> u32 {
        self.bytes += frozen.bytes();
        self.boards.push(frozen);
        self.cells.push(self.set.clone());
        let t = self.boards.len() as u32;
        self.tables.insert(self.set.clone(), t);
        t
    }

    /// The table of table `t`'s frozen cells and the goal cell `x` (not
    /// among them); `None` when a wall on `x` takes no goal out of reach of
    /// any cell (a box on `x` then never has to leave), or when there is no
    /// room for its board.
    fn plus(&mut self, t: u32, x: u16, base: &Board) -> Option<u32> {
        if self.limit == 0 {
            return None;
        }
        let (ti, xi) = (t as usize, usize::from(x));
        if self.plus_one.len() <= ti {
            self.plus_one.resize(ti + 1, Vec::new());
        }
        if self.plus_one[ti].is_empty() {
            self.plus_one[ti] = vec![PLUS_UNKNOWN; base.cells];
        }
        match self.plus_one[ti][xi] {
            PLUS_UNKNOWN => {}
            PLUS_NONE => return None,
            known => return Some(known),
        }
        let mut set = std::mem::take(&mut self.set);
        set.clear();
        set.extend_from_slice(self.cells(t));
        let at = set.binary_search(&x).unwrap_or_else(|at| at);
        set.insert(at, x);
        self.set = set;
        let found = match self.tables.get(self.set.as_slice()) {
            Some(&tx) => Some(tx),
            None if !self.room(base) || self.stopped() => None,
            None => {
                let walled = base.with_frozen(&self.set);
                let same = walled.reaches_as(self.board(t, base), usize::from(x));
                (!same).then(|| self.keep(walled))
            }
        };
        self.plus_one[ti][xi] = found.unwrap_or(PLUS_NONE);
        found
    }
}

impl Known {
    fn find(&self, boxes: &[u16], region: u16) -> Option<usize> {
        let k = self.k;
        self.index
            .find(Search::hash(boxes, region), |&id| {
                let i = id as usize;
                self.region[i] == region && &self.boxes[i * k..(i + 1) * k] == boxes
            })
            .map(|&id| id as usize)
    }
}

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

    /// The bound of `boxes` (sorted) on table `t`, the player at `player`.
    fn bound_on(&mut self, t: u32, boxes: &[u16], player: usize) -> Option<u32> {
        self.find_leaving(t, boxes, player);
        self.matched_anew(t, boxes, player)
    }

    /// [`Search::must_leave`] into `self.leaving`.
    fn find_leaving(&mut self, t: u32, boxes: &[u16], player: usize) {
        let mut leaving = std::mem::take(&mut self.leaving);
        self.must_leave(t, boxes, player, &mut leaving);
        self.leaving = leaving;
    }

    /// [`Search::bound_on`], the boxes that must leave their goals found
    /// already (in `self.leaving`): a matching anew, in which such a box costs
    /// two pushes on its own goal (it leaves, and it or another box comes
    /// back), its lone-box distances elsewhere. Admissible: each of them
    /// must leave its goal whatever the others do. Consistent as long as a
    /// box stops having to leave only when it is pushed (which takes its
    /// cost on that goal from two to one, and no other cost falls by more
    /// than one); but the test is weaker on some tables than on others (a
    /// board unbuilt for want of memory, the quick test of
    /// [`FrozenBoards::plus`]), so the exact searches reopen a closed
    /// position reached more cheaply.
    fn matched_anew(&mut self, t: u32, boxes: &[u16], player: usize) -> Option<u32> {
        let mut rest = std::mem::take(&mut self.rest_child);
        rest.clear();
        let frozen = self.frozen.cells(t);
        rest.extend(boxes.iter().filter(|b| frozen.binary_search(b).is_err()));
        let board = self.frozen.board(t, self.board);
        let total = {
            let cost = board.matching_cost(&rest, player, usize::MAX, 0);
            let cost = charge(&cost, |i| rest[i], &self.leaving);
            self.fresh.solve(rest.len(), &cost)
        };
        self.rest_child = rest;
        (total < UNMATCHED).then_some(total as u32)
    }

    /// Finds, into `leaving` (in `boxes`' order), the boxes of `boxes` (sorted; on table `t`,
    /// the player at `player`) that sit on goals, not frozen, and cannot
    /// stay there for good: with such a box a wall too (a board per table
    /// and cell, [`FrozenBoards::plus`]), some other box not frozen reaches
    /// no goal left, or some goal without a box is reached by none. A goal
    /// box that blocks the way into a goal corridor behind it, or the only
    /// way out of a room, must make way and come back.
    fn must_leave(&mut self, t: u32, boxes: &[u16], player: usize, leaving: &mut Vec<u16>) {
        leaving.clear();
        if !self.leave_check || boxes.len() < LEAVING_MIN_BOXES {
            return;
        }
        let base = self.board;
        let mut reached = std::mem::take(&mut self.reached);
        for &x in boxes {
            if !base.goal[x as usize] || self.frozen.cells(t).binary_search(&x).is_ok() {
                continue;
            }
            let Some(tx) = self.frozen.plus(t, x, base) else {
                continue;
            };
            let (walls, board) = (self.frozen.cells(tx), self.frozen.board(tx, base));
            let cells = board.cells;
            reached.clear();
            reached.resize(board.goals, false);
            let mut stuck = false;
            for &b in boxes.iter().filter(|b| walls.binary_search(b).is_err()) {
                let at = usize::from(b);
                let side = board.side(at, player);
                let mut any = false;
                for (g, seen) in reached.iter_mut().enumerate() {
                    if board.dist[(g * cells + at) * SIDES + side] != FAR {
                        (any, *seen) = (true, true);
                    }
                }
                if !any {
                    stuck = true;
                    break;
                }
            }
            stuck = stuck
                || board
                    .goal_cells
                    .iter()
                    .zip(&reached)
                    .any(|(g, &seen)| !seen && boxes.binary_search(g).is_err());
            if stuck {
                leaving.push(x);
            }
        }
        self.reached = reached;
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

    /// Flood-fills the player's reachable cells from `from` (boxes in
    /// `occupied`); returns the lowest cell reached.
    fn flood(&mut self, from: usize) -> u16 {
        self.fill::<false>(from)
    }

    /// [`Search::flood`], with the walking distances in `walk` (what only
    /// the move search needs).
    fn flood_walking(&mut self, from: usize) -> u16 {
        self.fill::<true>(from)
    }

    /// The flood fill of [`Search::flood`], walking distances kept if `WALK`.
    fn fill<const WALK: bool>(&mut self, from: usize) -> u16 {
        self.epoch += 1;
        let epoch = self.epoch;
        // Slices of one length, so that a cell is checked against it once.
        let cells = self.board.cells;
        let width = self.board.width;
        let floor = &self.board.floor[..cells];
        let occupied = &self.occupied[..cells];
        let stamp = &mut self.stamp[..cells];
        let walk = &mut self.walk[..cells];
        let queue = &mut self.queue;
        stamp[from] = epoch;
        walk[from] = 0;
        queue.clear();
        queue.push(from as u16);
        let mut lowest = from as u16;
        let mut head = 0;
        while let Some(&c) = queue.get(head) {
            let c = usize::from(c);
            head += 1;
            for d in 0..4 {
                let n = step(c, d, width);
                if floor[n] && !occupied[n] && stamp[n] != epoch {
                    stamp[n] = epoch;
                    if WALK {
                        walk[n] = walk[c] + 1;
                    }
                    queue.push(n as u16);
                    lowest = lowest.min(n as u16);
                }
            }
        }
        lowest
    }

    /// The lowest cell of the player's region after the push of the box at
    /// `b` to `to` (boxes in `occupied` as after it), from the region before
    /// it (cells marked `reach` in `self.reach`, lowest `lowest`), without a
    /// flood fill where it can. The region before the push stays connected
    /// when `to` was out of reach, or when `to`'s free neighbours still meet
    /// around it (the eight cells about it): then the region after it is
    /// that one less `to`, plus `b`, unless `b` opens onto free cells that
    /// were out of reach.
    fn region_after_push(&mut self, b: usize, to: usize, reach: u32, lowest: u16) -> u16 {
        let board = self.board;
        let opens = (0..4).any(|d| {
            let n = board.step(b, d);
            board.floor[n] && !self.occupied[n] && self.reach[n] != reach
        });
        if !opens
            && (self.reach[to] != reach || (to != usize::from(lowest) && self.meets_around(to)))
        {
            let region = lowest.min(b as u16);
            debug_assert_eq!(region, self.flood(b), "the region after a push");
            return region;
        }
        self.flood(b)
    }

    /// Whether the free neighbours of `c` are connected through the free
    /// cells of the ring of eight about it (so `c` filled cuts nothing).
    fn meets_around(&self, c: usize) -> bool {
        let w = self.board.width;
        // Clockwise from the cell above: the even ones are the neighbours.
        let ring = [
            c - w,
            c - w + 1,
            c + 1,
            c + w + 1,
            c + w,
            c + w - 1,
            c - 1,
            c - w - 1,
        ];
        let free = ring.map(|x| self.board.floor[x] && !self.occupied[x]);
        let Some(gap) = free.iter().position(|&f| !f) else {
            return true;
        };
        // Runs of free cells, from the first gap round: those holding a
        // neighbour must be one.
        let mut runs = 0;
        let mut in_run = false;
        let mut holds = false;
        for k in 1..=8 {
            let i = (gap + k) % 8;
            if free[i] {
                in_run = true;
                holds |= i % 2 == 0;
            } else if in_run {
                runs += usize::from(holds);
                (in_run, holds) = (false, false);
            }
        }
        runs <= 1
    }

    /// The bound of the position `id` (its boxes `boxes`) after the push of
    /// box `bi` to `to` (`child`, its boxes sorted, on table `t`): from
    /// enough boxes on, when the push froze no box, `id`'s matching with that
    /// box's row matched again.
    fn child_bound(
        &mut self,
        id: u32,
        boxes: &[u16],
        bi: usize,
        to: usize,
        (child, t): (&[u16], u32),
    ) -> Option<u32> {
        // After the push the player stands where the box stood.
        let player = usize::from(boxes[bi]);
        if t != self.table[id as usize] {
            return self.bound_on(t, child, player);
        }
        // The rows: the boxes not frozen, taken once an expansion; the
        // pushed one (a frozen box has no push) at `row`.
        let mut rest = std::mem::take(&mut self.rest);
        if self.rest_of != id {
            rest.clear();
            let frozen = self.frozen.cells(t);
            rest.extend(boxes.iter().filter(|b| frozen.binary_search(b).is_err()));
            self.rest_of = id;
        }
        let n = rest.len();
        let row = rest.iter().position(|&b| b == boxes[bi]);
        let row = row.filter(|_| n >= REMATCH_MIN_BOXES);
        if row.is_some() && self.matched != id {
            let mut leaving = std::mem::take(&mut self.matched_leaving);
            if !self
                .kept
                .restore(id, &rest, &mut self.matching, &mut leaving)
            {
                let at = usize::from(self.player[id as usize]);
                self.must_leave(t, boxes, at, &mut leaving);
                let board = self.frozen.board(t, self.board);
                let cost = board.matching_cost(&rest, at, usize::MAX, 0);
                let total = self
                    .matching
                    .solve(n, &charge(&cost, |i| rest[i], &leaving));
                debug_assert!(total < UNMATCHED, "an expanded position has a matching");
            }
            self.matched_leaving = leaving;
            self.matched = id;
        }
        self.find_leaving(t, child, player);
        // The expanded position's matching, its pushed box's row matched
        // again, unless the boxes that must leave differ.
        let rematched = row
            .filter(|_| self.leaving == self.matched_leaving)
            .map(|row| {
                let board = self.frozen.board(t, self.board);
                let to = to as u16;
                let cost = board.matching_cost(&rest, player, row, to);
                let cell = |i: usize| if i == row { to } else { rest[i] };
                let cost = charge(&cost, cell, &self.leaving);
                let total = self.rematched.rematch(&self.matching, n, row, &cost);
                self.last_rematch = Some((row, to));
                (total < UNMATCHED).then_some(total as u32)
            });
        self.rest = rest;
        match rematched {
            Some(bound) => {
                debug_assert_eq!(bound, self.bound_on(t, child, player), "a matching redone");
                bound
            }
            None => self.matched_anew(t, child, player),
        }
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
        let mut boxes = start.boxes.clone();
        boxes.sort_unstable();
        for &b in &boxes {
            self.occupied[b as usize] = true;
        }
        let key_player = match mode {
            Mode::Moves { .. } => start.player,
            _ => self.flood(start.player as usize),
        };
        let t0 = self.table_of(&boxes, 0);
        for &b in &boxes {
            self.occupied[b as usize] = false;
        }
        let Some(h0) = self.bound_on(t0, &boxes, usize::from(start.player)) else {
            return Ok(None);
        };
        if mode == Mode::FewestPushes {
            self.start_bound.get_or_insert(h0);
        }
        let owed = self.owed_now();
        self.insert(&boxes, key_player, ROOT, (0, 0), 0, 0, (h0, t0, owed));
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
            self.work += 1;
            self.nodes += 1;
            if self.work - work_before > limit {
                return Err(Stop::Budget);
            }
            if self.work >= next_clock {
                next_clock = self.work + 1024;
                if self.soft_stop.is_some_and(|t| Instant::now() >= t) {
                    return Err(Stop::Budget);
                }
                if self.budget.expired() {
                    return Err(Stop::Timeout);
                }
            }
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
            let mut children = std::mem::take(&mut self.scratch.children);
            children.clear();
            for (bi, &b) in boxes.iter().enumerate() {
                let b = b as usize;
                for d in 0..4 {
                    let stand = board.step(b, (d + 2) % 4);
                    let to = board.step(b, d);
                    if self.stamp[stand] != reach_epoch
                        || !board.floor[to]
                        || self.occupied[to]
                        || board.dead[to]
                    {
                        continue;
                    }
                    // Only the move search counts the walking.
                    let walk = if self.by_moves { self.walk[stand] } else { 0 };
                    children.push((bi, b, d, to, walk));
                }
            }
            if self.pi_corrals
                && !matches!(mode, Mode::Moves { .. })
                && self.pi_corral(&boxes, reach_epoch)
            {
                let corral = &self.scratch.corral;
                children.retain(|&(bi, _, d, _, _)| corral.contains(&(bi, d)));
            }
            for &(bi, b, d, to, walk) in &children {
                self.last_rematch = None;
                self.occupied[b] = false;
                self.occupied[to] = true;
                let deadlock = board.freeze_deadlock(to, &self.occupied, &mut self.wall);
                let next = if deadlock {
                    None
                } else {
                    child.copy_from_slice(&boxes);
                    child[bi] = to as u16;
                    child.sort_unstable();
                    let moves_mode = matches!(mode, Mode::Moves { .. });
                    let region = (!moves_mode || self.known.is_some())
                        .then(|| self.region_after_push(b, to, reach_epoch, lowest));
                    let key_player = if moves_mode {
                        b as u16
                    } else {
                        region.unwrap_or(0)
                    };
                    // What the push search learnt of this position: reached
                    // there with fewer pushes, no solution of the fewest
                    // pushes passes through it this way; its bound is known.
                    let known = region.and_then(|region| {
                        let known = self.known.as_ref()?;
                        known
                            .find(&child, region)
                            .map(|i| (known.pushes[i], known.bound[i]))
                    });
                    match known {
                        Some((pushes, _)) if g + 1 > pushes => None,
                        Some((_, h)) => {
                            let t = self.table_of(&child, self.table[i]);
                            Some(((h, t, 0), key_player))
                        }
                        None => match self.find(&child, key_player) {
                            // Seen already: the bound is the boxes', stored.
                            Some(seen) => {
                                let seen = seen as usize;
                                let known = (self.bound[seen], self.table[seen], self.owed[seen]);
                                Some((known, key_player))
                            }
                            None => {
                                // The bound is a cubic matching: with many
                                // boxes it, not the expansions, is the work,
                                // and it counts against the node budget
                                // (nothing for 25 boxes or fewer).
                                self.work += matching_cost;
                                let t = self.table_of(&child, self.table[i]);
                                self.child_bound(id, &boxes, bi, to, (&child, t))
                                    .map(|h| ((h, t, self.owed_now()), key_player))
                            }
                        },
                    }
                };
                self.occupied[to] = false;
                self.occupied[b] = true;
                let Some(((h, t, owed), key_player)) = next else {
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

    /// The id of a state seen in this run.
    fn find(&self, boxes: &[u16], player: u16) -> Option<u32> {
        let k = self.k;
        let (all_boxes, players) = (&self.boxes, &self.player);
        self.index
            .find(Self::hash(boxes, player), |&id| {
                let i = id as usize;
                players[i] == player && &all_boxes[i * k..(i + 1) * k] == boxes
            })
            .copied()
    }

    /// Adds a state or improves a known one; the id to (re)open, `None` when
    /// the known path is at least as cheap.
    #[allow(clippy::too_many_arguments)]
    fn insert(
        &mut self,
        boxes: &[u16],
        player: u16,
        parent: u32,
        push: Push,
        pushes: u32,
        moves: u32,
        (bound, table, owed): (u32, u32, u8),
    ) -> Option<u32> {
        let hash = Self::hash(boxes, player);
        let k = self.k;
        let (all_boxes, players) = (&self.boxes, &self.player);
        let found = self.index.find(hash, |&id| {
            let i = id as usize;
            players[i] == player && &all_boxes[i * k..(i + 1) * k] == boxes
        });
        if let Some(&id) = found {
            let i = id as usize;
            let cheaper = if self.by_moves {
                (pushes, moves) < (self.pushes[i], self.moves[i])
            } else {
                pushes < self.pushes[i]
            };
            // A closed position is final, unless the bound may have fallen
            // along a push: a board went unbuilt ([`FrozenBoards`]), or a
            // box that had to leave its goal is no longer found to
            // ([`Search::must_leave`]).
            let charging = self.leave_check && self.k >= LEAVING_MIN_BOXES;
            let reopen = self.exact && (self.frozen.full || charging);
            if (self.closed[i] && !reopen) || !cheaper {
                return None;
            }
            self.closed[i] = false;
            self.parent[i] = parent;
            self.push[i] = push;
            self.pushes[i] = pushes;
            self.moves[i] = moves;
            return Some(id);
        }
        let id = self.player.len() as u32;
        self.boxes.extend_from_slice(boxes);
        self.player.push(player);
        self.parent.push(parent);
        self.push.push(push);
        self.pushes.push(pushes);
        self.moves.push(moves);
        self.bound.push(bound);
        self.table.push(table);
        self.owed.push(owed);
        self.closed.push(false);
        let (all_boxes, players) = (&self.boxes, &self.player);
        self.index.insert_unique(hash, id, |&id| {
            let i = id as usize;
            Self::hash(&all_boxes[i * k..(i + 1) * k], players[i])
        });
        Some(id)
    }

    /// Keeps the positions of the run just ended (a push-optimal search's)
    /// for the move search.
    fn keep_known(&mut self) {
        self.known = Some(Known {
            k: self.k,
            boxes: std::mem::take(&mut self.boxes),
            region: std::mem::take(&mut self.player),
            pushes: std::mem::take(&mut self.pushes),
            bound: std::mem::take(&mut self.bound),
            index: std::mem::take(&mut self.index),
        });
    }

    /// Whether the position has a PI-corral (boxes in `occupied`, the
    /// player's area stamped `reach`); if so, the pushes of its smallest are
    /// left in `scratch.corral`.
    ///
    /// A corral is an area of free cells the player cannot reach; its boxes
    /// are those next to it. It is a PI-corral when every push of its boxes
    /// that is not blocked until one of them moves (by a wall, a dead square,
    /// another of its boxes, or the player having to stand inside) goes into
    /// the area and can be made now, and when it is not solved (a box of it
    /// off its goal, or a goal in the area). Some box of such a corral must
    /// move in any solution, and before one does nothing else can touch the
    /// corral; so the first such push of a fewest-pushes solution can be made
    /// first instead, at the same count: only the corral's pushes need
    /// expanding, and the search stays push-optimal. (Not for fewest moves:
    /// the order of pushes changes the walking.)
    fn pi_corral(&mut self, boxes: &[u16], reach: u32) -> bool {
        let board = self.board;
        let epoch = reach;
        let mut scratch = std::mem::take(&mut self.scratch);
        let Expansion {
            next_to,
            goal_in,
            inside,
            members,
            pushes,
            corral,
            ..
        } = &mut scratch;
        // Label the unreachable free areas next to boxes.
        let mut areas = 0usize;
        goal_in.clear();
        for (bi, &b) in boxes.iter().enumerate() {
            for d in 0..4 {
                let n = board.step(b as usize, d);
                if !board.floor[n] || self.occupied[n] || self.stamp[n] == epoch {
                    continue;
                }
                if self.area_stamp[n] != epoch {
                    // A new area: fill it.
                    let id = areas;
                    areas += 1;
                    if next_to.len() < areas {
                        next_to.push(Vec::new());
                    }
                    next_to[id].clear();
                    goal_in.push(false);
                    self.area_stamp[n] = epoch;
                    self.area[n] = id as u32;
                    self.queue.clear();
                    self.queue.push(n as u16);
                    let mut head = 0;
                    while head < self.queue.len() {
                        let c = self.queue[head] as usize;
                        head += 1;
                        goal_in[id] |= board.goal[c];
                        for dd in 0..4 {
                            let m = board.step(c, dd);
                            if board.floor[m]
                                && !self.occupied[m]
                                && self.stamp[m] != epoch
                                && self.area_stamp[m] != epoch
                            {
                                self.area_stamp[m] = epoch;
                                self.area[m] = id as u32;
                                self.queue.push(m as u16);
                            }
                        }
                    }
                }
                let id = self.area[n] as usize;
                if next_to[id].last() != Some(&bi) {
                    next_to[id].push(bi);
                }
            }
        }
        let next_to = &next_to[..areas];
        let search = &*self;
        let area_of = |c: usize| {
            (search.area_stamp[c] == epoch && board.floor[c] && !search.occupied[c])
                .then(|| search.area[c] as usize)
        };
        let mut found = false;
        for first in 0..areas {
            // The corral grows by the areas its boxes can be pushed into from
            // outside it or stood beside from, until it holds or fails.
            inside.clear();
            inside.resize(areas, false);
            inside[first] = true;
            let holds = loop {
                members.clear();
                members.resize(boxes.len(), false);
                for (a, list) in next_to.iter().enumerate() {
                    if inside[a] {
                        for &bi in list {
                            members[bi] = true;
                        }
                    }
                }
                let member_at = |c: usize| {
                    if !search.occupied[c] {
                        return None;
                    }
                    boxes
                        .iter()
                        .position(|&b| b as usize == c)
                        .map(|bi| members[bi])
                };
                pushes.clear();
                let mut grow = None;
                let mut fails = false;
                let mut unsolved = false;
                for (bi, &b) in boxes.iter().enumerate() {
                    if !members[bi] {
                        continue;
                    }
                    let b = b as usize;
                    unsolved |= !board.goal[b];
                    for d in 0..4 {
                        let stand = board.step(b, (d + 2) % 4);
                        let to = board.step(b, d);
                        // Blocked until a box of the corral moves.
                        if !board.floor[to] || !board.floor[stand] || board.dead[to] {
                            continue;
                        }
                        match (member_at(to), member_at(stand)) {
                            (Some(true), _) | (_, Some(true)) => continue,
                            (Some(false), _) | (_, Some(false)) => {
                                // Blocked by a box outside: it may move first.
                                fails = true;
                                break;
                            }
                            (None, None) => {}
                        }
                        if let Some(a) = area_of(stand) {
                            if inside[a] {
                                continue; // the player cannot stand inside
                            }
                            grow = Some(a);
                            break;
                        }
                        match area_of(to) {
                            Some(a) if inside[a] => pushes.push((bi, d)),
                            Some(a) => {
                                grow = Some(a);
                                break;
                            }
                            // Out of the corral into the player's area.
                            None => {
                                fails = true;
                                break;
                            }
                        }
                    }
                    if fails || grow.is_some() {
                        break;
                    }
                }
                if fails {
                    break false;
                }
                if let Some(a) = grow {
                    inside[a] = true;
                    continue;
                }
                let goal_inside = goal_in.iter().zip(inside.iter()).any(|(&g, &i)| g && i);
                break unsolved || goal_inside;
            };
            if holds && (!found || pushes.len() < corral.len()) {
                found = true;
                std::mem::swap(pushes, corral);
            }
        }
        if !found {
            corral.clear();
        }
        self.scratch = scratch;
        found
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
#[cfg(test)]
mod tests {
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
    /// the clock every 1024 nodes let `solve --time-limit 1` run 10 s (#52).
    #[test]
    fn issue_52_a_passed_time_limit_stops_the_search_before_any_board() {
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
        levels.extend(
            reverse_levels(0..40, 5).map(|(seed, level, _, _)| (format!("5+/{seed}"), level)),
        );
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

    /// Issue 21: the fallback's answer is never worse than the greedy search's
    /// first one, in pushes and then moves, and it often is better; phase 1's
    /// bound, wherever it stops, is at or below the proven optimum.
    #[test]
    fn the_fallback_improves_on_greedy_and_the_bound_holds_regression_21() {
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
}
