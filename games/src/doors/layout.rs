//! The layout step (seed section 4.2): from a level description to a tile
//! grid a player can fly through.
//!
//! 1. Embedding: room positions in the unit square, sampled until no two
//!    doors' straight lines cross, rooms keep a distance, lines keep an angle
//!    at a shared room and a distance from other rooms; after 200 failed
//!    samples the distance and angle are relaxed. Room 0 is sampled in the top
//!    band and must be the topmost room.
//! 2. Rooms: each position marks its room's centre cell on the fine grid;
//!    each door's line is drawn, its halves given to the nearer room; a
//!    cellular automaton grows the rooms, a cell touching two rooms or the
//!    border turning to wall.
//! 3. The grid is downscaled (each [`SCALE`] x [`SCALE`] block to one cell
//!    holding the room most of the block holds, wall on a tie; a room left in
//!    pieces keeps its largest) for the doors: a straight run of one or two
//!    wall cells with exactly the two rooms at its ends is a door site; each
//!    door of the description takes a random site of its pair, keeping away
//!    from the other doors.
//! 4. The exit: a straight tunnel from room 0 to the border, only through
//!    walls and touching no other room, its first cell a door of the required
//!    colour.
//! 5. Objects: the start and the buttons on the floor of their rooms, then
//!    people and drones, one a room.
//! 6. Terrain: the grid is upscaled again, walls beside a room crumble into it
//!    at random, then a smoothing pass fills dents and drops dead ends.
//!
//! Any step that fails restarts from step 1, up to [`ATTEMPTS`] times. The
//! result is checked by reading the description back from the grid.
//!
//! Tiles: `#` wall; a digit the room it belongs to; `+` an unlocked door,
//! `A`, `B`, ... a door of colour 1, 2, ...; `a`, `b`, ... a button; `@` the
//! start; `p` a person to rescue; `x` a drone; `^` the exit tunnel.

use super::level::Level;
use crate::rng::Rng;
use crate::search::flood;

/// Fine cells per coarse cell, each way.
pub const SCALE: usize = 2;
/// Layouts tried before the level is given up.
pub const ATTEMPTS: usize = 50;

const WALL: u8 = b'#';
const TUNNEL: u8 = b'^';

/// A point in the unit square.
type Point = (f64, f64);

/// The coarse grid's size for `n` rooms: room for each to grow.
pub fn coarse_size(rooms: usize) -> (usize, usize) {
    let side = 8 + 3 * rooms;
    (side + side / 2, side)
}

/// Lays the level out; `None` when every attempt failed.
pub fn lay_out(level: &Level, rng: &mut Rng) -> Option<Vec<String>> {
    (0..ATTEMPTS).find_map(|_| attempt(level, rng))
}

fn attempt(level: &Level, rng: &mut Rng) -> Option<Vec<String>> {
    let (w, h) = coarse_size(level.rooms);
    let points = embed(level, rng)?;
    let fine = grow_rooms(level, &points, w * SCALE, h * SCALE);
    let mut coarse = downscale(&fine, w, h);
    keep_largest_parts(&mut coarse, w, h);
    place_doors(level, &mut coarse, w, h, rng)?;
    place_exit(level, &mut coarse, w, h, rng)?;
    place_objects(level, &mut coarse, w, h, rng)?;
    let mut grid = upscale(&coarse, w, h);
    detail(&mut grid, w * SCALE, h * SCALE, rng);
    let rows: Vec<String> = grid
        .chunks(w * SCALE)
        .map(|row| String::from_utf8_lossy(row).into_owned())
        .collect();
    (read_back(level.rooms, level.colours, &rows).as_ref() == Ok(level)).then_some(rows)
}

/// Edges of the simple graph under the doors.
fn edges(level: &Level) -> Vec<(usize, usize)> {
    let mut e: Vec<(usize, usize)> = level
        .doors
        .iter()
        .map(|&(a, b, _)| (a as usize, b as usize))
        .collect();
    e.dedup();
    e
}

/// Step 1: a straight-line planar embedding by rejection sampling.
fn embed(level: &Level, rng: &mut Rng) -> Option<Vec<Point>> {
    let n = level.rooms;
    let edges = edges(level);
    let mut spacing = 0.8 / (n as f64).sqrt();
    // Lines at a room at least about 34 degrees apart (cosine 0.83), relaxed
    // with the spacing.
    let mut max_cos = 0.83f64;
    for _ in 0..12 {
        for _ in 0..200 {
            let points: Vec<Point> = (0..n)
                .map(|r| {
                    let x = 0.1 + 0.8 * rng.unit();
                    let y = if r == 0 {
                        0.1 + 0.2 * rng.unit()
                    } else {
                        0.1 + 0.8 * rng.unit()
                    };
                    (x, y)
                })
                .collect();
            if embedding_ok(&points, &edges, spacing, max_cos) {
                return Some(points);
            }
        }
        spacing *= 0.85;
        max_cos = 1.0 - (1.0 - max_cos) * 0.64;
    }
    None
}

fn embedding_ok(points: &[Point], edges: &[(usize, usize)], spacing: f64, max_cos: f64) -> bool {
    let dist = |p: Point, q: Point| ((p.0 - q.0).powi(2) + (p.1 - q.1).powi(2)).sqrt();
    // Room 0 is the topmost.
    if points.iter().skip(1).any(|p| p.1 <= points[0].1) {
        return false;
    }
    for i in 0..points.len() {
        for j in i + 1..points.len() {
            if dist(points[i], points[j]) < spacing {
                return false;
            }
        }
    }
    for (k, &(a, b)) in edges.iter().enumerate() {
        // Keep clear of the other rooms.
        for (r, &p) in points.iter().enumerate() {
            if r != a && r != b && segment_distance(p, points[a], points[b]) < spacing / 3.0 {
                return false;
            }
        }
        for &(c, d) in &edges[k + 1..] {
            let shared = [a, b].into_iter().find(|x| *x == c || *x == d);
            match shared {
                Some(s) => {
                    let other1 = if a == s { b } else { a };
                    let other2 = if c == s { d } else { c };
                    if cosine(points[s], points[other1], points[other2]) > max_cos {
                        return false;
                    }
                }
                None => {
                    if crosses(points[a], points[b], points[c], points[d]) {
                        return false;
                    }
                }
            }
        }
    }
    true
}

fn segment_distance(p: Point, a: Point, b: Point) -> f64 {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let t = (((p.0 - a.0) * dx + (p.1 - a.1) * dy) / (dx * dx + dy * dy)).clamp(0.0, 1.0);
    ((a.0 + t * dx - p.0).powi(2) + (a.1 + t * dy - p.1).powi(2)).sqrt()
}

/// The cosine of the angle at `s` between the lines to `p` and `q` (square
/// roots only, so every platform computes the same).
fn cosine(s: Point, p: Point, q: Point) -> f64 {
    let (u, v) = ((p.0 - s.0, p.1 - s.1), (q.0 - s.0, q.1 - s.1));
    (u.0 * v.0 + u.1 * v.1) / ((u.0 * u.0 + u.1 * u.1).sqrt() * (v.0 * v.0 + v.1 * v.1).sqrt())
}

fn crosses(a: Point, b: Point, c: Point, d: Point) -> bool {
    let orient =
        |p: Point, q: Point, r: Point| (q.0 - p.0) * (r.1 - p.1) - (q.1 - p.1) * (r.0 - p.0);
    let (o1, o2) = (orient(a, b, c), orient(a, b, d));
    let (o3, o4) = (orient(c, d, a), orient(c, d, b));
    o1 * o2 < 0.0 && o3 * o4 < 0.0
}

/// Open cells hold `b'0' + room`; everything else starts unassigned (0).
fn room_tile(room: usize) -> u8 {
    b'0' + room as u8
}

fn is_room(tile: u8) -> bool {
    tile.is_ascii_digit()
}

/// Step 2: centres, door lines, then the cellular automaton.
fn grow_rooms(level: &Level, points: &[Point], w: usize, h: usize) -> Vec<u8> {
    let mut grid = vec![0u8; w * h];
    let cell = |p: Point| {
        let x = (p.0 * w as f64) as usize;
        let y = (p.1 * h as f64) as usize;
        (x.clamp(1, w - 2), y.clamp(1, h - 2))
    };
    for (a, b) in edges(level) {
        let (pa, pb) = (cell(points[a]), cell(points[b]));
        let line = bresenham(pa, pb);
        let half = line.len() / 2;
        for (i, &(x, y)) in line.iter().enumerate() {
            let room = if i < half { a } else { b };
            let t = &mut grid[y * w + x];
            if *t == 0 {
                *t = room_tile(room);
            } else if *t != room_tile(room) {
                *t = WALL;
            }
        }
    }
    for (r, &p) in points.iter().enumerate() {
        let (x, y) = cell(p);
        grid[y * w + x] = room_tile(r);
    }
    loop {
        let mut next = grid.clone();
        let mut changed = false;
        for y in 0..h {
            for x in 0..w {
                if grid[y * w + x] != 0 {
                    continue;
                }
                // Two coarse cells of wall at the border leave room for the
                // exit tunnel.
                let margin = 2 * SCALE;
                if x < margin || y < margin || x >= w - margin || y >= h - margin {
                    next[y * w + x] = WALL;
                    changed = true;
                    continue;
                }
                let mut seen = 0u8;
                let mut mixed = false;
                for (nx, ny) in around(x, y) {
                    let t = grid[ny * w + nx];
                    if is_room(t) {
                        if seen != 0 && seen != t {
                            mixed = true;
                        }
                        seen = t;
                    }
                }
                if mixed {
                    next[y * w + x] = WALL;
                    changed = true;
                } else if seen != 0 {
                    next[y * w + x] = seen;
                    changed = true;
                }
            }
        }
        grid = next;
        if !changed {
            break;
        }
    }
    // A room cell touching another room becomes wall, so rooms never meet.
    let snapshot = grid.clone();
    for y in 0..h {
        for x in 0..w {
            let t = snapshot[y * w + x];
            if is_room(t)
                && around(x, y).any(|(nx, ny)| {
                    let u = snapshot[ny * w + nx];
                    is_room(u) && u != t
                })
            {
                grid[y * w + x] = WALL;
            }
        }
    }
    grid.iter_mut().filter(|t| **t == 0).for_each(|t| *t = WALL);
    grid
}

/// The 8 neighbours of an inner cell.
fn around(x: usize, y: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..9)
        .filter(|&i| i != 4)
        .map(move |i| (x + i % 3 - 1, y + i / 3 - 1))
}

fn bresenham(a: (usize, usize), b: (usize, usize)) -> Vec<(usize, usize)> {
    let (mut x, mut y) = (a.0 as i64, a.1 as i64);
    let (x1, y1) = (b.0 as i64, b.1 as i64);
    let (dx, dy) = ((x1 - x).abs(), -(y1 - y).abs());
    let (sx, sy) = ((x1 - x).signum(), (y1 - y).signum());
    let mut err = dx + dy;
    let mut line = Vec::new();
    loop {
        line.push((x as usize, y as usize));
        if x == x1 && y == y1 {
            return line;
        }
        let e2 = 2 * err;
        if e2 >= dy {
            err += dy;
            x += sx;
        }
        if e2 <= dx {
            err += dx;
            y += sy;
        }
    }
}

/// Step 3a: each block to the room most of it holds.
fn downscale(fine: &[u8], w: usize, h: usize) -> Vec<u8> {
    let fw = w * SCALE;
    let mut coarse = vec![WALL; w * h];
    for y in 0..h {
        for x in 0..w {
            let mut counts = [0usize; 256];
            for dy in 0..SCALE {
                for dx in 0..SCALE {
                    counts[fine[(y * SCALE + dy) * fw + x * SCALE + dx] as usize] += 1;
                }
            }
            let best = (0..256).max_by_key(|&t| (counts[t], t == WALL as usize));
            if let Some(t) = best.filter(|&t| is_room(t as u8) && counts[t] * 2 >= SCALE * SCALE) {
                coarse[y * w + x] = t as u8;
            }
        }
    }
    coarse
}

/// The cells beside cell `i` of a `w` x `h` grid, by index.
fn side_cells(i: usize, w: usize, h: usize) -> impl Iterator<Item = usize> {
    sides(i % w, i / w, w, h).map(move |(x, y)| y * w + x)
}

fn sides(x: usize, y: usize, w: usize, h: usize) -> impl Iterator<Item = (usize, usize)> {
    [(0i64, -1i64), (1, 0), (0, 1), (-1, 0)]
        .into_iter()
        .map(move |(dx, dy)| (x as i64 + dx, y as i64 + dy))
        .filter(move |&(nx, ny)| nx >= 0 && ny >= 0 && nx < w as i64 && ny < h as i64)
        .map(|(nx, ny)| (nx as usize, ny as usize))
}

fn door_tile(colour: u8) -> u8 {
    if colour == 0 { b'+' } else { b'A' + colour - 1 }
}

fn is_door(tile: u8) -> bool {
    tile == b'+' || tile.is_ascii_uppercase()
}

/// The four directions as (dx, dy).
const DIRECTIONS: [(i64, i64); 4] = [(0, -1), (1, 0), (0, 1), (-1, 0)];

/// The cell `k` steps from `(x, y)` in direction `d`, if on the grid.
fn step(x: usize, y: usize, d: (i64, i64), k: i64, w: usize, h: usize) -> Option<usize> {
    let (nx, ny) = (x as i64 + d.0 * k, y as i64 + d.1 * k);
    (nx >= 0 && ny >= 0 && nx < w as i64 && ny < h as i64).then(|| ny as usize * w + nx as usize)
}

/// Step 3a': a room left in pieces keeps its largest; the rest turns to wall.
fn keep_largest_parts(grid: &mut [u8], w: usize, h: usize) {
    let mut part = vec![usize::MAX; w * h];
    // Per room: (size, part id) of its largest part.
    let mut largest = [(0usize, usize::MAX); 10];
    let mut parts = 0;
    for start in 0..w * h {
        let t = grid[start];
        if !is_room(t) || part[start] != usize::MAX {
            continue;
        }
        let size = flood(
            start,
            |i| side_cells(i, w, h),
            |j| {
                let free = grid[j] == t && part[j] == usize::MAX;
                if free {
                    part[j] = parts;
                }
                free
            },
        )
        .len();
        let best = &mut largest[(t - b'0') as usize];
        if size > best.0 {
            *best = (size, parts);
        }
        parts += 1;
    }
    for i in 0..w * h {
        if is_room(grid[i]) && largest[(grid[i] - b'0') as usize].1 != part[i] {
            grid[i] = WALL;
        }
    }
}

/// Step 3b: each door of the description on the wall between its rooms: a
/// straight run of one or two wall cells with one room on each end, away from
/// the other doors.
fn place_doors(level: &Level, grid: &mut [u8], w: usize, h: usize, rng: &mut Rng) -> Option<()> {
    for &(a, b, colour) in &level.doors {
        let pair = [room_tile(a as usize), room_tile(b as usize)];
        let mut sites: Vec<Vec<usize>> = Vec::new();
        for i in 0..w * h {
            let (x, y) = (i % w, i / w);
            if grid[i] != WALL {
                continue;
            }
            for d in [(1, 0), (0, 1)] {
                let Some(before) = step(x, y, d, -1, w, h) else {
                    continue;
                };
                for len in 1..=2 {
                    let run: Vec<usize> = (0..len).filter_map(|k| step(x, y, d, k, w, h)).collect();
                    let Some(after) = step(x, y, d, len, w, h) else {
                        continue;
                    };
                    let mut ends = [grid[before], grid[after]];
                    ends.sort_unstable();
                    if run.len() == len as usize
                        && run
                            .iter()
                            .all(|&c| grid[c] == WALL && clear_of_doors(grid, w, h, c))
                        && ends == pair
                    {
                        sites.push(run);
                    }
                }
            }
        }
        if sites.is_empty() {
            return None;
        }
        for &c in &sites[rng.index(sites.len())] {
            grid[c] = door_tile(colour);
        }
    }
    Some(())
}

/// No door or tunnel among the cell's 8 neighbours (inner cells only).
fn clear_of_doors(grid: &[u8], w: usize, h: usize, c: usize) -> bool {
    let (x, y) = (c % w, c / w);
    x > 0
        && y > 0
        && x < w - 1
        && y < h - 1
        && !around(x, y).any(|(nx, ny)| {
            let t = grid[ny * w + nx];
            is_door(t) || t == TUNNEL
        })
}

/// Step 4: a straight tunnel from a cell of room 0 through walls to the
/// border, touching no other room; its first cell is the exit door.
fn place_exit(level: &Level, grid: &mut [u8], w: usize, h: usize, rng: &mut Rng) -> Option<()> {
    let start = room_tile(0);
    let mut options: Vec<Vec<usize>> = Vec::new();
    for i in 0..w * h {
        if grid[i] != start {
            continue;
        }
        let (x, y) = (i % w, i / w);
        for d in DIRECTIONS {
            let side = (d.1, d.0);
            let mut run = Vec::new();
            let mut k = 1;
            let ok = loop {
                let Some(c) = step(x, y, d, k, w, h) else {
                    break run.len() >= 2;
                };
                let (cx, cy) = (c % w, c / w);
                let sides_ok = [1, -1].iter().all(|&s| {
                    step(cx, cy, side, s, w, h)
                        .is_none_or(|n| grid[n] == WALL || (k == 1 && grid[n] == start))
                });
                if grid[c] != WALL
                    || !sides_ok
                    || (k > 1 && !clear_of_tunnel_neighbours(grid, w, h, c))
                {
                    break false;
                }
                run.push(c);
                k += 1;
            };
            if ok && clear_of_doors(grid, w, h, run[0]) {
                options.push(run);
            }
        }
    }
    if options.is_empty() {
        return None;
    }
    let run = &options[rng.index(options.len())];
    grid[run[0]] = door_tile(level.required);
    for &c in &run[1..] {
        grid[c] = TUNNEL;
    }
    Some(())
}

/// No door beside a tunnel cell.
fn clear_of_tunnel_neighbours(grid: &[u8], w: usize, h: usize, c: usize) -> bool {
    sides(c % w, c / w, w, h).all(|(nx, ny)| !is_door(grid[ny * w + nx]))
}

/// Step 5: the start and the buttons on the floor of their rooms (a room
/// cell above a wall, away from doors), then a person or a drone per room.
fn place_objects(level: &Level, grid: &mut [u8], w: usize, h: usize, rng: &mut Rng) -> Option<()> {
    let free = |grid: &[u8], room: usize, floor: bool| -> Vec<usize> {
        (w..w * (h - 1))
            .filter(|&i| {
                let (x, y) = (i % w, i / w);
                grid[i] == room_tile(room)
                    && (grid[i + w] == WALL) == floor
                    && !around(x, y).any(|(nx, ny)| {
                        let t = grid[ny * w + nx];
                        is_door(t) || t.is_ascii_lowercase() || t == b'@'
                    })
            })
            .collect()
    };
    let mut put = |grid: &mut [u8], room: usize, floor: bool, tile: u8| -> Option<()> {
        let cells = free(grid, room, floor);
        if cells.is_empty() {
            return None;
        }
        grid[cells[rng.index(cells.len())]] = tile;
        Some(())
    };
    put(grid, 0, true, b'@')?;
    for &(room, colour) in &level.buttons {
        put(grid, room as usize, true, b'a' + colour - 1)?;
    }
    for room in 0..level.rooms {
        // Extras are decoration: a room without space simply goes without.
        let (floor, tile) = if room % 2 == 0 {
            (true, b'p')
        } else {
            (false, b'x')
        };
        let _ = put(grid, room, floor, tile);
    }
    Some(())
}

/// Step 6a: every coarse cell to a block; doors, objects and the tunnel keep
/// one tile and give the rest of the block to their room (or wall).
fn upscale(coarse: &[u8], w: usize, h: usize) -> Vec<u8> {
    let fw = w * SCALE;
    let mut fine = vec![WALL; fw * h * SCALE];
    for y in 0..h {
        for x in 0..w {
            let t = coarse[y * w + x];
            for dy in 0..SCALE {
                for dx in 0..SCALE {
                    fine[(y * SCALE + dy) * fw + x * SCALE + dx] = t;
                }
            }
            if t.is_ascii_lowercase() || t == b'@' {
                // The object stands on the block's floor; the rest is its room.
                let room = room_under(coarse, w, h, x, y);
                for dy in 0..SCALE {
                    for dx in 0..SCALE {
                        let tile = if dy == SCALE - 1 && dx == 0 { t } else { room };
                        fine[(y * SCALE + dy) * fw + x * SCALE + dx] = tile;
                    }
                }
            }
        }
    }
    fine
}

/// The room an object cell belongs to: its neighbours' room.
fn room_under(coarse: &[u8], w: usize, h: usize, x: usize, y: usize) -> u8 {
    let mut near = sides(x, y, w, h)
        .chain(around(x, y))
        .map(|(nx, ny)| coarse[ny * w + nx]);
    near.find(|&t| is_room(t)).unwrap_or(WALL)
}

/// Step 6b: roughness, then smoothing; neither joins two rooms nor cuts one.
fn detail(grid: &mut [u8], w: usize, h: usize, rng: &mut Rng) {
    let inner = |i: usize| {
        let (x, y) = (i % w, i / w);
        x > 0 && y > 0 && x < w - 1 && y < h - 1
    };
    // The only room among a wall cell's 8 neighbours, if exactly one, and no
    // door or tunnel beside it.
    let sole_room = |grid: &[u8], i: usize| -> Option<u8> {
        let (x, y) = (i % w, i / w);
        let mut room = None;
        for (nx, ny) in around(x, y) {
            let t = grid[ny * w + nx];
            if is_door(t) || t == TUNNEL {
                return None;
            }
            if is_room(t) {
                if room.is_some_and(|r| r != t) {
                    return None;
                }
                room = Some(t);
            }
        }
        room
    };
    for _ in 0..2 {
        let snapshot = grid.to_vec();
        for i in 0..w * h {
            if snapshot[i] == WALL
                && inner(i)
                && let Some(room) = sole_room(&snapshot, i)
                && sides(i % w, i / w, w, h).any(|(nx, ny)| snapshot[ny * w + nx] == room)
                && sole_room(grid, i) == Some(room)
                && rng.chance(0.2)
            {
                grid[i] = room;
            }
        }
    }
    for i in 0..w * h {
        if grid[i] != WALL || !inner(i) {
            continue;
        }
        let (x, y) = (i % w, i / w);
        let open = sides(x, y, w, h)
            .filter(|&(nx, ny)| is_room(grid[ny * w + nx]))
            .count();
        if open >= 3
            && let Some(room) = sole_room(grid, i)
        {
            grid[i] = room;
        }
    }
    // Dead ends of one open cell with walls on three sides close up.
    for i in 0..w * h {
        if !is_room(grid[i]) || !inner(i) {
            continue;
        }
        let (x, y) = (i % w, i / w);
        let neighbours: Vec<u8> = sides(x, y, w, h)
            .map(|(nx, ny)| grid[ny * w + nx])
            .collect();
        let walls = neighbours.iter().filter(|&&t| t == WALL).count();
        if walls == 3 && neighbours.iter().any(|&t| t == grid[i]) {
            grid[i] = WALL;
        }
    }
}

/// Reads the description back from a laid-out grid: the rooms of each door,
/// the room of each button, the exit's colour. Errors name what is wrong.
pub fn read_back(rooms_wanted: usize, colours: usize, rows: &[String]) -> Result<Level, String> {
    let h = rows.len();
    let w = rows.first().map_or(0, |r| r.len());
    if w == 0 || rows.iter().any(|r| r.len() != w) {
        return Err("the grid's rows differ in length".into());
    }
    let grid: Vec<u8> = rows.iter().flat_map(|r| r.bytes()).collect();
    // Rooms: flood each digit's cells with objects, which stand in rooms.
    let mut region = vec![usize::MAX; w * h];
    let mut rooms = [None::<usize>; 10];
    let walkable = |t: u8| is_room(t) || t.is_ascii_lowercase() || t == b'@';
    let mut regions = 0;
    for start in 0..w * h {
        if !walkable(grid[start]) || region[start] != usize::MAX {
            continue;
        }
        let area = flood(
            start,
            |i| side_cells(i, w, h),
            |j| {
                let free = walkable(grid[j]) && region[j] == usize::MAX;
                if free {
                    region[j] = regions;
                }
                free
            },
        );
        let mut digit = None;
        for i in area.into_iter().filter(|&i| is_room(grid[i])) {
            let d = (grid[i] - b'0') as usize;
            if digit.is_some_and(|e| e != d) {
                return Err(format!(
                    "rooms {} and {d} meet without a door",
                    digit.unwrap_or(0)
                ));
            }
            digit = Some(d);
        }
        let Some(d) = digit else {
            return Err("an area holds objects but no room".into());
        };
        if d >= rooms_wanted || rooms[d].is_some() {
            return Err(format!("room {d} is split or unknown"));
        }
        rooms[d] = Some(regions);
        regions += 1;
    }
    if rooms[..rooms_wanted].iter().any(Option::is_none) {
        return Err("a room is missing from the grid".into());
    }
    let room_of = |i: usize| {
        (region[i] != usize::MAX)
            .then(|| rooms.iter().position(|r| *r == Some(region[i])))
            .flatten()
    };
    let mut doors = Vec::new();
    let mut required = None;
    let mut buttons = Vec::new();
    let mut starts = 0;
    let mut in_door = vec![false; w * h];
    for i in 0..w * h {
        let t = grid[i];
        let (x, y) = (i % w, i / w);
        if is_door(t) && !in_door[i] {
            // A door is a block of equal tiles.
            let colour = if t == b'+' { 0 } else { t - b'A' + 1 };
            let block = flood(
                i,
                |j| side_cells(j, w, h),
                |k| {
                    let free = grid[k] == t && !in_door[k];
                    if free {
                        in_door[k] = true;
                    }
                    free
                },
            );
            let mut beside = Vec::new();
            let mut tunnel = false;
            for k in block.iter().flat_map(|&j| side_cells(j, w, h)) {
                tunnel |= grid[k] == TUNNEL;
                beside.extend(room_of(k));
            }
            beside.sort_unstable();
            beside.dedup();
            match (beside.as_slice(), tunnel) {
                ([0], true) if required.is_none() => required = Some(colour),
                ([a, b], false) => doors.push((*a as u8, *b as u8, colour)),
                _ => {
                    return Err(format!(
                        "the door at row {}, column {} does not join two rooms",
                        y + 1,
                        x + 1
                    ));
                }
            }
        } else if t.is_ascii_lowercase() && t != b'p' && t != b'x' {
            let room = room_of(i).ok_or("a button outside the rooms")?;
            buttons.push((room as u8, t - b'a' + 1));
        } else if t == b'@' {
            starts += 1;
            if room_of(i) != Some(0) {
                return Err("the start is not in room 0".into());
            }
        }
    }
    if starts != 1 {
        return Err(format!("{starts} starts, not one"));
    }
    doors.sort_unstable();
    buttons.sort_unstable();
    Ok(Level {
        rooms: rooms_wanted,
        colours,
        required: required.ok_or("no exit door")?,
        doors,
        buttons,
        grid: Vec::new(),
    })
}
