//! Level pictures: any game's level drawn as SVG from its text form (the
//! layout the coordinator rendered from the level itself): tiles, pieces,
//! the monk's cube as its net, rooms and doors.
//!
//! Every game's text form is a grid of characters followed by notes
//! (`gate 3,4 >`, `karma_goal 7 ...`, a dungeon's legend); [`level_svg`]
//! draws the grid tile by tile with the game's [`Palette`] and the notes it
//! knows (tilt's gates). A game without a palette (the synthetic load-test
//! game) is drawn with a neutral one; [`legend`] names each kind of tile.
//!
//! Plain text in, SVG text out, with nothing but the games beneath: the
//! HTML report (`pregen-analysis`) and the browser build (`pregen-web`)
//! draw the same pictures from it.

use std::fmt::Write;

use pregen_games::Game;
use pregen_games::cube::Cube;
use pregen_games::doors::Doors;
use pregen_games::dungeon::Dungeon;
use pregen_games::sokoban::Sokoban;
use pregen_games::tilt::Tilt;

mod legend;

pub use legend::legend;

/// Size of a tile in SVG units (and pixels at scale 1).
pub const TILE: f64 = 24.0;

const WALL: &str = "#3b3b46";
const FLOOR: &str = "#efe6d2";
const BLUE: &str = "#2f6fd0";
const GOLD: &str = "#e0a800";
const RED: &str = "#c0392b";
const GREEN: &str = "#2e8b57";
const PURPLE: &str = "#8e44ad";
const BROWN: &str = "#a0522d";
/// Fruit, door and button colours by number (1-based in the games).
const COLOURS: [&str; 8] = [
    "#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#e377c2", "#17becf", "#bcbd22",
];
/// Room floors of doors levels by room number.
const ROOMS: [&str; 10] = [
    "#f6d8ae", "#cfe3f4", "#d6efc7", "#f3cfe0", "#e6dcf5", "#fbeec1", "#cdeee9", "#f0d5c8",
    "#dfe7c4", "#e3e3e3",
];

/// A piece drawn on a tile.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Piece {
    Disc(&'static str),
    Square(&'static str),
    Diamond(&'static str),
    Cross(&'static str),
    /// A triangle pointing up, right, down or left (0..4).
    Arrow(&'static str, u8),
}

/// One tile: its ground (none: outside the level), a piece, a letter.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct Tile {
    pub(crate) ground: Option<&'static str>,
    piece: Option<Piece>,
    label: Option<char>,
}

fn ground(colour: &'static str) -> Tile {
    Tile {
        ground: Some(colour),
        ..Tile::default()
    }
}

fn on(colour: &'static str, piece: Piece, label: Option<char>) -> Tile {
    Tile {
        ground: Some(colour),
        piece: Some(piece),
        label,
    }
}

/// `^ > v <` as a direction 0..4.
fn direction(c: char) -> Option<u8> {
    match c {
        '^' => Some(0),
        '>' => Some(1),
        'v' => Some(2),
        '<' => Some(3),
        _ => None,
    }
}

/// Index of `c` from `first` (`'a'` -> 0), or `None` outside `first..=last`.
fn index(c: char, first: char, last: char) -> Option<usize> {
    (first..=last)
        .contains(&c)
        .then(|| c as usize - first as usize)
}

/// The grid as tiles, with a game's rules of reading it.
pub(crate) struct Grid {
    pub(crate) cells: Vec<Vec<char>>,
}

impl Grid {
    fn at(&self, x: i64, y: i64) -> char {
        if x < 0 || y < 0 {
            return ' ';
        }
        self.cells
            .get(y as usize)
            .and_then(|r| r.get(x as usize))
            .copied()
            .unwrap_or(' ')
    }

    fn width(&self) -> usize {
        self.cells.iter().map(Vec::len).max().unwrap_or(0)
    }

    /// Whether the cell sits in a wall line (walls on two opposite sides).
    fn in_wall(&self, x: i64, y: i64, wall: char) -> bool {
        (self.at(x - 1, y) == wall && self.at(x + 1, y) == wall)
            || (self.at(x, y - 1) == wall && self.at(x, y + 1) == wall)
    }
}

/// A game's way of drawing its text form.
pub struct Palette {
    pub(crate) tile: TileFn,
}

fn tilt(_: &Grid, _: i64, _: i64, c: char) -> Tile {
    match c {
        '#' => ground(WALL),
        '~' => ground("#8fc3e6"),
        '1'..='6' => {
            let i = c as usize - '1' as usize;
            on(FLOOR, Piece::Disc(COLOURS[i]), Some(c))
        }
        'S' | 'C' | 'B' | 's' | 'c' | 'b' => {
            let colour = match c.to_ascii_uppercase() {
                'S' => "#8a8a8a",
                'C' => RED,
                _ => BROWN,
            };
            let under = if c.is_ascii_lowercase() {
                "#8fc3e6"
            } else {
                FLOOR
            };
            on(under, Piece::Square(colour), Some(c.to_ascii_uppercase()))
        }
        'H' => on(FLOOR, Piece::Disc("#7a5230"), Some('H')),
        _ => match direction(c) {
            Some(d) => on(FLOOR, Piece::Arrow("#c07020", d), None),
            None => ground(FLOOR),
        },
    }
}

fn sokoban(_: &Grid, _: i64, _: i64, c: char) -> Tile {
    match c {
        '#' => ground(WALL),
        '.' => on(FLOOR, Piece::Diamond(GOLD), None),
        '$' => on(FLOOR, Piece::Square("#b5651d"), None),
        '*' => on(FLOOR, Piece::Square(GREEN), None),
        '@' => on(FLOOR, Piece::Disc(BLUE), None),
        '+' => on("#f3d98b", Piece::Disc(BLUE), None),
        OUTSIDE => Tile::default(),
        _ => ground(FLOOR),
    }
}

fn cube(_: &Grid, _: i64, _: i64, c: char) -> Tile {
    match c {
        ' ' => Tile::default(),
        '#' => ground("#6b5d4f"),
        'k' => on(FLOOR, Piece::Disc(GOLD), None),
        's' => on(FLOOR, Piece::Square(RED), None),
        'M' => on(FLOOR, Piece::Disc(BLUE), Some('M')),
        _ => ground(FLOOR),
    }
}

fn doors(grid: &Grid, x: i64, y: i64, c: char) -> Tile {
    // An object stands on the floor of the room around it.
    let room_floor = || {
        [(0, -1), (1, 0), (0, 1), (-1, 0)]
            .iter()
            .find_map(|(dx, dy)| grid.at(x + dx, y + dy).to_digit(10))
            .map_or(FLOOR, |d| ROOMS[d as usize])
    };
    match c {
        '#' => ground("#2d2d38"),
        '0'..='9' => ground(ROOMS[c as usize - '0' as usize]),
        '+' => ground("#fdfdfd"),
        '^' => ground("#f1c40f"),
        '@' => on(room_floor(), Piece::Disc(GREEN), None),
        'p' => on(room_floor(), Piece::Disc("#ff69b4"), None),
        'x' => on(room_floor(), Piece::Cross(RED), None),
        _ => {
            if let Some(i) = index(c, 'A', 'H') {
                ground(COLOURS[i])
            } else if let Some(i) = index(c, 'a', 'h') {
                on(room_floor(), Piece::Diamond(COLOURS[i]), None)
            } else {
                ground(FLOOR)
            }
        }
    }
}

fn dungeon(grid: &Grid, x: i64, y: i64, c: char) -> Tile {
    const DOOR: &str = "#c8a165";
    match c {
        '#' => ground(WALL),
        '.' => ground(FLOOR),
        '+' => ground(DOOR),
        '=' => on(DOOR, Piece::Square(PURPLE), None),
        // `S` and `E` are the start and the exit, unless they stand in a
        // wall line: then a door locked by key `s` or `e`.
        'S' if !grid.in_wall(x, y, '#') => on(FLOOR, Piece::Disc(GREEN), Some('S')),
        'E' if !grid.in_wall(x, y, '#') => on(FLOOR, Piece::Square(GREEN), Some('E')),
        'a'..='z' => on(FLOOR, Piece::Disc(GOLD), Some(c)),
        '0'..='9' => on(FLOOR, Piece::Diamond(PURPLE), Some(c)),
        'A'..='Z' => on(DOOR, Piece::Square(BROWN), Some(c)),
        _ => match direction(c) {
            Some(d) => on(DOOR, Piece::Arrow(BROWN, d), None),
            None => ground(FLOOR),
        },
    }
}

fn neutral(_: &Grid, _: i64, _: i64, c: char) -> Tile {
    match c {
        '#' => ground(WALL),
        ' ' => Tile::default(),
        c if c.is_alphanumeric() => on(FLOOR, Piece::Disc(BLUE), Some(c)),
        _ => ground(FLOOR),
    }
}

/// How a tile of a game is drawn from its character and its neighbours.
type TileFn = fn(&Grid, i64, i64, char) -> Tile;

/// Each game's tiles, by the registry's names. A game without an entry is
/// drawn with `neutral`; a test holds every registered game to an entry,
/// except the synthetic load-test game, which has no levels to look at.
pub(crate) const PALETTES: &[(&str, TileFn)] = &[
    (Cube::NAME, cube),
    (Doors::NAME, doors),
    (Dungeon::NAME, dungeon),
    (Sokoban::NAME, sokoban),
    (Tilt::NAME, tilt),
];

/// The palette of `game` (a neutral one for a game without its own).
pub fn palette(game: &str) -> Palette {
    let tile = PALETTES
        .iter()
        .find(|(name, _)| *name == game)
        .map_or(neutral as TileFn, |&(_, tile)| tile);
    Palette { tile }
}

/// Whether a line of a text form is a note (`gate 1,2 ^`, `karma_goal 7
/// difficulty 5`, `rooms 4 colours 2 required 1`, `door 3 9,4 1>5`) rather
/// than a grid row: a lower-case word, a space, then more.
fn is_note(line: &str) -> bool {
    match line.split_once(' ') {
        Some((word, rest)) => {
            !word.is_empty()
                && !rest.is_empty()
                && word.chars().all(|c| c.is_ascii_lowercase() || c == '_')
                && word.len() > 1
        }
        None => false,
    }
}

/// Draws a level of `game` from its text form: an `<svg>` element of
/// `TILE * scale` pixels a tile, with `title` as its accessible name.
pub fn level_svg(game: &str, layout: &str, title: &str, scale: f64) -> String {
    let palette = palette(game);
    let (mut rows, mut notes) = (Vec::new(), Vec::new());
    for line in layout.lines() {
        if line.starts_with(';') || line.trim().is_empty() {
            continue;
        }
        if is_note(line) {
            notes.push(line);
        } else {
            rows.push(line.chars().collect::<Vec<_>>());
        }
    }
    let mut grid = Grid { cells: rows };
    if game == Sokoban::NAME {
        mark_outside(&mut grid);
    }
    let (w, h) = (grid.width() as f64 * TILE, grid.cells.len() as f64 * TILE);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"level\" viewBox=\"0 0 {w} {h}\" \
         width=\"{}\" height=\"{}\" role=\"img\" aria-label=\"{}\"><title>{}</title>\n",
        w * scale,
        h * scale,
        escape(title),
        escape(title)
    );
    let mut pieces = String::new();
    for (y, row) in grid.cells.iter().enumerate() {
        let tiles: Vec<Tile> = (0..row.len())
            .map(|x| (palette.tile)(&grid, x as i64, y as i64, row[x]))
            .collect();
        // Runs of one ground colour are one rectangle.
        let mut x = 0;
        for run in tiles.chunk_by(|a, b| a.ground == b.ground) {
            if let Some(colour) = run[0].ground {
                let _ = writeln!(
                    svg,
                    "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{TILE}\" fill=\"{colour}\" \
                     shape-rendering=\"crispEdges\"/>",
                    x as f64 * TILE,
                    y as f64 * TILE,
                    run.len() as f64 * TILE
                );
            }
            x += run.len();
        }
        for (x, &tile) in tiles.iter().enumerate() {
            draw_piece(&mut pieces, tile, x as f64 * TILE, y as f64 * TILE);
        }
    }
    svg.push_str(&pieces);
    if game == Cube::NAME {
        cube_faces(&mut svg, &grid);
    }
    for note in notes {
        if let Some(gate) = note.strip_prefix("gate ") {
            tilt_gate(&mut svg, gate);
        }
    }
    svg.push_str("</svg>");
    svg
}

/// Sokoban's spaces outside the walls are not floor: what the player cannot
/// reach from the level's edge without crossing a wall is.
fn mark_outside(grid: &mut Grid) {
    let (w, h) = (grid.width(), grid.cells.len());
    for row in &mut grid.cells {
        row.resize(w, ' ');
    }
    let mut stack: Vec<(usize, usize)> = (0..h)
        .flat_map(|y| [(0, y), (w.saturating_sub(1), y)])
        .chain((0..w).flat_map(|x| [(x, 0), (x, h.saturating_sub(1))]))
        .collect();
    while let Some((x, y)) = stack.pop() {
        if y >= h || x >= w || !matches!(grid.cells[y][x], ' ' | '-' | '_') {
            continue;
        }
        grid.cells[y][x] = OUTSIDE;
        stack.extend([
            (x + 1, y),
            (x.wrapping_sub(1), y),
            (x, y + 1),
            (x, y.wrapping_sub(1)),
        ]);
    }
}

/// A cell outside a sokoban level's walls.
const OUTSIDE: char = '\u{1}';

pub(crate) fn draw_piece(svg: &mut String, tile: Tile, x: f64, y: f64) {
    let (cx, cy, r) = (x + TILE / 2.0, y + TILE / 2.0, TILE * 0.36);
    match tile.piece {
        None => {}
        Some(Piece::Disc(colour)) => {
            let _ = writeln!(
                svg,
                "<circle cx=\"{cx}\" cy=\"{cy}\" r=\"{r}\" fill=\"{colour}\"/>"
            );
        }
        Some(Piece::Square(colour)) => {
            let _ = writeln!(
                svg,
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"2\" fill=\"{colour}\"/>",
                cx - r,
                cy - r,
                2.0 * r,
                2.0 * r
            );
        }
        Some(Piece::Diamond(colour)) => {
            let _ = writeln!(
                svg,
                "<path d=\"M{cx} {} L{} {cy} L{cx} {} L{} {cy} Z\" fill=\"{colour}\"/>",
                cy - r,
                cx + r,
                cy + r,
                cx - r
            );
        }
        Some(Piece::Cross(colour)) => {
            let _ = writeln!(
                svg,
                "<path d=\"M{} {} L{} {} M{} {} L{} {}\" stroke=\"{colour}\" stroke-width=\"3\"/>",
                cx - r,
                cy - r,
                cx + r,
                cy + r,
                cx + r,
                cy - r,
                cx - r,
                cy + r
            );
        }
        Some(Piece::Arrow(colour, d)) => {
            let _ = writeln!(
                svg,
                "<path d=\"M{cx} {} L{} {} L{} {} Z\" fill=\"{colour}\" transform=\"rotate({} {cx} {cy})\"/>",
                cy - r,
                cx + r,
                cy + r,
                cx - r,
                cy + r,
                u32::from(d) * 90
            );
        }
    }
    if let Some(letter) = tile.label {
        let _ = writeln!(
            svg,
            "<text x=\"{cx}\" y=\"{}\" font-family=\"monospace\" font-size=\"{}\" \
             font-weight=\"bold\" text-anchor=\"middle\" fill=\"#fff\">{}</text>",
            cy + TILE * 0.18,
            TILE * 0.5,
            escape(&letter.to_string())
        );
    }
}

/// The cube's six faces outlined in its net, each named (B, L, T, R, F, D).
fn cube_faces(svg: &mut String, grid: &Grid) {
    const NET: [(usize, usize, char); 6] = [
        (1, 0, 'B'),
        (0, 1, 'L'),
        (1, 1, 'T'),
        (2, 1, 'R'),
        (1, 2, 'F'),
        (1, 3, 'D'),
    ];
    for (fx, fy, name) in NET {
        if grid.at(fx as i64 * 3, fy as i64 * 3) == ' '
            && grid.at(fx as i64 * 3 + 1, fy as i64 * 3 + 1) == ' '
        {
            continue;
        }
        let (x, y) = (fx as f64 * 3.0 * TILE, fy as f64 * 3.0 * TILE);
        let _ = writeln!(
            svg,
            "<rect x=\"{x}\" y=\"{y}\" width=\"{s}\" height=\"{s}\" fill=\"none\" stroke=\"#222\" stroke-width=\"2\"/>\
             <text x=\"{}\" y=\"{}\" font-family=\"sans-serif\" font-size=\"{}\" fill=\"#222\" opacity=\"0.6\">{name}</text>",
            x + 2.0,
            y + TILE * 0.4,
            TILE * 0.4,
            s = 3.0 * TILE
        );
    }
}

/// A tilt gate, `x,y d`: a bar on the edge of cell (x, y) towards `d`, with a
/// notch showing the way it lets fruit through.
fn tilt_gate(svg: &mut String, gate: &str) {
    let mut parts = gate.split_whitespace();
    let (Some(at), Some(d)) = (parts.next(), parts.next()) else {
        return;
    };
    let Some((x, y)) = at.split_once(',') else {
        return;
    };
    let (Ok(x), Ok(y), Some(d)) = (
        x.parse::<f64>(),
        y.parse::<f64>(),
        d.chars().next().and_then(direction),
    ) else {
        return;
    };
    let (cx, cy) = ((x + 0.5) * TILE, (y + 0.5) * TILE);
    let _ = writeln!(
        svg,
        "<g transform=\"rotate({} {cx} {cy})\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"4\" fill=\"{GREEN}\"/>\
         <path d=\"M{} {} L{cx} {} L{} {} Z\" fill=\"{GREEN}\"/></g>",
        u32::from(d) * 90,
        cx - TILE / 2.0,
        cy - TILE / 2.0 - 2.0,
        TILE,
        cx - TILE * 0.2,
        cy - TILE / 2.0 + 2.0,
        cy - TILE / 2.0 + TILE * 0.3,
        cx + TILE * 0.2,
        cy - TILE / 2.0 + 2.0
    );
}

/// `text` made safe inside SVG or HTML text and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests;
