//! The pregen coordinator: turns a [`Job`] into a pack.
//!
//! - [`job`]: the job file and its validation.
//! - [`scheduler`]: leases and results, the pack-completion rule (no network).
//! - [`commit_log`]: the durable, resumable log of results.
//! - [`pack`]: tiers, campaigns, Parquet, release files, manifest.
//! - [`archive`]: the reproducible release archive of a finished pack.
//! - [`service`]: the gRPC adapter over the scheduler.
//! - [`server`]: running a job: serve, maintenance, progress, embedded workers.
//! - [`metrics`]: Prometheus metrics of a running job.
//!
//! The `pregen` binary (`main.rs`) is CLI glue over [`server::run_job`], the
//! worker crate and the analysis crate.

pub mod archive;
pub mod commit_log;
pub mod job;
pub mod metrics;
pub mod pack;
pub mod record;
pub mod scheduler;
pub mod server;
pub mod service;

pub use job::Job;

/// Errors of the coordinator library.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CoordinatorError {
    /// The job file is invalid (the message names the field).
    #[error("invalid job: {0}")]
    Job(String),
    /// The output folder cannot be resumed.
    #[error("cannot resume: {0}")]
    Resume(String),
    /// Reading or writing files failed.
    #[error("{0}")]
    Io(String),
    /// The server could not start.
    #[error("server: {0}")]
    Server(String),
    /// A stratum tried `max_seeds` seeds without enough levels.
    #[error("gave up: {0}")]
    Exhausted(String),
}
