//! The tilt level: its structured (JSON) form, its text layout and the checks
//! that make a level well formed.
//!
//! Text layout, one grid row per line, then one line per gate:
//!
//! ```text
//! ########
//! #1..S..#      # wall   . floor   ~ puddle
//! #.##...#      1-6 fruit of that colour (on floor)
//! #..~c.^#      S C B stone, car, barrel on floor; s c b on a puddle
//! #2.....#      H sleeping hedgehog   ^ > v < anteater facing that way
//! ...
//! gate 3,4 >    a one-way gate on the edge between cell (3,4) and its
//!               neighbour to the right, crossable only rightwards
//! ```

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use crate::GameError;

/// Largest grid side, border included.
pub const MAX_SIDE: u8 = 8;
/// Most fruit pairs a level may hold.
pub const MAX_PAIRS: u8 = 5;
/// Most obstacles a level may hold.
pub const MAX_OBSTACLES: u8 = 6;

/// A tilt direction (and the facing of anteaters and gates).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dir {
    /// Towards row 0.
    Up,
    /// Towards the last column.
    Right,
    /// Towards the last row.
    Down,
    /// Towards column 0.
    Left,
}

impl Dir {
    /// All four, in the order the solver tries them.
    pub const ALL: [Dir; 4] = [Dir::Up, Dir::Right, Dir::Down, Dir::Left];

    /// (dx, dy) with y growing downwards.
    pub fn delta(self) -> (i32, i32) {
        match self {
            Dir::Up => (0, -1),
            Dir::Right => (1, 0),
            Dir::Down => (0, 1),
            Dir::Left => (-1, 0),
        }
    }

    /// The solution letter: U R D L.
    pub fn letter(self) -> char {
        match self {
            Dir::Up => 'U',
            Dir::Right => 'R',
            Dir::Down => 'D',
            Dir::Left => 'L',
        }
    }

    /// Parses a solution letter.
    pub fn from_letter(c: char) -> Option<Dir> {
        Dir::ALL
            .into_iter()
            .find(|d| d.letter() == c.to_ascii_uppercase())
    }

    /// The arrow used for anteaters and gates: ^ > v <.
    pub fn arrow(self) -> char {
        match self {
            Dir::Up => '^',
            Dir::Right => '>',
            Dir::Down => 'v',
            Dir::Left => '<',
        }
    }

    /// Parses an arrow.
    pub fn from_arrow(c: char) -> Option<Dir> {
        Dir::ALL.into_iter().find(|d| d.arrow() == c)
    }

    /// Index 0..4 in [`Dir::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// The three looks of an obstacle; they behave alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Look {
    /// A stone.
    Stone,
    /// A car.
    Car,
    /// A barrel.
    Barrel,
}

impl Look {
    /// All looks.
    pub const ALL: [Look; 3] = [Look::Stone, Look::Car, Look::Barrel];

    fn letter(self) -> char {
        match self {
            Look::Stone => 'S',
            Look::Car => 'C',
            Look::Barrel => 'B',
        }
    }
}

/// Terrain of a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Terrain {
    /// Blocks everything.
    Wall,
    /// Plain floor.
    Floor,
    /// Floor that dirties a fruit entering it.
    Puddle,
}

/// A cell position; (0,0) is the top-left corner of the border.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Pos {
    /// Column.
    pub x: u8,
    /// Row.
    pub y: u8,
}

/// A one-way gate on the edge between `at` and its neighbour in `dir`; objects
/// cross that edge only in direction `dir`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Gate {
    /// The cell on the gate's entry side.
    pub at: Pos,
    /// The only direction objects may cross in.
    pub dir: Dir,
}

/// A fruit of one colour (1-based; each colour appears exactly twice).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Fruit {
    /// Where it starts.
    pub at: Pos,
    /// Its colour, 1..=MAX_PAIRS.
    pub colour: u8,
}

/// An inedible movable obstacle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Obstacle {
    /// Where it starts.
    pub at: Pos,
    /// How it looks.
    pub look: Look,
}

/// A fixed anteater.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Anteater {
    /// Its cell.
    pub at: Pos,
    /// The fixed direction of its gaze.
    pub facing: Dir,
}

/// A tilt level (its JSON form is this struct).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Level {
    /// Grid width, border included (at most 8).
    pub width: u8,
    /// Grid height, border included (at most 8).
    pub height: u8,
    /// Terrain rows: `#` wall, `.` floor, `~` puddle.
    pub terrain: Vec<String>,
    /// One-way gates.
    pub gates: Vec<Gate>,
    /// Fruits, two of each colour.
    pub fruits: Vec<Fruit>,
    /// Obstacles.
    pub obstacles: Vec<Obstacle>,
    /// Anteaters.
    pub anteaters: Vec<Anteater>,
    /// Sleeping hedgehogs.
    pub hedgehogs: Vec<Pos>,
}

impl Level {
    /// Puts what cell character `c` holds at `at` into the level: its
    /// terrain, `None` for a character no cell has.
    fn place(&mut self, at: Pos, c: char) -> Option<char> {
        Some(match c {
            '#' | '.' | '~' => c,
            '1'..='9' => {
                self.fruits.push(Fruit {
                    at,
                    colour: c as u8 - b'0',
                });
                '.'
            }
            'S' | 'C' | 'B' | 's' | 'c' | 'b' => {
                let look = match c.to_ascii_uppercase() {
                    'S' => Look::Stone,
                    'C' => Look::Car,
                    _ => Look::Barrel,
                };
                self.obstacles.push(Obstacle { at, look });
                if c.is_ascii_lowercase() { '~' } else { '.' }
            }
            'H' => {
                self.hedgehogs.push(at);
                '.'
            }
            _ => {
                let facing = Dir::from_arrow(c)?;
                self.anteaters.push(Anteater { at, facing });
                '.'
            }
        })
    }

    /// The terrain at `p` (outside the grid counts as wall).
    pub fn terrain_at(&self, p: Pos) -> Terrain {
        match self
            .terrain
            .get(usize::from(p.y))
            .and_then(|row| row.as_bytes().get(usize::from(p.x)))
        {
            Some(b'.') => Terrain::Floor,
            Some(b'~') => Terrain::Puddle,
            _ => Terrain::Wall,
        }
    }

    /// The neighbour of `p` in `d`, if inside the grid.
    pub fn step(&self, p: Pos, d: Dir) -> Option<Pos> {
        let (dx, dy) = d.delta();
        let x = i32::from(p.x) + dx;
        let y = i32::from(p.y) + dy;
        (x >= 0 && y >= 0 && x < i32::from(self.width) && y < i32::from(self.height)).then_some(
            Pos {
                x: x as u8,
                y: y as u8,
            },
        )
    }

    /// Whether a gate forbids crossing from `p` in direction `d`.
    pub fn gate_forbids(&self, p: Pos, d: Dir) -> bool {
        // Only a gate on the edge pointing the other way (from q back to p) forbids p -> q.
        let Some(q) = self.step(p, d) else {
            return false;
        };
        self.gates
            .iter()
            .any(|g| g.at == q && self.step(q, g.dir) == Some(p))
    }

    /// Puts objects in a canonical order (by position) so equal levels serialize alike.
    pub fn normalize(&mut self) {
        self.gates.sort_by_key(|g| (g.at, g.dir.index()));
        self.fruits.sort_by_key(|f| (f.colour, f.at));
        self.obstacles.sort_by_key(|o| o.at);
        self.anteaters.sort_by_key(|a| a.at);
        self.hedgehogs.sort();
    }

    /// Checks that the level is well formed: size, closed border, objects on open
    /// cells and one per cell, fruits in pairs and off puddles, gates between
    /// open cells.
    pub fn check(&self) -> Result<(), String> {
        if !(3..=MAX_SIDE).contains(&self.width) || !(3..=MAX_SIDE).contains(&self.height) {
            return Err(format!(
                "grid is {}x{}; each side must be 3..={MAX_SIDE}",
                self.width, self.height
            ));
        }
        if self.terrain.len() != usize::from(self.height) {
            return Err(format!(
                "terrain has {} rows, height is {}",
                self.terrain.len(),
                self.height
            ));
        }
        for (y, row) in self.terrain.iter().enumerate() {
            if row.len() != usize::from(self.width) {
                return Err(format!(
                    "terrain row {y} has {} cells, width is {}",
                    row.len(),
                    self.width
                ));
            }
            for (x, c) in row.chars().enumerate() {
                if !matches!(c, '#' | '.' | '~') {
                    return Err(format!("terrain ({x},{y}) is `{c}`; allowed: # . ~"));
                }
                let border = x == 0
                    || y == 0
                    || x + 1 == usize::from(self.width)
                    || y + 1 == usize::from(self.height);
                if border && c != '#' {
                    return Err(format!("border cell ({x},{y}) must be a wall"));
                }
            }
        }
        let mut taken = Vec::new();
        let mut place = |p: Pos, what: &str, puddle_ok: bool| -> Result<(), String> {
            match self.terrain_at(p) {
                Terrain::Wall => return Err(format!("{what} at ({},{}) is on a wall", p.x, p.y)),
                Terrain::Puddle if !puddle_ok => {
                    return Err(format!("{what} at ({},{}) is on a puddle", p.x, p.y));
                }
                _ => {}
            }
            if taken.contains(&p) {
                return Err(format!("two things share cell ({},{})", p.x, p.y));
            }
            taken.push(p);
            Ok(())
        };
        for f in &self.fruits {
            place(f.at, "fruit", false)?;
        }
        for o in &self.obstacles {
            place(o.at, "obstacle", true)?;
        }
        for a in &self.anteaters {
            place(a.at, "anteater", false)?;
        }
        for &h in &self.hedgehogs {
            place(h, "hedgehog", false)?;
        }
        let pairs = self.fruits.len() / 2;
        if self.fruits.is_empty()
            || !self.fruits.len().is_multiple_of(2)
            || pairs > usize::from(MAX_PAIRS)
        {
            return Err(format!(
                "{} fruits; need 1..={MAX_PAIRS} pairs",
                self.fruits.len()
            ));
        }
        for colour in 1..=pairs as u8 {
            let n = self.fruits.iter().filter(|f| f.colour == colour).count();
            if n != 2 {
                return Err(format!(
                    "colour {colour} has {n} fruits; each colour 1..={pairs} needs exactly 2"
                ));
            }
        }
        if self.obstacles.len() > usize::from(MAX_OBSTACLES) {
            return Err(format!(
                "{} obstacles; at most {MAX_OBSTACLES}",
                self.obstacles.len()
            ));
        }
        for g in &self.gates {
            let open = |p: Pos| self.terrain_at(p) != Terrain::Wall;
            if !open(g.at) || !self.step(g.at, g.dir).is_some_and(open) {
                return Err(format!(
                    "gate at ({},{}) {} is not between two open cells",
                    g.at.x,
                    g.at.y,
                    g.dir.arrow()
                ));
            }
        }
        Ok(())
    }

    /// The text layout.
    pub fn to_text(&self) -> String {
        // The rows' cells in one buffer, each row followed by its newline.
        let mut grid: Vec<char> =
            Vec::with_capacity(self.terrain.iter().map(|r| r.len() + 1).sum());
        let mut rows = Vec::with_capacity(self.terrain.len());
        for row in &self.terrain {
            let start = grid.len();
            grid.extend(row.chars());
            rows.push(start..grid.len());
            grid.push('\n');
        }
        // A piece off the grid (a level read from JSON, not yet checked) is
        // left out: its text then reads back to another level, which the
        // checks refuse.
        let mut put = |p: Pos, c: char| {
            if let Some(cell) = rows
                .get(usize::from(p.y))
                .and_then(|row| grid.get_mut(row.clone()))
                .and_then(|row| row.get_mut(usize::from(p.x)))
            {
                *cell = c;
            }
        };
        for f in &self.fruits {
            put(f.at, char::from(b'0' + f.colour));
        }
        for o in &self.obstacles {
            let c = o.look.letter();
            put(
                o.at,
                if self.terrain_at(o.at) == Terrain::Puddle {
                    c.to_ascii_lowercase()
                } else {
                    c
                },
            );
        }
        for a in &self.anteaters {
            put(a.at, a.facing.arrow());
        }
        for &h in &self.hedgehogs {
            put(h, 'H');
        }
        let mut text: String = grid.into_iter().collect();
        for g in &self.gates {
            let _ = writeln!(text, "gate {},{} {}", g.at.x, g.at.y, g.dir.arrow());
        }
        text
    }

    /// Parses the text layout; errors name the line and column.
    pub fn from_text(text: &str) -> Result<Level, GameError> {
        let err = |line: usize, column: usize, message: String| GameError::Parse {
            line,
            column,
            message,
        };
        let mut terrain = Vec::new();
        let mut level = Level {
            width: 0,
            height: 0,
            terrain: Vec::new(),
            gates: Vec::new(),
            fruits: Vec::new(),
            obstacles: Vec::new(),
            anteaters: Vec::new(),
            hedgehogs: Vec::new(),
        };
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            let line = line.trim_end();
            if line.is_empty() {
                continue;
            }
            if let Some(rest) = line.strip_prefix("gate ") {
                level.gates.push(parse_gate(rest).ok_or_else(|| {
                    err(
                        n,
                        1,
                        format!("gate line `{line}`: expected `gate X,Y D` with D one of ^ > v <"),
                    )
                })?);
                continue;
            }
            if !level.gates.is_empty() {
                return Err(err(n, 1, "grid row after a gate line".into()));
            }
            if terrain.len() >= usize::from(MAX_SIDE) {
                return Err(err(n, 1, format!("more than {MAX_SIDE} grid rows")));
            }
            let y = terrain.len() as u8;
            let mut row = String::new();
            for (j, c) in line.chars().enumerate() {
                let at = Pos { x: j as u8, y };
                let floor = level.place(at, c).ok_or_else(|| {
                    err(
                        n,
                        j + 1,
                        format!("unknown cell `{c}`; allowed: # . ~ 1-9 S C B s c b H ^ > v <"),
                    )
                })?;
                row.push(floor);
            }
            if row.len() > usize::from(MAX_SIDE) {
                return Err(err(
                    n,
                    usize::from(MAX_SIDE) + 1,
                    format!("row is longer than {MAX_SIDE} cells"),
                ));
            }
            terrain.push(row);
        }
        if terrain.is_empty() {
            return Err(err(1, 1, "no grid rows".into()));
        }
        level.height = terrain.len() as u8;
        level.width = terrain[0].len() as u8;
        level.terrain = terrain;
        level.check().map_err(|m| err(1, 1, m))?;
        level.normalize();
        Ok(level)
    }
}

fn parse_gate(rest: &str) -> Option<Gate> {
    let (xy, d) = rest.trim().split_once(' ')?;
    let (x, y) = xy.split_once(',')?;
    let dir = Dir::from_arrow(d.trim().chars().next()?)?;
    Some(Gate {
        at: Pos {
            x: x.trim().parse().ok()?,
            y: y.trim().parse().ok()?,
        },
        dir,
    })
}
