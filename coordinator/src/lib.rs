//! The pregen coordinator: turns a [`Job`] into a pack.
//!
//! - [`scheduler`]: leases and results, the pack-completion rule (no network).
//! - [`commit_log`]: the durable, resumable log of results.
//! - [`cross_check`]: the sampled second runs that catch a lying worker.
//! - [`identity`]: the worker identities the coordinator issues.
//! - [`verdicts`]: the few bytes kept per seed, and the selection the pack is
//!   written from.
//! - [`service`]: the gRPC adapter over the scheduler.
//! - [`server`]: running a job: serve, maintenance, writing the pack, shutdown.
//! - [`metrics`]: Prometheus metrics of a running job.
//! - [`retier`]: a finished pack rated again by another model, from its log.
//! - [`connections`]: the cap on open connections.
//!
//! The job, the records and everything written to disk come from
//! `pregen-pack`; workers (local or remote) and the command line live
//! elsewhere: this library only serves.

pub mod commit_log;
pub mod connections;
pub mod cross_check;
pub mod identity;
mod maintenance;
pub mod metrics;
pub mod retier;
pub mod scheduler;
pub mod server;
pub mod service;
pub mod verdicts;

pub use pregen_pack::Job;

/// Errors of the coordinator library.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CoordinatorError {
    /// The job, or the pack on disk, is wrong or cannot be written.
    #[error(transparent)]
    Pack(#[from] pregen_pack::PackError),
    /// The output folder cannot be resumed.
    #[error("cannot resume: {0}")]
    Resume(String),
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
