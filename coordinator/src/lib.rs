//! The pregen coordinator: turns a [`Job`] into a pack. Its surface is
//! [`server`] (running a job) and [`retier`]; the commit log's reader
//! ([`CommitLog`], for tests and fuzzing that read a pack's log), the
//! scheduler's facade ([`Scheduler`], for fuzzing) and a running job's
//! [`Progress`] are re-exported here. Inside:
//!
//! - `scheduler`: leases and results, the pack-completion rule (no network).
//! - `commit_log`: the durable, resumable log of results.
//! - `cross_check`: the sampled second runs that catch a lying worker.
//! - `identity`: the worker identities the coordinator issues.
//! - `verdicts`: the few bytes kept per seed, and the selection the pack is
//!   written from.
//! - `trust`: what a level must pass to count, from a worker, from the
//!   log on resume or from the coordinator's own run.
//! - `shared`: the state the sessions, the maintenance loop and the
//!   metrics share.
//! - `service`: the gRPC adapter over the shared state.
//! - [`server`]: running a job: serve, maintenance, writing the pack, shutdown.
//! - `metrics`: Prometheus metrics of a running job.
//! - [`retier`]: a finished pack rated again by another model, from its log.
//! - `connections`: the cap on open connections.
//!
//! The job, the records and everything written to disk come from
//! `pregen-pack`; workers (local or remote) and the command line live
//! elsewhere: this library only serves.

mod commit_log;
mod connections;
mod cross_check;
mod identity;
mod in_store;
mod maintenance;
mod metrics;
pub mod retier;
mod scheduler;
pub mod server;
mod service;
mod shared;
mod trust;
mod verdicts;

use std::path::PathBuf;

pub use commit_log::key::LogKey;
pub use commit_log::{CommitLog, Entry as LogEntry};
pub use cross_check::COORDINATOR;
pub use pregen_pack::Job;
pub use scheduler::{Progress, Scheduler, SchedulerConfig};
pub use service::MAX_SESSIONS_PER_CONNECTION;

/// Errors of the coordinator library.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CoordinatorError {
    /// The job, or the pack on disk, is wrong or cannot be written.
    #[error(transparent)]
    Pack(#[from] pregen_pack::PackError),
    /// The output folder cannot be resumed (or a pack retiered).
    #[error("cannot resume: {0}")]
    Resume(#[from] ResumeError),
    /// The run was stopped (a signal, or the caller's token) before the
    /// pack was complete; the commit log is kept.
    #[error("interrupted with {committed} of {wanted} levels in; run the same job again to resume")]
    Interrupted {
        /// Levels of the pack that were in.
        committed: u64,
        /// Levels the job asks for.
        wanted: u64,
    },
    /// The server could not start.
    #[error("server: {message}")]
    Server {
        /// What failed.
        message: String,
        /// The cause, when there is one.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// A stratum tried `max_seeds` seeds without enough levels.
    #[error("gave up: {0}")]
    Exhausted(String),
    /// The job's game program cannot make a pack: it is not deterministic,
    /// or it fails every seed. No resume helps; the program must change.
    #[error("{0}")]
    Program(String),
    /// No worker was connected for the idle limit.
    #[error(
        "no worker connected for {seconds} s (--idle-exit-s); the commit log is kept: \
         run the same job again to resume"
    )]
    Idle {
        /// How long the coordinator waited.
        seconds: u64,
    },
    /// The commit log could not be written for too long (e.g. the disk is
    /// full, or no file descriptor is left).
    #[error(
        "the commit log could not be written for {seconds} s ({source}); fix the cause (disk \
         space, the open-file limit, permissions) and run the same job again to resume from \
         what was written"
    )]
    LogWrite {
        /// How long writes kept failing.
        seconds: u64,
        /// The last failure.
        #[source]
        source: Box<CoordinatorError>,
    },
    /// The object store holding the pack failed (after its retries).
    #[error(transparent)]
    Store(#[from] pregen_store::StoreError),
    /// Another coordinator holds (or took over) the pack's lease in the
    /// object store, or wrote a segment of its log: this one stops, and
    /// publishes nothing.
    #[error("{0}; run the same job again to resume once the other has stopped")]
    Fenced(String),
}

/// Why an output folder cannot be resumed, or a finished pack retiered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResumeError {
    /// Another coordinator holds the folder's lock.
    #[error(
        "{} is in use by another coordinator ({holder}); stop it first or use another output \
         folder",
        dir.display()
    )]
    InUse {
        /// The pack's folder.
        dir: PathBuf,
        /// Who holds it, as it wrote itself in the lock file.
        holder: String,
    },
    /// The log's job file does not read as a job.
    #[error("{} is not a job: {why}", path.display())]
    NotAJob {
        /// The job file.
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// The folder holds another job's log.
    #[error(
        "{} holds job {stored} but this job is {job}; use another pack name or output folder",
        dir.display()
    )]
    OtherJob {
        /// The pack's folder.
        dir: PathBuf,
        /// The job the log is for.
        stored: String,
        /// This job.
        job: String,
    },
    /// A segment that does not hold what it must.
    #[error(
        "{}: {what}; the commit log was edited, damaged or mixed with another job's (move this \
         segment and every later one away to recompute their seeds: segments are numbered \
         without gaps)",
        path.display()
    )]
    Damaged {
        /// The segment.
        path: PathBuf,
        /// What is wrong with it.
        what: String,
    },
    /// A segment of an older commit-log format, which this build does not read.
    #[error(
        "{}: written by an older pregen (commit-log format {version}), which this build does \
         not read; finish the run with that version, or move the commit folder away to start \
         afresh",
        path.display()
    )]
    OlderFormat {
        /// The segment.
        path: PathBuf,
        /// Its format version.
        version: u32,
    },
    /// The log's key file is not a key.
    #[error(
        "{} is not 32 hex digits: the log's segments cannot be proven without it",
        path.display()
    )]
    BadKey {
        /// The key file.
        path: PathBuf,
    },
    /// The log's key file is missing (retier).
    #[error("{}: the commit log's key {file} is missing", commit.display())]
    MissingKey {
        /// The commit folder.
        commit: PathBuf,
        /// The key's file name.
        file: &'static str,
    },
    /// A stored level fails the check it passed when it came in.
    #[error("{}", forged_words(.0))]
    Forged(trust::Refused),
    /// Seeds the scheduler counted whose records are not in the log.
    #[error(
        "{}: the records of {count} seeds the scheduler counted (seed {first} first) are not in \
         the commit log; it changed while the pack was written",
        commit.display()
    )]
    Unrecorded {
        /// The commit folder.
        commit: PathBuf,
        /// How many seeds.
        count: usize,
        /// The first of them.
        first: u64,
    },
    /// Retier: the pack is not finished.
    #[error("{} is not a finished pack (no _SUCCESS): finish it first", pack.display())]
    NotFinished {
        /// The pack's folder.
        pack: PathBuf,
    },
    /// Retier: the pack keeps no commit log.
    #[error(
        "{} has no commit log to rate again from (a retiered pack keeps none): retier the pack \
         it was made from",
        pack.display()
    )]
    NoCommitLog {
        /// The pack's folder.
        pack: PathBuf,
    },
    /// Retier: the new pack's folder is not empty.
    #[error("{} is not empty: give a new folder for the retiered pack", out.display())]
    NotEmpty {
        /// The folder.
        out: PathBuf,
    },
    /// Retier: the log does not hold the whole pack.
    #[error("{}: the commit log does not hold the whole pack", commit.display())]
    Incomplete {
        /// The commit folder.
        commit: PathBuf,
    },
    /// Retier: the new model cannot rate a level.
    #[error("seed {}: {}", .0.seed(), .0)]
    Unrated(trust::Refused),
}

/// A stored level's refusal, in the words of a resume.
fn forged_words(refused: &trust::Refused) -> String {
    use pregen_pack::audit::Finding;
    const CHANGED: &str = "the log was changed after it was written; move the pack's commit/ \
                           folder away to start afresh";
    match refused {
        trust::Refused::Level(Finding::NotTheJobs { seed }) => {
            format!("the commit log holds seed {seed}, not one of the job's")
        }
        trust::Refused::Level(Finding::Stratum { seed, .. }) => {
            format!("the commit log holds seed {seed} in another stratum than its own: {CHANGED}")
        }
        trust::Refused::Level(Finding::Check { seed, error }) => format!(
            "the commit log's level for seed {seed} fails the coordinator's check ({error}): \
             {CHANGED}"
        ),
        trust::Refused::Level(Finding::Unrated { seed, error }) => format!("seed {seed}: {error}"),
        trust::Refused::NoBand { seed } => format!(
            "the commit log says seed {seed} is `out of band`, and its stratum has no band its \
             workers apply: {CHANGED}"
        ),
        trust::Refused::ForeignReason { seed, code, game } => format!(
            "the commit log's reason for seed {seed} is `{code}`, not one {game} gives: {CHANGED}"
        ),
        trust::Refused::Level(Finding::Difficulty {
            seed,
            claimed,
            rated,
        }) => format!(
            "the commit log's difficulty for seed {seed} is {claimed} but the job's rating model \
             rates its metrics {rated}: {CHANGED}"
        ),
    }
}

impl CoordinatorError {
    /// A server error with its cause.
    pub fn server(
        message: impl Into<String>,
    ) -> impl FnOnce(Box<dyn std::error::Error + Send + Sync>) -> Self {
        let message = message.into();
        move |source| CoordinatorError::Server {
            message,
            source: Some(source),
        }
    }
}
