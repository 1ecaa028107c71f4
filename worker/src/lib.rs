//! The pregen worker: connects to a coordinator, leases seed ranges, runs every
//! seed on a rayon pool under its budget, and streams each result back as soon
//! as it is ready.
//!
//! Main items: [`WorkerConfig`] and [`run_worker`]. CPU work never runs on
//! tokio's threads: granted leases go to a feed whose seeds the rayon pool
//! draws one at a time, in grant order, and results come back through a
//! bounded channel. On shutdown (the token is cancelled, e.g. by
//! SIGTERM) the worker stops starting seeds, finishes the ones in progress,
//! returns its unfinished leases and closes its session.
//!
//! Modules: `connect` (reaching the coordinator, backoff, TLS), `protocol`
//! (the session as a pure state machine: messages and events in, actions
//! out; unit tested transition by transition), `session` (one session over
//! gRPC: Hello and Welcome, then the machine driven by the stream, the pool
//! and the timers), `feed` (the leases' seeds on the rayon pool) and `load`
//! (the load client: many light sessions that run their seeds inline through
//! the same machine, for measuring a coordinator).

mod connect;
mod error;
mod feed;
mod load;
mod protocol;
mod session;

use std::time::Duration;

pub use connect::run_worker;
pub use error::{SessionError, WorkerError};
pub use load::{LoadConfig, LoadReport, run_load};

/// How a worker runs.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// Coordinator URL, e.g. `http://127.0.0.1:50051`.
    pub coordinator: String,
    /// The shared token.
    pub token: String,
    /// Threads for candidates (rayon pool size).
    pub threads: usize,
    /// Name reported to the coordinator: 1 to 64 letters, digits and
    /// `-_.:@`. The coordinator records the worker as `NAME#ID` (the
    /// `worker` column), the ID its own.
    pub name: String,
    /// Leases kept waiting beyond those the pool is working on: a new one is
    /// asked for whenever a lease starts, so the pool never waits for a grant.
    pub leases_ahead: usize,
    /// Give up when the coordinator cannot be reached for this long.
    pub connect_timeout: Duration,
    /// For an `https://` coordinator: a CA certificate (PEM) to trust besides
    /// the system's roots, e.g. a cluster's own CA.
    pub tls_ca: Option<Vec<u8>>,
    /// For a coordinator that asks for client certificates: this worker's
    /// certificate and private key (PEM).
    pub tls_identity: Option<(Vec<u8>, Vec<u8>)>,
    /// For load tests: every seed's time is stretched this many times (the
    /// worker sleeps the difference), as on a machine that much slower. 1
    /// (the default) runs seeds as they come.
    pub slowdown: u32,
    /// For a job whose game is a program: the folder this worker finds it
    /// in (default: the folder the job names).
    pub program_dir: Option<std::path::PathBuf>,
}

impl WorkerConfig {
    /// Defaults: all cores, one lease ahead, a 60 s connect timeout.
    pub fn new(coordinator: impl Into<String>, token: impl Into<String>) -> Self {
        Self {
            coordinator: coordinator.into(),
            token: token.into(),
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            name: default_name(),
            leases_ahead: 1,
            connect_timeout: Duration::from_secs(60),
            tls_ca: None,
            tls_identity: None,
            slowdown: 1,
            program_dir: None,
        }
    }
}

/// `host-pid`.
pub fn default_name() -> String {
    let host = std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "worker".into());
    format!("{host}-{}", std::process::id())
}

/// What a worker did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WorkerReport {
    /// Results sent.
    pub results: u64,
    /// Leases finished.
    pub leases: u64,
    /// Sessions opened (1 unless the connection was lost).
    pub sessions: u64,
    /// Sessions the coordinator answered with Welcome.
    pub welcomed: u64,
    /// Whether the worker stopped because of shutdown rather than job end.
    pub drained: bool,
}
