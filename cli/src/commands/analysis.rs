//! `pregen analysis`: read a finished pack from its files.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Subcommand;

use super::print_out;

/// The `analysis` subcommands.
#[derive(Subcommand)]
pub enum AnalysisCommand {
    /// Counts by tier and status, percentiles of difficulty, moves and times.
    Summary {
        /// The pack's folder (`<out>/<pack>`).
        pack: PathBuf,
        /// Print one JSON object (tiers, statuses, reasons, percentiles,
        /// tier_ranges) for scripts, rather than text.
        #[arg(long)]
        json: bool,
    },
    /// Replay every level under its game's rules and check its hash; exits
    /// non-zero if any level fails.
    Verify {
        /// The pack's folder (`<out>/<pack>`).
        pack: PathBuf,
    },
    /// Print the pack's levels in the game's text form (XSB for sokoban), as
    /// one collection file: tier by tier, easiest first, each headed by a `;`
    /// line with its id, tier and difficulty.
    Levels {
        /// The pack's folder (`<out>/<pack>`).
        pack: PathBuf,
        /// Only this tier (1-based).
        #[arg(long)]
        tier: Option<u32>,
    },
    /// Compare two packs (say, before and after a generator change): the
    /// seeds whose levels changed, appeared or vanished, levels that moved
    /// tier, and each tier's difficulty before and after. Exits 0 either way.
    Diff {
        /// The pack before (`<out>/<pack>`).
        a: PathBuf,
        /// The pack after.
        b: PathBuf,
        /// Print one JSON object for scripts, rather than text.
        #[arg(long)]
        json: bool,
    },
    /// Draw one level of the pack: SVG, or PNG when the output ends in
    /// `.png` (shapes only, no letters).
    Render {
        /// The pack's folder (`<out>/<pack>`).
        pack: PathBuf,
        /// The level's seed.
        #[arg(long)]
        seed: u64,
        /// Where to write the picture (default `<level_id>.svg`); `-` for
        /// standard output (SVG).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Pixels per tile, over 24.
        #[arg(long, default_value_t = 1.0)]
        scale: f64,
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
        /// The pack's folder (`<out>/<pack>`).
        pack: PathBuf,
        /// Where to write the page; `-` for standard output.
        #[arg(short, long, default_value = "report.html")]
        output: PathBuf,
    },
}

/// Runs one `analysis` subcommand.
pub fn run(command: AnalysisCommand) -> Result<()> {
    match command {
        AnalysisCommand::Calibrate(args) => super::calibrate::run(args),
        AnalysisCommand::Summary { pack, json } => {
            let summary = pregen_analysis::summarize(&pack)?;
            if json {
                print_out(&format!("{}\n", serde_json::to_string_pretty(&summary)?))
            } else {
                print_out(&summary.to_string())
            }
        }
        AnalysisCommand::Diff { a, b, json } => {
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
            output,
            scale,
        } => {
            if !(scale > 0.0 && scale <= 16.0) {
                bail!("--scale {scale} must be above 0 and at most 16");
            }
            let found = pregen_analysis::picture::find_levels(&pack, &[seed].into())?;
            let Some(level) = found.get(&seed) else {
                bail!("seed {seed} is not a level of {}", pack.display());
            };
            let svg = level.svg(scale);
            let output = output.unwrap_or_else(|| format!("{}.svg", level.level_id).into());
            if output.as_os_str() == "-" {
                return print_out(&svg);
            }
            let bytes = if output
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("png"))
            {
                pregen_analysis::picture::png(&svg)
                    .map_err(|e| anyhow::anyhow!("cannot rasterise the picture: {e}"))?
            } else {
                svg.into_bytes()
            };
            std::fs::write(&output, &bytes)
                .with_context(|| format!("cannot write {}", output.display()))?;
            eprintln!("wrote {} ({})", output.display(), level.caption());
            Ok(())
        }
        AnalysisCommand::Levels { pack, tier } => {
            print_out(&pregen_analysis::print_levels(&pack, tier)?)
        }
        AnalysisCommand::Report { pack, output } => {
            let html = pregen_analysis::report(&pack)?;
            if output.as_os_str() == "-" {
                print_out(&html)
            } else {
                std::fs::write(&output, &html)
                    .with_context(|| format!("cannot write {}", output.display()))?;
                eprintln!("wrote {} ({} KB)", output.display(), html.len() / 1024);
                Ok(())
            }
        }
        AnalysisCommand::Verify { pack } => {
            let verified = pregen_analysis::verify(&pack)?;
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
            println!(
                "{} levels replayed to a win under the rules; hashes match",
                verified.levels
            );
            Ok(())
        }
    }
}
