//! A cube level: 54 cells, the karma goal; the monk starts on Top (0, 0) and
//! the exit is Top (2, 2). Text form: the source's net, each face drawn in its
//! own coordinates as seen from outside:
//!
//! ```text
//!     BBB
//!     BBB
//!     BBB
//! LLL TTT RRR
//! LLL TTT RRR
//! LLL TTT RRR
//!     FFF
//!     FFF
//!     FFF
//!     DDD
//!     DDD
//!     DDD
//! ```
//!
//! (B back, L left, T top, R right, F front, D bottom), cells `.` path, `#`
//! obstacle, `k` karma, `s` soldier, `M` the monk (Top (0, 0), on a path);
//! then `karma_goal N difficulty D`.

use serde::{Deserialize, Serialize};

use super::geometry::{Face, cell};
use crate::GameError;

/// What a cell holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Cell {
    /// Walkable.
    Path,
    /// Blocks walking.
    Obstacle,
    /// Walkable; collected when the monk reaches it.
    Karma,
    /// Blocks walking; kills the monk if a walkable path joins them on Top.
    Soldier,
}

impl Cell {
    /// Its character in the net.
    pub fn symbol(self) -> char {
        match self {
            Cell::Path => '.',
            Cell::Obstacle => '#',
            Cell::Karma => 'k',
            Cell::Soldier => 's',
        }
    }

    fn from_symbol(c: char) -> Option<Cell> {
        match c {
            '.' | 'M' => Some(Cell::Path),
            '#' => Some(Cell::Obstacle),
            'k' => Some(Cell::Karma),
            's' => Some(Cell::Soldier),
            _ => None,
        }
    }

    /// Whether the monk (and a soldier's attack) can pass.
    pub fn walkable(self) -> bool {
        matches!(self, Cell::Path | Cell::Karma)
    }
}

/// The monk's start on Top.
pub const START: (usize, usize) = (0, 0);
/// The exit on Top.
pub const EXIT: (usize, usize) = (2, 2);

/// A cube level.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Level {
    /// The 54 cells, `face * 9 + y * 3 + x` (see [`super::geometry`]).
    pub cells: Vec<Cell>,
    /// Karma to collect before the exit opens.
    pub karma_goal: u32,
    /// The overall difficulty (1..=10) it was generated for; 0 if unknown.
    pub difficulty: u32,
}

/// Where each face sits in the net: (column, row) in blocks of three.
const NET: [(Face, usize, usize); 6] = [
    (Face::Back, 1, 0),
    (Face::Left, 0, 1),
    (Face::Top, 1, 1),
    (Face::Right, 2, 1),
    (Face::Front, 1, 2),
    (Face::Bottom, 1, 3),
];

impl Level {
    /// The cells as a fixed array.
    pub fn array(&self) -> [Cell; 54] {
        let mut a = [Cell::Path; 54];
        a.copy_from_slice(&self.cells);
        a
    }

    /// Karma on the cube.
    pub fn karma(&self) -> u32 {
        self.cells.iter().filter(|&&c| c == Cell::Karma).count() as u32
    }

    /// Checks the level: 54 cells, the monk's start a path, enough karma.
    pub fn check(&self) -> Result<(), String> {
        if self.cells.len() != 54 {
            return Err(format!("54 cells needed, found {}", self.cells.len()));
        }
        if self.cells[cell(Face::Top, START.0, START.1)] != Cell::Path {
            return Err("the monk's start, Top (0,0), must be a path".into());
        }
        if self.karma() < self.karma_goal {
            return Err(format!(
                "{} karma on the cube, the goal is {}",
                self.karma(),
                self.karma_goal
            ));
        }
        Ok(())
    }

    /// The text form.
    pub fn to_text(&self) -> String {
        let mut rows = vec![vec![' '; 9]; 12];
        for (face, col, row) in NET {
            for y in 0..3 {
                for x in 0..3 {
                    let c = self.cells[cell(face, x, y)];
                    rows[row * 3 + y][col * 3 + x] = if face == Face::Top && (x, y) == START {
                        'M'
                    } else {
                        c.symbol()
                    };
                }
            }
        }
        let mut text: String = rows
            .iter()
            .map(|r| r.iter().collect::<String>().trim_end().to_string() + "\n")
            .collect();
        text.push_str(&format!(
            "karma_goal {} difficulty {}\n",
            self.karma_goal, self.difficulty
        ));
        text
    }

    /// Parses the text form.
    pub fn from_text(text: &str) -> Result<Level, GameError> {
        let err = GameError::parse_at;
        let lines: Vec<Vec<char>> = text.lines().map(|l| l.chars().collect()).collect();
        if lines.len() < 13 {
            return Err(err(
                lines.len(),
                0,
                "a net of 12 rows and a `karma_goal` line needed".into(),
            ));
        }
        let mut cells = vec![Cell::Path; 54];
        for (face, col, row) in NET {
            for y in 0..3 {
                for x in 0..3 {
                    let (line, column) = (row * 3 + y, col * 3 + x);
                    let c = lines[line].get(column).copied().unwrap_or(' ');
                    let kind = Cell::from_symbol(c).ok_or_else(|| {
                        err(line, column, format!("`{c}` is not a cell of {face:?}"))
                    })?;
                    if (c == 'M') != (face == Face::Top && (x, y) == START) {
                        return Err(err(
                            line,
                            column,
                            "the monk stands on Top (0,0) only".into(),
                        ));
                    }
                    cells[cell(face, x, y)] = kind;
                }
            }
        }
        let goal_line: String = lines[12].iter().collect();
        let numbers: Option<(u32, u32)> = match goal_line.split_whitespace().collect::<Vec<_>>()[..]
        {
            ["karma_goal", k, "difficulty", d] => k.parse().ok().zip(d.parse().ok()),
            _ => None,
        };
        let (karma_goal, difficulty) = numbers.ok_or_else(|| {
            err(
                12,
                0,
                format!("expected `karma_goal N difficulty D`, found `{goal_line}`"),
            )
        })?;
        if let Some(extra) = lines[13..]
            .iter()
            .position(|l| l.iter().any(|c| !c.is_whitespace()))
        {
            return Err(err(
                13 + extra,
                0,
                "text after the level (one level per text; `pregen solve` reads a file of \
                 several, apart by blank lines)"
                    .into(),
            ));
        }
        let level = Level {
            cells,
            karma_goal,
            difficulty,
        };
        level.check().map_err(|m| err(0, 0, m))?;
        Ok(level)
    }
}
