//! What a pack keeps per seed: the domain form of a worker's result, as the
//! commit log stores it and the pack's tables show it.

use pregen_games::Outcome;
use serde::{Deserialize, Serialize};

/// The verdict on one seed, and a refusal's code and detail: the games' own
/// types.
pub use pregen_games::{Code, Reason, Refusal, Status};

/// An accepted level as stored: the games' own [`Candidate`].
pub use pregen_games::Candidate as LevelRecord;

/// How a reader of a rejects table counts a row: `rejected: too easy` from
/// its `status` and `reason` columns, or the status alone; the text
/// [`Refusal`] displays. The words are taken as written, for a pack from
/// another build may hold codes this one lacks.
pub fn refusal_key(status: &str, code: &str) -> String {
    match code {
        "" => status.to_string(),
        code => format!("{status}: {code}"),
    }
}

/// The result for one seed, as committed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeedRecord {
    /// The seed.
    pub seed: u64,
    /// The verdict.
    pub status: Status,
    /// Why refused (none when accepted, unsolvable or timed out).
    #[serde(with = "reason_line")]
    pub reason: Option<Reason>,
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
            + self.reason.as_ref().map_or(0, |r| r.detail.len())
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
        let (status, reason, level) = match outcome.result {
            Ok(level) => (Status::Accepted, None, Some(level)),
            Err(rejection) => (rejection.status(), rejection.reason().cloned(), None),
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

    /// How the seed is counted when not accepted.
    pub fn refusal(&self) -> Refusal {
        Refusal {
            status: self.status,
            code: self.reason.as_ref().map(|r| r.code),
        }
    }

    /// The level when the seed was accepted.
    pub fn accepted(&self) -> Option<&LevelRecord> {
        self.level
            .as_ref()
            .filter(|_| self.status == Status::Accepted)
    }
}

/// A reason in JSON as its one line (`too easy: 3 moves < min_moves 4`; empty
/// for none), the form the retired JSON-lines commit log wrote.
mod reason_line {
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    use super::Reason;

    pub fn serialize<S: Serializer>(reason: &Option<Reason>, s: S) -> Result<S::Ok, S::Error> {
        match reason {
            Some(reason) => s.collect_str(reason),
            None => s.serialize_str(""),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Reason>, D::Error> {
        let line = String::deserialize(d)?;
        if line.is_empty() {
            return Ok(None);
        }
        Reason::parse_line(&line, pregen_games::code_of_word)
            .map(Some)
            .ok_or_else(|| D::Error::custom(format!("unknown reason `{line}`")))
    }
}
