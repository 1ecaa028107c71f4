//! What a pack keeps per seed: the domain form of a worker's result, as the
//! commit log stores it and the pack's tables show it.

use pregen_games::{Candidate, Outcome, Rejection};
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
    /// The status of a game's verdict.
    pub fn of(result: &Result<Candidate, Rejection>) -> Status {
        match result {
            Ok(_) => Status::Accepted,
            Err(Rejection::Unsolvable) => Status::Unsolvable,
            Err(Rejection::Timeout) => Status::Timeout,
            Err(Rejection::Rejected(_)) => Status::Rejected,
            Err(Rejection::Error(_)) => Status::Error,
        }
    }

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

/// An accepted level as stored: the games' own [`Candidate`].
pub use pregen_games::Candidate as LevelRecord;

/// A rejection reason as a code plus detail: `too easy: 3 moves < min_moves 4`
/// has the code `too easy` (what reports count by) and the detail `3 moves <
/// min_moves 4`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reason<'a> {
    /// The kind of reason, without numbers.
    pub code: &'a str,
    /// The particulars (may be empty).
    pub detail: &'a str,
}

impl<'a> Reason<'a> {
    /// Splits a stored reason at its first `:`.
    pub fn parse(text: &'a str) -> Self {
        match text.split_once(':') {
            Some((code, detail)) => Reason {
                code: code.trim(),
                detail: detail.trim(),
            },
            None => Reason {
                code: text.trim(),
                detail: "",
            },
        }
    }

    /// How a seed that was not accepted is counted: its status and the code of
    /// its reason, e.g. `rejected: too easy`, or the status alone.
    pub fn key(status: &str, reason: &str) -> String {
        match Reason::parse(reason).code {
            "" => status.to_string(),
            code => format!("{status}: {code}"),
        }
    }
}

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
    /// The attempt (1 = the source's range was leased once).
    pub attempt: u32,
}

/// What a record is taken to cost in memory beyond its text.
const RECORD_OVERHEAD: usize = 256;

impl SeedRecord {
    /// A rough count of the memory the record takes (what bounds the sort's
    /// memory and the commit log's copy in memory).
    pub fn memory(&self) -> usize {
        RECORD_OVERHEAD
            + self.reason.len()
            + self.worker.len()
            + self.level.as_ref().map_or(0, |l| {
                l.layout.len()
                    + l.level_json.len()
                    + l.solution.len()
                    + l.level_hash.len()
                    + l.canonical.as_ref().map_or(0, String::len)
                    + l.metrics.keys().map(|k| k.len() + 48).sum::<usize>()
            })
    }

    /// The record of `seed`'s outcome, run by `worker`.
    pub fn from_outcome(seed: u64, outcome: Outcome, worker: String, attempt: u32) -> Self {
        let status = Status::of(&outcome.result);
        let (reason, level) = match outcome.result {
            Ok(level) => (String::new(), Some(level)),
            Err(rejection) => (rejection.reason().to_string(), None),
        };
        SeedRecord {
            seed,
            status,
            reason,
            level,
            generate_ms: outcome.generate_ms,
            solve_ms: outcome.solve_ms,
            nodes: outcome.nodes,
            worker,
            attempt,
        }
    }

    /// The level when the seed was accepted.
    pub fn accepted(&self) -> Option<&LevelRecord> {
        self.level
            .as_ref()
            .filter(|_| self.status == Status::Accepted)
    }

    /// The deterministic part of a record (what must agree between two runs).
    pub fn same_verdict(&self, other: &SeedRecord) -> bool {
        self.seed == other.seed
            && self.status == other.status
            && self.reason == other.reason
            && self.level.as_ref().map(|l| &l.level_hash)
                == other.level.as_ref().map(|l| &l.level_hash)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_split_into_code_and_detail() {
        let r = Reason::parse("too easy: 3 moves < min_moves 4");
        assert_eq!((r.code, r.detail), ("too easy", "3 moves < min_moves 4"));
        assert_eq!(Reason::parse("not planar").code, "not planar");
        assert_eq!(
            Reason::key("rejected", "too long: 9 > 8"),
            "rejected: too long"
        );
        assert_eq!(Reason::key("unsolvable", ""), "unsolvable");
    }
}
