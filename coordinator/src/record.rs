//! What the coordinator keeps per seed: the domain form of a worker's result.

use serde::{Deserialize, Serialize};

/// The verdict on one seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// A level that passed verification and the params' filters.
    Accepted,
    /// Proven to have no solution.
    Unsolvable,
    /// The wall-clock watchdog fired (machine-dependent: listed in the manifest).
    Timeout,
    /// Refused by a deterministic rule or budget.
    Rejected,
    /// The game failed.
    Error,
}

impl Status {
    /// The word stored in Parquet.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Accepted => "accepted",
            Status::Unsolvable => "unsolvable",
            Status::Timeout => "timeout",
            Status::Rejected => "rejected",
            Status::Error => "error",
        }
    }
}

/// An accepted level as stored: the games' own [`pregen_games::Candidate`].
pub use pregen_games::Candidate as LevelRecord;

/// The result for one seed, as committed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeedRecord {
    /// The seed.
    pub seed: u64,
    /// The verdict.
    pub status: Status,
    /// Why not accepted (empty when accepted).
    pub reason: String,
    /// The level, when accepted.
    pub level: Option<LevelRecord>,
    /// Generation time in ms.
    pub generate_ms: f64,
    /// Verification time in ms.
    pub solve_ms: f64,
    /// Search nodes.
    pub nodes: u64,
    /// The worker that produced it.
    pub worker: String,
    /// The attempt (1 = the seed's range was leased once).
    pub attempt: u32,
}

impl SeedRecord {
    /// The deterministic part of a record (what must agree between two runs).
    pub fn same_verdict(&self, other: &SeedRecord) -> bool {
        self.seed == other.seed
            && self.status == other.status
            && self.reason == other.reason
            && self.level.as_ref().map(|l| &l.level_hash)
                == other.level.as_ref().map(|l| &l.level_hash)
    }
}
