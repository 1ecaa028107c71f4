//! The level's text form: a header line, then the tile grid laid out by
//! [`super::layout`], from which the doors, buttons and exit are read back.

use super::level::Level;
use crate::GameError;

/// Tiles a laid-out grid may hold (see [`super::layout`]).
const TILES: &str = "#0123456789+ABCDEFGHabcdefgh@px^";

impl Level {
    /// The text form: a header line `rooms N colours B required R`, then the
    /// tile grid.
    pub fn to_text(&self) -> String {
        let mut text = format!(
            "rooms {} colours {} required {}\n",
            self.rooms, self.colours, self.required
        );
        for row in &self.grid {
            text.push_str(row);
            text.push('\n');
        }
        text
    }

    /// Parses the text form; the doors, buttons and exit are read from the
    /// grid.
    pub fn from_text(text: &str) -> Result<Level, GameError> {
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        let (header_line, header) = lines
            .next()
            .ok_or_else(|| GameError::parse_at(0, 0, "empty level".into()))?;
        let words: Vec<&str> = header.split_whitespace().collect();
        let number = |i: usize, name: &str| -> Result<usize, GameError> {
            match (words.get(i), words.get(i + 1)) {
                (Some(w), Some(v)) if *w == name => v.parse().map_err(|_| {
                    GameError::parse_at(
                        header_line,
                        0,
                        format!("`{name}` needs a number, not `{v}`"),
                    )
                }),
                _ => Err(GameError::parse_at(
                    header_line,
                    0,
                    "the first line must be `rooms N colours B required R`".into(),
                )),
            }
        };
        let (rooms, colours, required) = (
            number(0, "rooms")?,
            number(2, "colours")?,
            number(4, "required")?,
        );
        if !(1..=10).contains(&rooms)
            || !(1..=8).contains(&colours)
            || !(1..=colours).contains(&required)
        {
            return Err(GameError::parse_at(
                header_line,
                0,
                "rooms must be 1..=10, colours 1..=8, required 1..=colours".into(),
            ));
        }
        let mut grid = Vec::new();
        for (line, row) in lines {
            if let Some(column) = row.find(|c| !TILES.contains(c)) {
                return Err(GameError::parse_at(
                    line,
                    column,
                    format!(
                        "`{}` is not a tile",
                        &row[column..].chars().next().unwrap_or(' ')
                    ),
                ));
            }
            grid.push(row.to_string());
        }
        if grid.is_empty() {
            return Err(GameError::parse_at(header_line + 1, 0, "no grid".into()));
        }
        let read = super::layout::read_back(rooms, colours, &grid)
            .map_err(|message| GameError::parse_at(header_line + 1, 0, message))?;
        if read.required as usize != required {
            return Err(GameError::parse_at(
                header_line,
                0,
                format!(
                    "the header says required {required}, the exit door has colour {}",
                    read.required
                ),
            ));
        }
        let level = Level { grid, ..read };
        level
            .check()
            .map_err(|message| GameError::parse_at(header_line + 1, 0, message))?;
        Ok(level)
    }
}
