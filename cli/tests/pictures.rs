//! Level pictures: `pregen analysis render` draws a level as SVG or PNG, and
//! every game's HTML report, with its gallery and campaign strip, renders in
//! headless Chromium without a console message.

use crate::common::needs::{Need, needs};
use std::path::Path;
use std::process::Output;

use crate::common::browser::screenshot;
use crate::common::{pregen, pregen_stdout, report_html, write_job};

/// A small pack of `game` with default params.
fn small_pack(root: &Path, game: &str) -> std::path::PathBuf {
    let job = write_job(
        &root.join(game),
        &format!("pack = \"{game}\"\ngame = \"{game}\"\ncount = 20\n[campaigns]\nlength = 5\n"),
    );
    let out = pregen()
        .args(["run", "--no-progress", "--workers", "1", "--out"])
        .arg(root.join("out"))
        .arg(&job)
        .output()
        .expect("run pregen");
    assert!(
        out.status.success(),
        "{game}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    root.join("out").join(game)
}

/// The first seed of the pack's easiest tier.
fn a_seed(pack: &Path) -> u64 {
    let json: serde_json::Value =
        serde_json::from_str(&pregen_stdout(&["analysis", "summary", "--json"], pack))
            .expect("summary");
    assert!(json["tiers"].as_object().is_some_and(|t| !t.is_empty()));
    let text = pregen_stdout(&["analysis", "levels", "--tier", "1"], pack);
    let id = text
        .lines()
        .find_map(|l| l.strip_prefix("; id "))
        .and_then(|l| l.split_whitespace().next())
        .expect("a level id");
    id.rsplit('-')
        .next()
        .expect("seed")
        .parse()
        .expect("a number")
}

/// `pregen analysis render ARGS -o OUT PACK`.
fn render(args: &[&str], out: &Path, pack: &Path) -> Output {
    pregen()
        .args(["analysis", "render"])
        .args(args)
        .arg(out)
        .arg(pack)
        .output()
        .expect("render")
}

/// [`render`], which must succeed.
fn rendered(args: &[&str], out: &Path, pack: &Path) {
    let done = render(args, out, pack);
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
}

/// `pregen analysis render ARGS PACK`.
fn render_to_stdout(args: &[&str], pack: &Path) -> Output {
    pregen()
        .args(["analysis", "render"])
        .args(args)
        .arg(pack)
        .output()
        .expect("render")
}

#[test]
fn render_draws_a_level_as_svg_and_png() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pack = small_pack(dir.path(), "sokoban");
    let seed = a_seed(&pack);
    let svg = pregen_stdout(
        &["analysis", "render", "--seed", &seed.to_string(), "-o", "-"],
        &pack,
    );
    assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"), "{svg}");
    assert!(svg.contains(&format!("sokoban-{seed:020}")), "titled");
    assert!(svg.contains("<circle"), "the player is drawn");
    let png = dir.path().join("level.png");
    rendered(&["--seed", &seed.to_string(), "-o"], &png, &pack);
    let bytes = std::fs::read(&png).expect("png written");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");

    // A seed the pack does not hold is refused by name.
    let out = render_to_stdout(&["--seed", "999999999", "-o", "-"], &pack);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("seed 999999999 is not a level"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // An extension that is neither picture format is refused, nothing written.
    let jpg = dir.path().join("level.jpg");
    let out = render(&["--seed", &seed.to_string(), "-o"], &jpg, &pack);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("unknown picture format `.jpg`"), "{stderr}");
    assert!(!jpg.exists());

    // Many at once: a tier, or every level, into a folder.
    let tier_one = dir.path().join("tier-1");
    rendered(&["--tier", "1", "--format", "png", "-o"], &tier_one, &pack);
    let summary = pregen_analysis::summarize(&pack).expect("summary");
    let pictures: Vec<_> = std::fs::read_dir(&tier_one).expect("folder").collect();
    assert_eq!(pictures.len() as u64, summary.tiers[&1]);
    let all = dir.path().join("all");
    rendered(&["--all", "-o"], &all, &pack);
    let svgs = std::fs::read_dir(&all).expect("folder").count() as u64;
    assert_eq!(svgs, summary.tiers.values().sum::<u64>());
    let tier_of_seed = pregen_analysis::picture::find_levels(
        &pack,
        &[seed].into(),
        pregen_pack::job::ProgramSource::Unnamed,
    )
    .expect("the level")[&seed]
        .tier;
    let named = std::fs::read_dir(&all)
        .expect("folder")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .find(|n| n.ends_with(&format!("-sokoban-{seed:020}.svg")))
        .expect("the seed's picture");
    assert!(
        named.starts_with(&format!("tier-{tier_of_seed:02}-rank-")),
        "{named}"
    );

    // A contact sheet of a tier's hardest: its 3 hardest (all, when it holds
    // fewer), named by rank.
    let hardest = dir.path().join("hardest");
    rendered(&["--tier", "1", "--hardest", "3", "-o"], &hardest, &pack);
    let mut names: Vec<String> = std::fs::read_dir(&hardest)
        .expect("folder")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    names.sort();
    let n = summary.tiers[&1];
    let kept = n.min(3);
    let ranks: Vec<String> = (n - kept + 1..=n)
        .map(|r| format!("tier-01-rank-{r:05}-"))
        .collect();
    assert_eq!(names.len() as u64, kept, "{names:?}");
    for (name, rank) in names.iter().zip(&ranks) {
        assert!(name.starts_with(rank), "{name} is not {rank}");
    }
    let out = render(
        &["--seeds", &seed.to_string(), "--hardest", "3", "-o"],
        &hardest,
        &pack,
    );
    assert!(!out.status.success(), "--hardest needs a tier or all");
}

#[test]
fn every_games_report_shows_its_levels_in_chromium() {
    if !needs(&[Need::Chromium]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    for game in ["tilt", "sokoban", "cube", "doors", "dungeon"] {
        let pack = small_pack(dir.path(), game);
        // The independent readers check every game's pack too, and every
        // level replays.
        crate::pack::check_with_pyarrow(&pack);
        let verified = pregen_stdout(&["analysis", "verify"], &pack);
        assert!(
            verified.starts_with("20 levels replayed"),
            "{game}: {verified}"
        );
        let page = dir.path().join(format!("{game}.html"));
        let html = report_html(&pack, &page, &[]);
        let tiers = html.matches("<h3>Tier ").count();
        assert!(tiers >= 1, "{game}: a gallery");
        // The rating explained where designers look: the model's
        // terms, and every picture's share of each.
        assert!(html.contains("<h2>Rating</h2>"), "{game}: the model");
        assert_eq!(
            html.matches("; terms: bias ").count(),
            3 * tiers + 5,
            "{game}: every caption shows the terms"
        );
        if game == "sokoban" {
            assert!(html.contains("sokoban-boxoban") && html.contains("AUC hard vs medium"));
            assert!(
                html.contains(" pushes; terms: bias "),
                "sokoban captions show pushes"
            );
        }

        let shot = dir.path().join(format!("{game}.png"));
        let run = screenshot(&dir.path().join(format!("chromium-{game}")), &shot, &page);
        let (dom, log) = (
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr),
        );
        assert!(run.status.success(), "{game}: chromium failed\n{log}");
        // The page has no scripts: any console line is a fault of the page.
        let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
        assert!(console.is_empty(), "{game}: console messages {console:#?}");
        // The parsed page holds every picture: three per tier, five in the strip.
        let pictures = dom
            .matches("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"level\"")
            .count();
        assert_eq!(
            pictures,
            3 * tiers + 5,
            "{game}: pictures in the rendered page"
        );
        assert!(dom.contains("Campaign 1, level by level"), "{game}");
        // The legend: each kind of the game's tiles drawn and named.
        assert!(dom.contains("<h2>Legend</h2>"), "{game}: a legend");
        assert_eq!(
            dom.matches("class=\"swatch\"").count(),
            pregen_analysis::picture::legend(game).len(),
            "{game}: every kind in the legend"
        );
        let png = std::fs::read(&shot).expect("a screenshot");
        assert!(
            png.len() > 20_000,
            "{game}: the screenshot is {} bytes",
            png.len()
        );
        fits_1280_pixels(
            game,
            &dir.path().join(format!("chromium-{game}-1280")),
            &html,
        );
    }
}

/// The report laid out by Chromium in a window 1280 pixels wide: the page
/// needs no sideways scrolling, and no table (the tiers' metrics are the
/// widest) is cut or scrolls inside its box. A copy of the page measures
/// itself with a script and writes the figures into its DOM.
fn fits_1280_pixels(game: &str, profile: &Path, html: &str) {
    const MEASURE: &str = r#"<script>
const fit = [];
for (const table of document.querySelectorAll("table")) {
  const box = table.parentElement;
  const right = table.getBoundingClientRect().right;
  if (right > window.innerWidth || table.scrollWidth > box.clientWidth) {
    fit.push(table.className + " " + Math.round(right) + " " + table.scrollWidth + "/" + box.clientWidth);
  }
}
document.body.setAttribute("data-measured",
  window.innerWidth + " " + document.documentElement.scrollWidth + " " +
  document.querySelectorAll("table").length + " [" + fit.join("; ") + "]");
</script>"#;
    let measured_page = profile.with_extension("html");
    let page = html.replacen("</body>", &format!("{MEASURE}</body>"), 1);
    assert_ne!(page.len(), html.len(), "{game}: the report has a </body>");
    std::fs::write(&measured_page, page).expect("write the measured page");
    let run =
        crate::common::browser::page_dom(profile, &measured_page, &["--window-size=1280,900"]);
    let dom = String::from_utf8_lossy(&run.stdout);
    let measured = dom
        .split("data-measured=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| {
            panic!(
                "{game}: the page measured itself\n{}",
                String::from_utf8_lossy(&run.stderr)
            )
        });
    let (window, rest) = measured.split_once(' ').expect("window width");
    let (page_width, rest) = rest.split_once(' ').expect("page width");
    let (tables, cut) = rest.split_once(' ').expect("tables");
    assert_eq!(window, "1280", "{game}: the window is 1280 pixels wide");
    assert!(
        page_width.parse::<u32>().expect("a width") <= 1280,
        "{game}: the page is {page_width} pixels wide at 1280"
    );
    assert!(
        tables.parse::<u32>().expect("a count") >= 2,
        "{game}: tables measured"
    );
    assert_eq!(
        cut, "[]",
        "{game}: tables wider than their box at 1280 pixels"
    );
}
