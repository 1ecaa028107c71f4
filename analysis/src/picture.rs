//! Level pictures: any game's level drawn as SVG from its text form (the
//! layout the coordinator rendered from the level itself): tiles, pieces,
//! the monk's cube as its net, rooms and doors.
//!
//! Every game's text form is a grid of characters followed by notes
//! (`gate 3,4 >`, `karma_goal 7 ...`, a dungeon's legend); [`level_svg`]
//! draws the grid tile by tile with the game's [`Palette`] and the notes it
//! knows (tilt's gates). A game without a palette (the synthetic load-test
//! game) is drawn with a neutral one. PNG pictures ([`png`]) draw their
//! letters with a small font bundled in the binary.

use std::fmt::Write;

use pregen_games::Game;
use pregen_games::cube::Cube;
use pregen_games::doors::Doors;
use pregen_games::dungeon::Dungeon;
use pregen_games::sokoban::Sokoban;
use pregen_games::tilt::Tilt;

use crate::svg::escape;

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

pub use crate::legend::legend;

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

/// The font PNG pictures draw their letters with, in the binary: DejaVu Sans
/// Mono Bold cut to printable ASCII (8 KB; `analysis/fonts/LICENSE`), so a
/// picture never depends on the fonts a machine has.
const FONT: &[u8] = include_bytes!("../fonts/DejaVuSansMono-Bold-ascii.ttf");

/// The family name inside [`FONT`].
const FONT_FAMILY: &str = "DejaVu Sans Mono";

/// An SVG picture rasterised to PNG, its letters in the bundled font
/// (whatever family the SVG names).
pub fn png(svg: &str) -> Result<Vec<u8>, String> {
    use resvg::tiny_skia;
    let tree = usvg::Tree::from_str(svg, &svg_options()).map_err(|e| e.to_string())?;
    let size = tree.size().to_int_size();
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height())
        .ok_or_else(|| format!("cannot rasterise {}x{}", size.width(), size.height()))?;
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    pixmap.encode_png().map_err(|e| e.to_string())
}

/// How SVG pictures are read: letters in the bundled font.
fn svg_options() -> usvg::Options<'static> {
    let mut options = usvg::Options::default();
    let fonts = options.fontdb_mut();
    fonts.load_font_data(FONT.to_vec());
    fonts.set_monospace_family(FONT_FAMILY);
    fonts.set_sans_serif_family(FONT_FAMILY);
    fonts.set_serif_family(FONT_FAMILY);
    options.font_family = FONT_FAMILY.to_string();
    options
}

/// The largest picture a game program may draw, in pixels a side.
const MOST_PIXELS: f32 = 4096.0;

/// A game program's picture, made safe to show: read as SVG and written
/// again from what it draws (shapes, images, letters; never scripts, links
/// or styles that reach out), as an `<svg>` element without a prolog.
/// `Err` says why it is not a picture.
pub fn program_picture(svg: &str) -> Result<String, String> {
    let tree = usvg::Tree::from_str(svg, &svg_options())
        .map_err(|e| format!("not an SVG picture: {e}"))?;
    let size = tree.size();
    if size.width() > MOST_PIXELS || size.height() > MOST_PIXELS {
        return Err(format!(
            "a picture of {}x{} pixels, more than {MOST_PIXELS} a side",
            size.width(),
            size.height()
        ));
    }
    let written = tree.to_string(&usvg::WriteOptions::default());
    let start = written
        .find("<svg")
        .ok_or_else(|| "the picture has no <svg> element".to_string())?;
    Ok(written[start..].to_string())
}

/// One level of a pack, found by seed, ready to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct PackLevel {
    /// The seed.
    pub seed: u64,
    /// The game.
    pub game: String,
    /// `<game>-<seed>`.
    pub level_id: String,
    /// The tier.
    pub tier: u32,
    /// The difficulty.
    pub difficulty: f64,
    /// The move count.
    pub moves: u32,
    /// The text form.
    pub layout: String,
    /// The stratum.
    pub stratum: u32,
    /// The JSON form.
    pub level_json: String,
    /// Its game program's picture ([`program_picture`]), when the program
    /// draws its levels; else the level is drawn from its text form.
    pub drawing: Option<String>,
}

impl PackLevel {
    /// The caption of its picture.
    pub fn caption(&self) -> String {
        format!(
            "{}: tier {:02}, difficulty {:.3}, {} moves",
            self.level_id, self.tier, self.difficulty, self.moves
        )
    }

    /// Its picture: its program's, framed with its caption, or drawn from
    /// its text form.
    pub fn svg(&self, scale: f64) -> String {
        let Some(drawing) = &self.drawing else {
            return level_svg(&self.game, &self.layout, &self.caption(), scale);
        };
        let (w, h) = usvg::Tree::from_str(drawing, &svg_options())
            .map(|t| (f64::from(t.size().width()), f64::from(t.size().height())))
            .unwrap_or((TILE, TILE));
        let title = escape(&self.caption());
        format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"level\" viewBox=\"0 0 {w} {h}\" \
             width=\"{}\" height=\"{}\" role=\"img\" aria-label=\"{title}\"><title>{title}</title>\n\
             {drawing}\n</svg>\n",
            w * scale,
            h * scale,
        )
    }
}

/// Which levels of a pack to find.
#[derive(Debug, Clone, PartialEq)]
pub enum Pick {
    /// These seeds (those the pack holds).
    Seeds(std::collections::BTreeSet<u64>),
    /// Every level of this tier.
    Tier(u32),
    /// Every level.
    All,
}

impl Pick {
    fn takes(&self, tier: u32, seed: u64) -> bool {
        match self {
            Pick::Seeds(seeds) => seeds.contains(&seed),
            Pick::Tier(t) => *t == tier,
            Pick::All => true,
        }
    }
}

/// The levels of the pack in `dir` with the given seeds (those it holds).
pub fn find_levels(
    dir: &std::path::Path,
    seeds: &std::collections::BTreeSet<u64>,
) -> Result<std::collections::BTreeMap<u64, PackLevel>, crate::AnalysisError> {
    pick_levels(dir, &Pick::Seeds(seeds.clone()))
}

/// The levels of the pack in `dir` that `pick` takes, by seed.
pub fn pick_levels(
    dir: &std::path::Path,
    pick: &Pick,
) -> Result<std::collections::BTreeMap<u64, PackLevel>, crate::AnalysisError> {
    use pregen_pack::read::{f64_column, read_batches, text_column, u64_column};
    use pregen_pack::schema::columns as c;
    let pack = pregen_pack::PackDir::new(dir);
    pack.require_complete()?;
    let mut found = std::collections::BTreeMap::new();
    for (tier, part) in pack.level_parts()? {
        if matches!(pick, Pick::Tier(t) if *t != tier) {
            continue;
        }
        for batch in read_batches(&part)? {
            let seed = u64_column(&batch, c::SEED, &part)?;
            let rows: Vec<usize> = (0..batch.num_rows())
                .filter(|&i| pick.takes(tier, seed[i]))
                .collect();
            if rows.is_empty() {
                continue;
            }
            let (game, id, layout) = (
                text_column(&batch, c::GAME, &part)?,
                text_column(&batch, c::LEVEL_ID, &part)?,
                text_column(&batch, c::LAYOUT, &part)?,
            );
            let (difficulty, moves) = (
                f64_column(&batch, c::DIFFICULTY, &part)?,
                f64_column(&batch, c::MOVES, &part)?,
            );
            let json = text_column(&batch, c::LEVEL_JSON, &part)?;
            let stratum = pregen_pack::read::u32_column(&batch, c::STRATUM, &part)?;
            for i in rows {
                found.insert(
                    seed[i],
                    PackLevel {
                        seed: seed[i],
                        game: game.value(i).to_string(),
                        level_id: id.value(i).to_string(),
                        tier,
                        difficulty: difficulty[i],
                        moves: moves[i] as u32,
                        layout: layout.value(i).to_string(),
                        stratum: stratum[i],
                        level_json: json.value(i).to_string(),
                        drawing: None,
                    },
                );
            }
        }
    }
    draw_by_program(&pack, &mut found)?;
    Ok(found)
}

/// Asks the pack's game program for the pictures of `levels`, when it draws
/// them (its description says `renders`). A picture it cannot give, or
/// that is not a picture, is reported on stderr and the level is drawn from
/// its text form.
fn draw_by_program(
    pack: &pregen_pack::PackDir,
    levels: &mut std::collections::BTreeMap<u64, PackLevel>,
) -> Result<(), crate::AnalysisError> {
    let manifest = pack.read_manifest()?;
    if !manifest.program.as_ref().is_some_and(|p| p.renders) || levels.is_empty() {
        return Ok(());
    }
    let game = manifest.job.game_kind()?;
    let plan = manifest.job.plan();
    let mut strata = std::collections::BTreeMap::new();
    for level in levels.values_mut() {
        let Some(stratum) = plan.get(level.stratum as usize) else {
            continue;
        };
        let prepared = match strata.entry(level.stratum) {
            std::collections::btree_map::Entry::Occupied(known) => known.into_mut(),
            std::collections::btree_map::Entry::Vacant(new) => new.insert(
                game.prepare(&stratum.params)
                    .map_err(|e| pregen_pack::PackError::Job(e.to_string()))?,
            ),
        };
        let drawn = prepared.render(&level.level_json, &level.layout).map(|d| {
            d.map_err(|e| e.to_string())
                .and_then(|svg| program_picture(&svg))
        });
        match drawn {
            Some(Ok(svg)) => level.drawing = Some(svg),
            Some(Err(e)) => eprintln!(
                "warning: {}: {e}; drawn from its text form instead",
                level.level_id
            ),
            None => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A game program's picture is shown as what it draws, never as what
    /// it says: scripts, handlers and links outward are gone; a document
    /// that is no picture, or a huge one, is refused.
    #[test]
    fn a_programs_picture_is_made_safe() {
        let hostile = r##"<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="50" height="40" onload="alert(1)">
            <script>alert(2)</script>
            <a href="javascript:alert(3)"><rect width="10" height="10" fill="#dd3333"/></a>
            <image href="http://example.com/x.png" width="5" height="5"/>
            <foreignObject><div xmlns="http://www.w3.org/1999/xhtml">hi</div></foreignObject>
        </svg>"##;
        let safe = program_picture(hostile).expect("a picture");
        assert!(safe.starts_with("<svg"), "{safe}");
        assert!(safe.contains("#dd3333"), "what it draws is kept: {safe}");
        for gone in [
            "script",
            "alert",
            "onload",
            "javascript",
            "example.com",
            "foreignObject",
        ] {
            assert!(!safe.contains(gone), "{gone} in {safe}");
        }
        assert!(program_picture("not svg").is_err());
        let huge = r#"<svg xmlns="http://www.w3.org/2000/svg" width="100000" height="10"/>"#;
        assert!(
            program_picture(huge)
                .expect_err("too big")
                .contains("more than")
        );
        let level = PackLevel {
            seed: 1,
            game: "park".into(),
            level_id: "park-1".into(),
            tier: 1,
            difficulty: 2.0,
            moves: 3,
            layout: String::new(),
            stratum: 0,
            level_json: "{}".into(),
            drawing: Some(safe),
        };
        let framed = level.svg(2.0);
        assert!(framed.contains("width=\"100\" height=\"80\""), "{framed}");
        assert!(framed.contains("<title>park-1: tier 01"), "{framed}");
        png(&framed).expect("it rasterises");
    }

    #[test]
    fn every_game_has_its_palette() {
        use pregen_games::GameKind;
        use pregen_games::synthetic::Synthetic;
        for game in GameKind::all() {
            let drawn = PALETTES.iter().any(|(name, _)| *name == game.name());
            assert!(
                drawn || game.name() == Synthetic::NAME,
                "{} has no palette",
                game.name()
            );
        }
    }

    fn tiles(svg: &str, what: &str) -> usize {
        svg.matches(what).count()
    }

    /// PNGs carry their letters: the tilt board's obstacle letters and the
    /// cube's face names change pixels, drawn in the bundled font.
    #[test]
    fn png_pictures_draw_their_letters() {
        let layouts = [
            ("tilt", "######\n#1.2S#\n#CB.H#\n######\n"),
            ("synthetic", "#####\n#abc#\n#####\n"),
        ];
        for (game, layout) in layouts {
            let svg = level_svg(game, layout, "t", 1.0);
            assert!(svg.contains("<text"), "{game}: letters in the SVG");
            let mut bare = String::new();
            let mut rest = svg.as_str();
            while let Some(at) = rest.find("<text") {
                bare.push_str(&rest[..at]);
                let end = rest[at..].find("</text>").expect("closed") + at + "</text>".len();
                rest = &rest[end..];
            }
            bare.push_str(rest);
            let with = png(&svg).expect("rasterised");
            let without = png(&bare).expect("rasterised");
            assert_ne!(with, without, "{game}: the letters drew nothing");
        }
    }

    #[test]
    fn notes_are_not_rows() {
        for note in [
            "gate 1,2 ^",
            "karma_goal 7 difficulty 5",
            "rooms 4 colours 2 required 1",
            "door 3 9,4 1>5",
            "start 27 exit 2",
        ] {
            assert!(is_note(note), "{note}");
        }
        for row in [
            "########",
            "   k##",
            "ks#M#k##k",
            "#  $.#",
            "#.$+  #",
            "^^AA000",
        ] {
            assert!(!is_note(row), "{row}");
        }
    }

    #[test]
    fn a_sokoban_level_is_drawn_with_its_pieces_and_no_floor_outside() {
        let svg = level_svg("sokoban", "  ####\n###  #\n#@$ .#\n######\n", "t", 1.0);
        assert_eq!(tiles(&svg, "<circle"), 1, "the player");
        assert_eq!(tiles(&svg, "<path"), 1, "the goal");
        assert_eq!(tiles(&svg, "rx=\"2\""), 1, "the box");
        // The two spaces at the top left are outside: no rectangle covers x=0, y=0.
        assert!(!svg.contains("<rect x=\"0\" y=\"0\""), "{svg}");
        assert!(svg.contains("viewBox=\"0 0 144 96\""), "{svg}");
    }

    #[test]
    fn a_tilt_level_draws_fruit_pieces_and_gates() {
        let svg = level_svg("tilt", "#####\n#1.2#\n#H.^#\n#####\ngate 1,1 >\n", "t", 1.0);
        assert_eq!(tiles(&svg, "<circle"), 3, "two fruit and a hedgehog");
        assert!(svg.contains("<g transform=\"rotate(90"), "the gate: {svg}");
        assert!(svg.contains(">1</text>") && svg.contains(">2</text>"));
    }

    #[test]
    fn the_cube_is_drawn_as_its_net() {
        let layout = "   k##\n   ###\n   #.#\nks#M#k##k\n#k.k#ks##\n##k###s##\n   #k#\n   ##k\n   ###\n   s##\n   ###\n   #k#\nkarma_goal 7 difficulty 5\n";
        let svg = level_svg("cube", layout, "t", 1.0);
        for face in ['B', 'L', 'T', 'R', 'F', 'D'] {
            assert!(svg.contains(&format!(">{face}</text>")), "face {face}");
        }
        assert!(svg.contains(">M</text>"), "the monk");
    }

    #[test]
    fn a_picture_rasterises_to_png() {
        let svg = level_svg("sokoban", "#####\n#@$.#\n#####\n", "t", 1.0);
        let png = png(&svg).expect("png");
        assert_eq!(&png[1..4], b"PNG");
    }

    #[test]
    fn titles_are_escaped() {
        let svg = level_svg("tilt", "###\n", "a <b> & c", 1.0);
        assert!(svg.contains("a &lt;b&gt; &amp; c"));
    }
}
