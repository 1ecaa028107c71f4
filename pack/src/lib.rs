//! The pregen pack on disk: everything that knows how a pack is laid out,
//! written and read, in one place.
//!
//! - [`job`]: the job file ([`Job`]), the plan of its strata, its id.
//! - [`record`]: what is kept per seed ([`SeedRecord`], [`Status`], [`Reason`]).
//! - [`schema`]: the Parquet tables' columns by name, their Arrow schemas and
//!   sort columns, and the schema file the independent readers check against.
//! - [`dir`]: the layout of a pack folder ([`PackDir`]).
//! - [`manifest`]: the typed `manifest.json` ([`Manifest`]).
//! - [`tiers`]: tiers and campaigns, every sort broken by seed.
//! - [`codec`]: a record's binary form (the commit log's and the sort's).
//! - [`sort`]: the external sort the writer streams through.
//! - [`write`]: writing a whole pack with bounded memory, `_SUCCESS` last
//!   ([`write::PackWriter`]).
//! - [`read`]: reading the Parquet files back.
//! - [`audit`]: what a stored level must pass, for every caller ([`audit::LevelAudit`]).
//! - `release_form`: a release file's levels, written and read in one place per form.
//! - [`archive`]: the reproducible release archive.
//! - [`durable`]: durable writes (temp, fsync, rename) and checksums.
//!
//! The crate knows nothing of the network or of async runtimes.

use std::path::PathBuf;

pub mod archive;
pub mod audit;
pub mod codec;
pub mod dir;
pub mod durable;
pub mod footer;
pub mod job;
pub mod manifest;
pub mod read;
pub mod record;
pub mod release_check;
mod release_form;
pub mod schema;
pub mod sort;
pub mod tiers;
pub mod write;

pub use dir::PackDir;
pub use job::Job;
pub use manifest::Manifest;
pub use record::{Code, Reason, Refusal, SeedRecord, Status, refusal_key};

/// Why `path` is not a complete pack, as its folder shows.
fn not_a_pack(path: &std::path::Path) -> String {
    let at = path.display();
    if !path.exists() {
        format!("{at} does not exist: give a pack's folder (`<out>/<pack>`)")
    } else if !path.is_dir() {
        format!("{at} is a file, not a pack's folder (`<out>/<pack>`)")
    } else if dir::PackDir::new(path).commit().is_dir() {
        format!("{at} is not a complete pack (no _SUCCESS; is the job still running?)")
    } else {
        format!(
            "{at} is not a pack (no _SUCCESS, no commit log): give a pack's folder (`<out>/<pack>`)"
        )
    }
}

/// Errors reading or writing a pack.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PackError {
    /// The job is invalid (the message names the field).
    #[error("invalid job: {0}")]
    Job(String),
    /// The folder is not a complete pack: it does not exist, it is a run
    /// not finished (a commit log, no `_SUCCESS`), or it is no pack.
    #[error("{}", not_a_pack(.0))]
    NotAPack(PathBuf),
    /// A file system call failed.
    #[error("cannot {action} {}", path.display())]
    Io {
        /// What was being done: `read`, `write`, `create`, `sync` ...
        action: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A Parquet file could not be encoded or decoded.
    #[error("Parquet {}", path.display())]
    Parquet {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: parquet::errors::ParquetError,
    },
    /// Arrow data could not be built or read.
    #[error("Arrow data of {}", path.display())]
    Arrow {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: arrow_schema::ArrowError,
    },
    /// A JSON file does not parse or does not serialize.
    #[error("JSON {}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: serde_json::Error,
    },
    /// A file's content is wrong: a missing column, a checksum that does not
    /// match, a stray file.
    #[error("{}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

impl PackError {
    /// An I/O error on `path`.
    pub fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| PackError::Io {
            action,
            path,
            source,
        }
    }

    /// Wrong content in `path`.
    pub fn invalid(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        PackError::Invalid {
            path: path.into(),
            message: message.into(),
        }
    }
}
