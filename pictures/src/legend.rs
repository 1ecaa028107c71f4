//! Each game's legend: what each kind of its tiles means, with the tile
//! drawn by the game's own palette ([`crate::picture`]), for the report.

use std::fmt::Write;

use pregen_games::Game;
use pregen_games::cube::Cube;
use pregen_games::doors::Doors;
use pregen_games::dungeon::Dungeon;
use pregen_games::sokoban::Sokoban;
use pregen_games::tilt::Tilt;

use crate::{Grid, TILE, draw_piece, escape, palette};

/// What each kind of tile of a game means, by a character that draws it
/// (docs/<game>.md's text layout): the report's legend.
const LEGENDS: &[(&str, &[(char, &str)])] = &[
    (
        Tilt::NAME,
        &[
            ('#', "wall"),
            ('.', "floor"),
            ('~', "puddle"),
            ('1', "fruit (the digit pairs it)"),
            ('S', "stone"),
            ('C', "car"),
            ('B', "barrel"),
            ('s', "stone on a puddle"),
            ('H', "hedgehog"),
            ('>', "anteater, facing that way"),
        ],
    ),
    (
        Sokoban::NAME,
        &[
            ('#', "wall"),
            (' ', "floor"),
            ('.', "goal"),
            ('$', "box"),
            ('*', "box on a goal"),
            ('@', "player"),
            ('+', "player on a goal"),
        ],
    ),
    (
        Cube::NAME,
        &[
            ('.', "path"),
            ('#', "obstacle"),
            ('k', "karma"),
            ('s', "soldier"),
            ('M', "the monk"),
        ],
    ),
    (
        Doors::NAME,
        &[
            ('#', "wall"),
            ('1', "a room's floor (each room its colour)"),
            ('+', "unlocked door"),
            ('A', "door of colour 1 (each colour its own)"),
            ('a', "button of colour 1"),
            ('@', "start"),
            ('^', "exit tunnel"),
            ('p', "person"),
            ('x', "drone"),
        ],
    ),
    (
        Dungeon::NAME,
        &[
            ('#', "wall"),
            ('.', "floor"),
            ('S', "start"),
            ('E', "exit"),
            ('a', "key"),
            ('0', "switch"),
            ('+', "door"),
            ('>', "one-way drop"),
            ('A', "door locked by that key"),
            ('=', "door a switch controls"),
        ],
    ),
];

/// What each tile of `game` means, with its picture (an SVG of one tile,
/// drawn by the game's own palette): empty for a game without a legend.
pub fn legend(game: &str) -> Vec<(String, &'static str)> {
    let palette = palette(game);
    let Some((_, kinds)) = LEGENDS.iter().find(|(name, _)| *name == game) else {
        return Vec::new();
    };
    kinds
        .iter()
        .map(|&(c, meaning)| {
            let grid = Grid {
                cells: vec![vec![c]],
            };
            let tile = (palette.tile)(&grid, 0, 0, c);
            let mut svg = format!(
                "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"swatch\" viewBox=\"0 0 {TILE} \
                 {TILE}\" width=\"20\" height=\"20\" role=\"img\" aria-label=\"{m}\">",
                m = escape(meaning)
            );
            if let Some(colour) = tile.ground {
                let _ = write!(
                    svg,
                    "<rect width=\"{TILE}\" height=\"{TILE}\" fill=\"{colour}\"/>"
                );
            } else {
                let _ = write!(
                    svg,
                    "<rect width=\"{TILE}\" height=\"{TILE}\" fill=\"none\" stroke=\"#ccc\"/>"
                );
            }
            draw_piece(&mut svg, tile, 0.0, 0.0);
            svg.push_str("</svg>");
            (svg, meaning)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PALETTES;

    /// Every game with a palette has a legend, each of its kinds drawn by
    /// the palette (a swatch with something on it) and named.
    #[test]
    fn every_game_with_a_palette_has_a_legend() {
        for (game, _) in PALETTES {
            let kinds = legend(game);
            assert!(kinds.len() >= 4, "{game}: {kinds:?}");
            for (swatch, meaning) in kinds {
                assert!(
                    swatch.starts_with("<svg") && swatch.contains("<rect"),
                    "{game}"
                );
                assert!(!meaning.is_empty());
            }
        }
        assert!(legend("a program's game").is_empty());
    }
}
