//! The dungeon level: rooms on a grid, doors between them, keys and switches;
//! its text form (the grid drawn, then a legend that fixes every element) and
//! its JSON form (this struct through serde).
//!
//! Rooms are numbered in row-major order of their top-left cell and doors in
//! row-major order of their cell, so the text form rebuilds the same numbering.

use serde::{Deserialize, Serialize};

use crate::GameError;

/// Most rooms a level may have (room sets are 64-bit masks).
pub const MAX_ROOMS: usize = 64;
/// Most keys (named `a` to `t`; `v` draws a door).
pub const MAX_KEYS: usize = 20;
/// Most switches (named `0` to `9`).
pub const MAX_SWITCHES: usize = 10;

/// A room: a rectangle of floor cells, walls around it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Room {
    /// Left column of the floor.
    pub x: u16,
    /// Top row of the floor.
    pub y: u16,
    /// Floor width (at least 2).
    pub w: u16,
    /// Floor height (at least 2).
    pub h: u16,
}

impl Room {
    /// Whether cell `(x, y)` is floor of this room.
    pub fn contains(&self, x: u16, y: u16) -> bool {
        (self.x..self.x + self.w).contains(&x) && (self.y..self.y + self.h).contains(&y)
    }
}

/// Which ways a door can be passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Passage {
    /// Both ways.
    Both,
    /// Only from room `a` to room `b` (a drop: there is no climbing back).
    AToB,
    /// Only from room `b` to room `a`.
    BToA,
}

/// A connection between two rooms through one wall cell: one directed edge
/// each way it can be passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Door {
    /// The wall cell.
    pub x: u16,
    /// The wall cell.
    pub y: u16,
    /// The room left of or above the door.
    pub a: usize,
    /// The room right of or below the door.
    pub b: usize,
    /// Which ways it can be passed when enabled.
    pub passage: Passage,
}

impl Door {
    /// Whether the door leads from `from` to `to` (when enabled).
    pub fn leads(&self, from: usize, to: usize) -> bool {
        match self.passage {
            Passage::Both => (from, to) == (self.a, self.b) || (from, to) == (self.b, self.a),
            Passage::AToB => (from, to) == (self.a, self.b),
            Passage::BToA => (from, to) == (self.b, self.a),
        }
    }
}

/// A collectible: picked up when its room is reached (if in a chest, once the
/// chest's key is held); it unlocks doors for good.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Key {
    /// The room it lies in.
    pub room: usize,
    /// Its cell.
    pub x: u16,
    /// Its cell.
    pub y: u16,
    /// The key (index) that opens the chest holding it, if it is in a chest.
    pub chest: Option<usize>,
    /// Doors it unlocks (a door with several locks needs every key).
    pub opens: Vec<usize>,
}

/// A lever with two positions, `off` at the start: doors in `on` are enabled
/// only while it is on, doors in `off` only while it is off.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Switch {
    /// The room it stands in.
    pub room: usize,
    /// Its cell.
    pub x: u16,
    /// Its cell.
    pub y: u16,
    /// Doors enabled while on.
    pub on: Vec<usize>,
    /// Doors enabled while off.
    pub off: Vec<usize>,
}

/// A dungeon level.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Level {
    /// Grid width, outer walls included.
    pub width: u16,
    /// Grid height, outer walls included.
    pub height: u16,
    /// Rooms in row-major order of their top-left cell.
    pub rooms: Vec<Room>,
    /// Doors in row-major order of their cell.
    pub doors: Vec<Door>,
    /// The room the player starts in.
    pub start: usize,
    /// The room whose reaching wins.
    pub exit: usize,
    /// Keys, named `a`, `b`, ... in this order.
    pub keys: Vec<Key>,
    /// Switches, named `0`, `1`, ... in this order.
    pub switches: Vec<Switch>,
}

/// The letter naming key `i`.
pub fn key_name(i: usize) -> char {
    char::from(b'a' + i as u8)
}

/// The digit naming switch `i`.
pub fn switch_name(i: usize) -> char {
    char::from(b'0' + i as u8)
}

impl Level {
    /// The room holding cell `(x, y)`, if any.
    pub fn room_at(&self, x: u16, y: u16) -> Option<usize> {
        self.rooms.iter().position(|r| r.contains(x, y))
    }

    /// Whether `(x, y)` holds a marker (start, exit, key or switch).
    pub fn is_marked(&self, x: u16, y: u16) -> bool {
        let [(sx, sy), (ex, ey)] = [self.start, self.exit].map(|r| self.marker_cell(r));
        (sx, sy) == (x, y)
            || (ex, ey) == (x, y)
            || self.keys.iter().any(|k| (k.x, k.y) == (x, y))
            || self.switches.iter().any(|s| (s.x, s.y) == (x, y))
    }

    /// Where the start or exit marker of room `r` is drawn: its top-left cell.
    pub fn marker_cell(&self, r: usize) -> (u16, u16) {
        (self.rooms[r].x, self.rooms[r].y)
    }

    /// Checks the level's structure: rooms inside the grid and disjoint, doors
    /// on a wall cell between the two rooms they name, elements inside their
    /// rooms on distinct free cells, indices in range, limits respected.
    pub fn check(&self) -> Result<(), String> {
        if self.rooms.is_empty() || self.rooms.len() > MAX_ROOMS {
            return Err(format!(
                "1..={MAX_ROOMS} rooms needed, found {}",
                self.rooms.len()
            ));
        }
        if self.keys.len() > MAX_KEYS || self.switches.len() > MAX_SWITCHES {
            return Err(format!(
                "at most {MAX_KEYS} keys and {MAX_SWITCHES} switches (found {} and {})",
                self.keys.len(),
                self.switches.len()
            ));
        }
        for (i, r) in self.rooms.iter().enumerate() {
            if r.w < 2 || r.h < 2 || r.x == 0 || r.y == 0 {
                return Err(format!(
                    "room {i} is smaller than 2x2 or touches the border"
                ));
            }
            if r.x + r.w >= self.width || r.y + r.h >= self.height {
                return Err(format!("room {i} leaves the grid"));
            }
            for (j, o) in self.rooms.iter().enumerate().skip(i + 1) {
                let apart =
                    r.x + r.w < o.x || o.x + o.w < r.x || r.y + r.h < o.y || o.y + o.h < r.y;
                if !apart {
                    return Err(format!("rooms {i} and {j} overlap or share no wall"));
                }
            }
        }
        let in_rooms = |r: usize| r < self.rooms.len();
        if !in_rooms(self.start) || !in_rooms(self.exit) || self.start == self.exit {
            return Err("start and exit must be two different rooms".into());
        }
        for (i, d) in self.doors.iter().enumerate() {
            if !in_rooms(d.a) || !in_rooms(d.b) || d.a == d.b {
                return Err(format!("door {i} names a missing room"));
            }
            let (ra, rb) = (self.rooms[d.a], self.rooms[d.b]);
            let across = (d.x > 0 && ra.contains(d.x - 1, d.y) && rb.contains(d.x + 1, d.y))
                || (d.y > 0 && ra.contains(d.x, d.y - 1) && rb.contains(d.x, d.y + 1));
            if !across {
                return Err(format!(
                    "door {i} at {},{} does not join room {} (left/above) to room {} (right/below)",
                    d.x, d.y, d.a, d.b
                ));
            }
        }
        let mut cells = vec![self.marker_cell(self.start), self.marker_cell(self.exit)];
        let doors_ok = |list: &[usize]| list.iter().all(|&d| d < self.doors.len());
        for (i, k) in self.keys.iter().enumerate() {
            if !in_rooms(k.room) || !self.rooms[k.room].contains(k.x, k.y) {
                return Err(format!("key {} is not inside room {}", key_name(i), k.room));
            }
            if k.chest.is_some_and(|c| c >= self.keys.len() || c == i) || !doors_ok(&k.opens) {
                return Err(format!("key {} names a missing key or door", key_name(i)));
            }
            cells.push((k.x, k.y));
        }
        for (i, s) in self.switches.iter().enumerate() {
            if !in_rooms(s.room) || !self.rooms[s.room].contains(s.x, s.y) {
                return Err(format!(
                    "switch {} is not inside room {}",
                    switch_name(i),
                    s.room
                ));
            }
            if !doors_ok(&s.on) || !doors_ok(&s.off) {
                return Err(format!("switch {} names a missing door", switch_name(i)));
            }
            cells.push((s.x, s.y));
        }
        let mut sorted = cells.clone();
        sorted.sort_unstable();
        sorted.dedup();
        if sorted.len() != cells.len() {
            return Err("two markers share a cell".into());
        }
        Ok(())
    }

    /// The text form: the grid (every row starts with the wall `#`), then the
    /// legend, one element a line; no blank line, so a release file can
    /// separate levels by blank lines.
    ///
    /// Grid: `#` wall, `.` floor, `S` start, `E` exit, `a`-`z` keys, `0`-`9`
    /// switches; doors: an upper-case letter for a door with a lock (the key's
    /// letter), `=` for a door a switch controls, else `+` (both ways) or `>`
    /// `<` `v` `^` (one way, pointing where it leads).
    pub fn to_text(&self) -> String {
        let (w, h) = (usize::from(self.width), usize::from(self.height));
        let mut grid = vec![vec!['#'; w]; h];
        for r in &self.rooms {
            for y in r.y..r.y + r.h {
                for x in r.x..r.x + r.w {
                    grid[usize::from(y)][usize::from(x)] = '.';
                }
            }
        }
        for (i, d) in self.doors.iter().enumerate() {
            let vertical_wall = self.rooms[d.a].contains(d.x.wrapping_sub(1), d.y);
            let lock = self.keys.iter().position(|k| k.opens.contains(&i));
            let switched = self
                .switches
                .iter()
                .any(|s| s.on.contains(&i) || s.off.contains(&i));
            grid[usize::from(d.y)][usize::from(d.x)] = match (lock, switched, d.passage) {
                (Some(k), _, _) => key_name(k).to_ascii_uppercase(),
                (None, true, _) => '=',
                (None, false, Passage::Both) => '+',
                (None, false, Passage::AToB) if vertical_wall => '>',
                (None, false, Passage::BToA) if vertical_wall => '<',
                (None, false, Passage::AToB) => 'v',
                (None, false, Passage::BToA) => '^',
            };
        }
        let mut put = |(x, y): (u16, u16), c: char| grid[usize::from(y)][usize::from(x)] = c;
        put(self.marker_cell(self.start), 'S');
        put(self.marker_cell(self.exit), 'E');
        for (i, k) in self.keys.iter().enumerate() {
            put((k.x, k.y), key_name(i));
        }
        for (i, s) in self.switches.iter().enumerate() {
            put((s.x, s.y), switch_name(i));
        }
        let mut text: String = grid
            .iter()
            .map(|row| row.iter().collect::<String>() + "\n")
            .collect();
        text.push_str(&format!("start {} exit {}\n", self.start, self.exit));
        for (i, d) in self.doors.iter().enumerate() {
            let way = match d.passage {
                Passage::Both => "-",
                Passage::AToB => ">",
                Passage::BToA => "<",
            };
            text.push_str(&format!("door {i} {},{} {}{way}{}\n", d.x, d.y, d.a, d.b));
        }
        let list = |v: &[usize]| {
            if v.is_empty() {
                "-".to_string()
            } else {
                v.iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            }
        };
        for (i, k) in self.keys.iter().enumerate() {
            let chest = k
                .chest
                .map_or(String::new(), |c| format!(" chest {}", key_name(c)));
            text.push_str(&format!(
                "key {} {},{}{chest} opens {}\n",
                key_name(i),
                k.x,
                k.y,
                list(&k.opens)
            ));
        }
        for (i, s) in self.switches.iter().enumerate() {
            text.push_str(&format!(
                "switch {} {},{} on {} off {}\n",
                switch_name(i),
                s.x,
                s.y,
                list(&s.on),
                list(&s.off)
            ));
        }
        text
    }

    /// Parses the text form. Rooms come from the grid (floor cells in
    /// rectangles); doors, keys and switches from the legend, checked against
    /// the grid.
    pub fn from_text(text: &str) -> Result<Level, GameError> {
        let err = GameError::parse_at;
        let lines: Vec<&str> = text.lines().collect();
        let grid_end = lines
            .iter()
            .position(|l| !l.starts_with('#'))
            .unwrap_or(lines.len());
        let grid: Vec<Vec<char>> = lines[..grid_end]
            .iter()
            .map(|l| l.chars().collect())
            .collect();
        let (width, height) = check_grid(&grid)?;
        let (mut level, placed) = read_legend(&lines, grid_end, width, height)?;
        find_rooms(&mut level, &grid, grid_end)?;
        place_elements(&mut level, &placed)?;
        level.check().map_err(|m| err(grid_end, 0, m))?;
        // The grid must show what the legend says.
        if level
            .to_text()
            .lines()
            .take(height)
            .ne(lines[..height].iter().copied())
        {
            let y = level
                .to_text()
                .lines()
                .zip(&lines)
                .position(|(a, b)| a != *b)
                .unwrap_or(0);
            return Err(err(y, 0, "the grid does not match the legend".into()));
        }
        Ok(level)
    }
}

/// The grid's size, after checking that it is 4..=256 each way, rectangular
/// and made of known characters.
fn check_grid(grid: &[Vec<char>]) -> Result<(usize, usize), GameError> {
    let err = GameError::parse_at;
    let height = grid.len();
    let width = grid.first().map_or(0, Vec::len);
    if height < 4 || width < 4 || height > 256 || width > 256 {
        return Err(err(
            0,
            0,
            format!("grid of {width}x{height}: 4..=256 each way needed"),
        ));
    }
    for (y, row) in grid.iter().enumerate() {
        if row.len() != width {
            return Err(err(
                y,
                row.len().min(width),
                format!("row has {} cells, not {width}", row.len()),
            ));
        }
        for (x, &c) in row.iter().enumerate() {
            let known = matches!(c, '#' | '.' | 'S' | 'E' | '+' | '=' | '<' | '>' | '^' | 'v')
                || c.is_ascii_lowercase()
                || c.is_ascii_uppercase()
                || c.is_ascii_digit();
            if !known {
                return Err(err(y, x, format!("unknown character `{c}`")));
            }
        }
    }
    Ok((width, height))
}

fn number(line: usize, s: &str) -> Result<usize, GameError> {
    s.parse()
        .map_err(|_| GameError::parse_at(line, 0, format!("`{s}` is not a number")))
}

fn cell(line: usize, s: &str) -> Result<(u16, u16), GameError> {
    let (x, y) = s
        .split_once(',')
        .ok_or_else(|| GameError::parse_at(line, 0, format!("`{s}` is not a cell x,y")))?;
    Ok((number(line, x)? as u16, number(line, y)? as u16))
}

fn list(line: usize, s: &str) -> Result<Vec<usize>, GameError> {
    if s == "-" {
        return Ok(Vec::new());
    }
    s.split(',').map(|d| number(line, d)).collect()
}

/// The next name of a key (`base` `a`) or a switch (`0`), `count` of them
/// read so far.
fn name(line: usize, s: &str, base: u8, count: usize) -> Result<usize, GameError> {
    let b = s.as_bytes();
    if b.len() == 1 && b[0] >= base && usize::from(b[0] - base) == count {
        Ok(count)
    } else {
        Err(GameError::parse_at(
            line,
            0,
            format!("`{s}` is out of order (expected the next name)"),
        ))
    }
}

/// A key or switch of the legend: its line and its cell.
type Placed = (usize, u16, u16);

/// The legend after the grid (`lines[grid_end..]`): start and exit, doors,
/// keys and switches, with the line and cell of each key and switch, whose
/// rooms are known only once the grid's rooms are.
fn read_legend(
    lines: &[&str],
    grid_end: usize,
    width: usize,
    height: usize,
) -> Result<(Level, Vec<Placed>), GameError> {
    let err = GameError::parse_at;
    let mut level = Level {
        width: width as u16,
        height: height as u16,
        rooms: Vec::new(),
        doors: Vec::new(),
        start: usize::MAX,
        exit: usize::MAX,
        keys: Vec::new(),
        switches: Vec::new(),
    };
    // Keys and switches get their rooms once the grid's rooms are known.
    let mut placed: Vec<Placed> = Vec::new();
    for (n, line) in lines.iter().enumerate().skip(grid_end) {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            [] => {}
            ["start", s, "exit", e] => {
                level.start = number(n, s)?;
                level.exit = number(n, e)?;
            }
            ["door", i, at, rooms] => {
                if number(n, i)? != level.doors.len() {
                    return Err(err(n, 0, format!("door {i} is out of order")));
                }
                let (x, y) = cell(n, at)?;
                let (sep, passage) = if rooms.contains('>') {
                    ('>', Passage::AToB)
                } else if rooms.contains('<') {
                    ('<', Passage::BToA)
                } else {
                    ('-', Passage::Both)
                };
                let (a, b) = rooms
                    .split_once(sep)
                    .ok_or_else(|| err(n, 0, format!("`{rooms}` is not rooms a-b, a>b or a<b")))?;
                level.doors.push(Door {
                    x,
                    y,
                    a: number(n, a)?,
                    b: number(n, b)?,
                    passage,
                });
            }
            ["key", k, at, rest @ ..] => {
                name(n, k, b'a', level.keys.len())?;
                let (x, y) = cell(n, at)?;
                let (chest, opens) = match rest {
                    ["chest", c, "opens", o] => {
                        (Some(usize::from(c.as_bytes()[0].wrapping_sub(b'a'))), o)
                    }
                    ["opens", o] => (None, o),
                    _ => return Err(err(n, 0, "expected `[chest K] opens D,D`".into())),
                };
                placed.push((n, x, y));
                level.keys.push(Key {
                    room: usize::MAX,
                    x,
                    y,
                    chest,
                    opens: list(n, opens)?,
                });
            }
            ["switch", s, at, "on", on, "off", off] => {
                name(n, s, b'0', level.switches.len())?;
                let (x, y) = cell(n, at)?;
                placed.push((n, x, y));
                level.switches.push(Switch {
                    room: usize::MAX,
                    x,
                    y,
                    on: list(n, on)?,
                    off: list(n, off)?,
                });
            }
            _ => return Err(err(n, 0, format!("cannot read `{line}`"))),
        }
    }
    Ok((level, placed))
}

/// The rooms: the cells that are neither walls nor doors, in rectangles.
fn find_rooms(level: &mut Level, grid: &[Vec<char>], grid_end: usize) -> Result<(), GameError> {
    let err = GameError::parse_at;
    let (width, height) = (usize::from(level.width), usize::from(level.height));
    let mut door_cell = vec![vec![false; width]; height];
    for (i, d) in level.doors.iter().enumerate() {
        let (x, y) = (usize::from(d.x), usize::from(d.y));
        if x >= width || y >= height {
            return Err(err(
                grid_end,
                0,
                format!("door {i} at {x},{y} is off the grid"),
            ));
        }
        door_cell[y][x] = true;
    }
    let floor = |x: usize, y: usize| grid[y][x] != '#' && !door_cell[y][x];
    let mut owner = vec![vec![usize::MAX; width]; height];
    for y in 0..height {
        for x in 0..width {
            if !floor(x, y) || owner[y][x] != usize::MAX {
                continue;
            }
            let w = (x..width).take_while(|&i| floor(i, y)).count();
            let h = (y..height).take_while(|&j| floor(x, j)).count();
            for (j, row) in owner.iter_mut().enumerate().skip(y).take(h) {
                for (i, cell) in row.iter_mut().enumerate().skip(x).take(w) {
                    if !floor(i, j) || *cell != usize::MAX {
                        return Err(err(j, i, "room is not a rectangle".into()));
                    }
                    *cell = level.rooms.len();
                }
            }
            level.rooms.push(Room {
                x: x as u16,
                y: y as u16,
                w: w as u16,
                h: h as u16,
            });
        }
    }
    Ok(())
}

/// Each key and switch put in the room of its cell.
fn place_elements(level: &mut Level, placed: &[Placed]) -> Result<(), GameError> {
    let err = GameError::parse_at;
    let rooms: Vec<usize> = placed
        .iter()
        .map(|&(n, x, y)| {
            level
                .room_at(x, y)
                .ok_or_else(|| err(n, 0, format!("{x},{y} is not in a room")))
        })
        .collect::<Result<_, _>>()?;
    let keys = level.keys.len();
    for (i, room) in rooms.into_iter().enumerate() {
        match level.keys.get_mut(i) {
            Some(k) => k.room = room,
            None => level.switches[i - keys].room = room,
        }
    }
    Ok(())
}
