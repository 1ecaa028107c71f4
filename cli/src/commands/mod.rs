//! One module per command: its flags and the function that runs it.

pub mod analysis;
pub mod archive;
pub mod calibrate;
pub mod census;
pub mod game_server;
pub mod load_test;
pub mod release;
pub mod retier;
pub mod run;
pub mod serve;
pub mod solve;
pub mod stored;
pub mod web;
pub mod worker;

use std::path::Path;

use anyhow::{Context, Result};
use pregen_coordinator::server::RunSummary;

/// Prints what a `run` or `serve` did.
pub fn report(summary: &RunSummary) {
    let at = summary
        .url
        .clone()
        .unwrap_or_else(|| summary.dir.display().to_string());
    if summary.already_complete {
        eprintln!("{at} is already complete; nothing to do");
        return;
    }
    let secs = summary.elapsed.as_secs_f64();
    eprintln!(
        "wrote {} levels to {} in {:.1} s (pack files {:.2} s; {} seeds in the pack, {} computed, {:.0} levels/s{})",
        summary.accepted,
        at,
        secs,
        summary.writing.as_secs_f64(),
        summary.in_pack,
        summary.seeds,
        summary.accepted as f64 / secs.max(1e-9),
        if summary.resumed_seeds > 0 {
            format!(
                ", {} seeds resumed from the commit log",
                summary.resumed_seeds
            )
        } else {
            String::new()
        },
    );
    let checks = &summary.progress.cross_check;
    if checks.share > 0.0 {
        eprintln!(
            "cross-check ({:.1}% of seeds): {} confirmed by a second run, {} disputed",
            checks.share * 100.0,
            checks.confirmed,
            checks.disputes
        );
    }
    for (worker, why) in &checks.refused {
        eprintln!("warning: worker {worker} was refused and its results run again: {why}");
    }
    if summary.progress.mismatches > 0 {
        eprintln!(
            "warning: {} results disagreed with earlier results for the same seed",
            summary.progress.mismatches
        );
    }
    if summary.progress.broken > 0 {
        eprintln!(
            "warning: the game program broke on {} seeds on a worker (a crash, a kill, a line on \
             its stdout that is not the answer) and the coordinator ran each itself: its \
             verdicts are in the pack, none of the breaks (this machine's, not the job's); the \
             log has each, and the program's stderr with its seeds",
            summary.progress.broken
        );
    }
    went_wrong(&summary.progress);
}

/// The seeds that went wrong (errors and timeouts, by reason), on the
/// run's last lines: a pack is complete without them, but a failing game
/// or program should not pass unseen.
fn went_wrong(progress: &pregen_coordinator::Progress) {
    use pregen_games::Status;
    let wrong: Vec<_> = progress
        .rejected
        .iter()
        .filter(|(refusal, _)| matches!(refusal.status, Status::Error | Status::Timeout))
        .collect();
    let total: u64 = wrong.iter().map(|(_, n)| **n).sum();
    if total == 0 {
        return;
    }
    eprintln!(
        "warning: {total} of {} seeds computed went wrong (the pack holds the seeds after \
         them instead), by reason:",
        progress.seeds
    );
    for (refusal, n) in &wrong {
        match progress.first_wrong.get(*refusal) {
            Some((seed, said)) => eprintln!("  {n:>8}  {refusal} (the first, seed {seed}: {said})"),
            None => eprintln!("  {n:>8}  {refusal}"),
        }
    }
    if wrong.iter().any(|(r, _)| r.status == Status::Timeout) {
        eprintln!(
            "  (a timeout depends on the machine: the watchdog limits a seed's CPU time, a \
             game program's that of its processes; the seeds are listed in the manifest, and \
             a game program's timeouts in the log with the limit each met)"
        );
    }
    if wrong
        .iter()
        .any(|(r, _)| r.code == Some(pregen_games::Code::Protocol))
    {
        eprintln!(
            "  (protocol: the game program's answers to those seeds broke a rule of the \
             protocol, which the first's detail names; its stderr lines are in the log, each \
             with the seed that wrote it)"
        );
    }
}

/// Whose program judges a game program's pack in a verify, from its flags
/// (clap keeps them apart).
pub fn program_source<'a>(
    program_dir: Option<&'a Path>,
    job: Option<&'a Path>,
    carried: bool,
) -> pregen_pack::job::ProgramSource<'a> {
    use pregen_pack::job::ProgramSource;
    match (program_dir, job, carried) {
        (Some(dir), _, _) => ProgramSource::Dir(dir),
        (_, Some(job), _) => ProgramSource::Job(job),
        (_, _, true) => ProgramSource::Carried,
        _ => ProgramSource::Unnamed,
    }
}

/// The game program a command runs for a game program's pack: one you
/// name, never the command its manifest names.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct NamedProgram {
    /// For a game program's pack: your copy of the program, in this folder
    /// (its files must hash to the pack's identity; it is run only as
    /// `FILE` or `INTERPRETER FILE`, no arguments). Without this or
    /// `--job`, a program's pack is read without running its program.
    #[arg(long, value_name = "DIR", conflicts_with = "job")]
    pub program_dir: Option<std::path::PathBuf>,
    /// For a game program's pack: the job file that made it (its id must
    /// be the pack's); its program runs as the job says.
    #[arg(long, value_name = "FILE")]
    pub job: Option<std::path::PathBuf>,
}

impl NamedProgram {
    /// The program it names.
    pub fn source(&self) -> pregen_pack::job::ProgramSource<'_> {
        program_source(self.program_dir.as_deref(), self.job.as_deref(), false)
    }
}

/// Writes to stdout; a reader that went away (`| head`) ends the output quietly.
pub fn print_out(text: &str) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// A file's bytes, or an error naming it.
pub fn read_file(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))
}

/// A `--threads` flag held to the machine: at least 1, and no more than
/// its cores (more threads than cores only slow every seed and the machine
/// down; a typo such as `--threads 100000` would start that many threads).
/// Above the cores it is capped, with a warning.
pub fn threads_within_cores(asked: usize) -> Result<usize> {
    if asked == 0 {
        anyhow::bail!("--threads must be at least 1");
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if asked > cores {
        tracing::warn!(
            asked,
            cores,
            "--threads is above this machine's cores: capped at {cores}"
        );
        eprintln!(
            "warning: --threads {asked} is above this machine's {cores} cores: capped at {cores}"
        );
        return Ok(cores);
    }
    Ok(asked)
}
