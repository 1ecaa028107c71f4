//! The games in the browser (web/): the WebAssembly build, and its two pages
//! in headless Chromium, on a real pack's release: a seed-only release
//! rebuilt in a page, every hash matching; a level played in a page, its
//! solution replayed move by move to a win.

use crate::common::needs::{Need, needs};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::browser::page_dom;
use crate::common::run_pack;

/// The workspace's folder.
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
        .to_path_buf()
}

/// Builds `pregen_web.wasm` once (in a target folder of its own, so that it
/// never waits on the tests' build) and gives its path.
fn build_wasm() -> PathBuf {
    static WASM: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    WASM.get_or_init(build).clone()
}

fn build() -> PathBuf {
    let target = workspace().join("target/wasm-build");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(workspace())
        .args([
            "build",
            "--locked",
            "-p",
            "pregen-web",
            "--target",
            "wasm32-unknown-unknown",
            "--profile",
            "wasm",
        ])
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .expect("run cargo");
    assert!(
        out.status.success(),
        "the WebAssembly build failed (is the target installed? \
         `rustup target add wasm32-unknown-unknown`): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    target.join("wasm32-unknown-unknown/wasm/pregen_web.wasm")
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
    std::fs::copy(build_wasm(), release.join("pregen_web.wasm")).expect("copy the wasm");
    for page in ["pregen.js", "rebuild.html", "play.html"] {
        std::fs::copy(workspace().join("web/page").join(page), release.join(page))
            .expect("copy the page");
    }
    let open = |page: &str, profile: &str| {
        let shown = page_dom(
            &dir.path().join(profile),
            &release.join(page),
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
        let dom = open(
            &format!("rebuild.html?sync=1&seeds=seeds/tier-{tier}.txt"),
            &format!("rebuild-{tier}"),
        );
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
        &["--play", "release/play.html"],
    );
    let link = html
        .split("<a href=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("a play link")
        .replace("&amp;", "&");
    assert!(
        link.starts_with("release/play.html?seeds=seeds/tier-"),
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
        "the board is drawn: {dom}"
    );
}
