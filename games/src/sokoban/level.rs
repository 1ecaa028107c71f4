//! Sokoban levels in the XSB format and solutions in LURD notation.
//!
//! XSB: `#` wall, ` ` (or `-`, `_`) floor, `.` goal, `$` box, `*` box on goal,
//! `@` player, `+` player on goal. A collection file holds several levels
//! separated by blank lines; a level's title is a `Title: ...` line or a
//! `;`-comment line right before or after its rows. LURD: `l u r d` move,
//! `L U R D` push.

use serde::{Deserialize, Serialize};

use crate::search::Bfs;
use crate::{Collection, GameError};

/// The widest and tallest level read (the solver numbers cells in 16 bits).
pub const MAX_SIDE: usize = 128;
/// The most boxes a level read may hold.
pub const MAX_BOXES: usize = 100;

/// A Sokoban level: rows of cells, outside cells counted as walls.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Level {
    /// Columns (the longest row).
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// Wall cells, row-major.
    pub walls: Vec<bool>,
    /// Goal cells, sorted.
    pub goals: Vec<usize>,
    /// Box cells, sorted.
    pub boxes: Vec<usize>,
    /// The player's cell.
    pub player: usize,
}

/// A level of a collection file, with its title.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Titled {
    /// The title, or `level N` (1-based) when the file gives none.
    pub title: String,
    /// The level.
    pub level: Level,
}

/// A move direction in LURD order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// `l`/`L`.
    Left,
    /// `u`/`U`.
    Up,
    /// `r`/`R`.
    Right,
    /// `d`/`D`.
    Down,
}

impl Dir {
    /// The four directions.
    pub const ALL: [Dir; 4] = [Dir::Left, Dir::Up, Dir::Right, Dir::Down];

    /// The LURD letter, upper case for a push.
    pub fn letter(self, push: bool) -> char {
        let c = match self {
            Dir::Left => 'l',
            Dir::Up => 'u',
            Dir::Right => 'r',
            Dir::Down => 'd',
        };
        if push { c.to_ascii_uppercase() } else { c }
    }

    /// Parses a LURD letter: (direction, written as a push).
    pub fn from_letter(c: char) -> Option<(Dir, bool)> {
        let d = match c.to_ascii_lowercase() {
            'l' => Dir::Left,
            'u' => Dir::Up,
            'r' => Dir::Right,
            'd' => Dir::Down,
            _ => return None,
        };
        Some((d, c.is_ascii_uppercase()))
    }
}

impl Level {
    /// The neighbour of `cell` in direction `d`, if inside the grid.
    pub fn step(&self, cell: usize, d: Dir) -> Option<usize> {
        let (x, y) = (cell % self.width, cell / self.width);
        match d {
            Dir::Left if x > 0 => Some(cell - 1),
            Dir::Right if x + 1 < self.width => Some(cell + 1),
            Dir::Up if y > 0 => Some(cell - self.width),
            Dir::Down if y + 1 < self.height => Some(cell + self.width),
            _ => None,
        }
    }

    /// Whether `cell` is open floor (not a wall; inside the grid).
    pub fn open(&self, cell: usize) -> bool {
        !self.walls[cell]
    }

    /// Whether every box is on a goal.
    pub fn solved(&self) -> bool {
        self.boxes == self.goals
    }

    /// The level cut down to its floor's bounding box plus one ring of wall.
    pub fn cropped(&self) -> Level {
        let floor = (0..self.walls.len()).filter(|&c| !self.walls[c]);
        let xs = floor.clone().map(|c| c % self.width);
        let ys = floor.map(|c| c / self.width);
        let (Some(x0), Some(x1), Some(y0), Some(y1)) =
            (xs.clone().min(), xs.max(), ys.clone().min(), ys.max())
        else {
            return self.clone();
        };
        let (x0, y0) = (x0.saturating_sub(1), y0.saturating_sub(1));
        let (x1, y1) = ((x1 + 1).min(self.width - 1), (y1 + 1).min(self.height - 1));
        let width = x1 - x0 + 1;
        let map = |c: usize| (c / self.width - y0) * width + c % self.width - x0;
        Level {
            width,
            height: y1 - y0 + 1,
            walls: (y0..=y1)
                .flat_map(|y| (x0..=x1).map(move |x| (y, x)))
                .map(|(y, x)| self.walls[y * self.width + x])
                .collect(),
            goals: self.goals.iter().map(|&c| map(c)).collect(),
            boxes: self.boxes.iter().map(|&c| map(c)).collect(),
            player: map(self.player),
        }
    }

    /// The level under one of the 8 symmetries of the square (0 = identity;
    /// bit 0 mirrors left-right, bit 1 top-bottom, bit 2 swaps the axes).
    pub fn transformed(&self, symmetry: u8) -> Level {
        let (w, h) = (self.width, self.height);
        let swap = symmetry & 4 != 0;
        let (nw, nh) = if swap { (h, w) } else { (w, h) };
        let map = |c: usize| {
            let (mut x, mut y) = (c % w, c / w);
            if symmetry & 1 != 0 {
                x = w - 1 - x;
            }
            if symmetry & 2 != 0 {
                y = h - 1 - y;
            }
            if swap {
                std::mem::swap(&mut x, &mut y);
            }
            y * nw + x
        };
        let mut walls = vec![true; w * h];
        for (c, &wall) in self.walls.iter().enumerate() {
            walls[map(c)] = wall;
        }
        let mut goals: Vec<usize> = self.goals.iter().map(|&c| map(c)).collect();
        let mut boxes: Vec<usize> = self.boxes.iter().map(|&c| map(c)).collect();
        goals.sort_unstable();
        boxes.sort_unstable();
        Level {
            width: nw,
            height: nh,
            walls,
            goals,
            boxes,
            player: map(self.player),
        }
    }

    /// The lowest cell of the player's region (floor the player reaches
    /// without pushing): positions equal up to the player's walk share it.
    pub fn player_region_min(&self) -> usize {
        let walk = |c: usize| {
            Dir::ALL.into_iter().filter_map(move |d| {
                self.step(c, d)
                    .filter(|&n| self.open(n) && self.boxes.binary_search(&n).is_err())
            })
        };
        let bfs = Bfs::new(self.walls.len(), [self.player], walk);
        bfs.order().min().unwrap_or(self.player)
    }

    /// A text that two levels share exactly when they are equal up to
    /// position in the grid, the 8 symmetries and the player's walk.
    pub fn canonical(&self) -> String {
        let base = self.cropped();
        (0..8)
            .map(|s| {
                let mut t = base.transformed(s);
                t.player = t.player_region_min();
                t.to_xsb()
            })
            .min()
            .unwrap_or_default()
    }

    /// The XSB rows.
    pub fn to_xsb(&self) -> String {
        let mut text = String::new();
        for y in 0..self.height {
            let row: String = (0..self.width)
                .map(|x| {
                    let c = y * self.width + x;
                    let goal = self.goals.binary_search(&c).is_ok();
                    let boxed = self.boxes.binary_search(&c).is_ok();
                    match (self.walls[c], c == self.player, boxed, goal) {
                        (true, ..) => '#',
                        (_, true, _, true) => '+',
                        (_, true, _, false) => '@',
                        (_, _, true, true) => '*',
                        (_, _, true, false) => '$',
                        (_, _, false, true) => '.',
                        _ => ' ',
                    }
                })
                .collect();
            text.push_str(row.trim_end());
            text.push('\n');
        }
        text
    }

    /// Parses one level's XSB rows (`first_line` numbers the rows in errors).
    pub fn from_xsb(text: &str) -> Result<Level, GameError> {
        Self::parse_rows(&text.lines().collect::<Vec<_>>(), 0)
    }

    fn parse_rows(rows: &[&str], first_line: usize) -> Result<Level, GameError> {
        let err = |line: usize, column: usize, message: String| {
            GameError::parse_at(first_line + line, column, message)
        };
        let height = rows.len();
        let width = rows.iter().map(|r| r.chars().count()).max().unwrap_or(0);
        if height < 3 || width < 3 {
            return Err(err(
                0,
                0,
                format!("a level needs at least 3x3 cells, found {width}x{height}"),
            ));
        }
        if width > MAX_SIDE || height > MAX_SIDE {
            return Err(err(
                0,
                0,
                format!("a level has at most {MAX_SIDE}x{MAX_SIDE} cells, found {width}x{height}"),
            ));
        }
        let mut walls = vec![true; width * height];
        let (mut goals, mut boxes, mut players) = (Vec::new(), Vec::new(), Vec::new());
        let mut inside = vec![false; width * height];
        for (y, row) in rows.iter().enumerate() {
            for (x, c) in row.chars().enumerate() {
                let cell = y * width + x;
                match c {
                    '#' => {}
                    ' ' | '-' | '_' | '.' | '$' | '*' | '@' | '+' => {
                        walls[cell] = false;
                        inside[cell] = true;
                    }
                    _ => return Err(err(y, x, format!("unknown character `{c}`"))),
                }
                if matches!(c, '.' | '*' | '+') {
                    goals.push(cell);
                }
                if matches!(c, '$' | '*') {
                    boxes.push(cell);
                }
                if matches!(c, '@' | '+') {
                    players.push((cell, y, x));
                }
            }
        }
        let player = match players.as_slice() {
            [] => return Err(err(0, 0, "no player (`@` or `+`)".into())),
            [(cell, _, _)] => *cell,
            [_, (_, y, x), ..] => return Err(err(*y, *x, "a second player".into())),
        };
        if boxes.len() != goals.len() {
            return Err(err(
                0,
                0,
                format!("{} boxes but {} goals", boxes.len(), goals.len()),
            ));
        }
        if boxes.is_empty() {
            return Err(err(0, 0, "no boxes".into()));
        }
        if boxes.len() > MAX_BOXES {
            return Err(err(
                0,
                0,
                format!(
                    "{} boxes; the solver takes at most {MAX_BOXES}",
                    boxes.len()
                ),
            ));
        }
        let seen = Self::closed_in(&walls, width, height, player)
            .map_err(|(y, x)| err(y, x, "the walls are not closed around the player".into()))?;
        // Floor the player can never reach (decoration) becomes wall. Boxes
        // and goals there stay: a box on its goal in a sealed pocket is part
        // of many published levels (already solved, left out of the search);
        // anything else there makes the level unsolvable, which is the
        // solver's verdict, not a reading error.
        for (c, &floor) in inside.iter().enumerate() {
            if floor && !seen[c] && !boxes.contains(&c) && !goals.contains(&c) {
                walls[c] = true;
            }
        }
        goals.sort_unstable();
        boxes.sort_unstable();
        Ok(Level {
            width,
            height,
            walls,
            goals,
            boxes,
            player,
        })
    }

    /// The floor the player at `player` reaches, or the row and column of
    /// a reached cell on the grid's rim: the walls are not closed around it.
    fn closed_in(
        walls: &[bool],
        width: usize,
        height: usize,
        player: usize,
    ) -> Result<Vec<bool>, (usize, usize)> {
        let mut seen = vec![false; width * height];
        let mut stack = vec![player];
        seen[player] = true;
        while let Some(c) = stack.pop() {
            let (x, y) = (c % width, c / width);
            if x == 0 || y == 0 || x + 1 == width || y + 1 == height {
                return Err((y, x));
            }
            for n in [c - 1, c + 1, c - width, c + width] {
                if !walls[n] && !seen[n] {
                    seen[n] = true;
                    stack.push(n);
                }
            }
        }
        Ok(seen)
    }

    /// Plays a LURD solution; the level after the last move.
    pub fn play(&self, solution: &str) -> Result<Level, GameError> {
        let mut state = self.clone();
        for (index, c) in solution.chars().filter(|c| !c.is_whitespace()).enumerate() {
            let fail = |message: String| GameError::Replay { index, message };
            let (d, push) =
                Dir::from_letter(c).ok_or_else(|| fail(format!("`{c}` is not LURD")))?;
            let to = state
                .step(state.player, d)
                .filter(|&t| state.open(t))
                .ok_or_else(|| fail(format!("`{c}` walks into a wall")))?;
            if let Ok(i) = state.boxes.binary_search(&to) {
                if !push {
                    return Err(fail(format!("`{c}` pushes a box: write it upper case")));
                }
                let beyond = state
                    .step(to, d)
                    .filter(|&b| state.open(b) && state.boxes.binary_search(&b).is_err())
                    .ok_or_else(|| fail(format!("`{c}` pushes a box into a wall or a box")))?;
                state.boxes[i] = beyond;
                state.boxes.sort_unstable();
            } else if push {
                return Err(fail(format!("`{c}` is a push but there is no box")));
            }
            state.player = to;
        }
        Ok(state)
    }

    /// Checks that a LURD solution solves the level.
    pub fn replay(&self, solution: &str) -> Result<(), GameError> {
        let end = self.play(solution)?;
        if end.solved() {
            Ok(())
        } else {
            Err(GameError::NotWon {
                moves: solution.chars().filter(|c| !c.is_whitespace()).count(),
                message: "boxes remain off their goals".into(),
            })
        }
    }
}

/// Parses a collection file: levels separated by blank lines, each with an
/// optional title (a `Title: ...` line, else the last `;` comment line before
/// its rows, else a `Title:` or `;` line right after them). The
/// first malformed level is the error; [`read_collection`] reads past it.
pub fn parse_collection(text: &str) -> Result<Vec<Titled>, GameError> {
    read_collection(text)?
        .into_iter()
        .map(|(title, level)| {
            Ok(Titled {
                title,
                level: level?,
            })
        })
        .collect()
}

/// Reads a collection file level by level: each level's title and the level,
/// or why its rows are not a level. `Err` only when the file holds no level
/// rows at all.
pub fn read_collection(text: &str) -> Result<Collection<Level>, GameError> {
    let lines: Vec<&str> = text.lines().collect();
    let is_row = |l: &str| {
        let t = l.trim_end();
        !t.is_empty() && t.trim_start().starts_with('#')
    };
    let mut levels = Vec::new();
    let mut pending_title: Option<String> = None;
    let mut pending_explicit = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_end();
        if is_row(line) {
            let start = i;
            while i < lines.len() && is_row(lines[i]) {
                i += 1;
            }
            let level = Level::parse_rows(&lines[start..i], start);
            // A title right after the rows counts too.
            let after = lines
                .get(i)
                .map(|l| l.trim())
                .filter(|l| title_of(l).is_some());
            pending_explicit = false;
            let title = pending_title
                .take()
                .or_else(|| after.and_then(title_of))
                .unwrap_or_else(|| format!("level {}", levels.len() + 1));
            if after.is_some() {
                i += 1;
            }
            levels.push((title, level));
            continue;
        }
        // Between two levels, a `Title:` line names the next level, or else
        // the last `;` comment (a file's header comes before level 1's own).
        let line = line.trim();
        if let Some(t) = title_of(line) {
            // A pack's release files name a level by its `; id ID ...` line.
            let explicit = line.starts_with("Title:") || id_of(line).is_some();
            if explicit || !pending_explicit {
                pending_title = Some(t);
                pending_explicit = explicit;
            }
        }
        i += 1;
    }
    if levels.is_empty() {
        return Err(GameError::Parse {
            line: 1,
            column: 1,
            message: "no level rows (lines starting with `#`)".into(),
        });
    }
    Ok(levels)
}

/// The ID of a release file's `; id ID seed ...` comment.
fn id_of(line: &str) -> Option<&str> {
    let mut words = line.strip_prefix(';')?.split_whitespace();
    (words.next() == Some("id")).then(|| words.next()).flatten()
}

fn title_of(line: &str) -> Option<String> {
    if let Some(id) = id_of(line) {
        return Some(id.to_string());
    }
    line.strip_prefix("Title:")
        .or_else(|| line.strip_prefix(';'))
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
}

/// Prints levels as a collection file.
pub fn print_collection(levels: &[Titled]) -> String {
    levels
        .iter()
        .map(|t| format!("; {}\n{}", t.title, t.level.to_xsb()))
        .collect::<Vec<_>>()
        .join("\n")
}
