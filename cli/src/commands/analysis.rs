//! `pregen analysis`: read a finished pack from its files.

use std::path::PathBuf;

use pregen_store::Location;

use super::stored::{Log, fetch};

use anyhow::{Context, Result, bail};
use clap::Subcommand;

use pregen_analysis::picture::{PackLevel, Pick, pick_levels};

use super::print_out;

/// A picture's format.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// SVG: shapes and letters, any size.
    Svg,
    /// PNG: pixels, for tools that take no SVG.
    Png,
}

impl Format {
    /// The format a file's extension names; anything but `.svg` and `.png`
    /// is refused rather than written as something else.
    fn of(path: &std::path::Path) -> Result<Format> {
        match path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
        {
            Some(e) if e == "svg" => Ok(Format::Svg),
            Some(e) if e == "png" => Ok(Format::Png),
            Some(e) => bail!(
                "{}: unknown picture format `.{e}`; use .svg or .png",
                path.display()
            ),
            None => bail!("{}: no extension; use .svg or .png", path.display()),
        }
    }

    fn extension(self) -> &'static str {
        match self {
            Format::Svg => "svg",
            Format::Png => "png",
        }
    }

    /// `level`'s picture in this format.
    fn picture(self, level: &PackLevel, scale: f64) -> Result<Vec<u8>> {
        let svg = level.svg(scale);
        match self {
            Format::Svg => Ok(svg.into_bytes()),
            Format::Png => pregen_analysis::picture::png(&svg)
                .map_err(|e| anyhow::anyhow!("cannot rasterise {}: {e}", level.level_id)),
        }
    }
}

/// One level's picture to `output` (or standard output).
fn render_one(
    pack: &std::path::Path,
    seed: u64,
    output: Option<PathBuf>,
    scale: f64,
    judge: pregen_pack::job::ProgramSource<'_>,
) -> Result<()> {
    let found = pick_levels(pack, &Pick::Seeds([seed].into()), judge)?;
    let Some(level) = found.get(&seed) else {
        bail!("seed {seed} is not a level of {}", pack.display());
    };
    let output = output.unwrap_or_else(|| format!("{}.svg", level.level_id).into());
    if output.as_os_str() == "-" {
        return print_out(&level.svg(scale));
    }
    let bytes = Format::of(&output)?.picture(level, scale)?;
    std::fs::write(&output, &bytes)
        .with_context(|| format!("cannot write {}", output.display()))?;
    eprintln!("wrote {} ({})", output.display(), level.caption());
    Ok(())
}

/// The pictures of the levels `pick` takes, one file each in a folder.
/// Which of each tier's picked levels `render` draws.
#[derive(Clone, Copy)]
enum Keep {
    All,
    Hardest(usize),
    Easiest(usize),
}

/// Draws the levels `pick` takes (for a tier or all, only those `keep`
/// keeps of each tier), one file each: by a tier, named by the level's rank
/// in it (`tier-03-rank-00042-<level_id>.svg`, easiest first, so a listing
/// reads in order), by seeds, by level id.
fn render_many(
    pack: &std::path::Path,
    pick: &Pick,
    keep: Keep,
    output: Option<PathBuf>,
    format: Format,
    scale: f64,
    judge: pregen_pack::job::ProgramSource<'_>,
) -> Result<()> {
    let found = pick_levels(pack, pick, judge)?;
    if let Pick::Seeds(seeds) = pick
        && let Some(missing) = seeds.iter().find(|s| !found.contains_key(s))
    {
        bail!("seed {missing} is not a level of {}", pack.display());
    }
    if found.is_empty() {
        bail!(
            "no level of {} is picked (a tier it does not have?)",
            pack.display()
        );
    }
    let folder = output.unwrap_or_else(|| {
        let name = pack
            .file_name()
            .map_or("pack".into(), |n| n.to_string_lossy().into_owned());
        format!("{name}-pictures").into()
    });
    std::fs::create_dir_all(&folder)
        .with_context(|| format!("cannot create {}", folder.display()))?;
    // Each tier's levels in rank order (difficulty, then seed), with ranks.
    let mut ranked: Vec<(usize, &pregen_analysis::picture::PackLevel)> = Vec::new();
    let mut by_tier: std::collections::BTreeMap<u32, Vec<_>> = std::collections::BTreeMap::new();
    for level in found.values() {
        by_tier.entry(level.tier).or_default().push(level);
    }
    for levels in by_tier.values_mut() {
        levels.sort_by(|a, b| {
            a.difficulty
                .total_cmp(&b.difficulty)
                .then(a.seed.cmp(&b.seed))
        });
        let n = levels.len();
        let (from, to) = match keep {
            Keep::All => (0, n),
            Keep::Hardest(k) => (n.saturating_sub(k), n),
            Keep::Easiest(k) => (0, k.min(n)),
        };
        ranked.extend((from..to).map(|i| (i + 1, levels[i])));
    }
    for &(rank, level) in &ranked {
        let name = match pick {
            Pick::Seeds(_) => level.level_id.clone(),
            _ => format!("tier-{:02}-rank-{rank:05}-{}", level.tier, level.level_id),
        };
        let path = folder.join(format!("{name}.{}", format.extension()));
        let bytes = format.picture(level, scale)?;
        std::fs::write(&path, &bytes)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    eprintln!("wrote {} pictures to {}", ranked.len(), folder.display());
    Ok(())
}

/// The `analysis` subcommands.
#[derive(Subcommand)]
pub enum AnalysisCommand {
    /// Counts by tier and status, percentiles of difficulty, moves and times.
    Summary {
        /// The pack: its folder (`<out>/<pack>`) or its URL (`s3://bucket/prefix/<pack>`).
        pack: Location,
        /// Print one JSON object (tiers, statuses, reasons, percentiles,
        /// tier_ranges) for scripts, rather than text.
        #[arg(long)]
        json: bool,
    },
    /// Replay every level under its game's rules and check its hash; exits
    /// non-zero if any level fails.
    Verify {
        /// The pack: its folder (`<out>/<pack>`) or its URL (`s3://bucket/prefix/<pack>`).
        pack: Location,
        /// For a game program's pack: your copy of the program, in this
        /// folder (its files must hash to the pack's identity; it is run
        /// only as `FILE` or `INTERPRETER FILE`, no arguments). A program's
        /// pack is judged only by a program you name: this or `--job`.
        #[arg(long, value_name = "DIR", conflicts_with = "job")]
        program_dir: Option<PathBuf>,
        /// For a game program's pack: the job file that made it (its id
        /// must be the pack's); its program runs as the job says.
        #[arg(long, value_name = "FILE")]
        job: Option<PathBuf>,
    },
    /// Print the pack's levels in the game's text form (XSB for sokoban), as
    /// one collection file: tier by tier, easiest first, each headed by a `;`
    /// line with its id, tier and difficulty.
    Levels {
        /// The pack: its folder (`<out>/<pack>`) or its URL (`s3://bucket/prefix/<pack>`).
        pack: Location,
        /// Only this tier (1-based).
        #[arg(long)]
        tier: Option<u32>,
    },
    /// Compare two packs (say, before and after a generator change): the
    /// seeds whose levels changed, appeared or vanished, levels that moved
    /// tier, and each tier's difficulty before and after. Exits 0 either way.
    Diff {
        /// The pack before (`<out>/<pack>`, or its URL).
        a: Location,
        /// The pack after.
        b: Location,
        /// Print one JSON object for scripts, rather than text.
        #[arg(long)]
        json: bool,
    },
    /// Draw levels of the pack: one (`--seed`) to a file, SVG or PNG by its
    /// extension; many (`--seeds`, `--tier`, `--all`) to a folder, one
    /// `<level_id>.svg` (or `.png` with `--format png`) each.
    #[command(group(clap::ArgGroup::new("which").required(true)
        .args(["seed", "seeds", "tier", "all"])))]
    Render {
        /// The pack: its folder (`<out>/<pack>`) or its URL (`s3://bucket/prefix/<pack>`).
        pack: Location,
        /// One level, by its seed.
        #[arg(long)]
        seed: Option<u64>,
        /// These levels, by seed (comma separated).
        #[arg(long, value_delimiter = ',')]
        seeds: Vec<u64>,
        /// Every level of this tier (1-based).
        #[arg(long)]
        tier: Option<u32>,
        /// Every level of the pack.
        #[arg(long)]
        all: bool,
        /// With `--tier` or `--all`: only each tier's N hardest levels.
        #[arg(long, value_name = "N", conflicts_with = "easiest")]
        hardest: Option<usize>,
        /// With `--tier` or `--all`: only each tier's N easiest levels.
        #[arg(long, value_name = "N")]
        easiest: Option<usize>,
        /// With `--seed`: the picture's file, `.svg` or `.png` (default
        /// `<level_id>.svg`; `-` for SVG on standard output). Otherwise the
        /// folder to write into (default `<pack>-pictures`, created).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// The format of many pictures.
        #[arg(long, value_enum, default_value_t = Format::Svg)]
        format: Format,
        /// Pixels per tile, over 24.
        #[arg(long, default_value_t = 1.0)]
        scale: f64,
        /// A game program that draws its levels draws them only when named.
        #[command(flatten)]
        program: super::NamedProgram,
    },
    /// Fit a rating model's weights to labelled levels: classes of level
    /// files, easiest first (say playtest success and failure, or public
    /// levels others sorted). Prints the cross-validated agreement (AUC for
    /// every pair of classes, with a 95% interval) of the base model and of
    /// the fitted one, and writes the fitted model.
    Calibrate(super::calibrate::CalibrateArgs),
    /// Write a self-contained HTML report of the pack (no scripts, nothing
    /// fetched): overview, a table per tier with the game's metrics, each
    /// tier's easiest, median and hardest level drawn, charts of difficulty,
    /// moves, times, rejections and the campaigns' ramp, and the first
    /// campaign drawn level by level.
    Report {
        /// The pack: its folder (`<out>/<pack>`) or its URL (`s3://bucket/prefix/<pack>`).
        pack: Location,
        /// Where to write the page; `-` for standard output.
        #[arg(short, long, default_value = "report.html")]
        output: PathBuf,
        /// Link each level drawn to this play page (docs/web.md), as
        /// `PAGE?seeds=seeds/tier-NN.txt&seed=N`: give its address relative
        /// to where the report will be opened (say `release/play.html` for a
        /// report beside the pack's `release/` folder).
        #[arg(long)]
        play: Option<String>,
        /// A game program's rating model and pictures come only from a
        /// program you name.
        #[command(flatten)]
        program: super::NamedProgram,
    },
}

/// Runs one `analysis` subcommand.
pub fn run(command: AnalysisCommand) -> Result<()> {
    match command {
        AnalysisCommand::Calibrate(args) => super::calibrate::run(args),
        AnalysisCommand::Summary { pack, json } => {
            let pack = fetch(&pack, Log::Without)?;
            let pack = pack.path();
            let summary = pregen_analysis::summarize(&pack)?;
            if json {
                print_out(&format!("{}\n", serde_json::to_string_pretty(&summary)?))
            } else {
                print_out(&summary.to_string())
            }
        }
        AnalysisCommand::Diff { a, b, json } => {
            let (a, b) = (fetch(&a, Log::Without)?, fetch(&b, Log::Without)?);
            let (a, b) = (a.path(), b.path());
            let diff = pregen_analysis::diff(&a, &b)?;
            if json {
                print_out(&format!("{}\n", serde_json::to_string_pretty(&diff)?))
            } else {
                print_out(&diff.to_string())
            }
        }
        AnalysisCommand::Render {
            pack,
            seed,
            seeds,
            tier,
            all,
            hardest,
            easiest,
            output,
            format,
            scale,
            program,
        } => {
            let pack = fetch(&pack, Log::Without)?;
            let pack = pack.path();
            let judge = program.source();
            if !(scale > 0.0 && scale <= 16.0) {
                bail!("--scale {scale} must be above 0 and at most 16");
            }
            match seed {
                Some(seed) => render_one(pack, seed, output, scale, judge),
                None => {
                    let pick = match (tier, all) {
                        (Some(tier), _) => Pick::Tier(tier),
                        (None, true) => Pick::All,
                        (None, false) => Pick::Seeds(seeds.into_iter().collect()),
                    };
                    let keep = match (hardest, easiest) {
                        (Some(n), _) => Keep::Hardest(n),
                        (None, Some(n)) => Keep::Easiest(n),
                        (None, None) => Keep::All,
                    };
                    if !matches!(keep, Keep::All) && matches!(pick, Pick::Seeds(_)) {
                        bail!("--hardest and --easiest go with --tier or --all");
                    }
                    render_many(pack, &pick, keep, output, format, scale, judge)
                }
            }
        }
        AnalysisCommand::Levels { pack, tier } => {
            let pack = fetch(&pack, Log::Without)?;
            print_out(&pregen_analysis::print_levels(pack.path(), tier)?)
        }
        AnalysisCommand::Report {
            pack,
            output,
            play,
            program,
        } => {
            let pack = fetch(&pack, Log::Without)?;
            let html =
                pregen_analysis::report_judged(pack.path(), play.as_deref(), program.source())?;
            if output.as_os_str() == "-" {
                print_out(&html)
            } else {
                std::fs::write(&output, &html)
                    .with_context(|| format!("cannot write {}", output.display()))?;
                eprintln!("wrote {} ({} KB)", output.display(), html.len() / 1024);
                Ok(())
            }
        }
        AnalysisCommand::Verify {
            pack,
            program_dir,
            job,
        } => {
            let pack = fetch(&pack, Log::Without)?;
            let judge = super::program_source(program_dir.as_deref(), job.as_deref(), false);
            say_verified(&pregen_analysis::verify_with(pack.path(), judge)?)
        }
    }
}

/// What `analysis verify` found, on stderr (each failure) and stdout.
fn say_verified(verified: &pregen_analysis::Verified) -> Result<()> {
    for (id, why) in &verified.failures {
        eprintln!("{id}: {why}");
    }
    if !verified.failures.is_empty() {
        bail!(
            "{} of {} levels failed",
            verified.failures.len(),
            verified.levels
        );
    }
    if verified.by_program {
        let judge = match verified.by_checker {
            true => "the job's checker program",
            false => "the game program's own check",
        };
        println!(
            "{} levels accepted by {judge} (pregen checked their hashes, layouts, strata and the \
             job; the rules are the program's); hashes match; each difficulty is the job's \
             model's rating of its metrics",
            verified.levels
        );
    } else {
        println!(
            "{} levels replayed to a win under the rules, each made again from its seed where \
             the game makes levels again; hashes match; each difficulty is the job's model's \
             rating of its metrics",
            verified.levels
        );
    }
    Ok(())
}
