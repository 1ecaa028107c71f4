//! The games in the browser (web/), as `pregen web` writes them from the
//! binary, beside a real pack's release, in headless Chromium: a seed-only
//! release rebuilt in a page, every hash matching; a level of every game
//! opened at once, drawn as the report draws it, its solution replayed move
//! by move to a win.

use crate::common::needs::{Need, needs};
use std::path::Path;

use crate::common::browser::page_dom;
use crate::common::run_pack;

/// `pregen web DIR`: the bundle the binary carries, written out.
fn write_bundle(dir: &Path) {
    crate::common::succeeds(crate::common::pregen().arg("web").arg(dir));
    for file in ["pregen_web.wasm", "pregen.js", "play.html", "rebuild.html"] {
        assert!(dir.join(file).is_file(), "{file} written");
    }
}

/// The text of the element with `id` in a dumped DOM.
fn element(dom: &str, id: &str) -> String {
    let start = dom
        .find(&format!("id=\"{id}\""))
        .and_then(|at| dom[at..].find('>').map(|end| at + end + 1))
        .unwrap_or_else(|| panic!("no #{id} in {dom}"));
    dom[start..]
        .split('<')
        .next()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn a_seed_only_release_is_rebuilt_and_played_in_chromium() {
    if !needs(&[Need::Wasm, Need::Chromium]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let job = "pack = \"e2e\"\ngame = \"tilt\"\ncount = 120\nseeds_per_lease = 32\n\
               [params]\nwidth = 5\nheight = 5\npairs = 2\nmin_moves = 3\n\
               [tiers]\nscheme = \"equal\"\ncount = 2\n";
    let pack = run_pack(dir.path(), job, 1);
    let release = pack.join("release");
    let web = pack.join("web");
    write_bundle(&web);
    let open = |page: &str, profile: &str| {
        let shown = page_dom(
            &dir.path().join(profile),
            &web.join(page),
            &[
                "--allow-file-access-from-files",
                "--virtual-time-budget=30000",
            ],
        );
        String::from_utf8_lossy(&shown.stdout).into_owned()
    };
    // `sync=1`: the pages load the module and the seed file at once, so the
    // DOM Chromium dumps when the page has loaded holds their work.
    for tier in ["01", "02"] {
        let seeds = std::fs::read_to_string(release.join(format!("seeds/tier-{tier}.txt")))
            .expect("seed file");
        let count = seeds.lines().count() - 1;
        // The first tier is the pages' default.
        let page = match tier {
            "01" => "rebuild.html?sync=1".to_string(),
            _ => format!("rebuild.html?sync=1&seeds=../release/seeds/tier-{tier}.txt"),
        };
        let dom = open(&page, &format!("rebuild-{tier}"));
        let status = element(&dom, "status");
        assert!(
            status.starts_with(&format!(
                "rebuilt {count} of {count} levels, every hash matching: true"
            )),
            "tier {tier}: {status}"
        );
        // Every listed hash is on the page, matched.
        for line in seeds.lines().skip(1) {
            let (_, hash) = line.split_once(' ').expect("SEED HASH");
            assert!(
                dom.contains(&format!("<td>{hash}</td><td>yes</td>")),
                "{hash}"
            );
        }
    }
    // a seed file from another origin is refused, not vouched for.
    let dom = open(
        "rebuild.html?sync=1&seeds=http://127.0.0.1:9/seeds/tier-01.txt",
        "rebuild-elsewhere",
    );
    let status = element(&dom, "status");
    assert!(
        status.contains("must come from this page's own origin"),
        "{status}"
    );
    // The report links its levels to the play page; a link is followed.
    let html = crate::common::report_html(
        &pack,
        &pack.join("report.html"),
        &["--play", "web/play.html"],
    );
    let link = html
        .split("<a href=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("a play link")
        .replace("&amp;", "&");
    assert!(
        link.starts_with("web/play.html?seeds=../release/seeds/tier-"),
        "{link}"
    );
    let seed = link.rsplit("seed=").next().expect("a seed").to_string();
    let followed = page_dom(
        &dir.path().join("followed"),
        &pack.join(format!("{link}&sync=1")),
        &["--allow-file-access-from-files"],
    );
    let dom = String::from_utf8_lossy(&followed.stdout).into_owned();
    let status = element(&dom, "status");
    assert!(status.starts_with("solution wins; after its"), "{status}");
    assert!(status.ends_with("moves: won"), "{status}");
    assert!(
        element(&dom, "title").starts_with(&format!("tilt-{seed}: ")),
        "{dom}"
    );
    assert!(
        !element(&dom, "board").trim().is_empty(),
        "the board in text: {dom}"
    );
    assert!(
        dom.contains(
            "<div id=\"picture\"><svg xmlns=\"http://www.w3.org/2000/svg\" class=\"level\""
        ),
        "the board drawn: {dom}"
    );
    // The bundle goes beside a release, never into it.
    let refused = crate::common::pregen()
        .arg("web")
        .arg(release.join("web"))
        .output()
        .expect("pregen web");
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("is in the release folder"));
}

/// Every game's level opened at once in the play page (no `seed=`: the seed
/// file's first, and only it, made), drawn as the report draws it, with the
/// file's levels to choose from, and its solution played to a win.
#[test]
fn a_level_of_every_game_is_drawn_and_played_in_chromium() {
    if !needs(&[Need::Wasm, Need::Chromium]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    for game in ["tilt", "sokoban", "cube", "doors", "dungeon"] {
        let root = dir.path().join(game);
        let pack = run_pack(
            &root,
            &format!(
                "pack = \"e2e\"\ngame = \"{game}\"\ncount = 3\n[tiers]\nscheme = \"equal\"\ncount = 1\n"
            ),
            1,
        );
        let web = pack.join("web");
        write_bundle(&web);
        let seeds = std::fs::read_to_string(pack.join("release/seeds/tier-01.txt")).expect("seeds");
        let first = seeds
            .lines()
            .nth(1)
            .and_then(|l| l.split(' ').next())
            .expect("a seed");
        let shown = page_dom(
            &root.join("chromium"),
            &web.join("play.html?sync=1"),
            &["--allow-file-access-from-files"],
        );
        let dom = String::from_utf8_lossy(&shown.stdout).into_owned();
        let status = element(&dom, "status");
        assert!(
            status.starts_with("solution wins; after its"),
            "{game}: {status}"
        );
        assert!(status.ends_with("moves: won"), "{game}: {status}");
        assert!(
            element(&dom, "title").starts_with(&format!("{game}-{first}: ")),
            "{game}: {dom}"
        );
        assert!(
            dom.contains(
                "<div id=\"picture\"><svg xmlns=\"http://www.w3.org/2000/svg\" class=\"level\""
            ),
            "{game}: the level drawn: {dom}"
        );
        assert_eq!(
            dom.matches("<option ").count(),
            seeds.lines().count() - 1,
            "{game}: every level of the file to choose from"
        );
        if ["cube", "doors", "dungeon"].contains(&game) {
            assert!(
                !element(&dom, "position").trim().is_empty(),
                "{game}: the position in words"
            );
        }
    }
}
