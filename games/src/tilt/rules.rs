//! The tilt rules compiled for search: a [`Board`] of precomputed moves and a
//! compact [`State`] (one byte per object) whose canonical key packs into a
//! `u64` or `u128` ([`StateKey`]). [`Board::tilt`] is the solver's hot loop; it allocates nothing.
//!
//! The slide is computed object by object: an object stops one cell short of
//! the objects ahead of it on its run, which all pile up at the run's end. This
//! gives the same result as moving every object one cell at a time, all
//! together (the literal rule, which `replay` implements; the tests compare the
//! two on every move of generated levels).

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

/// A packed state key, 6 bits per object: `u128` holds any state, `u64` one
/// with at most 10 objects.
pub(crate) trait StateKey: Copy + Eq + std::hash::Hash {
    /// Packs object cells (the caller guarantees they fit).
    fn pack(cells: &[u8]) -> Self;
    /// Unpacks into `cells`.
    fn unpack(self, cells: &mut [u8]);
}

macro_rules! state_key {
    ($t:ty) => {
        impl StateKey for $t {
            fn pack(cells: &[u8]) -> Self {
                cells.iter().fold(0, |k, &c| k << 6 | <$t>::from(c))
            }
            fn unpack(mut self, cells: &mut [u8]) {
                for c in cells.iter_mut().rev() {
                    *c = (self & 63) as u8;
                    self >>= 6;
                }
            }
        }
    };
}
state_key!(u64);
state_key!(u128);

/// The occupied cells of a state, as bits of the grid and of the transposed grid.
pub(crate) struct Lines {
    rows: u64,
    columns: u64,
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

/// The cells an object leaving a cell in a direction passes over when no other
/// object is in the way (walls, fixed actors, gates and the edge stop it).
///
/// A run lies in one row or one column, so its cells fit in one byte of the
/// occupancy (rows) or of the transposed occupancy (columns).
#[derive(Debug, Clone, Copy, Default)]
struct Run {
    /// The run's cells within its line's byte.
    line: u8,
    /// Where that byte sits in the (transposed, for columns) occupancy.
    shift: u8,
    /// How many cells long it is.
    len: u8,
    /// How many steps a fruit takes along it before it enters a puddle
    /// (`len` when there is none).
    dry: u8,
    /// Whether a hedgehog waits just past its end (a fruit reaching the end is eaten).
    into_hedgehog: bool,
}

/// The level's fixed parts, compiled for fast tilting.
pub(crate) struct Board {
    /// Per cell and direction, the run an object leaving it would take alone.
    runs: [[Run; 4]; CELLS],
    puddle: u64,
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

/// Whether two object cells are orthogonal neighbours. Objects never stand on
/// the border, so cells one index apart are in the same row.
fn adjacent(a: u8, b: u8) -> bool {
    matches!(a.abs_diff(b), 1 | STRIDE_U8)
}

const STRIDE_U8: u8 = STRIDE as u8;

/// Set bits per byte value: a portable build has no popcount instruction.
const BYTE_ONES: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = (i as u8).count_ones() as u8;
        i += 1;
    }
    t
};

/// The cell's index in the transposed (column-major) grid.
const fn transposed(c: u8) -> u8 {
    (c % 8) * 8 + c / 8
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
        let mut runs = [[Run::default(); 4]; CELLS];
        for (c, cell_runs) in runs.iter_mut().enumerate() {
            for (d, run) in cell_runs.iter_mut().enumerate() {
                let mut cur = c as u8;
                let vertical = matches!(Dir::ALL[d], Dir::Up | Dir::Down);
                let at = if vertical { transposed(cur) } else { cur };
                run.shift = at / 8 * 8;
                run.dry = u8::MAX;
                while next[usize::from(cur)][d] != BLOCKED {
                    cur = next[usize::from(cur)][d];
                    let at = if vertical { transposed(cur) } else { cur };
                    run.line |= 1 << (at % 8);
                    if puddle >> cur & 1 == 1 {
                        run.dry = run.dry.min(run.len);
                    }
                    run.len += 1;
                }
                run.dry = run.dry.min(run.len);
                run.into_hedgehog = hedgehog_ahead[usize::from(cur)] >> d & 1 == 1;
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
            runs,
            puddle,
            sights,
            mouths,
            fruits: fruits.len(),
            objects: fruits.len() + level.obstacles.len(),
        };
        let start = board.canonical(State { pos });
        (board, start)
    }

    /// The occupied cells. A removed object sets bit [`GONE`], a border cell
    /// that no run or line of sight contains, so it changes nothing.
    fn occupancy(&self, pos: &[u8; MAX_OBJECTS]) -> u64 {
        pos[..self.objects].iter().fold(0, |m, &p| m | 1 << p)
    }

    /// Tilts the board in `d`: slide, then anteaters and pairing until stable.
    ///
    /// Objects ahead of an object on its ray share its ray's end (the ray of an
    /// object further along is a suffix of it), so they pile up there and the
    /// object stops one cell short of the pile: no ordering of objects needed.
    pub(crate) fn tilt(&self, state: &State, d: Dir) -> Step {
        self.tilt_from(state, &self.lines(state), d)
    }

    /// The state's occupancy by rows and by columns, for [`Board::tilt_from`]:
    /// the solver tilts each state four ways and computes them once.
    pub(crate) fn lines(&self, state: &State) -> Lines {
        let pos = &state.pos[..self.objects];
        Lines {
            rows: pos.iter().fold(0, |m, &p| m | 1 << p),
            columns: pos.iter().fold(0, |m, &p| m | 1 << transposed(p)),
        }
    }

    /// [`Board::tilt`] given the state's [`Board::lines`].
    pub(crate) fn tilt_from(&self, state: &State, lines: &Lines, d: Dir) -> Step {
        let mut pos = state.pos;
        let di = d.index();
        let occ = match d {
            Dir::Left | Dir::Right => lines.rows,
            Dir::Up | Dir::Down => lines.columns,
        };
        let step = stride(d);
        let (mut moved, mut lost) = (false, false);
        // A removed object sits at GONE, a wall cell whose runs are empty: it stays.
        for (o, p) in pos[..self.objects].iter_mut().enumerate() {
            let c = *p;
            let run = &self.runs[usize::from(c)][di];
            let ahead = BYTE_ONES[usize::from((occ >> run.shift) as u8 & run.line)];
            let steps = run.len - ahead;
            // Branch-free: whether an object moves is a coin toss for the predictor.
            lost |= (o < self.fruits) & ((steps > run.dry) | (ahead == 0) & run.into_hedgehog);
            *p = (i32::from(c) + i32::from(steps) * step) as u8;
            moved |= steps > 0;
        }
        if lost {
            return Step::Lost;
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
    pub(crate) fn key<K: StateKey>(&self, s: &State) -> K {
        K::pack(&s.pos[..self.objects])
    }

    /// Unpacks [`Board::key`].
    pub(crate) fn unkey<K: StateKey>(&self, key: K) -> State {
        let mut pos = [GONE; MAX_OBJECTS];
        key.unpack(&mut pos[..self.objects]);
        State { pos }
    }

    /// Whether this board's states pack into a `u64` key (half the memory and
    /// hashing of a `u128`; most levels have at most 10 objects).
    pub(crate) fn fits_u64(&self) -> bool {
        self.objects * 6 <= 64
    }
}
