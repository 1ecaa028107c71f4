//! `pregen retier`: a finished pack rated again by another model, from its
//! commit log, without running a seed.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use pregen_pack::write::WriteOptions;
use pregen_store::Location;

use super::stored::{Log, fetch};

/// Flags of `pregen retier`.
#[derive(Args)]
pub struct RetierArgs {
    /// The finished pack's folder (`<out>/<pack>`), or its URL in an object
    /// store (its commit log is read from there).
    pack: Location,
    /// The rating model (TOML, docs/ratings.md) to rate its levels with.
    #[arg(long, value_name = "FILE")]
    model: PathBuf,
    /// The new pack's folder (default: its name, beside the pack, or in
    /// this folder for a pack in an object store); it must be new or empty.
    #[arg(short, long, value_name = "DIR")]
    output: Option<PathBuf>,
    /// The new pack's name (its job's `pack`, in its files, headers and
    /// Parquet provenance; default: `<pack>-<model name>`), so that two
    /// packs rated by two models do not share a name.
    #[arg(long)]
    name: Option<String>,
    /// A game program's pack is rated by a program you name.
    #[command(flatten)]
    program: super::NamedProgram,
}

/// Rates and writes the new pack; prints where and how long it took.
pub fn run(args: RetierArgs) -> Result<()> {
    crate::init_logs("warn");
    let text = std::fs::read_to_string(&args.model)
        .with_context(|| format!("cannot read {}", args.model.display()))?;
    let pack = fetch(&args.pack, Log::With)?;
    let manifest = pregen_pack::PackDir::new(pack.path()).read_manifest();
    let judge = args.program.source();
    // The pack's game as it runs here (a program's only as named), held
    // while it is retiered: a game program starts once. (A pack that cannot
    // be read, or a program's pack with no program named, is refused
    // below, with the reason.)
    let runner = manifest
        .as_ref()
        .ok()
        .and_then(|m| pregen_analysis::runnable_job(m, judge).ok().flatten());
    let _program = runner.as_ref().and_then(|j| j.game_kind().ok());
    let name = match args.name {
        Some(name) => name,
        None => {
            let manifest = manifest?;
            let Some(runner) = runner else {
                anyhow::bail!(pregen_coordinator::retier::RETIER_NAMES_A_PROGRAM);
            };
            let game = runner.game_kind()?;
            let model = game
                .parse_model(&text)
                .with_context(|| format!("model file {}", args.model.display()))?;
            format!("{}-{}", manifest.job.pack, model.name)
        }
    };
    // Beside the pack; in this folder for a pack in an object store.
    let output = args.output.unwrap_or_else(|| match &args.pack {
        Location::Local(path) => path.with_file_name(&name),
        Location::Remote(_) => PathBuf::from(&name),
    });
    let done = pregen_coordinator::retier::retier(
        pack.path(),
        (&text, &name),
        &output,
        WriteOptions::default(),
        judge,
    )
    .with_context(|| format!("model file {}", args.model.display()))?;
    println!(
        "retiered {} levels into {} (pack {name}) in {:.1} s (job {})",
        done.levels,
        output.display(),
        done.elapsed.as_secs_f64(),
        done.job.id()
    );
    Ok(())
}
