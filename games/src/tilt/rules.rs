//! The tilt rules compiled for search: a [`Board`] of precomputed moves and a
//! compact [`State`] (one byte per object) whose canonical key packs into a
//! `u128`. [`Board::tilt`] is the solver's hot loop; it allocates nothing.
//!
//! The slide is computed object by object from the leading edge: an object's
//! final cell depends only on the objects ahead of it in its line, which have
//! already settled, so this gives the same result as moving every object one
//! cell at a time, all together (the literal rule, which `replay` implements).

use super::level::{Dir, Level, MAX_OBSTACLES, MAX_PAIRS, Pos, Terrain};

/// Cells are indexed `y * STRIDE + x`.
pub(crate) const STRIDE: usize = 8;
const CELLS: usize = STRIDE * STRIDE;
/// Most movable objects (fruits then obstacles).
pub(crate) const MAX_OBJECTS: usize = 2 * MAX_PAIRS as usize + MAX_OBSTACLES as usize;
const BLOCKED: u8 = u8::MAX;
/// Position of a removed object; cell 0 is a border wall, so no object stands there.
pub(crate) const GONE: u8 = 0;

/// Positions of the movable objects: fruits of colour c at `2c` and `2c+1`
/// (0-based colour), then obstacles. [`GONE`] marks a removed fruit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct State {
    pub(crate) pos: [u8; MAX_OBJECTS],
}

/// What one tilt did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Nothing moved: not a move.
    NoChange,
    /// A fruit got dirty or eaten: the level is lost.
    Lost,
    /// The board changed; the new state (won when no fruit is left).
    Moved(State),
}

/// The level's fixed parts, compiled for fast tilting.
pub(crate) struct Board {
    /// Cells an object leaving a cell in a direction passes over when no other
    /// object is in the way (walls, fixed actors, gates and the edge stop it).
    ray: [[u64; 4]; CELLS],
    /// The last cell of that run (the cell itself when it cannot move).
    end: [[u8; 4]; CELLS],
    /// Bit d set: moving from this cell in direction d runs into a hedgehog.
    hedgehog_ahead: [u8; CELLS],
    puddle: u64,
    /// Per direction, a cell's rank from the leading edge (0 = furthest along).
    rank: [[u8; CELLS]; 4],
    /// Per anteater: the cells of its line of sight as a mask, its gaze, and the
    /// cell in front of it.
    sights: Vec<(u64, Dir, u8)>,
    /// Cells directly in front of an anteater (a fruit there is held).
    mouths: u64,
    pub(crate) fruits: usize,
    pub(crate) objects: usize,
}

pub(crate) fn cell(p: Pos) -> u8 {
    p.y * STRIDE as u8 + p.x
}

fn adjacent(a: u8, b: u8) -> bool {
    let (ax, ay) = (a % 8, a / 8);
    let (bx, by) = (b % 8, b / 8);
    ax.abs_diff(bx) + ay.abs_diff(by) == 1
}

/// Whether cell indices grow along `d` (right, down).
fn increasing(d: Dir) -> bool {
    matches!(d, Dir::Right | Dir::Down)
}

/// Index step of one cell along `d`.
fn stride(d: Dir) -> i32 {
    let (dx, dy) = d.delta();
    dx + dy * STRIDE as i32
}

/// The nearest set cell of `mask` seen from a cell looking along `d`
/// (`mask` holds only cells ahead of it).
fn nearest(mask: u64, d: Dir) -> u8 {
    if increasing(d) {
        mask.trailing_zeros() as u8
    } else {
        63 - mask.leading_zeros() as u8
    }
}

impl Board {
    /// Compiles a well-formed level (see [`Level::check`]) and returns its start state.
    pub(crate) fn new(level: &Level) -> (Board, State) {
        let mut fixed = [false; CELLS];
        let mut hedgehog = [false; CELLS];
        for a in &level.anteaters {
            fixed[usize::from(cell(a.at))] = true;
        }
        for &h in &level.hedgehogs {
            fixed[usize::from(cell(h))] = true;
            hedgehog[usize::from(cell(h))] = true;
        }
        let mut next = [[BLOCKED; 4]; CELLS];
        let mut hedgehog_ahead = [0u8; CELLS];
        let mut puddle = 0u64;
        for y in 0..level.height {
            for x in 0..level.width {
                let p = Pos { x, y };
                let c = usize::from(cell(p));
                match level.terrain_at(p) {
                    Terrain::Wall => continue,
                    Terrain::Puddle => puddle |= 1 << c,
                    Terrain::Floor => {}
                }
                for d in Dir::ALL {
                    let Some(q) = level.step(p, d) else { continue };
                    let qc = usize::from(cell(q));
                    if level.terrain_at(q) == Terrain::Wall || level.gate_forbids(p, d) {
                        continue;
                    }
                    if hedgehog[qc] {
                        hedgehog_ahead[c] |= 1 << d.index();
                    }
                    if !fixed[qc] {
                        next[c][d.index()] = cell(q);
                    }
                }
            }
        }
        let mut ray = [[0u64; 4]; CELLS];
        let mut end = [[0u8; 4]; CELLS];
        for c in 0..CELLS {
            for d in 0..4 {
                let mut cur = c as u8;
                while next[usize::from(cur)][d] != BLOCKED {
                    cur = next[usize::from(cur)][d];
                    ray[c][d] |= 1 << cur;
                }
                end[c][d] = cur;
            }
        }
        let mut rank = [[0u8; CELLS]; 4];
        for d in Dir::ALL {
            let (dx, dy) = d.delta();
            for c in 0..CELLS as i32 {
                rank[d.index()][c as usize] = (7 - ((c % 8) * dx + (c / 8) * dy)) as u8;
            }
        }
        let mut sights = Vec::new();
        let mut mouths = 0u64;
        for a in &level.anteaters {
            let mut line = 0u64;
            let mut p = a.at;
            while let Some(q) = level.step(p, a.facing) {
                let qc = usize::from(cell(q));
                if level.terrain_at(q) == Terrain::Wall || fixed[qc] {
                    break;
                }
                line |= 1 << qc;
                p = q;
            }
            if line != 0 {
                let front = nearest(line, a.facing);
                mouths |= 1 << front;
                sights.push((line, a.facing, front));
            }
        }
        let mut pos = [GONE; MAX_OBJECTS];
        let mut fruits = level.fruits.clone();
        fruits.sort_by_key(|f| (f.colour, f.at));
        for (i, f) in fruits.iter().enumerate() {
            pos[i] = cell(f.at);
        }
        for (i, o) in level.obstacles.iter().enumerate() {
            pos[fruits.len() + i] = cell(o.at);
        }
        let board = Board {
            ray,
            end,
            hedgehog_ahead,
            puddle,
            rank,
            sights,
            mouths,
            fruits: fruits.len(),
            objects: fruits.len() + level.obstacles.len(),
        };
        let start = board.canonical(State { pos });
        (board, start)
    }

    fn occupancy(&self, pos: &[u8; MAX_OBJECTS]) -> u64 {
        pos[..self.objects]
            .iter()
            .filter(|&&p| p != GONE)
            .fold(0, |m, &p| m | 1 << p)
    }

    /// Tilts the board in `d`: slide, then anteaters and pairing until stable.
    pub(crate) fn tilt(&self, state: &State, d: Dir) -> Step {
        let mut pos = state.pos;
        let di = d.index();
        // Objects leading edge first (insertion sort: a handful of objects).
        let mut todo = [0u8; MAX_OBJECTS];
        let mut n = 0;
        for (i, &p) in pos[..self.objects].iter().enumerate() {
            if p == GONE {
                continue;
            }
            let r = self.rank[di][usize::from(p)];
            let mut j = n;
            while j > 0 && self.rank[di][usize::from(pos[usize::from(todo[j - 1])])] > r {
                todo[j] = todo[j - 1];
                j -= 1;
            }
            todo[j] = i as u8;
            n += 1;
        }
        let mut occ = self.occupancy(&pos);
        let step = stride(d);
        let mut moved = false;
        for &o in &todo[..n] {
            let c = pos[usize::from(o)];
            let ray = self.ray[usize::from(c)][di];
            let blockers = ray & occ;
            let stop = if blockers == 0 {
                self.end[usize::from(c)][di]
            } else {
                (i32::from(nearest(blockers, d)) - step) as u8
            };
            if usize::from(o) < self.fruits {
                if blockers == 0 && self.hedgehog_ahead[usize::from(stop)] >> di & 1 == 1 {
                    return Step::Lost;
                }
                let crossed = if increasing(d) {
                    ray & ((2u64 << stop) - 1)
                } else {
                    ray & !((1u64 << stop) - 1)
                };
                if crossed & self.puddle != 0 {
                    return Step::Lost;
                }
            }
            if stop != c {
                occ = occ & !(1 << c) | 1 << stop;
                pos[usize::from(o)] = stop;
                moved = true;
            }
        }
        if !moved {
            return Step::NoChange;
        }
        match self.settle(&mut pos) {
            true => Step::Moved(self.canonical(State { pos })),
            false => Step::Lost,
        }
    }

    /// Anteater pulls, then pair meetings, repeated until nothing changes.
    /// Returns false when a pulled fruit crossed a puddle.
    fn settle(&self, pos: &mut [u8; MAX_OBJECTS]) -> bool {
        loop {
            let mut pulled = !self.sights.is_empty();
            while pulled {
                pulled = false;
                let occ = self.occupancy(pos);
                for &(line, gaze, front) in &self.sights {
                    let seen = line & occ;
                    if seen == 0 {
                        continue;
                    }
                    let from = nearest(seen, gaze);
                    // Obstacles are not pulled; a fruit held by an anteater stays.
                    if from == front || self.mouths >> from & 1 == 1 {
                        continue;
                    }
                    let Some(o) = pos[..self.fruits].iter().position(|&p| p == from) else {
                        continue;
                    };
                    let between = if increasing(gaze) {
                        line & ((1u64 << from) - 1)
                    } else {
                        line & !((2u64 << from) - 1)
                    };
                    if between & self.puddle != 0 {
                        return false;
                    }
                    pos[o] = front;
                    pulled = true;
                    break;
                }
            }
            let mut met = false;
            for pair in 0..self.fruits / 2 {
                let (a, b) = (pos[2 * pair], pos[2 * pair + 1]);
                if a != GONE && b != GONE && adjacent(a, b) {
                    pos[2 * pair] = GONE;
                    pos[2 * pair + 1] = GONE;
                    met = true;
                }
            }
            if !met {
                return true;
            }
        }
    }

    /// Settles a start state (anteaters, pairs) as after a move; `None` if that loses.
    pub(crate) fn settle_start(&self, state: &State) -> Option<State> {
        let mut pos = state.pos;
        self.settle(&mut pos).then(|| self.canonical(State { pos }))
    }

    /// Same-colour fruits and all obstacles are interchangeable: sort each group.
    fn canonical(&self, mut s: State) -> State {
        for pair in 0..self.fruits / 2 {
            if s.pos[2 * pair] > s.pos[2 * pair + 1] {
                s.pos.swap(2 * pair, 2 * pair + 1);
            }
        }
        s.pos[self.fruits..self.objects].sort_unstable();
        s
    }

    /// Whether every fruit is gone.
    pub(crate) fn is_won(&self, s: &State) -> bool {
        s.pos[..self.fruits].iter().all(|&p| p == GONE)
    }

    /// Packs a canonical state into a key (6 bits per object).
    pub(crate) fn key(&self, s: &State) -> u128 {
        s.pos[..self.objects]
            .iter()
            .fold(0u128, |k, &p| k << 6 | u128::from(p))
    }

    /// Unpacks [`Board::key`].
    pub(crate) fn unkey(&self, mut key: u128) -> State {
        let mut pos = [GONE; MAX_OBJECTS];
        for i in (0..self.objects).rev() {
            pos[i] = (key & 63) as u8;
            key >>= 6;
        }
        State { pos }
    }
}
