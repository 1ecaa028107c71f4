//! Level pictures in the analysis tools: each game's levels drawn from
//! their text forms by [`pregen_pictures`] (re-exported here), a game
//! program's own pictures made safe to show, PNG pictures whose letters
//! are drawn with a small font bundled in the binary, and the levels of a
//! pack found to draw.

pub use pregen_pictures::{Palette, TILE, escape, legend, level_svg, palette};

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

use pregen_pack::job::ProgramSource;

/// The levels of the pack in `dir` with the given seeds (those it holds),
/// a game program's drawn by it only when `judge` names it.
pub fn find_levels(
    dir: &std::path::Path,
    seeds: &std::collections::BTreeSet<u64>,
    judge: ProgramSource<'_>,
) -> Result<std::collections::BTreeMap<u64, PackLevel>, crate::AnalysisError> {
    pick_levels(dir, &Pick::Seeds(seeds.clone()), judge)
}

/// The levels of the pack in `dir` that `pick` takes, by seed: a game
/// program that draws its levels draws them only when `judge` names it
/// ([`ProgramSource`]: the job that made the pack, or your copy of the
/// program; never the command the manifest names), else they are drawn
/// from their text form.
pub fn pick_levels(
    dir: &std::path::Path,
    pick: &Pick,
    judge: ProgramSource<'_>,
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
    draw_by_program(&pack, &mut found, judge)?;
    Ok(found)
}

/// Asks the pack's game program, as `judge` names it, for the pictures of
/// `levels`, when it draws them (its description says `renders`). A
/// picture it cannot give, or that is not a picture, is reported on stderr
/// and the level is drawn from its text form; so are all of them when no
/// program is named (a warning says how to name it).
fn draw_by_program(
    pack: &pregen_pack::PackDir,
    levels: &mut std::collections::BTreeMap<u64, PackLevel>,
    judge: ProgramSource<'_>,
) -> Result<(), crate::AnalysisError> {
    let manifest = pack.read_manifest()?;
    if !manifest.program.as_ref().is_some_and(|p| p.renders) || levels.is_empty() {
        return Ok(());
    }
    let Some(job) = crate::runnable_job(&manifest, judge)? else {
        eprintln!(
            "warning: the pack's game program draws its levels, but a pack's program runs only \
             as you name it (--job FILE or --program-dir DIR), never as its manifest says: \
             drawn from their text form"
        );
        return Ok(());
    };
    let game = job.game_kind()?;
    let plan = job.plan();
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
    fn a_picture_rasterises_to_png() {
        let svg = level_svg("sokoban", "#####\n#@$.#\n#####\n", "t", 1.0);
        let png = png(&svg).expect("png");
        assert_eq!(&png[1..4], b"PNG");
    }
}
