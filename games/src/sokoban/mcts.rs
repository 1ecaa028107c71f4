//! `method = "mcts"`: the source's generator (Kartal, Sohre & Guy, with the
//! seed's push alteration, search-space reduction and hard-coded cut-outs).
//!
//! A branch of the tree is a sequence of alterations on a board that starts as
//! all walls with the player at the centre:
//! - construction: a cut-out (first move only: one of the 12 pentominoes,
//!   standing for the first five delete layers), delete a wall next to floor,
//!   place a box on floor, freeze (from layer 9 with 3 to 7 boxes, or when
//!   nothing else is possible);
//! - play: walk (preferring tiles already used) to a box and push it once, or
//!   evaluate; no push available leaves only evaluate.
//!
//! Evaluate restores the frozen start; goals are where the boxes ended; boxes
//! never pushed and tiles never used become walls. The score is the source's,
//! plus a term for the boxes' displacement, start cells matched to goals at
//! the least total distance (`displacement_weight`, 0 for the source's alone); by default each seed
//! draws its box count (`draw_boxes`), so that a pack is not all boxes at the
//! most and pushes at the fewest, which the source's score favours.
//! The tree grows by UCB (`C = exploration`) with ordered child expansion and
//! random roll-outs; the best puzzle seen is kept.

use std::collections::VecDeque;

use super::level::Level;
use crate::rng::Rng;
use crate::{Budget, Rejection};

/// The MCTS generator's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Mcts {
    /// Board width (inside the outer wall).
    pub width: usize,
    /// Board height (inside the outer wall).
    pub height: usize,
    /// Iterations of the tree search.
    pub iterations: u64,
    /// The UCB constant C.
    pub exploration: f64,
    /// Fewest boxes before the freeze.
    pub min_boxes: usize,
    /// Most boxes before the freeze.
    pub max_boxes: usize,
    /// The first layer (root = 1) where the freeze may be played.
    pub freeze_layer: u32,
    /// The score's normaliser.
    pub normaliser: f64,
    /// Whether each seed draws its box count from `min_boxes..=max_boxes`
    /// and the search places exactly that many (else the source's rule: any
    /// count in the range, which its score fills to the most).
    pub draw_boxes: bool,
    /// The score's weight on the pushed boxes' displacement (0: the source's
    /// score).
    pub displacement_weight: f64,
}

/// The best puzzle of a search, with its score and the score's parts.
#[derive(Debug, Clone)]
pub struct Found {
    /// The level (cropped to its walls).
    pub level: Level,
    /// The source's score.
    pub score: f64,
    /// Box count metric (boxes).
    pub box_count: f64,
    /// Congestion metric, before its weight.
    pub congestion: f64,
    /// Tiles in no uniform 3x3 block.
    pub non_uniform: f64,
    /// The pushed boxes' start cells matched to the goals at the least total
    /// distance (Manhattan): a lower bound on the pushes.
    pub displacement: f64,
    /// Iterations run.
    pub iterations: u64,
    /// Tree nodes at the end.
    pub tree_nodes: usize,
}

/// The 12 free pentominoes (F I L N P T U V W X Y Z), cells as (x, y).
pub const PENTOMINOES: [[(u8, u8); 5]; 12] = [
    [(1, 0), (2, 0), (0, 1), (1, 1), (1, 2)],
    [(0, 0), (1, 0), (2, 0), (3, 0), (4, 0)],
    [(0, 0), (0, 1), (0, 2), (0, 3), (1, 3)],
    [(0, 0), (0, 1), (1, 1), (1, 2), (1, 3)],
    [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2)],
    [(0, 0), (1, 0), (2, 0), (1, 1), (1, 2)],
    [(0, 0), (2, 0), (0, 1), (1, 1), (2, 1)],
    [(0, 0), (0, 1), (0, 2), (1, 2), (2, 2)],
    [(0, 0), (0, 1), (1, 1), (1, 2), (2, 2)],
    [(1, 0), (0, 1), (1, 1), (2, 1), (1, 2)],
    [(1, 0), (0, 1), (1, 1), (1, 2), (1, 3)],
    [(0, 0), (1, 0), (1, 1), (1, 2), (2, 2)],
];

/// Pushes one play phase may hold before only evaluate is left.
const MAX_PUSHES: u16 = 64;

/// An alteration, packed: kind in the top 3 bits, a cell (and direction) below.
type Alteration = u16;
const CUT_OUT: u16 = 0 << 13;
const DELETE: u16 = 1 << 13;
const PLACE: u16 = 2 << 13;
const FREEZE: u16 = 3 << 13;
const PUSH: u16 = 4 << 13;
const EVALUATE: u16 = 5 << 13;
const KIND: u16 = 7 << 13;

const NONE: u32 = u32::MAX;
const NO_BOX: u8 = u8::MAX;

/// The source's score and its parts.
struct Score {
    score: f64,
    box_count: f64,
    congestion: f64,
    non_uniform: f64,
    displacement: f64,
}

/// A tree node: statistics and links; the board is rebuilt by replaying the
/// alterations from the root.
#[derive(Debug, Clone, Copy)]
struct Node {
    visits: u32,
    total: f32,
    first_child: u32,
    next_sibling: u32,
    alteration: Alteration,
    /// Alterations available here (`u16::MAX` until first expanded).
    options: u16,
    expanded: u16,
}

/// Most cells of the grid (board plus wall ring): one bit each in a `u128`.
pub const MAX_CELLS: usize = 128;

/// Most boxes a board holds.
const MAX_BOXES: usize = 16;

/// A board under construction or play, as bit sets over the grid: the board
/// with a wall ring around it, so every board cell has four neighbours.
#[derive(Debug, Clone, Copy)]
struct Board {
    grid_width: u32,
    cells: u32,
    /// Board cells (not the ring).
    inner: u128,
    floor: u128,
    boxes: u128,
    used: u128,
    box_at: [u8; MAX_CELLS],
    /// Current box cells, by box.
    pos: [u8; MAX_BOXES],
    /// Box cells at the freeze.
    start: [u8; MAX_BOXES],
    /// Per box: (min x, min y, max x, max y) of its path.
    span: [[u8; 4]; MAX_BOXES],
    count: u8,
    /// Boxes pushed at least once, a bit each.
    pushed: u16,
    player: u8,
    player_start: u8,
    frozen: bool,
    /// Layers below the root (the cut-out counts as four).
    depth: u32,
    pushes: u16,
}

fn bit(c: usize) -> u128 {
    1u128 << c
}

/// The cells next to any cell of `m`.
fn around(m: u128, gw: u32) -> u128 {
    (m << 1) | (m >> 1) | (m << gw) | (m >> gw)
}

/// The cells of `passable` connected to `from` (which is kept).
fn flood(from: u128, passable: u128, gw: u32) -> u128 {
    let mut r = from;
    loop {
        let next = ((r | around(r, gw)) & passable) | from;
        if next == r {
            return r;
        }
        r = next;
    }
}

/// The cells of `m` in ascending order.
fn cells_of(mut m: u128) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let c = m.trailing_zeros() as usize;
            m &= m - 1;
            c
        })
    })
}

impl Mcts {
    /// Runs the search; the best puzzle found.
    pub fn generate(&self, rng: &mut Rng, budget: &Budget) -> Result<Found, Rejection> {
        // With the count drawn, every puzzle of the search has as many boxes,
        // so the score's other terms choose among them.
        let drawn;
        let params = if self.draw_boxes {
            let boxes = self.min_boxes + rng.index(self.max_boxes - self.min_boxes + 1);
            drawn = Mcts {
                min_boxes: boxes,
                max_boxes: boxes,
                ..self.clone()
            };
            &drawn
        } else {
            self
        };
        let root = Board::new(self.width, self.height);
        let mut tree = Tree {
            params,
            nodes: vec![Node {
                visits: 0,
                total: 0.0,
                first_child: NONE,
                next_sibling: NONE,
                alteration: EVALUATE,
                options: u16::MAX,
                expanded: 0,
            }],
            best: None,
            path: Vec::new(),
            scratch: Scratch::new(),
            cut_outs: self.cut_outs(&root),
        };
        for iteration in 0..self.iterations {
            if iteration % 1024 == 1023 && budget.expired() {
                return Err(Rejection::Timeout);
            }
            let mut board = root;
            tree.iterate(&mut board, rng);
        }
        let tree_nodes = tree.nodes.len();
        match tree.best {
            Some(mut found) => {
                found.iterations = self.iterations;
                found.tree_nodes = tree_nodes;
                Ok(found)
            }
            None => Err(Rejection::refused(super::reasons::NO_PUSHED_BOX, "")),
        }
    }

    /// The cut-outs that fit the board, as cell sets around the centre.
    fn cut_outs(&self, board: &Board) -> Vec<u128> {
        let (cx, cy) = (self.width / 2, self.height / 2);
        let gw = board.grid_width as usize;
        PENTOMINOES
            .iter()
            .filter_map(|shape| {
                let bw = shape.iter().map(|c| c.0).max().unwrap_or(0) as f64;
                let bh = shape.iter().map(|c| c.1).max().unwrap_or(0) as f64;
                // The shape's cell nearest its bounding box's centre sits on the player.
                let anchor = shape
                    .iter()
                    .min_by(|a, b| {
                        let d = |c: &&(u8, u8)| {
                            (f64::from(c.0) - bw / 2.0).powi(2)
                                + (f64::from(c.1) - bh / 2.0).powi(2)
                        };
                        d(a).total_cmp(&d(b))
                    })
                    .copied()?;
                shape.iter().try_fold(0u128, |mask, &(x, y)| {
                    let bx = (cx + x as usize).checked_sub(anchor.0 as usize)?;
                    let by = (cy + y as usize).checked_sub(anchor.1 as usize)?;
                    (bx < self.width && by < self.height)
                        .then(|| mask | bit((by + 1) * gw + bx + 1))
                })
            })
            .collect()
    }
}

/// Buffers of the walk search (0-1 breadth-first), indexed by cell.
struct Scratch {
    cost: [u16; MAX_CELLS],
    from: [u8; MAX_CELLS],
    seen: [u32; MAX_CELLS],
    queue: VecDeque<u8>,
    epoch: u32,
}

impl Scratch {
    fn new() -> Scratch {
        Scratch {
            cost: [0; MAX_CELLS],
            from: [0; MAX_CELLS],
            seen: [0; MAX_CELLS],
            queue: VecDeque::with_capacity(MAX_CELLS),
            epoch: 0,
        }
    }
}

struct Tree<'a> {
    params: &'a Mcts,
    nodes: Vec<Node>,
    best: Option<Found>,
    path: Vec<u32>,
    scratch: Scratch,
    cut_outs: Vec<u128>,
}

/// The alterations available on a board, in their fixed order, without
/// listing them: construction as cell sets, play as a short list.
enum Options {
    CutOuts(u16),
    Construction {
        delete: u128,
        place: u128,
        freeze: bool,
    },
    Play {
        pushes: [Alteration; 4 * MAX_BOXES],
        count: usize,
    },
}

impl Options {
    fn len(&self) -> usize {
        match self {
            Options::CutOuts(n) => *n as usize,
            Options::Construction {
                delete,
                place,
                freeze,
            } => (delete.count_ones() + place.count_ones()) as usize + usize::from(*freeze),
            // Evaluate comes first.
            Options::Play { count, .. } => 1 + count,
        }
    }

    /// The `k`-th alteration.
    fn get(&self, mut k: usize) -> Alteration {
        match self {
            Options::CutOuts(_) => CUT_OUT | k as u16,
            Options::Construction { delete, place, .. } => {
                for (set, kind) in [(*delete, DELETE), (*place, PLACE)] {
                    let n = set.count_ones() as usize;
                    if k < n {
                        let c = cells_of(set).nth(k).unwrap_or(0);
                        return kind | c as u16;
                    }
                    k -= n;
                }
                FREEZE
            }
            Options::Play { pushes, .. } => {
                if k == 0 {
                    EVALUATE
                } else {
                    pushes[k - 1]
                }
            }
        }
    }
}

impl Tree<'_> {
    /// One iteration: select, expand, roll out, back-propagate.
    fn iterate(&mut self, board: &mut Board, rng: &mut Rng) {
        self.path.clear();
        let mut node = 0u32;
        self.path.push(node);
        let score = loop {
            let n = self.nodes[node as usize];
            if n.alteration == EVALUATE && node != 0 {
                break self.evaluate(board);
            }
            if n.options == u16::MAX || n.expanded < n.options {
                let options = self.available(board);
                self.nodes[node as usize].options = options.len() as u16;
                let alteration = options.get(n.expanded as usize);
                let child = self.nodes.len() as u32;
                self.nodes.push(Node {
                    visits: 0,
                    total: 0.0,
                    first_child: NONE,
                    next_sibling: n.first_child,
                    alteration,
                    options: u16::MAX,
                    expanded: 0,
                });
                let parent = &mut self.nodes[node as usize];
                parent.first_child = child;
                parent.expanded += 1;
                self.path.push(child);
                self.apply(board, alteration);
                break self.roll_out(board, rng, alteration);
            }
            node = self.select(node);
            self.path.push(node);
            self.apply(board, self.nodes[node as usize].alteration);
        };
        for &id in &self.path {
            let n = &mut self.nodes[id as usize];
            n.visits += 1;
            n.total += score as f32;
        }
    }

    /// The child with the highest UCB value (first on ties).
    fn select(&self, parent: u32) -> u32 {
        let ln_parent = f64::from(self.nodes[parent as usize].visits.max(1)).ln();
        let c = self.params.exploration;
        let mut best = (f64::NEG_INFINITY, NONE);
        let mut child = self.nodes[parent as usize].first_child;
        while child != NONE {
            let n = &self.nodes[child as usize];
            let visits = f64::from(n.visits.max(1));
            let ucb = f64::from(n.total) / visits + c * (ln_parent / visits).sqrt();
            if ucb > best.0 {
                best = (ucb, child);
            }
            child = n.next_sibling;
        }
        best.1
    }

    /// Random alterations until evaluate; the score.
    fn roll_out(&mut self, board: &mut Board, rng: &mut Rng, last: Alteration) -> f64 {
        if last == EVALUATE {
            return self.evaluate(board);
        }
        loop {
            let options = self.available(board);
            let alteration = options.get(rng.index(options.len()));
            if alteration == EVALUATE {
                return self.evaluate(board);
            }
            self.apply(board, alteration);
        }
    }

    /// The alterations available on `board`.
    fn available(&self, board: &Board) -> Options {
        let p = self.params;
        if board.frozen {
            let mut pushes = [0; 4 * MAX_BOXES];
            let count = if board.pushes < MAX_PUSHES {
                board.pushes_available(&mut pushes)
            } else {
                0
            };
            return Options::Play { pushes, count };
        }
        if board.depth == 0 && !self.cut_outs.is_empty() {
            return Options::CutOuts(self.cut_outs.len() as u16);
        }
        let delete = board.inner & !board.floor & around(board.floor, board.grid_width);
        let place = if (board.count as usize) < p.max_boxes {
            board.floor & !board.boxes & !bit(board.player as usize)
        } else {
            0
        };
        let enough = board.count as usize >= p.min_boxes;
        let freeze = (enough && board.depth + 1 >= p.freeze_layer) || (delete | place) == 0;
        Options::Construction {
            delete,
            place,
            freeze,
        }
    }

    fn apply(&mut self, board: &mut Board, alteration: Alteration) {
        let cell = (alteration & !KIND) as usize;
        match alteration & KIND {
            CUT_OUT => {
                board.floor |= self.cut_outs[cell];
                board.depth += 4;
            }
            DELETE => {
                board.floor |= bit(cell);
                board.depth += 1;
            }
            PLACE => {
                let id = board.count as usize;
                board.box_at[cell] = id as u8;
                board.pos[id] = cell as u8;
                board.boxes |= bit(cell);
                board.count += 1;
                board.depth += 1;
            }
            FREEZE => board.freeze(),
            PUSH => {
                board.push(&mut self.scratch, cell >> 2, cell & 3);
                board.depth += 1;
            }
            _ => {}
        }
    }

    /// Scores the evaluated puzzle and keeps it if it is the best so far.
    fn evaluate(&mut self, board: &Board) -> f64 {
        let Some(parts) = board.score(self.params) else {
            return 0.0;
        };
        let score = parts.score;
        if self.best.as_ref().is_none_or(|b| score > b.score) {
            self.best = Some(Found {
                level: board.level(),
                score,
                box_count: parts.box_count,
                congestion: parts.congestion,
                non_uniform: parts.non_uniform,
                displacement: parts.displacement,
                iterations: 0,
                tree_nodes: 0,
            });
        }
        score
    }
}

impl Board {
    fn new(width: usize, height: usize) -> Board {
        let gw = width + 2;
        let cells = gw * (height + 2);
        assert!(cells <= MAX_CELLS, "mcts grid of {cells} cells");
        let player = (height / 2 + 1) * gw + width / 2 + 1;
        let inner = (1..=height)
            .flat_map(|y| (1..=width).map(move |x| y * gw + x))
            .fold(0u128, |m, c| m | bit(c));
        Board {
            grid_width: gw as u32,
            cells: cells as u32,
            inner,
            floor: bit(player),
            boxes: 0,
            used: 0,
            box_at: [NO_BOX; MAX_CELLS],
            pos: [0; MAX_BOXES],
            start: [0; MAX_BOXES],
            span: [[0; 4]; MAX_BOXES],
            count: 0,
            pushed: 0,
            player: player as u8,
            player_start: player as u8,
            frozen: false,
            depth: 0,
            pushes: 0,
        }
    }

    fn xy(&self, c: usize) -> (u8, u8) {
        let gw = self.grid_width as usize;
        ((c % gw) as u8, (c / gw) as u8)
    }

    /// The four neighbour offsets: left, up, right, down.
    fn deltas(&self) -> [isize; 4] {
        let gw = self.grid_width as isize;
        [-1, -gw, 1, gw]
    }

    fn freeze(&mut self) {
        self.frozen = true;
        self.start = self.pos;
        for i in 0..self.count as usize {
            let (x, y) = self.xy(self.pos[i] as usize);
            self.span[i] = [x, y, x, y];
        }
        self.player_start = self.player;
        self.used |= bit(self.player as usize);
        self.depth += 1;
    }

    /// Every push the player can reach, box by box, directions in order:
    /// `PUSH | box << 2 | dir`. Returns how many went to `out`.
    fn pushes_available(&self, out: &mut [Alteration; 4 * MAX_BOXES]) -> usize {
        let free = self.floor & !self.boxes;
        let reach = flood(bit(self.player as usize), free, self.grid_width);
        let mut n = 0;
        for &b in &self.pos[..self.count as usize] {
            for (dir, d) in self.deltas().into_iter().enumerate() {
                let stand = (b as isize - d) as usize;
                let to = (b as isize + d) as usize;
                if reach & bit(stand) != 0 && free & bit(to) != 0 {
                    out[n] = PUSH | (u16::from(b) << 2) | dir as u16;
                    n += 1;
                }
            }
        }
        n
    }

    /// Walks to the box's far side, fewest unused tiles first, marking the
    /// walk used, and pushes it once in `dir`.
    fn push(&mut self, s: &mut Scratch, b: usize, dir: usize) {
        let deltas = self.deltas();
        let stand = (b as isize - deltas[dir]) as usize;
        let free = self.floor & !self.boxes;
        let over_used = flood(bit(self.player as usize), free & self.used, self.grid_width);
        if over_used & bit(stand) == 0 {
            self.mark_walk(s, stand, free);
        }
        let id = self.box_at[b];
        let to = (b as isize + deltas[dir]) as usize;
        self.box_at[b] = NO_BOX;
        self.box_at[to] = id;
        self.boxes = (self.boxes & !bit(b)) | bit(to);
        let i = id as usize;
        self.pos[i] = to as u8;
        self.pushed |= 1 << i;
        let (x, y) = self.xy(to);
        let span = &mut self.span[i];
        *span = [
            span[0].min(x),
            span[1].min(y),
            span[2].max(x),
            span[3].max(y),
        ];
        self.used |= bit(b);
        self.player = b as u8;
        self.pushes += 1;
    }

    /// Marks used a walk to `stand` crossing the fewest unused tiles (0-1
    /// breadth-first search over `free`).
    fn mark_walk(&mut self, s: &mut Scratch, stand: usize, free: u128) {
        s.epoch += 1;
        let epoch = s.epoch;
        let player = self.player as usize;
        s.queue.clear();
        s.queue.push_back(player as u8);
        s.seen[player] = epoch;
        s.cost[player] = 0;
        while let Some(c) = s.queue.pop_front() {
            let c = c as usize;
            if c == stand {
                break;
            }
            for d in self.deltas() {
                let n = (c as isize + d) as usize;
                if free & bit(n) == 0 {
                    continue;
                }
                let used = self.used & bit(n) != 0;
                let cost = s.cost[c] + u16::from(!used);
                if s.seen[n] != epoch || cost < s.cost[n] {
                    s.seen[n] = epoch;
                    s.cost[n] = cost;
                    s.from[n] = c as u8;
                    if used {
                        s.queue.push_front(n as u8);
                    } else {
                        s.queue.push_back(n as u8);
                    }
                }
            }
        }
        let mut c = stand;
        while c != player {
            self.used |= bit(c);
            c = s.from[c] as usize;
        }
    }

    /// Pushed boxes: (start cells, end cells = goals).
    fn pushed_sets(&self) -> (u128, u128) {
        (0..self.count as usize)
            .filter(|&i| self.pushed & (1 << i) != 0)
            .fold((0, 0), |(s, g), i| {
                (
                    s | bit(self.start[i] as usize),
                    g | bit(self.pos[i] as usize),
                )
            })
    }

    /// The evaluated puzzle's walls: every cell neither used nor a goal.
    fn evaluated_walls(&self, goals: u128) -> u128 {
        let all = if self.cells == 128 {
            u128::MAX
        } else {
            (1u128 << self.cells) - 1
        };
        all & !(self.used | goals)
    }

    /// The source's score of the evaluated puzzle; `None` when no box was pushed.
    fn score(&self, p: &Mcts) -> Option<Score> {
        if !self.frozen || self.pushed == 0 {
            return None;
        }
        let (starts, goals) = self.pushed_sets();
        let walls = self.evaluated_walls(goals);
        let gw = self.grid_width as usize;
        let box_count = f64::from(self.pushed.count_ones());
        // Congestion: per pushed box, the rectangle spanning its path.
        let mut congestion = 0.0;
        for i in (0..self.count as usize).filter(|&i| self.pushed & (1 << i) != 0) {
            let [x0, y0, x1, y1] = self.span[i];
            let (rw, rh) = (usize::from(x1 - x0 + 1), usize::from(y1 - y0 + 1));
            let row = ((1u128 << rw) - 1) << x0;
            let rect = (y0 as usize..=y1 as usize).fold(0u128, |m, y| m | (row << (y * gw)));
            let nb = (rect & starts).count_ones();
            let ng = (rect & goals).count_ones();
            let no = (rect & walls).count_ones();
            let (rw, rh) = (rw as f64, rh as f64);
            let square = (rw + rh) / (rw + 1.0).max(rh + 1.0);
            congestion += f64::from(4 * nb + 4 * ng + no) / (rw * rh) * square;
        }
        // Board tiles in no 3x3 block of all walls or all floor (the ring is wall).
        let gh = self.cells as usize / gw;
        let block = 0b111 | (0b111 << gw) | (0b111 << (2 * gw));
        let mut uniform = 0u128;
        for y in 0..gh - 2 {
            for x in 0..gw - 2 {
                let m: u128 = block << (y * gw + x);
                let w = walls & m;
                if w == m || w == 0 {
                    uniform |= m;
                }
            }
        }
        let non_uniform = f64::from((self.inner & !uniform).count_ones());
        let tiles = f64::from(self.inner.count_ones());
        // The fewest pushes with walls and other boxes ignored: boxes are
        // unlabelled, so a box may take another's goal (a matching, not
        // each box's own path).
        let (starts_of, goals_of): (Vec<u32>, Vec<u32>) = (0..self.count as usize)
            .filter(|&i| self.pushed & (1 << i) != 0)
            .map(|i| (u32::from(self.start[i]), u32::from(self.pos[i])))
            .unzip();
        let gw32 = self.grid_width;
        let displacement = super::solve::hungarian(starts_of.len(), |i, j| {
            let (a, b) = (starts_of[i], goals_of[j]);
            i64::from((a % gw32).abs_diff(b % gw32) + (a / gw32).abs_diff(b / gw32))
        }) as f64;
        let score = (10.0 * box_count
            + 4.0 * congestion
            + non_uniform / tiles
            + p.displacement_weight * displacement)
            / 3.0
            / p.normaliser;
        Some(Score {
            score,
            box_count,
            congestion,
            non_uniform,
            displacement,
        })
    }

    /// The evaluated puzzle: the frozen start with goals where the pushed
    /// boxes ended, cropped to its walls.
    fn level(&self) -> Level {
        let (starts, goals) = self.pushed_sets();
        let walls = self.evaluated_walls(goals);
        let gw = self.grid_width as usize;
        Level {
            width: gw,
            height: self.cells as usize / gw,
            walls: (0..self.cells as usize)
                .map(|c| walls & bit(c) != 0)
                .collect(),
            goals: cells_of(goals).collect(),
            boxes: cells_of(starts).collect(),
            player: self.player_start as usize,
        }
        .cropped()
    }
}
