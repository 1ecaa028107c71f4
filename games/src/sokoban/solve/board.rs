//! The static analysis of a level: floor, goals, dead squares, and the
//! lone-box push distances per side of the box.

use super::*;

/// The static analysis of a level: floor, goals, dead squares, distances.
pub(super) struct Board {
    pub(super) width: usize,
    pub(super) floor: Vec<bool>,
    pub(super) goal: Vec<bool>,
    pub(super) dead: Vec<bool>,
    pub(super) goals: usize,
    /// The cell of each goal, in the order of `dist`.
    pub(super) goal_cells: Vec<u16>,
    /// `dist[(g * cells + c) * SIDES + s]`: pushes bringing a lone box from
    /// `c` to goal `g`, the player on side `s` of it (see `side_of`).
    pub(super) dist: Vec<u16>,
    /// `side_of[c * cells + p]`: with a lone box on `c`, the part of the
    /// floor about it the player at `p` walks in, named by the first
    /// direction from `c` into it (`NO_SIDE`: none, the box is out of reach).
    /// Empty on boards too large for it: every side is then side 0, and
    /// the distances are those of a player who walks anywhere.
    pub(super) side_of: Vec<u8>,
    pub(super) cells: usize,
}

/// Sides a lone box has: the four directions' parts of the floor, and one
/// for a player who cannot reach it (only a box on its goal costs nothing).
pub(super) const SIDES: usize = 5;
pub(super) const NO_SIDE: u8 = 4;

/// Boards up to this many cells have `side_of` (a byte per pair of cells).
pub(super) const SIDED_CELLS: usize = 4096;

impl Board {
    pub(super) fn new(level: &Level) -> Board {
        Board::with_sides(level, level.width * level.height <= SIDED_CELLS)
    }

    /// [`Board::new`], the distances taken per side of the box or (`sided`
    /// false) for a player who walks anywhere.
    pub(super) fn with_sides(level: &Level, sided: bool) -> Board {
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
        board.pull_from_goals(&level.goals, &around, &mut queue);
        board
    }

    /// Each goal's box pulled backwards over the floor: the pushes from
    /// every cell and side to the goal (`dist`), and the cells from which no
    /// goal is reached (`dead`). `around[c][d]`: the side of the neighbour
    /// of `c` in direction `d` with a box on `c`.
    fn pull_from_goals(&mut self, goals: &[usize], around: &[[u8; 4]], queue: &mut Vec<usize>) {
        let (cells, w) = (self.cells, self.width);
        // Pull each goal's box backwards: a box on `y`, the player on side
        // `s`, came from `x = y - d` pushed in direction d if the player
        // stood at `x - d` and `x` is on side `s` of `y`.
        for (g, &goal_cell) in goals.iter().enumerate() {
            let dist = &mut self.dist[g * cells * SIDES..(g + 1) * cells * SIDES];
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
                    if !self.floor[x] || usize::from(around[y][back]) != s {
                        continue;
                    }
                    let stood = step(x, back, w);
                    if !self.floor[stood] {
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
                    self.dead[state / SIDES] = false;
                }
            }
        }
    }

    /// This board with the boxes on `frozen` (sorted goal cells) as walls and
    /// their goals gone: what the other boxes play on once those can never
    /// move.
    pub(super) fn with_frozen(&self, frozen: &[u16]) -> Board {
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
    pub(super) fn reaches_as(&self, other: &Board, x: usize) -> bool {
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
    pub(super) fn bytes(&self) -> usize {
        self.side_of.len() + 2 * self.dist.len() + 3 * self.cells
    }

    /// The side of a lone box on `c` that the player at `p` walks on.
    pub(super) fn side(&self, c: usize, p: usize) -> usize {
        if self.side_of.is_empty() {
            0
        } else {
            usize::from(self.side_of[c * self.cells + p])
        }
    }

    pub(super) fn step(&self, c: usize, d: usize) -> usize {
        step(c, d, self.width)
    }

    /// The costs of matching `boxes` to goals (lone-box push distances, the
    /// player at `player`), the box of row `moved` standing at `to` instead
    /// (none: `usize::MAX`). A push leaves the other boxes' sides as they
    /// were: the player walked to it without crossing them.
    pub(super) fn matching_cost<'b>(
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
    pub(super) fn lower_bound(&self, boxes: &[u16], player: usize) -> Option<u32> {
        let n = boxes.len();
        debug_assert_eq!(n, self.goals);
        let total = hungarian(n, self.matching_cost(boxes, player, usize::MAX, 0));
        (total < UNMATCHED).then_some(total as u32)
    }

    /// Whether the box just pushed to `to` is frozen in a group holding a box
    /// off its goal. `occupied` marks the boxes (with `to`); `wall` is scratch
    /// (all false on entry and exit).
    pub(super) fn freeze_deadlock(&self, to: usize, occupied: &[bool], wall: &mut [bool]) -> bool {
        let mut group = Vec::new();
        self.frozen(to, occupied, wall, &mut group) && group.iter().any(|&b| !self.goal[b])
    }

    /// Whether the box at `b` can never move, treating cells in `wall` as walls;
    /// the boxes of the frozen group go to `group`.
    pub(super) fn frozen(
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
    pub(super) fn lurd(&self, start: &Start, pushes: &[Push]) -> String {
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
pub(super) fn step(c: usize, d: usize, width: usize) -> usize {
    match d {
        0 => c - 1,
        1 => c - width,
        2 => c + 1,
        _ => c + width,
    }
}
