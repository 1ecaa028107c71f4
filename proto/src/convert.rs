//! Wire <-> domain conversions, in one place beside the wire types: the
//! worker turns a game's [`Outcome`] into a [`SeedResult`], the coordinator
//! turns it back, refusing what is malformed.

use pregen_games::{Code, Outcome, Reason, Rejection, Status};

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

impl From<Status> for seed_result::Status {
    fn from(status: Status) -> Self {
        match status {
            Status::Accepted => seed_result::Status::Accepted,
            Status::Unsolvable => seed_result::Status::Unsolvable,
            Status::Timeout => seed_result::Status::Timeout,
            Status::Rejected => seed_result::Status::Rejected,
            Status::Error => seed_result::Status::Error,
        }
    }
}

/// The longest reason detail taken from a worker, in bytes.
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
            Ok(c) => (Status::Accepted, None, Some(c.into())),
            Err(r) => (r.status(), r.reason().cloned(), None),
        };
        SeedResult {
            lease_id,
            seed,
            status: seed_result::Status::from(status) as i32,
            // Code numbers are the wire's (a test holds the two lists equal).
            reason_code: reason.as_ref().map_or(0, |r| r.code.number() as i32),
            reason_detail: reason.map(|r| r.detail).unwrap_or_default(),
            level,
            generate_ms: outcome.generate_ms,
            solve_ms: outcome.solve_ms,
            nodes: outcome.nodes,
        }
    }
}

impl SeedResult {
    /// [`SeedResult::from_outcome`] held to the wire's caps, as the
    /// coordinator holds it ([`Outcome::try_from`]): an outcome that breaks
    /// one (a reason detail over 1 KiB, a level over its caps, a metric
    /// that is not finite...) is sent as the seed's `error` (`oversize`,
    /// naming the cap), so that one seed cannot make its batch refused.
    pub fn within_caps(lease_id: u64, seed: u64, outcome: Outcome) -> Self {
        let wire = SeedResult::from_outcome(lease_id, seed, outcome);
        let Some(mut detail) = wire.past_caps() else {
            return wire;
        };
        if detail.len() > MAX_REASON {
            let mut end = MAX_REASON;
            while !detail.is_char_boundary(end) {
                end -= 1;
            }
            detail.truncate(end);
        }
        let finite = |ms: f64| if ms.is_finite() && ms >= 0.0 { ms } else { 0.0 };
        let outcome = Outcome {
            result: Err(Rejection::refused(Code::Oversize, detail)),
            generate_ms: finite(wire.generate_ms),
            solve_ms: finite(wire.solve_ms),
            nodes: wire.nodes,
        };
        SeedResult::from_outcome(lease_id, seed, outcome)
    }

    /// The first cap of the wire this result breaks, in words: a timing
    /// that is not a duration, a reason detail or a level past its caps
    /// (what [`Outcome::try_from`] refuses of a result that holds together).
    fn past_caps(&self) -> Option<String> {
        self.numbers_and_reason()
            .and_then(|()| self.level.as_ref().map_or(Ok(()), check_level_size))
            .err()
    }

    /// The result's timings are durations and its reason detail within
    /// [`MAX_REASON`].
    fn numbers_and_reason(&self) -> Result<(), String> {
        for (name, ms) in [
            ("generate_ms", self.generate_ms),
            ("solve_ms", self.solve_ms),
        ] {
            if !(ms.is_finite() && ms >= 0.0) {
                return Err(format!("{name} is {ms}, not a duration"));
            }
        }
        if self.reason_detail.len() > MAX_REASON {
            return Err(format!(
                "reason_detail of {} bytes (at most {MAX_REASON})",
                self.reason_detail.len()
            ));
        }
        Ok(())
    }
}

impl TryFrom<SeedResult> for Outcome {
    type Error = MalformedResult;

    fn try_from(r: SeedResult) -> Result<Self, Self::Error> {
        let bad = |message: String| MalformedResult {
            seed: r.seed,
            message,
        };
        r.numbers_and_reason().map_err(bad)?;
        let mut reason = match r.reason_code {
            0 => None,
            n => {
                let code = u32::try_from(n).ok().and_then(pregen_games::code_of_number);
                let code = code.ok_or_else(|| bad(format!("unknown reason_code {n}")))?;
                Some(Reason::new(code, r.reason_detail))
            }
        };
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
            (Ok(status @ (seed_result::Status::Rejected | seed_result::Status::Error)), _) => {
                let reason = reason.take().ok_or_else(|| {
                    bad(format!(
                        "status {} without a reason_code",
                        status.as_str_name()
                    ))
                })?;
                if seed_result::Status::from(reason.code.status()) != status {
                    return Err(bad(format!(
                        "reason_code {} does not go with status {}",
                        reason.code.number(),
                        status.as_str_name()
                    )));
                }
                Err(Rejection::Refused(reason))
            }
            (Ok(seed_result::Status::Unspecified) | Err(_), _) => {
                return Err(bad(format!("unknown status {}", r.status)));
            }
        };
        if let Some(reason) = reason {
            return Err(bad(format!(
                "reason_code {} on a seed that was not refused",
                reason.code.number()
            )));
        }
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
    use pregen_games::Candidate;

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
            Err(Rejection::refused(Code::TooEasy, "1 moves < min_moves 2")),
            Err(Rejection::refused(Code::GeneratorPanicked, "boom")),
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
        let refused = Err(Rejection::refused(Code::TooEasy, ""));
        let good = SeedResult::from_outcome(1, 5, outcome(refused));
        for (change, says) in [
            (
                (|w: &mut SeedResult| w.reason_code = 0) as fn(&mut SeedResult),
                "status STATUS_REJECTED without a reason_code",
            ),
            (|w| w.reason_code = 99, "unknown reason_code 99"),
            (|w| w.reason_code = -1, "unknown reason_code -1"),
            (
                |w| w.reason_code = Code::Internal.number() as i32,
                "reason_code 24 does not go with status STATUS_REJECTED",
            ),
            (
                |w| w.status = seed_result::Status::Unsolvable as i32,
                "reason_code 1 on a seed that was not refused",
            ),
            (
                |w| w.reason_detail = "x".repeat(MAX_REASON + 1),
                "reason_detail of 1025 bytes (at most 1024)",
            ),
        ] {
            let mut wire = good.clone();
            change(&mut wire);
            let err = Outcome::try_from(wire).expect_err(says);
            assert_eq!(err.to_string(), format!("seed 5: {says}"));
        }
    }

    /// The wire's `ReasonCode` and the built-in [`Code`]s (the common ones
    /// and every game's own) are one list: the same numbers, and the wire's
    /// name is the word's (a program's own codes travel as numbers the
    /// enum does not list).
    #[test]
    fn reason_codes_match_the_wire() {
        use crate::v1::ReasonCode;
        let built_in: Vec<Code> = Code::COMMON
            .iter()
            .copied()
            .chain(pregen_games::GameKind::all().flat_map(|g| g.reasons().to_vec()))
            .collect();
        let highest = built_in.iter().map(|c| c.number()).max().unwrap_or(0);
        for n in 1..=highest + 5 {
            let wire = ReasonCode::try_from(n as i32).ok();
            let code = built_in.iter().find(|c| c.number() == n);
            assert_eq!(wire.is_some(), code.is_some(), "number {n}");
            if let (Some(wire), Some(code)) = (wire, code) {
                let words: Vec<String> = code
                    .as_str()
                    .split(' ')
                    .map(|w| w.to_ascii_uppercase())
                    .collect();
                let name = wire.as_str_name();
                assert!(
                    words
                        .iter()
                        .filter(|w| w.len() >= 3)
                        .any(|w| name.contains(w.as_str())),
                    "{name} is not named after `{code}`"
                );
            }
        }
    }

    /// one seed whose outcome breaks a cap of the wire is sent
    /// as that seed's `oversize` error, which the coordinator takes,
    /// instead of a result that refuses its whole batch.
    #[test]
    fn an_outcome_past_a_cap_is_its_seeds_error() {
        let long = Rejection::refused(Code::TooEasy, "x".repeat(5_000));
        let wire = SeedResult::from_outcome(7, 3, outcome(Err(long.clone())));
        assert!(Outcome::try_from(wire).is_err(), "the cap holds");
        let sent = SeedResult::within_caps(7, 3, outcome(Err(long)));
        let taken = Outcome::try_from(sent).expect("taken");
        let reason = taken
            .result
            .expect_err("an error")
            .reason()
            .cloned()
            .expect("reason");
        assert_eq!(reason.code, Code::Oversize);
        assert!(
            reason.detail.contains("reason_detail of 5000 bytes"),
            "{}",
            reason.detail
        );
        let fine = Rejection::refused(Code::TooEasy, "1 move");
        let sent = SeedResult::within_caps(7, 3, outcome(Err(fine.clone())));
        assert_eq!(Outcome::try_from(sent).expect("taken").result, Err(fine));
    }
}
