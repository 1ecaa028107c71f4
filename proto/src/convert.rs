//! Wire <-> domain conversions, in one place beside the wire types: the
//! worker turns a game's [`Outcome`] into a [`SeedResult`], the coordinator
//! turns it back, refusing what is malformed.

use pregen_games::{Candidate, Outcome, Rejection};

use crate::v1::{Level, SeedResult, seed_result};

/// A wire message that does not make a domain value; the message names the
/// seed and the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("seed {seed}: {message}")]
pub struct MalformedResult {
    /// The seed of the result.
    pub seed: u64,
    /// What is wrong.
    pub message: String,
}

impl From<Candidate> for Level {
    fn from(c: Candidate) -> Self {
        Level {
            difficulty: c.difficulty,
            moves: c.moves,
            moves_optimal: c.moves_optimal,
            layout: c.layout,
            level_json: c.level_json,
            solution: c.solution,
            metrics: c.metrics,
            level_hash: c.level_hash,
            canonical: c.canonical.unwrap_or_default(),
        }
    }
}

impl From<Level> for Candidate {
    fn from(l: Level) -> Self {
        Candidate {
            difficulty: l.difficulty,
            moves: l.moves,
            moves_optimal: l.moves_optimal,
            layout: l.layout,
            level_json: l.level_json,
            solution: l.solution,
            metrics: l.metrics,
            level_hash: l.level_hash,
            canonical: Some(l.canonical).filter(|c| !c.is_empty()),
        }
    }
}

impl From<&Rejection> for seed_result::Status {
    fn from(r: &Rejection) -> Self {
        match r {
            Rejection::Unsolvable => seed_result::Status::Unsolvable,
            Rejection::Timeout => seed_result::Status::Timeout,
            Rejection::Rejected(_) => seed_result::Status::Rejected,
            Rejection::Error(_) => seed_result::Status::Error,
        }
    }
}

/// The longest rejection reason taken from a worker, in bytes.
pub const MAX_REASON: usize = 1024;
/// The longest level JSON taken from a worker, in bytes.
pub const MAX_LEVEL_JSON: usize = 64 * 1024;
/// The longest solution taken from a worker, in bytes.
pub const MAX_SOLUTION: usize = 256 * 1024;
/// The most metrics taken with one level, and the longest metric name.
pub const MAX_METRICS: (usize, usize) = (256, 128);

/// Refuses a level whose fields are larger than any game makes, or whose
/// numbers are not finite: checked before anything parses them.
fn check_level_size(level: &Level) -> Result<(), String> {
    let sizes = [
        ("level_json", level.level_json.len(), MAX_LEVEL_JSON),
        ("layout", level.layout.len(), MAX_LEVEL_JSON),
        ("solution", level.solution.len(), MAX_SOLUTION),
        ("metrics", level.metrics.len(), MAX_METRICS.0),
    ];
    for (field, len, max) in sizes {
        if len > max {
            return Err(format!("{field} of size {len} (at most {max})"));
        }
    }
    if !level.difficulty.is_finite() {
        return Err("difficulty is not finite".into());
    }
    for (name, value) in &level.metrics {
        if name.len() > MAX_METRICS.1 || !value.is_finite() {
            return Err(format!(
                "metric `{name}` = {value} is not a finite named figure"
            ));
        }
    }
    Ok(())
}

impl SeedResult {
    /// The wire form of `seed`'s outcome, run under lease `lease_id`.
    pub fn from_outcome(lease_id: u64, seed: u64, outcome: Outcome) -> Self {
        let (status, reason, level) = match outcome.result {
            Ok(c) => (seed_result::Status::Accepted, String::new(), Some(c.into())),
            Err(r) => ((&r).into(), r.reason().to_string(), None),
        };
        SeedResult {
            lease_id,
            seed,
            status: status as i32,
            reason,
            level,
            generate_ms: outcome.generate_ms,
            solve_ms: outcome.solve_ms,
            nodes: outcome.nodes,
        }
    }
}

impl TryFrom<SeedResult> for Outcome {
    type Error = MalformedResult;

    fn try_from(r: SeedResult) -> Result<Self, Self::Error> {
        let bad = |message: String| MalformedResult {
            seed: r.seed,
            message,
        };
        for (name, ms) in [("generate_ms", r.generate_ms), ("solve_ms", r.solve_ms)] {
            if !(ms.is_finite() && ms >= 0.0) {
                return Err(bad(format!("{name} is {ms}, not a duration")));
            }
        }
        if r.reason.len() > MAX_REASON {
            return Err(bad(format!(
                "reason of {} bytes (at most {MAX_REASON})",
                r.reason.len()
            )));
        }
        let result = match (seed_result::Status::try_from(r.status), r.level) {
            (Ok(seed_result::Status::Accepted), Some(level)) => {
                check_level_size(&level).map_err(bad)?;
                Ok(level.into())
            }
            (Ok(seed_result::Status::Accepted), None) => {
                return Err(bad("accepted without a level".into()));
            }
            (Ok(seed_result::Status::Unsolvable), _) => Err(Rejection::Unsolvable),
            (Ok(seed_result::Status::Timeout), _) => Err(Rejection::Timeout),
            (Ok(seed_result::Status::Rejected), _) => Err(Rejection::Rejected(r.reason)),
            (Ok(seed_result::Status::Error), _) => Err(Rejection::Error(r.reason)),
            (Ok(seed_result::Status::Unspecified) | Err(_), _) => {
                return Err(bad(format!("unknown status {}", r.status)));
            }
        };
        Ok(Outcome {
            result,
            generate_ms: r.generate_ms,
            solve_ms: r.solve_ms,
            nodes: r.nodes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(result: Result<Candidate, Rejection>) -> Outcome {
        Outcome {
            result,
            generate_ms: 1.5,
            solve_ms: 2.5,
            nodes: 7,
        }
    }

    #[test]
    fn outcomes_cross_the_wire_unchanged() {
        let level = Candidate {
            difficulty: 3.25,
            moves: 4,
            moves_optimal: true,
            layout: "#".into(),
            level_json: "{}".into(),
            solution: "UD".into(),
            metrics: [("states".to_string(), 9.0)].into(),
            level_hash: "ab".into(),
            canonical: Some("cd".into()),
        };
        for result in [
            Ok(level),
            Err(Rejection::Unsolvable),
            Err(Rejection::Timeout),
            Err(Rejection::Rejected(
                "too easy: 1 moves < min_moves 2".into(),
            )),
            Err(Rejection::Error("boom".into())),
        ] {
            let wire = SeedResult::from_outcome(3, 42, outcome(result.clone()));
            let back = Outcome::try_from(wire).expect("converts back");
            assert_eq!(back.result, result);
            assert_eq!((back.generate_ms, back.solve_ms, back.nodes), (1.5, 2.5, 7));
        }
    }

    #[test]
    fn malformed_results_are_named() {
        let mut wire = SeedResult::from_outcome(1, 5, outcome(Err(Rejection::Unsolvable)));
        wire.status = seed_result::Status::Accepted as i32;
        let err = Outcome::try_from(wire.clone()).expect_err("no level");
        assert_eq!(err.to_string(), "seed 5: accepted without a level");
        wire.status = 99;
        let err = Outcome::try_from(wire).expect_err("bad status");
        assert_eq!(err.to_string(), "seed 5: unknown status 99");
    }
}
