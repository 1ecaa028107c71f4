//! The source's tilt generator: walls grown from the border with shrinking
//! orthogonal branches (drawn one or two tiles at a time under a random
//! symmetry), free-standing internal walls, the largest free region kept, then
//! objects placed on weighted cells (corridor ends, corners, corridors, open).

use super::level::{Anteater, Dir, Fruit, Gate, Level, Look, Obstacle, Pos, Terrain};
use super::rules::Board;
use super::{Feature, TiltParams};
use crate::Rejection;
use crate::reason::Code;
use crate::rng::Rng;
use crate::search::flood;

/// The symmetry that places a wall tile's twin.
#[derive(Clone, Copy)]
enum Symmetry {
    MirrorX,
    MirrorY,
    Rotate180,
    /// Square grids only.
    Transpose,
    /// Square grids only.
    Rotate90,
}

struct Grid {
    w: i32,
    h: i32,
    wall: Vec<bool>,
}

impl Grid {
    fn idx(&self, x: i32, y: i32) -> usize {
        (y * self.w + x) as usize
    }
    fn inside(&self, x: i32, y: i32) -> bool {
        x > 0 && y > 0 && x < self.w - 1 && y < self.h - 1
    }
    fn is_wall(&self, x: i32, y: i32) -> bool {
        !self.inside(x, y) || self.wall[self.idx(x, y)]
    }
    fn set(&mut self, x: i32, y: i32) {
        if self.inside(x, y) {
            let i = self.idx(x, y);
            self.wall[i] = true;
        }
    }
    fn twin(&self, x: i32, y: i32, s: Symmetry) -> (i32, i32) {
        match s {
            Symmetry::MirrorX => (self.w - 1 - x, y),
            Symmetry::MirrorY => (x, self.h - 1 - y),
            Symmetry::Rotate180 => (self.w - 1 - x, self.h - 1 - y),
            Symmetry::Transpose => (y, x),
            Symmetry::Rotate90 => (self.w - 1 - y, x),
        }
    }
    fn free_count(&self) -> usize {
        (0..self.h)
            .flat_map(|y| (0..self.w).map(move |x| (x, y)))
            .filter(|&(x, y)| !self.is_wall(x, y))
            .count()
    }
}

const DIRS: [(i32, i32); 4] = [(0, -1), (1, 0), (0, 1), (-1, 0)];

/// Generates one tilt level from the random stream.
pub fn generate(params: &TiltParams, rng: &mut Rng) -> Result<Level, Rejection> {
    let w = i32::from(params.width) + 2;
    let h = i32::from(params.height) + 2;
    let mut grid = Grid {
        w,
        h,
        wall: vec![false; (w * h) as usize],
    };
    border_walls(&mut grid, rng);
    internal_walls(&mut grid, rng);
    keep_largest_region(&mut grid);

    let pairs = usize::from(params.pairs);
    if grid.free_count() < 2 * pairs + 2 {
        return Err(Rejection::refused(super::reasons::TOO_FEW_FREE_CELLS, ""));
    }
    let mut cells = Cells::new(&grid, rng);
    let mut level = Level {
        width: w as u8,
        height: h as u8,
        terrain: Vec::new(),
        gates: Vec::new(),
        fruits: Vec::new(),
        obstacles: Vec::new(),
        anteaters: Vec::new(),
        hedgehogs: Vec::new(),
    };
    if params.has(Feature::Puddles) {
        for _ in 0..rng.between(0, 2) {
            let i = rng.index(cells.at.len());
            cells.puddle[i] = true;
        }
    }
    cells.place_fruits(params.pairs, &mut level, rng)?;
    if params.has(Feature::Obstacles) {
        cells.place_obstacles(params.obstacle_density, &mut level, rng);
    }
    cells.place_actors(params, &grid, &mut level, rng);
    if params.has(Feature::Gates) {
        cells.place_gates(&grid, &mut level, rng);
    }
    level.terrain = cells.terrain(&grid);
    checked(params, level)
}

/// What a cell is drawn for: each has its weights.
#[derive(Clone, Copy)]
enum Piece {
    Fruit,
    Obstacle,
    Actor,
}

/// The free cells of a grid and what is placed on them: objects are drawn
/// on weighted cells, each cell taken once.
struct Cells {
    /// The free cells, row by row.
    at: Vec<(i32, i32)>,
    /// A fruit's weight per cell: corridor ends, then corners, are favoured.
    fruit_weight: Vec<u32>,
    /// An obstacle's weight per cell, drawn once per level.
    obstacle_weight: Vec<u32>,
    /// A hedgehog's or anteater's: a fruit's, never in a corridor.
    actor_weight: Vec<u32>,
    taken: Vec<bool>,
    puddle: Vec<bool>,
}

impl Cells {
    fn new(grid: &Grid, rng: &mut Rng) -> Cells {
        let at: Vec<(i32, i32)> = (1..grid.h - 1)
            .flat_map(|y| (1..grid.w - 1).map(move |x| (x, y)))
            .filter(|&(x, y)| !grid.is_wall(x, y))
            .collect();
        let shape: Vec<Shape> = at.iter().map(|&(x, y)| shape_of(grid, x, y)).collect();
        let fruit_weight: Vec<u32> = shape
            .iter()
            .map(|s| match s {
                Shape::DeadEnd => 6 + rng.between(0, 2),
                Shape::Corner => 3 + rng.between(0, 2),
                Shape::Corridor => 2,
                Shape::Open => 1,
            })
            .collect();
        let obstacle_weight: Vec<u32> = at.iter().map(|_| 1 + rng.between(0, 2)).collect();
        let actor_weight: Vec<u32> = shape
            .iter()
            .zip(&fruit_weight)
            .map(|(s, &fw)| if *s == Shape::Corridor { 0 } else { fw })
            .collect();
        Cells {
            taken: vec![false; at.len()],
            puddle: vec![false; at.len()],
            at,
            fruit_weight,
            obstacle_weight,
            actor_weight,
        }
    }

    /// Takes a free cell drawn by the weights of `what` (a puddle only if
    /// `on_puddle`).
    fn draw(&mut self, what: Piece, on_puddle: bool, rng: &mut Rng) -> Option<usize> {
        let weights = match what {
            Piece::Fruit => &self.fruit_weight,
            Piece::Obstacle => &self.obstacle_weight,
            Piece::Actor => &self.actor_weight,
        };
        let masked: Vec<u32> = weights
            .iter()
            .enumerate()
            .map(|(i, &wt)| {
                if self.taken[i] || (self.puddle[i] && !on_puddle) {
                    0
                } else {
                    wt
                }
            })
            .collect();
        let pick = rng.weighted(&masked)?;
        self.taken[pick] = true;
        Some(pick)
    }

    fn pos(&self, i: usize) -> Pos {
        Pos {
            x: self.at[i].0 as u8,
            y: self.at[i].1 as u8,
        }
    }

    /// A pair of fruits per colour, the twin never next to the first.
    fn place_fruits(
        &mut self,
        pairs: u8,
        level: &mut Level,
        rng: &mut Rng,
    ) -> Result<(), Rejection> {
        for colour in 1..=pairs {
            let first = self
                .draw(Piece::Fruit, false, rng)
                .ok_or_else(|| Rejection::refused(super::reasons::NO_ROOM_FOR_FRUIT, ""))?;
            // The twin never starts next to the first: the pair would meet at once.
            let (fx, fy) = self.at[first];
            let near: Vec<usize> = (0..self.at.len())
                .filter(|&i| {
                    !self.taken[i] && self.at[i].0.abs_diff(fx) + self.at[i].1.abs_diff(fy) == 1
                })
                .collect();
            for &i in &near {
                self.taken[i] = true;
            }
            let second = self.draw(Piece::Fruit, false, rng);
            for &i in &near {
                self.taken[i] = false;
            }
            let second =
                second.ok_or_else(|| Rejection::refused(super::reasons::NO_ROOM_FOR_FRUIT, ""))?;
            level.fruits.push(Fruit {
                at: self.pos(first),
                colour,
            });
            level.fruits.push(Fruit {
                at: self.pos(second),
                colour,
            });
        }
        Ok(())
    }

    /// About `density` of the free cells as obstacles (puddles allowed).
    fn place_obstacles(&mut self, density: f64, level: &mut Level, rng: &mut Rng) {
        let expected = density * self.at.len() as f64;
        let count = ((expected + rng.unit()).floor() as usize)
            .min(usize::from(super::level::MAX_OBSTACLES));
        for _ in 0..count {
            let Some(i) = self.draw(Piece::Obstacle, true, rng) else {
                break;
            };
            level.obstacles.push(Obstacle {
                at: self.pos(i),
                look: Look::ALL[rng.index(3)],
            });
        }
    }

    /// A hedgehog and an anteater, each on a coin toss when the params allow.
    fn place_actors(&mut self, params: &TiltParams, grid: &Grid, level: &mut Level, rng: &mut Rng) {
        if params.has(Feature::Hedgehogs)
            && rng.chance(0.5)
            && let Some(i) = self.draw(Piece::Actor, false, rng)
        {
            level.hedgehogs.push(self.pos(i));
        }
        if params.has(Feature::Anteaters)
            && rng.chance(0.5)
            && let Some(i) = self.draw(Piece::Actor, false, rng)
        {
            // Face an open neighbour, so the gaze is never empty.
            let (x, y) = self.at[i];
            let open: Vec<Dir> = Dir::ALL
                .into_iter()
                .filter(|d| {
                    let (dx, dy) = d.delta();
                    !grid.is_wall(x + dx, y + dy)
                })
                .collect();
            if !open.is_empty() {
                level.anteaters.push(Anteater {
                    at: self.pos(i),
                    facing: open[rng.index(open.len())],
                });
            } else {
                self.taken[i] = false;
            }
        }
    }

    /// Up to two one-way gates between free neighbours, no two on one edge.
    fn place_gates(&self, grid: &Grid, level: &mut Level, rng: &mut Rng) {
        for _ in 0..rng.between(0, 2) {
            let i = rng.index(self.at.len());
            let d = Dir::ALL[rng.index(4)];
            let (dx, dy) = d.delta();
            let (x, y) = self.at[i];
            if !grid.is_wall(x + dx, y + dy) {
                let gate = Gate {
                    at: self.pos(i),
                    dir: d,
                };
                let back = Gate {
                    at: Pos {
                        x: (x + dx) as u8,
                        y: (y + dy) as u8,
                    },
                    dir: opposite(d),
                };
                if !level.gates.contains(&gate) && !level.gates.contains(&back) {
                    level.gates.push(gate);
                }
            }
        }
    }

    /// The terrain rows: walls, puddles and floor.
    fn terrain(&self, grid: &Grid) -> Vec<String> {
        (0..grid.h)
            .map(|y| {
                (0..grid.w)
                    .map(|x| {
                        if grid.is_wall(x, y) {
                            '#'
                        } else {
                            let i = self.at.iter().position(|&c| c == (x, y)).unwrap_or(0);
                            if self.puddle[i] { '~' } else { '.' }
                        }
                    })
                    .collect()
            })
            .collect()
    }
}

/// The level normalized and checked: well formed, at rest at the start, and
/// not won in fewer than `min_moves`.
fn checked(params: &TiltParams, mut level: Level) -> Result<Level, Rejection> {
    level.normalize();
    level.check().map_err(|m| {
        Rejection::refused(Code::MalformedLevel, format!("the generator built it: {m}"))
    })?;
    debug_assert!(
        level
            .fruits
            .iter()
            .all(|f| level.terrain_at(f.at) == Terrain::Floor)
    );
    let (board, start) = Board::new(&level);
    if board.settle_start(&start) != Some(start) {
        return Err(Rejection::refused(super::reasons::NOT_AT_REST, ""));
    }
    if params.min_moves > 1 && super::solve::wins_within(&level, params.min_moves - 1) {
        return Err(Rejection::refused(
            Code::TooEasy,
            format!("wins in fewer than min_moves {}", params.min_moves),
        ));
    }
    Ok(level)
}

fn opposite(d: Dir) -> Dir {
    Dir::ALL[(d.index() + 2) % 4]
}

/// Walls from random border points: each wall is drawn in parts, each part
/// shorter than the one before and orthogonal to it.
fn border_walls(grid: &mut Grid, rng: &mut Rng) {
    let square = grid.w == grid.h;
    let paired = rng.chance(0.5);
    let symmetries: &[Symmetry] = if square {
        &[
            Symmetry::MirrorX,
            Symmetry::MirrorY,
            Symmetry::Rotate180,
            Symmetry::Transpose,
            Symmetry::Rotate90,
        ]
    } else {
        &[Symmetry::MirrorX, Symmetry::MirrorY, Symmetry::Rotate180]
    };
    let symmetry = symmetries[rng.index(symmetries.len())];
    let inner = (grid.w - 2).max(grid.h - 2);
    let walls = rng.between(1, (inner as u32).max(2));
    for _ in 0..walls {
        // A start on the border (not a corner) and the inward direction.
        let side = rng.index(4);
        let (sx, sy, dir) = match side {
            0 => (1 + rng.below((grid.w - 2) as u64) as i32, 0, 2),
            1 => (grid.w - 1, 1 + rng.below((grid.h - 2) as u64) as i32, 3),
            2 => (1 + rng.below((grid.w - 2) as u64) as i32, grid.h - 1, 0),
            _ => (0, 1 + rng.below((grid.h - 2) as u64) as i32, 1),
        };
        let mut len = rng.between(1, (inner as u32 / 2).max(1)) as i32;
        let mut part = draw_part(grid, (sx, sy), DIRS[dir], len, paired.then_some(symmetry));
        let mut dir = dir;
        loop {
            let next = rng.below(len as u64) as i32;
            if next == 0 || part.is_empty() {
                break;
            }
            let from = part[rng.index(part.len())];
            dir = if rng.chance(0.5) {
                (dir + 1) % 4
            } else {
                (dir + 3) % 4
            };
            len = next;
            part = draw_part(grid, from, DIRS[dir], len, paired.then_some(symmetry));
        }
    }
}

fn draw_part(
    grid: &mut Grid,
    from: (i32, i32),
    (dx, dy): (i32, i32),
    len: i32,
    twin: Option<Symmetry>,
) -> Vec<(i32, i32)> {
    let mut part = Vec::new();
    let (mut x, mut y) = from;
    for _ in 0..len {
        x += dx;
        y += dy;
        if !grid.inside(x, y) {
            break;
        }
        grid.set(x, y);
        if let Some(s) = twin {
            let (tx, ty) = grid.twin(x, y, s);
            grid.set(tx, ty);
        }
        part.push((x, y));
    }
    part
}

/// Free-standing walls: from a random tile, step in one random direction while
/// the 3x3 block around the tile is free; the tiles are placed after the loop.
fn internal_walls(grid: &mut Grid, rng: &mut Rng) {
    for _ in 0..rng.between(0, 2) {
        let mut x = 1 + rng.below((grid.w - 2) as u64) as i32;
        let mut y = 1 + rng.below((grid.h - 2) as u64) as i32;
        let (dx, dy) = DIRS[rng.index(4)];
        let mut pending = Vec::new();
        while grid.inside(x, y)
            && (-1..=1).all(|oy| (-1..=1).all(|ox| !grid.is_wall(x + ox, y + oy)))
        {
            pending.push((x, y));
            x += dx;
            y += dy;
        }
        for (x, y) in pending {
            grid.set(x, y);
        }
    }
}

/// Fills every free region but the largest with walls (ties: the first found).
fn keep_largest_region(grid: &mut Grid) {
    let n = (grid.w * grid.h) as usize;
    let mut region = vec![usize::MAX; n];
    let mut sizes = Vec::new();
    for y in 1..grid.h - 1 {
        for x in 1..grid.w - 1 {
            if grid.is_wall(x, y) || region[grid.idx(x, y)] != usize::MAX {
                continue;
            }
            let id = sizes.len();
            let size = flood(
                grid.idx(x, y),
                |i| {
                    let (cx, cy) = (i as i32 % grid.w, i as i32 / grid.w);
                    DIRS.into_iter()
                        .map(move |(dx, dy)| (cx + dx, cy + dy))
                        .filter(|&(nx, ny)| !grid.is_wall(nx, ny))
                        .map(|(nx, ny)| grid.idx(nx, ny))
                },
                |i| {
                    let free = region[i] == usize::MAX;
                    if free {
                        region[i] = id;
                    }
                    free
                },
            )
            .len();
            sizes.push(size);
        }
    }
    let Some(keep) = (0..sizes.len()).max_by_key(|&i| (sizes[i], std::cmp::Reverse(i))) else {
        return;
    };
    for y in 1..grid.h - 1 {
        for x in 1..grid.w - 1 {
            let r = region[grid.idx(x, y)];
            if r != usize::MAX && r != keep {
                grid.set(x, y);
            }
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// Open on one side only.
    DeadEnd,
    /// Open on two adjacent sides.
    Corner,
    /// Open on two opposite sides.
    Corridor,
    /// Open on three or four sides.
    Open,
}

fn shape_of(grid: &Grid, x: i32, y: i32) -> Shape {
    let open: Vec<bool> = DIRS
        .iter()
        .map(|&(dx, dy)| !grid.is_wall(x + dx, y + dy))
        .collect();
    match open.iter().filter(|&&o| o).count() {
        0 | 1 => Shape::DeadEnd,
        2 if (open[0] && open[2]) || (open[1] && open[3]) => Shape::Corridor,
        2 => Shape::Corner,
        _ => Shape::Open,
    }
}
