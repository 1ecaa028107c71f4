//! `synthetic`: the load-test game. Not a puzzle: a deterministic stand-in
//! whose cost per seed, acceptance rate and level size are params, so the
//! pipeline (leases, the coordinator's checks, the commit log, the pack
//! writer) can be measured and stressed apart from any real generator.
//!
//! For a seed, the draws are, in order: the seed's cost (microseconds; fixed,
//! or Pareto-distributed with the same mean when `cost_tail` is set), whether
//! the seed is accepted (`accept_rate`), the level's key, its move count
//! (`1..=max_moves`) and its payload. The level is the key, the move count,
//! the cost and `level_bytes` characters of payload; its one winning solution
//! is the move count's letters read off the key, which `replay` checks, so the
//! coordinator's checks do real work on every level. The rating is the move
//! count plus a fraction read off the key.
//!
//! Every seed's cost is spent by the generator, accepted or not: spinning on a
//! core (`busy = true`, the default) or asleep (`busy = false`, to model many
//! workers' time on a few cores). Only the time depends on the machine; the
//! verdict and the level depend on (params, seed) alone, like every game's.

use crate::clock::Instant;
use crate::reason::Code;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::rng::Rng;
use crate::{Budget, Game, GameError, MetricDoc, Metrics, Misfit, ParamError, Rejection, Solved};
use pregen_game_core::metrics::metric;

/// The letters a solution is spelled in.
const LETTERS: [char; 4] = ['U', 'D', 'L', 'R'];
/// The payload's alphabet.
const PAYLOAD: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
/// Payload characters per line of the text form.
const LINE: usize = 64;
/// The largest cost a heavy tail draws, in multiples of the mean.
const TAIL_CAP: f64 = 1000.0;

/// Parameters of the synthetic game (the job's `[params]` table).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SyntheticParams {
    /// Mean cost of a seed in microseconds (0..=10,000,000).
    pub cost_us: u64,
    /// 0: every seed costs `cost_us`. Otherwise the shape of a Pareto tail
    /// (more than 1; smaller is heavier) with mean `cost_us`, capped at 1000x.
    pub cost_tail: f64,
    /// Spend the cost on a core (true) or asleep (false).
    pub busy: bool,
    /// Share of seeds accepted (0.0..=1.0).
    pub accept_rate: f64,
    /// Characters of payload in a level (0..=1,000,000).
    pub level_bytes: u32,
    /// Most moves in a solution (1..=1,000).
    pub max_moves: u32,
}

impl Default for SyntheticParams {
    fn default() -> Self {
        Self {
            cost_us: 100,
            cost_tail: 0.0,
            busy: true,
            accept_rate: 0.3,
            level_bytes: 64,
            max_moves: 30,
        }
    }
}

/// A synthetic level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Level {
    /// The key the solution is read off.
    pub key: u64,
    /// Moves in the solution.
    pub moves: u32,
    /// Microseconds its seed cost to generate.
    pub cost_us: u64,
    /// Filler of the level's size.
    pub payload: String,
}

impl Level {
    /// The one winning solution: `moves` letters read off the key.
    fn solution(&self) -> String {
        (0..self.moves).map(|i| letter(self.key, i)).collect()
    }
}

fn letter(key: u64, i: u32) -> char {
    LETTERS[((key >> ((2 * i) % 64)) & 3) as usize]
}

/// The synthetic game.
pub struct Synthetic;

/// What seed `seed` costs under `params`, in microseconds: what a load test
/// needs to know of the work without running it.
pub fn seed_cost_us(params: &SyntheticParams, seed: u64) -> u64 {
    draw_cost(params, &mut Rng::new(seed))
}

/// A seed's cost in microseconds: `cost_us`, or a Pareto draw with that mean.
fn draw_cost(params: &SyntheticParams, rng: &mut Rng) -> u64 {
    let u = rng.unit();
    if params.cost_tail == 0.0 {
        return params.cost_us;
    }
    // Inverse CDF of Pareto(x_m, a) with mean x_m * a / (a - 1) = cost_us.
    let a = params.cost_tail;
    let scale = params.cost_us as f64 * (a - 1.0) / a;
    let draw = scale / (1.0 - u).powf(1.0 / a);
    draw.min(params.cost_us as f64 * TAIL_CAP).round() as u64
}

/// Spends `cost_us` microseconds, spinning or asleep; the watchdog stops it.
fn spend(cost_us: u64, busy: bool, budget: &Budget) -> Result<(), Rejection> {
    let until = Instant::now() + Duration::from_micros(cost_us);
    if let Some(deadline) = budget.deadline.filter(|&d| d < until) {
        spin_or_sleep(deadline, busy);
        return Err(Rejection::Timeout);
    }
    spin_or_sleep(until, busy);
    Ok(())
}

fn spin_or_sleep(until: Instant, busy: bool) {
    if busy {
        let mut x = 0u64;
        while Instant::now() < until {
            for _ in 0..64 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
        }
    } else {
        std::thread::sleep(until.saturating_duration_since(Instant::now()));
    }
}

/// Synthetic's own reason codes (beside [`Code::COMMON`]); the numbers are
/// stable, the wire and the commit log carry them.
pub mod reasons {
    use crate::reason::{Code, Status};

    /// The draw refused the seed.
    pub const NOT_DRAWN: Code = Code::new(
        14,
        "not drawn",
        Status::Rejected,
        "The draw refused the seed.",
    );
}

impl Game for Synthetic {
    type Params = SyntheticParams;
    type Level = Level;
    type Analysis = ();
    const NAME: &'static str = "synthetic";

    const REASONS: &'static [Code] = &[reasons::NOT_DRAWN];

    const METRICS: &'static [MetricDoc] = &[
        metric("cost_us", "microseconds", "the seed's drawn cost"),
        metric(
            "key_fraction",
            "0..1",
            "a fraction read off the level's key (its rating's tie-break)",
        ),
    ];

    fn validate(p: &SyntheticParams) -> Result<(), ParamError> {
        ParamError::check("cost_us", p.cost_us, 0..=10_000_000)?;
        if !(p.cost_tail == 0.0 || (p.cost_tail > 1.0 && p.cost_tail <= 100.0)) {
            return Err(ParamError::out_of_range(
                "cost_tail",
                "0 (fixed cost) or a Pareto shape in (1, 100]",
                p.cost_tail,
            ));
        }
        ParamError::check("accept_rate", p.accept_rate, 0.0..=1.0)?;
        ParamError::check("level_bytes", p.level_bytes, 0..=1_000_000)?;
        ParamError::check("max_moves", p.max_moves, 1..=1000)
    }

    /// Spends the seed's cost, then makes the level, or `rejected: not
    /// drawn` for the seeds outside `accept_rate`.
    fn generate(
        params: &SyntheticParams,
        rng: &mut Rng,
        budget: &Budget,
    ) -> Result<Level, Rejection> {
        let cost_us = draw_cost(params, rng);
        spend(cost_us, params.busy, budget)?;
        if !rng.chance(params.accept_rate) {
            return Err(Rejection::refused(
                reasons::NOT_DRAWN,
                "outside accept_rate",
            ));
        }
        let key = rng.next_u64();
        let moves = rng.between(1, params.max_moves);
        let payload = (0..params.level_bytes)
            .map(|_| PAYLOAD[rng.index(PAYLOAD.len())] as char)
            .collect();
        Ok(Level {
            key,
            moves,
            cost_us,
            payload,
        })
    }

    /// Reads the solution off the key: one node per move.
    fn solve(level: &Level, _budget: &Budget) -> Result<Solved<()>, Rejection> {
        Ok(Solved {
            solution: level.solution(),
            moves: level.moves,
            optimal: true,
            nodes: u64::from(level.moves),
            analysis: (),
        })
    }

    fn accept(
        _params: &SyntheticParams,
        _level: &Level,
        _solved: &Solved<()>,
    ) -> Result<(), Rejection> {
        Ok(())
    }

    const RATING_MODEL: &'static str = include_str!("../models/synthetic.toml");

    fn metrics(level: &Level, _solved: &Solved<()>) -> Metrics {
        Metrics::from([
            ("cost_us".into(), level.cost_us as f64),
            // The key's top 53 bits as a fraction.
            (
                "key_fraction".into(),
                (level.key >> 11) as f64 / (1u64 << 53) as f64,
            ),
        ])
    }

    fn solution_moves(solution: &str) -> u32 {
        solution.chars().count() as u32
    }

    fn fits(params: &SyntheticParams, level: &Level, moves: u32) -> Result<(), Misfit> {
        if level.payload.len() != params.level_bytes as usize {
            return Err(Misfit::Shape {
                level: format!("a level of {} bytes", level.payload.len()),
                job: format!("a job of {}", params.level_bytes),
            });
        }
        let most = if params.cost_tail == 0.0 {
            1.0
        } else {
            TAIL_CAP
        };
        if level.cost_us as f64 > params.cost_us as f64 * most {
            return Err(Misfit::Shape {
                level: format!("a cost of {} us", level.cost_us),
                job: format!("a job of {} us", params.cost_us),
            });
        }
        Ok(crate::game::within(moves, "moves", 1, params.max_moves)?)
    }

    /// `synthetic KEY MOVES COST` (key in hex), then the payload in lines of 64.
    fn to_text(level: &Level) -> String {
        let mut text = format!(
            "synthetic {:016x} {} {}\n",
            level.key, level.moves, level.cost_us
        );
        for line in level.payload.as_bytes().chunks(LINE) {
            text.push_str(std::str::from_utf8(line).unwrap_or_default());
            text.push('\n');
        }
        text
    }

    fn from_text(text: &str) -> Result<Level, GameError> {
        let mut lines = text.lines();
        let head = lines.next().unwrap_or_default();
        let fields: Vec<&str> = head.split(' ').collect();
        let parsed = match fields[..] {
            ["synthetic", key, moves, cost] if key.len() == 16 => (
                u64::from_str_radix(key, 16).ok(),
                moves.parse::<u32>().ok().filter(|&m| m >= 1),
                cost.parse::<u64>().ok(),
            ),
            _ => (None, None, None),
        };
        let (Some(key), Some(moves), Some(cost_us)) = parsed else {
            return Err(GameError::parse_at(
                0,
                0,
                format!("expected `synthetic KEY MOVES COST` (KEY 16 hex digits), got `{head}`"),
            ));
        };
        let mut payload = String::new();
        for (i, line) in lines.enumerate() {
            if let Some(col) = line.bytes().position(|b| !PAYLOAD.contains(&b)) {
                return Err(GameError::parse_at(
                    i + 1,
                    col,
                    "payload characters are a-z and 0-9".into(),
                ));
            }
            if line.len() > LINE || line.is_empty() {
                return Err(GameError::parse_at(
                    i + 1,
                    0,
                    format!("payload lines hold 1 to {LINE} characters"),
                ));
            }
            payload.push_str(line);
        }
        Ok(Level {
            key,
            moves,
            cost_us,
            payload,
        })
    }

    const WHOLE_TEXT: bool = true;

    /// A file of levels as a pack's release files hold them.
    fn from_collection(text: &str) -> Result<crate::game::Collection<Level>, GameError> {
        crate::game::collection_of_blocks(text, Self::from_text)
    }

    fn replay(level: &Level, solution: &str) -> Result<(), GameError> {
        let mut count = 0;
        for (i, c) in solution.chars().enumerate() {
            let want = letter(level.key, i as u32);
            if i as u32 >= level.moves || c != want {
                return Err(GameError::Replay {
                    index: i,
                    message: format!("`{c}` is not the level's move {}", i + 1),
                });
            }
            count += 1;
        }
        if count != level.moves {
            return Err(GameError::NotWon {
                moves: count as usize,
                message: format!("the level takes {}", level.moves),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_game;

    fn params(cost_us: u64, cost_tail: f64) -> SyntheticParams {
        SyntheticParams {
            cost_us,
            cost_tail,
            ..SyntheticParams::default()
        }
    }

    #[test]
    fn levels_replay_round_trip_and_follow_the_params() {
        let p = SyntheticParams {
            cost_us: 0,
            level_bytes: 150,
            ..SyntheticParams::default()
        };
        let outcomes: Vec<_> = (0..2000)
            .map(|seed| run_game::<Synthetic>(&p, seed, &Budget::nodes(1)))
            .collect();
        let accepted: Vec<_> = outcomes
            .iter()
            .filter_map(|o| o.result.as_ref().ok())
            .collect();
        let share = accepted.len() as f64 / outcomes.len() as f64;
        assert!((0.25..0.35).contains(&share), "accepted share {share}");
        for c in accepted {
            let level: Level = serde_json::from_str(&c.level_json).expect("json");
            assert_eq!(level.payload.len(), 150);
            assert_eq!(Synthetic::replay(&level, &c.solution), Ok(()));
            assert_eq!(Synthetic::from_text(&c.layout), Ok(level.clone()));
            assert_eq!(Synthetic::fits(&p, &level, c.moves), Ok(()));
            assert!(Synthetic::replay(&level, &c.solution[1..]).is_err());
            let mut longer = c.solution.clone();
            longer.push('U');
            assert!(Synthetic::replay(&level, &longer).is_err());
        }
        let again = run_game::<Synthetic>(&p, 7, &Budget::nodes(1)).result;
        assert_eq!(again, outcomes[7].result, "deterministic");
    }

    #[test]
    fn a_heavy_tail_keeps_its_mean_and_has_a_tail() {
        let p = params(1000, 1.5);
        let costs: Vec<u64> = (0..100_000).map(|seed| seed_cost_us(&p, seed)).collect();
        let mean = costs.iter().sum::<u64>() as f64 / costs.len() as f64;
        // A Pareto tail of shape 1.5 capped at 1000x: the mean is a little
        // under cost_us and converges slowly.
        assert!((700.0..1100.0).contains(&mean), "mean {mean}");
        let max = *costs.iter().max().expect("costs");
        assert!(max > 50_000, "max {max}");
        assert!(costs.iter().all(|&c| c <= 1_000_000));
        assert!(!costs.iter().all(|&c| c == 1000));
        assert!((0..100).all(|seed| seed_cost_us(&params(1000, 0.0), seed) == 1000));
    }

    #[test]
    fn the_cost_is_recorded_asleep_or_busy_and_the_watchdog_stops_it() {
        for busy in [true, false] {
            let p = SyntheticParams {
                cost_us: 20_000,
                busy,
                accept_rate: 1.0,
                ..SyntheticParams::default()
            };
            let outcome = run_game::<Synthetic>(&p, 1, &Budget::nodes(1));
            let level = outcome.result.expect("accepted");
            assert_eq!(level.metrics["cost_us"], 20_000.0, "{busy}");
            let budget = Budget::watched(1, Duration::from_millis(1));
            let timed_out = run_game::<Synthetic>(&p, 1, &budget);
            assert_eq!(timed_out.result, Err(Rejection::Timeout));
        }
    }

    #[test]
    fn bad_params_and_bad_text_are_named() {
        for (bad, field) in [
            (params(100, 0.5), "cost_tail"),
            (params(20_000_000, 0.0), "cost_us"),
            (
                SyntheticParams {
                    accept_rate: 1.5,
                    ..SyntheticParams::default()
                },
                "accept_rate",
            ),
            (
                SyntheticParams {
                    max_moves: 0,
                    ..SyntheticParams::default()
                },
                "max_moves",
            ),
        ] {
            let err = Synthetic::validate(&bad).expect_err(field);
            assert!(
                matches!(&err, ParamError::OutOfRange { param, .. } if param == field),
                "{err}"
            );
        }
        for text in [
            "",
            "synthetic 12 3 4\n",
            "synthetic 000000000000000g 3 4\n",
            "synthetic 0000000000000001 0 4\n",
            "synthetic 0000000000000001 3 4\nAB\n",
        ] {
            assert!(Synthetic::from_text(text).is_err(), "{text:?}");
        }
    }
}
