//! `method = "mcts"`: the seed's generator (Kartal, Sohre & Guy, with the
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
//! never pushed and tiles never used become walls. The score is the seed's.
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
}

/// The best puzzle of a search, with its score and the score's parts.
#[derive(Debug, Clone)]
pub struct Found {
    /// The level (cropped to its walls).
    pub level: Level,
    /// The seed's score.
    pub score: f64,
    /// Box count metric (boxes).
    pub box_count: f64,
    /// Congestion metric, before its weight.
    pub congestion: f64,
    /// Tiles in no uniform 3x3 block.
    pub non_uniform: f64,
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

/// The seed's score and its parts.
struct Score {
    score: f64,
    box_count: f64,
    congestion: f64,
    non_uniform: f64,
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

/// A board under construction or play. The grid has a wall ring around the
/// `width x height` board, so every board cell has four neighbours.
#[derive(Debug, Clone)]
struct Board {
    grid_width: usize,
    /// Board cells (not the ring).
    inner: Vec<u16>,
    wall: Vec<bool>,
    box_at: Vec<u8>,
    /// Current box cells, by box.
    boxes: Vec<u16>,
    /// Box cells at the freeze.
    start: Vec<u16>,
    pushed: Vec<bool>,
    /// Per box: (min x, min y, max x, max y) of its path.
    span: Vec<(u8, u8, u8, u8)>,
    used: Vec<bool>,
    player: u16,
    player_start: u16,
    frozen: bool,
    /// Layers below the root (the cut-out counts as four).
    depth: u32,
    pushes: u16,
}

impl Mcts {
    /// Runs the search; the best puzzle found.
    pub fn generate(&self, rng: &mut Rng, budget: &Budget) -> Result<Found, Rejection> {
        let root = Board::new(self.width, self.height);
        let mut search = Tree {
            params: self,
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
            options: Vec::new(),
            path: Vec::new(),
            scratch: Scratch::new(root.wall.len()),
            cut_outs: self.cut_outs(&root),
        };
        let mut board = root.clone();
        for iteration in 0..self.iterations {
            if iteration % 1024 == 1023 && budget.expired() {
                return Err(Rejection::Timeout);
            }
            board.clone_from(&root);
            search.iterate(&mut board, rng);
        }
        let tree_nodes = search.nodes.len();
        match search.best {
            Some(mut found) => {
                found.iterations = self.iterations;
                found.tree_nodes = tree_nodes;
                Ok(found)
            }
            None => Err(Rejection::Rejected(
                "no puzzle with a pushed box was found".into(),
            )),
        }
    }

    /// The cut-outs that fit the board, as board cells around the centre.
    fn cut_outs(&self, board: &Board) -> Vec<Vec<u16>> {
        let (cx, cy) = (self.width / 2, self.height / 2);
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
                shape
                    .iter()
                    .map(|&(x, y)| {
                        let bx = (cx + x as usize).checked_sub(anchor.0 as usize)?;
                        let by = (cy + y as usize).checked_sub(anchor.1 as usize)?;
                        (bx < self.width && by < self.height)
                            .then(|| ((by + 1) * board.grid_width + bx + 1) as u16)
                    })
                    .collect()
            })
            .collect()
    }
}

/// Reusable buffers of the walk search.
struct Scratch {
    cost: Vec<u16>,
    from: Vec<u16>,
    queue: VecDeque<u16>,
    seen: Vec<u32>,
    epoch: u32,
}

impl Scratch {
    fn new(cells: usize) -> Scratch {
        Scratch {
            cost: vec![0; cells],
            from: vec![0; cells],
            queue: VecDeque::with_capacity(cells),
            seen: vec![0; cells],
            epoch: 0,
        }
    }
}

struct Tree<'a> {
    params: &'a Mcts,
    nodes: Vec<Node>,
    best: Option<Found>,
    options: Vec<Alteration>,
    path: Vec<u32>,
    scratch: Scratch,
    cut_outs: Vec<Vec<u16>>,
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
                let mut options = std::mem::take(&mut self.options);
                self.available(board, &mut options);
                self.nodes[node as usize].options = options.len() as u16;
                let k = self.nodes[node as usize].expanded as usize;
                let alteration = options[k];
                self.options = options;
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
        let mut options = std::mem::take(&mut self.options);
        let score = loop {
            self.available(board, &mut options);
            let alteration = options[rng.index(options.len())];
            if alteration == EVALUATE {
                break self.evaluate(board);
            }
            self.apply(board, alteration);
        };
        self.options = options;
        score
    }

    /// The alterations available on `board`, in a fixed order.
    fn available(&mut self, board: &Board, out: &mut Vec<Alteration>) {
        out.clear();
        let p = self.params;
        if board.frozen {
            out.push(EVALUATE);
            if board.pushes < MAX_PUSHES {
                board.pushes_available(&mut self.scratch, out);
            }
            return;
        }
        if board.depth == 0 && !self.cut_outs.is_empty() {
            out.extend((0..self.cut_outs.len() as u16).map(|k| CUT_OUT | k));
            return;
        }
        let gw = board.grid_width as isize;
        for &c in &board.inner {
            let c = c as usize;
            if board.wall[c]
                && [-1, 1, -gw, gw]
                    .iter()
                    .any(|&d| !board.wall[(c as isize + d) as usize])
            {
                out.push(DELETE | c as u16);
            }
        }
        if board.boxes.len() < p.max_boxes {
            for &c in &board.inner {
                let c = c as usize;
                if !board.wall[c] && board.box_at[c] == NO_BOX && c != board.player as usize {
                    out.push(PLACE | c as u16);
                }
            }
        }
        let enough = board.boxes.len() >= p.min_boxes;
        if (enough && board.depth + 1 >= p.freeze_layer) || out.is_empty() {
            out.push(FREEZE);
        }
    }

    fn apply(&mut self, board: &mut Board, alteration: Alteration) {
        let cell = (alteration & !KIND) as usize;
        match alteration & KIND {
            CUT_OUT => {
                for c in &self.cut_outs[cell] {
                    board.wall[*c as usize] = false;
                }
                board.depth += 4;
            }
            DELETE => {
                board.wall[cell] = false;
                board.depth += 1;
            }
            PLACE => {
                board.box_at[cell] = board.boxes.len() as u8;
                board.boxes.push(cell as u16);
                board.depth += 1;
            }
            FREEZE => {
                board.frozen = true;
                board.start = board.boxes.clone();
                board.pushed = vec![false; board.boxes.len()];
                board.span = board
                    .boxes
                    .iter()
                    .map(|&b| {
                        let (x, y) = board.xy(b as usize);
                        (x, y, x, y)
                    })
                    .collect();
                board.player_start = board.player;
                board.used[board.player as usize] = true;
                board.depth += 1;
            }
            PUSH => {
                board.push(&mut self.scratch, (cell >> 2) as u16, cell & 3);
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
        let player = ((height / 2 + 1) * gw + width / 2 + 1) as u16;
        let mut wall = vec![true; cells];
        wall[player as usize] = false;
        let inner = (1..=height)
            .flat_map(|y| (1..=width).map(move |x| (y * gw + x) as u16))
            .collect();
        Board {
            grid_width: gw,
            inner,
            wall,
            box_at: vec![NO_BOX; cells],
            boxes: Vec::new(),
            start: Vec::new(),
            pushed: Vec::new(),
            span: Vec::new(),
            used: vec![false; cells],
            player,
            player_start: player,
            frozen: false,
            depth: 0,
            pushes: 0,
        }
    }

    fn xy(&self, c: usize) -> (u8, u8) {
        ((c % self.grid_width) as u8, (c / self.grid_width) as u8)
    }

    fn free(&self, c: usize) -> bool {
        !self.wall[c] && self.box_at[c] == NO_BOX
    }

    /// Every push the player can reach: `PUSH | box << 2 | dir` (dir: left,
    /// up, right, down).
    fn pushes_available(&self, s: &mut Scratch, out: &mut Vec<Alteration>) {
        let gw = self.grid_width as isize;
        let deltas = [-1, -gw, 1, gw];
        s.epoch += 1;
        let epoch = s.epoch;
        s.queue.clear();
        s.queue.push_back(self.player);
        s.seen[self.player as usize] = epoch;
        while let Some(c) = s.queue.pop_front() {
            for &d in &deltas {
                let n = (c as isize + d) as usize;
                if self.free(n) && s.seen[n] != epoch {
                    s.seen[n] = epoch;
                    s.queue.push_back(n as u16);
                }
            }
        }
        for &b in &self.boxes {
            for (dir, &d) in deltas.iter().enumerate() {
                let stand = (b as isize - d) as usize;
                let to = (b as isize + d) as usize;
                if s.seen[stand] == epoch && self.free(to) {
                    out.push(PUSH | (b << 2) | dir as u16);
                }
            }
        }
    }

    /// Walks to the box's far side, fewest unused tiles first, marking the
    /// walk used, and pushes it once in `dir`.
    fn push(&mut self, s: &mut Scratch, b: u16, dir: usize) {
        let gw = self.grid_width as isize;
        let deltas = [-1, -gw, 1, gw];
        let b = b as usize;
        let stand = (b as isize - deltas[dir]) as usize;
        // 0-1 breadth-first search: stepping on an unused tile costs 1.
        s.epoch += 1;
        let epoch = s.epoch;
        s.queue.clear();
        s.queue.push_back(self.player);
        s.seen[self.player as usize] = epoch;
        s.cost[self.player as usize] = 0;
        while let Some(c) = s.queue.pop_front() {
            if c as usize == stand {
                break;
            }
            for &d in &deltas {
                let n = (c as isize + d) as usize;
                if !self.free(n) {
                    continue;
                }
                let cost = s.cost[c as usize] + u16::from(!self.used[n]);
                if s.seen[n] != epoch || cost < s.cost[n] {
                    s.seen[n] = epoch;
                    s.cost[n] = cost;
                    s.from[n] = c;
                    if self.used[n] {
                        s.queue.push_front(n as u16);
                    } else {
                        s.queue.push_back(n as u16);
                    }
                }
            }
        }
        let mut c = stand;
        while c != self.player as usize {
            self.used[c] = true;
            c = s.from[c] as usize;
        }
        let id = self.box_at[b];
        let to = (b as isize + deltas[dir]) as usize;
        self.box_at[b] = NO_BOX;
        self.box_at[to] = id;
        let i = id as usize;
        self.boxes[i] = to as u16;
        self.pushed[i] = true;
        let (x, y) = self.xy(to);
        let span = &mut self.span[i];
        *span = (span.0.min(x), span.1.min(y), span.2.max(x), span.3.max(y));
        self.used[b] = true;
        self.player = b as u16;
        self.pushes += 1;
    }

    /// The evaluated puzzle's floor: used tiles and the goals of pushed boxes.
    fn evaluated_walls(&self) -> Vec<bool> {
        let mut walls: Vec<bool> = self.used.iter().map(|&u| !u).collect();
        for (i, &pushed) in self.pushed.iter().enumerate() {
            if pushed {
                walls[self.boxes[i] as usize] = false;
            }
        }
        walls
    }

    /// The seed's score of the evaluated puzzle; `None` when no box was pushed.
    fn score(&self, p: &Mcts) -> Option<Score> {
        if !self.frozen || !self.pushed.iter().any(|&x| x) {
            return None;
        }
        let walls = self.evaluated_walls();
        let pushed = || (0..self.pushed.len()).filter(|&i| self.pushed[i]);
        let is_start = |c: usize| pushed().any(|i| self.start[i] as usize == c);
        let is_goal = |c: usize| pushed().any(|i| self.boxes[i] as usize == c);
        let box_count = pushed().count() as f64;
        // Congestion: per pushed box, the rectangle spanning its path.
        let mut congestion = 0.0;
        for i in pushed() {
            let (x0, y0, x1, y1) = self.span[i];
            let (rw, rh) = (f64::from(x1 - x0 + 1), f64::from(y1 - y0 + 1));
            let (mut nb, mut ng, mut no) = (0u32, 0u32, 0u32);
            for y in y0..=y1 {
                for x in x0..=x1 {
                    let c = y as usize * self.grid_width + x as usize;
                    nb += u32::from(is_start(c));
                    ng += u32::from(is_goal(c));
                    no += u32::from(walls[c]);
                }
            }
            let square = (rw + rh) / (rw + 1.0).max(rh + 1.0);
            congestion += f64::from(4 * nb + 4 * ng + no) / (rw * rh) * square;
        }
        // Board tiles in no 3x3 block of all walls or all floor (the ring is wall).
        let gw = self.grid_width;
        let gh = walls.len() / gw;
        let mut uniform = vec![false; walls.len()];
        for y in 0..gh - 2 {
            for x in 0..gw - 2 {
                let first = walls[y * gw + x];
                let block = (0..9).map(|i| (y + i / 3) * gw + x + i % 3);
                if block.clone().all(|c| walls[c] == first) {
                    block.for_each(|c| uniform[c] = true);
                }
            }
        }
        let non_uniform = self.inner.iter().filter(|&&c| !uniform[c as usize]).count() as f64;
        let tiles = self.inner.len() as f64;
        let score =
            (10.0 * box_count + 4.0 * congestion + non_uniform / tiles) / 3.0 / p.normaliser;
        Some(Score {
            score,
            box_count,
            congestion,
            non_uniform,
        })
    }

    /// The evaluated puzzle: the frozen start with goals where the pushed
    /// boxes ended, cropped to its walls.
    fn level(&self) -> Level {
        let pushed = (0..self.pushed.len()).filter(|&i| self.pushed[i]);
        let mut goals: Vec<usize> = pushed.clone().map(|i| self.boxes[i] as usize).collect();
        let mut boxes: Vec<usize> = pushed.map(|i| self.start[i] as usize).collect();
        goals.sort_unstable();
        boxes.sort_unstable();
        let walls = self.evaluated_walls();
        Level {
            width: self.grid_width,
            height: walls.len() / self.grid_width,
            walls,
            goals,
            boxes,
            player: self.player_start as usize,
        }
        .cropped()
    }
}
