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
        return Err(Rejection::refused(Code::TooFewFreeCells, ""));
    }
    let cells: Vec<(i32, i32)> = (1..h - 1)
        .flat_map(|y| (1..w - 1).map(move |x| (x, y)))
        .filter(|&(x, y)| !grid.is_wall(x, y))
        .collect();
    let shape: Vec<Shape> = cells.iter().map(|&(x, y)| shape_of(&grid, x, y)).collect();
    let fruit_weight: Vec<u32> = shape
        .iter()
        .map(|s| match s {
            Shape::DeadEnd => 6 + rng.between(0, 2),
            Shape::Corner => 3 + rng.between(0, 2),
            Shape::Corridor => 2,
            Shape::Open => 1,
        })
        .collect();
    // Obstacles have weights of their own, drawn once per level.
    let obstacle_weight: Vec<u32> = cells.iter().map(|_| 1 + rng.between(0, 2)).collect();
    let actor_weight: Vec<u32> = shape
        .iter()
        .zip(&fruit_weight)
        .map(|(s, &fw)| if *s == Shape::Corridor { 0 } else { fw })
        .collect();

    let mut taken = vec![false; cells.len()];
    let mut puddle = vec![false; cells.len()];
    let draw = |weights: &[u32],
                taken: &mut Vec<bool>,
                puddle: &[bool],
                on_puddle: bool,
                rng: &mut Rng| {
        let masked: Vec<u32> = weights
            .iter()
            .enumerate()
            .map(|(i, &wt)| {
                if taken[i] || (puddle[i] && !on_puddle) {
                    0
                } else {
                    wt
                }
            })
            .collect();
        let pick = rng.weighted(&masked)?;
        taken[pick] = true;
        Some(pick)
    };
    let at = |i: usize| Pos {
        x: cells[i].0 as u8,
        y: cells[i].1 as u8,
    };

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
            let i = rng.index(cells.len());
            puddle[i] = true;
        }
    }
    for colour in 1..=params.pairs {
        let first = draw(&fruit_weight, &mut taken, &puddle, false, rng)
            .ok_or_else(|| Rejection::refused(Code::NoRoomForFruit, ""))?;
        // The twin never starts next to the first: the pair would meet at once.
        let (fx, fy) = cells[first];
        let near: Vec<usize> = (0..cells.len())
            .filter(|&i| !taken[i] && cells[i].0.abs_diff(fx) + cells[i].1.abs_diff(fy) == 1)
            .collect();
        for &i in &near {
            taken[i] = true;
        }
        let second = draw(&fruit_weight, &mut taken, &puddle, false, rng);
        for &i in &near {
            taken[i] = false;
        }
        let second = second.ok_or_else(|| Rejection::refused(Code::NoRoomForFruit, ""))?;
        level.fruits.push(Fruit {
            at: at(first),
            colour,
        });
        level.fruits.push(Fruit {
            at: at(second),
            colour,
        });
    }
    if params.has(Feature::Obstacles) {
        let expected = params.obstacle_density * cells.len() as f64;
        let count = ((expected + rng.unit()).floor() as usize)
            .min(usize::from(super::level::MAX_OBSTACLES));
        for _ in 0..count {
            let Some(i) = draw(&obstacle_weight, &mut taken, &puddle, true, rng) else {
                break;
            };
            level.obstacles.push(Obstacle {
                at: at(i),
                look: Look::ALL[rng.index(3)],
            });
        }
    }
    if params.has(Feature::Hedgehogs)
        && rng.chance(0.5)
        && let Some(i) = draw(&actor_weight, &mut taken, &puddle, false, rng)
    {
        level.hedgehogs.push(at(i));
    }
    if params.has(Feature::Anteaters)
        && rng.chance(0.5)
        && let Some(i) = draw(&actor_weight, &mut taken, &puddle, false, rng)
    {
        // Face an open neighbour, so the gaze is never empty.
        let (x, y) = cells[i];
        let open: Vec<Dir> = Dir::ALL
            .into_iter()
            .filter(|d| {
                let (dx, dy) = d.delta();
                !grid.is_wall(x + dx, y + dy)
            })
            .collect();
        if !open.is_empty() {
            level.anteaters.push(Anteater {
                at: at(i),
                facing: open[rng.index(open.len())],
            });
        } else {
            taken[i] = false;
        }
    }
    if params.has(Feature::Gates) {
        for _ in 0..rng.between(0, 2) {
            let i = rng.index(cells.len());
            let d = Dir::ALL[rng.index(4)];
            let (dx, dy) = d.delta();
            let (x, y) = cells[i];
            if !grid.is_wall(x + dx, y + dy) {
                let gate = Gate { at: at(i), dir: d };
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
    level.terrain = (0..h)
        .map(|y| {
            (0..w)
                .map(|x| {
                    if grid.is_wall(x, y) {
                        '#'
                    } else {
                        let i = cells.iter().position(|&c| c == (x, y)).unwrap_or(0);
                        if puddle[i] { '~' } else { '.' }
                    }
                })
                .collect()
        })
        .collect();
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
        return Err(Rejection::refused(Code::NotAtRest, ""));
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
