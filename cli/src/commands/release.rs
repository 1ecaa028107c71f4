//! `pregen release`: what a receiver of a release does with it, with the
//! shipped binary alone.

use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::Subcommand;

/// The `release` subcommands.
#[derive(Subcommand)]
pub enum ReleaseCommand {
    /// Check a release as its receiver would: every file against
    /// `SHA256SUMS` (and no file it does not list), every seed file
    /// regenerated to its hashes, every level of every level file (text or
    /// JSON Lines) checked by its game and its solution replayed to a win.
    /// Exits non-zero naming each failure.
    Verify {
        /// A pack folder (`<out>/<pack>`), an unpacked release archive, or
        /// the `.tar.zst` archive itself.
        release: PathBuf,
        /// For a game program's release: the folder holding the program
        /// (its files must hash to the release's identity). Left out, the
        /// program the release carries (`[release] program = true`) judges,
        /// else the one at the folder the job ran it from.
        #[arg(long, value_name = "DIR")]
        program_dir: Option<PathBuf>,
    },
}

/// Runs a `release` subcommand.
pub fn run(command: ReleaseCommand) -> Result<()> {
    match command {
        ReleaseCommand::Verify {
            release,
            program_dir,
        } => {
            let report =
                pregen_pack::release_check::verify_release_with(&release, program_dir.as_deref())?;
            for (what, why) in &report.failures {
                eprintln!("{what}: {why}");
            }
            if !report.failures.is_empty() {
                bail!(
                    "{}: {} failures ({} files, {} levels, {} regenerated from seed files)",
                    release.display(),
                    report.failures.len(),
                    report.files,
                    report.levels,
                    report.regenerated
                );
            }
            let judged = match (report.by_program, report.by_checker) {
                (true, true) => "accepted by the job's checker program",
                (true, false) => "accepted by the game program's own check",
                (false, _) => "checked and replayed",
            };
            let carried = match report.carried_program {
                true => " (the program the release carries)",
                false => "",
            };
            println!(
                "{} files match SHA256SUMS; {} levels {judged}{carried}; {} regenerated from \
                 their seeds to the same hashes",
                report.files, report.levels, report.regenerated
            );
            Ok(())
        }
    }
}
