//! `pregen release`: what a receiver of a release does with it, with the
//! shipped binary alone.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Subcommand;
use pregen_pack::release_check::VerifyOptions;
use pregen_store::Location;

use super::stored::{Log, fetch};

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
        /// the `.tar.zst` archive itself; or the URL of any of them in an
        /// object store (`s3://bucket/prefix/<pack>`).
        release: Location,
        /// For a game program's release: your copy of the program, in this
        /// folder (its files must hash to the release's identity; it is run
        /// only as `FILE` or `INTERPRETER FILE`, no arguments). A program's
        /// release is judged only by a program you name: this, `--job` or
        /// `--trust-carried-program`; never by the command its manifest
        /// names.
        #[arg(long, value_name = "DIR", conflicts_with_all = ["job", "trust_carried_program"])]
        program_dir: Option<PathBuf>,
        /// For a game program's release: the job file that made it (its id
        /// must be the release's); its program runs as the job says.
        #[arg(long, value_name = "FILE", conflicts_with = "trust_carried_program")]
        job: Option<PathBuf>,
        /// For a release that carries its program (`[release] program =
        /// true`): judge with that copy. It is the sender's code, run as
        /// `FILE` or `INTERPRETER FILE`: the check then proves the release
        /// consistent with the judge it carries, not honest.
        #[arg(long)]
        trust_carried_program: bool,
        /// Threads that regenerate seeds and check levels (default: every
        /// core); the findings are the same with any number.
        #[arg(long)]
        threads: Option<usize>,
        /// Check the checksums only (every file against `SHA256SUMS`, and no
        /// file it does not list): no seed regenerated, no level checked.
        #[arg(long, conflicts_with = "sample")]
        sums_only: bool,
        /// Check about N levels, and regenerate their seeds, chosen by the
        /// SHA-256 of their ids: the same sample on every run and machine,
        /// stated in the output. Every checksum is still checked.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        sample: Option<u64>,
    },
}

/// Runs a `release` subcommand.
pub fn run(command: ReleaseCommand) -> Result<()> {
    match command {
        ReleaseCommand::Verify {
            release,
            program_dir,
            job,
            trust_carried_program,
            threads,
            sums_only,
            sample,
        } => {
            let named = release.to_string();
            let release = fetch(&release, Log::Without)?;
            let threads = match threads {
                Some(asked) => super::threads_within_cores(asked)?,
                None => std::thread::available_parallelism().map_or(1, |n| n.get()),
            };
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .context("cannot start the check's threads")?;
            let judge = super::program_source(
                program_dir.as_deref(),
                job.as_deref(),
                trust_carried_program,
            );
            let options = VerifyOptions {
                sums_only,
                sample,
                judge,
            };
            let report = pool.install(|| {
                pregen_pack::release_check::verify_release_with(release.path(), options)
            })?;
            for (what, why) in &report.failures {
                eprintln!("{what}: {why}");
            }
            if !report.failures.is_empty() {
                bail!(
                    "{named}: {} failures ({} files, {} levels, {} regenerated from seed files)",
                    report.failures.len(),
                    report.files,
                    report.levels,
                    report.regenerated
                );
            }
            if report.sums_only {
                println!(
                    "{} files match SHA256SUMS (checksums only: no seed regenerated, no level \
                     checked)",
                    report.files
                );
                return Ok(());
            }
            let judge = match (report.by_program, report.by_checker) {
                (true, true) => "accepted by the job's checker program",
                (true, false) => "accepted by the game program's own check",
                (false, _) => "checked and replayed",
            };
            let judged = match (report.replayed, report.levels) {
                (replayed, levels) if replayed == levels => judge.to_string(),
                (0, _) => "checked for their form and hash (the release ships no solutions to \
                           replay)"
                    .to_string(),
                (replayed, _) => format!(
                    "checked for their form and hash, {replayed} of them with a shipped \
                     solution {}",
                    judge.replace("checked and ", "")
                ),
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
            if !report.left_out.is_empty() {
                println!(
                    "left out of this release, as its manifest says: {} (not accounted for)",
                    report.left_out.join(", ")
                );
            }
            if let Some(sample) = report.sample {
                println!(
                    "a sample: the levels whose id's SHA-256 falls in the lowest {:.4}% of its \
                     range ({} checked, {} left out; every run picks the same)",
                    sample.share * 100.0,
                    report.levels,
                    report.skipped
                );
            }
            Ok(())
        }
    }
}
