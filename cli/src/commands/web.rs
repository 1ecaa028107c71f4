//! `pregen web DIR`: the games in the browser, written out from the binary
//! (the WebAssembly module, `pregen.js` and the pages of docs/web.md), to
//! serve beside a release without entering it.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;

/// Flags of `pregen web`.
#[derive(Args)]
pub struct WebArgs {
    /// The folder to write (made if missing), beside a release, not in it:
    /// `PACK/web` for a pack's `PACK/release`, whose seed files the pages
    /// then read by default (`../release/seeds/tier-01.txt`).
    dir: PathBuf,
}

/// The games' WebAssembly module, built with the binary (cli/build.rs);
/// empty when the binary was built without the wasm target.
const MODULE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/pregen_web.wasm"));

/// Why [`MODULE`] is empty, when it is.
const NO_MODULE: &str = env!("PREGEN_WEB_MODULE_NOTE");

/// The bundle's files: name and bytes.
fn bundle() -> Result<[(&'static str, &'static [u8]); 4]> {
    if MODULE.is_empty() {
        bail!("this pregen binary carries no WebAssembly module: {NO_MODULE}");
    }
    Ok([
        ("pregen_web.wasm", MODULE),
        ("pregen.js", include_bytes!("../../../web/page/pregen.js")),
        ("play.html", include_bytes!("../../../web/page/play.html")),
        (
            "rebuild.html",
            include_bytes!("../../../web/page/rebuild.html"),
        ),
    ])
}

/// Writes the bundle into `dir` (each file whole, or not at all) and says
/// how to open it.
pub fn run(args: WebArgs) -> Result<()> {
    let dir = args.dir;
    let absolute = std::path::absolute(&dir).unwrap_or_else(|_| dir.clone());
    refuse_a_programs_pack(&absolute)?;
    let files = bundle()?;
    if let Some(release) = absolute
        .ancestors()
        .find(|d| d.join("SHA256SUMS").is_file())
    {
        bail!(
            "{} is in the release folder {} (it holds SHA256SUMS): the pages go beside a \
             release, not in it, where `pregen archive` and `release verify` would refuse them as files \
             the release does not list; write them to a folder of their own, such as \
             PACK/web beside PACK/release",
            dir.display(),
            release.display()
        );
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot make {}", dir.display()))?;
    for (name, bytes) in files {
        let path = dir.join(name);
        let partial = dir.join(format!(".{name}.partial"));
        std::fs::write(&partial, bytes)
            .and_then(|()| std::fs::rename(&partial, &path))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    eprintln!(
        "wrote {} (the games' WebAssembly module, {} KB), pregen.js, play.html and rebuild.html",
        dir.join("pregen_web.wasm").display(),
        MODULE.len() / 1024
    );
    eprintln!(
        "serve the folder that holds it and the release (for PACK/web: \
         `python3 -m http.server -d PACK`) and open web/play.html or \
         web/rebuild.html; `?seeds=../release/seeds/tier-02.txt&seed=N` picks a seed file \
         and a level (docs/web.md)"
    );
    Ok(())
}

/// Refuses pages beside the release of a game program's pack (`dir` in a
/// folder whose `manifest.json` names a job of a program): the WebAssembly
/// module carries the built-in games alone, so the pages would fail on
/// every seed.
fn refuse_a_programs_pack(dir: &std::path::Path) -> Result<()> {
    let Some(pack) = dir.parent() else {
        return Ok(());
    };
    let manifest = pack.join("manifest.json");
    if !manifest.is_file() {
        return Ok(());
    }
    let Ok(manifest) = pregen_pack::manifest::Manifest::read(&manifest) else {
        return Ok(());
    };
    if manifest.job.is_external() {
        bail!(
            "{} is a pack of the game program `{}`: the browser pages rebuild and play the \
             built-in games only ({}), which the binary carries compiled to WebAssembly; a \
             program's levels are in its release files (JSON Lines with each level's JSON, and \
             its own text form), for the studio's own client to load",
            pack.display(),
            manifest.job.game_name(),
            pregen_games::GameKind::all()
                .map(|g| g.name())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(())
}
