//! `method = "reverse"`: the procedure behind DeepMind's Boxoban packs
//! (gym-sokoban's room generator), for any size.
//!
//! 1. Topology: a random walk of `walk_steps` steps (turning with chance
//!    `turn_chance`) stamps one of five 3x3 masks at each position; the rim
//!    stays wall.
//! 2. The player and the goals go on random floor cells; every box starts on
//!    its goal.
//! 3. Reverse play: a depth-first search over moves and pulls (at most
//!    `reverse_depth` deep, at most `reverse_states` states) scores each state
//!    first seen by box switches (how often the pulled box changed) times the
//!    boxes' total displacement from their goals, zero while a box sits on a
//!    goal (or, unless `player_on_goal`, while the player stands on one:
//!    Boxoban levels never start so). The best state becomes the level's
//!    start.
//!
//! A topology whose best score is zero is drawn again, up to `tries` times.

use std::hash::BuildHasher;

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

use super::level::Level;
use crate::Rejection;
use crate::rng::Rng;

/// The reverse generator's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Reverse {
    /// Level width, outer wall included.
    pub width: usize,
    /// Level height, outer wall included.
    pub height: usize,
    /// Boxes (and goals).
    pub boxes: usize,
    /// Random-walk steps of the topology.
    pub walk_steps: u32,
    /// Chance of a new direction at each step.
    pub turn_chance: f64,
    /// Deepest reverse-play line.
    pub reverse_depth: u32,
    /// Most states reverse play looks at.
    pub reverse_states: usize,
    /// Topologies drawn before giving up.
    pub tries: u32,
    /// Whether the start may have the player on a goal.
    pub player_on_goal: bool,
}

/// The 3x3 masks stamped along the walk (gym-sokoban's five), row-major.
const MASKS: [[u8; 9]; 5] = [
    [0, 0, 0, 1, 1, 1, 0, 0, 0],
    [0, 1, 0, 0, 1, 0, 0, 1, 0],
    [0, 0, 0, 1, 1, 0, 0, 1, 0],
    [0, 0, 0, 1, 1, 0, 1, 1, 0],
    [0, 0, 0, 0, 1, 1, 0, 1, 0],
];

/// A generated level and its reverse-play figures.
#[derive(Debug, Clone)]
pub struct Generated {
    /// The level.
    pub level: Level,
    /// Box switches times displacement of the chosen start.
    pub score: u64,
    /// Topologies drawn.
    pub tries: u32,
}

impl Reverse {
    /// Generates one level from the random stream.
    pub fn generate(&self, rng: &mut Rng) -> Result<Generated, Rejection> {
        for attempt in 1..=self.tries {
            let floor = self.topology(rng);
            let mut cells: Vec<usize> = (0..floor.len()).filter(|&c| floor[c]).collect();
            if cells.len() < self.boxes + 1 {
                continue;
            }
            let player = cells.swap_remove(rng.index(cells.len()));
            let mut goals = Vec::with_capacity(self.boxes);
            for _ in 0..self.boxes {
                goals.push(cells.swap_remove(rng.index(cells.len())));
            }
            let mut play = Play::new(self, &floor, &goals);
            play.search(player, &goals);
            if play.best_score == 0 {
                continue;
            }
            let mut goals_sorted = goals.clone();
            goals_sorted.sort_unstable();
            let (best_player, mut best_boxes) = (play.best.0, play.best.1.clone());
            best_boxes.sort_unstable();
            let level = Level {
                width: self.width,
                height: self.height,
                walls: floor.iter().map(|&f| !f).collect(),
                goals: goals_sorted,
                boxes: best_boxes,
                player: best_player,
            };
            return Ok(Generated {
                level,
                score: play.best_score,
                tries: attempt,
            });
        }
        Err(Rejection::refused(
            super::reasons::NO_BOX_MOVED,
            format!("none off its goal in {} topologies", self.tries),
        ))
    }

    /// The random-walk floor plan (true = floor), rim walled.
    fn topology(&self, rng: &mut Rng) -> Vec<bool> {
        let (w, h) = (self.width as i64, self.height as i64);
        const DIRS: [(i64, i64); 4] = [(1, 0), (0, 1), (-1, 0), (0, -1)];
        let mut dir = DIRS[rng.index(4)];
        let mut x = 1 + rng.below((w - 1) as u64) as i64;
        let mut y = 1 + rng.below((h - 1) as u64) as i64;
        let mut floor = vec![false; self.width * self.height];
        for _ in 0..self.walk_steps {
            if rng.chance(self.turn_chance) {
                dir = DIRS[rng.index(4)];
            }
            x = (x + dir.0).clamp(1, w - 2);
            y = (y + dir.1).clamp(1, h - 2);
            let mask = &MASKS[rng.index(MASKS.len())];
            for (i, &m) in mask.iter().enumerate() {
                let (cx, cy) = (x - 1 + (i % 3) as i64, y - 1 + (i / 3) as i64);
                if m == 1 && cx > 0 && cy > 0 && cx < w - 1 && cy < h - 1 {
                    floor[(cy * w + cx) as usize] = true;
                }
            }
        }
        floor
    }
}

/// Reverse play's depth-first search.
struct Play<'a> {
    width: usize,
    floor: &'a [bool],
    goals: &'a [usize],
    max_depth: u32,
    max_states: usize,
    player_on_goal: bool,
    /// Seen states: (player, sorted boxes) flattened, `k + 1` per state.
    seen: Vec<u16>,
    index: HashTable<u32>,
    key: Vec<u16>,
    best_score: u64,
    best: (usize, Vec<usize>),
}

impl<'a> Play<'a> {
    fn new(r: &Reverse, floor: &'a [bool], goals: &'a [usize]) -> Play<'a> {
        Play {
            width: r.width,
            floor,
            goals,
            max_depth: r.reverse_depth,
            max_states: r.reverse_states,
            player_on_goal: r.player_on_goal,
            seen: Vec::new(),
            index: HashTable::new(),
            key: Vec::new(),
            best_score: 0,
            best: (0, Vec::new()),
        }
    }

    fn search(&mut self, player: usize, goals: &[usize]) {
        let mut boxes = goals.to_vec();
        self.visit(player, &mut boxes, 0, usize::MAX, self.max_depth);
    }

    /// Marks a state seen; false if it was already.
    fn first_visit(&mut self, player: usize, boxes: &[usize]) -> bool {
        let mut key = std::mem::take(&mut self.key);
        key.clear();
        key.push(player as u16);
        key.extend(boxes.iter().map(|&b| b as u16));
        key[1..].sort_unstable();
        let k = key.len();
        let hash = FxBuildHasher.hash_one(&key);
        let seen = &self.seen;
        if self
            .index
            .find(hash, |&id| {
                seen[id as usize * k..(id as usize + 1) * k] == key[..]
            })
            .is_some()
        {
            self.key = key;
            return false;
        }
        let id = (self.seen.len() / k) as u32;
        self.seen.extend_from_slice(&key);
        let seen = &self.seen;
        self.index.insert_unique(hash, id, |&id| {
            FxBuildHasher.hash_one(&seen[id as usize * k..(id as usize + 1) * k])
        });
        self.key = key;
        true
    }

    fn visit(&mut self, player: usize, boxes: &mut [usize], switches: u64, last: usize, ttl: u32) {
        if ttl == 0 || self.seen.len() / (boxes.len() + 1) >= self.max_states {
            return;
        }
        if !self.first_visit(player, boxes) {
            return;
        }
        let score = if boxes.iter().any(|b| self.goals.contains(b))
            || (!self.player_on_goal && self.goals.contains(&player))
        {
            0
        } else {
            switches * self.displacement(boxes)
        };
        if score > self.best_score {
            self.best_score = score;
            self.best = (player, boxes.to_vec());
        }
        let w = self.width as isize;
        // gym-sokoban's action order: pulls, then plain moves, each up, down,
        // left, right (a pull with no box behind is a plain move).
        for pull in [true, false] {
            for delta in [-w, w, -1, 1] {
                let to = (player as isize + delta) as usize;
                if !self.floor[to] || boxes.contains(&to) {
                    continue;
                }
                let behind = (player as isize - delta) as usize;
                let pulled = if pull {
                    boxes.iter().position(|&b| b == behind)
                } else {
                    None
                };
                match pulled {
                    Some(i) => {
                        boxes[i] = player;
                        let switches = switches + u64::from(i != last);
                        self.visit(to, boxes, switches, i, ttl - 1);
                        boxes[i] = behind;
                    }
                    None => self.visit(to, boxes, switches, last, ttl - 1),
                }
            }
        }
    }

    /// The boxes' total Manhattan distance from their own goals.
    fn displacement(&self, boxes: &[usize]) -> u64 {
        boxes
            .iter()
            .zip(self.goals)
            .map(|(&b, &g)| {
                let (bx, by) = (b % self.width, b / self.width);
                let (gx, gy) = (g % self.width, g / self.width);
                (bx.abs_diff(gx) + by.abs_diff(gy)) as u64
            })
            .sum()
    }
}
