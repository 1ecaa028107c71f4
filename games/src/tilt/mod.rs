//! `tilt`: the tilt-maze fruit-pairing game of source 002 ("Fruit Dating").
//!
//! - [`level`]: the level, its text and JSON forms.
//! - [`rules`]: the rules compiled for search (private).
//! - [`replay`]: the literal rules, stepping every object one cell at a time.
//! - [`generate`]: the source's wall and weighted-object generator.
//! - [`solve`]: the breadth-first verifier.
//! - `agents`: the rules as the agents play them (private).
//!
//! Rule decisions beyond the rules in its doc (docs/tilt.md), fixed here:
//! - a fruit whose next step in the tilt direction is a hedgehog is eaten, even
//!   if it was already resting against it;
//! - an anteater's gaze runs over floor and puddles and stops at walls and fixed
//!   actors; gates do not block it; a fruit pulled across a puddle is dirty;
//! - a fruit held in front of one anteater is not pulled away by another;
//! - after the pulls, pairs meet; if any pair met, pulls and meetings repeat.

mod agents;
mod generate;
mod level;
mod replay;
mod rules;
mod solve;

use crate::clock::Instant;

use serde::{Deserialize, Serialize};

use crate::agents::with_agents;
use crate::reason::Code;
use crate::rng::Rng;
use crate::{Budget, Game, GameError, MetricDoc, Metrics, Misfit, ParamError, Rejection, Solved};
use level::{Level, MAX_PAIRS};
use pregen_game_core::metrics::metric;
use solve::Analysis;

/// A feature the generator may place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Feature {
    /// Stones, cars and barrels.
    Obstacles,
    /// One-way gates.
    Gates,
    /// Puddles.
    Puddles,
    /// Anteaters.
    Anteaters,
    /// Sleeping hedgehogs.
    Hedgehogs,
}

/// Parameters of the tilt generator (the job's `[params]` table).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TiltParams {
    /// Playable width, border excluded (2..=6).
    pub width: u8,
    /// Playable height, border excluded (2..=6).
    pub height: u8,
    /// Fruit pairs (1..=5).
    pub pairs: u8,
    /// Expected obstacles per free cell (0.0..=0.5).
    pub obstacle_density: f64,
    /// Features the generator may use.
    pub features: Vec<Feature>,
    /// Fewest optimal moves an accepted level has.
    pub min_moves: u32,
    /// Most optimal moves an accepted level has (at most 60).
    pub max_moves: u32,
}

impl Default for TiltParams {
    fn default() -> Self {
        Self {
            width: 6,
            height: 6,
            pairs: 2,
            obstacle_density: 0.08,
            features: vec![
                Feature::Obstacles,
                Feature::Gates,
                Feature::Puddles,
                Feature::Anteaters,
                Feature::Hedgehogs,
            ],
            min_moves: 4,
            max_moves: 30,
        }
    }
}

impl TiltParams {
    /// Whether `feature` is enabled.
    pub fn has(&self, feature: Feature) -> bool {
        self.features.contains(&feature)
    }
}

/// The tilt game.
pub struct Tilt;

/// Tilt's own reason codes (beside [`Code::COMMON`]); the numbers are
/// stable, the wire and the commit log carry them.
pub mod reasons {
    use crate::reason::{Code, Status};

    /// The board has too few free cells.
    pub const TOO_FEW_FREE_CELLS: Code = Code::new(
        11,
        "too few free cells",
        Status::Rejected,
        "The board has too few free cells.",
    );

    /// No cell left for a fruit.
    pub const NO_ROOM_FOR_FRUIT: Code = Code::new(
        12,
        "no room for fruit",
        Status::Rejected,
        "No cell left for a fruit.",
    );

    /// The start position is not at rest.
    pub const NOT_AT_REST: Code = Code::new(
        13,
        "start position is not at rest",
        Status::Rejected,
        "The start position is not at rest.",
    );
}

impl Game for Tilt {
    type Params = TiltParams;
    type Level = Level;
    type Analysis = Analysis;
    const NAME: &'static str = "tilt";

    const REASONS: &'static [Code] = &[
        reasons::TOO_FEW_FREE_CELLS,
        reasons::NO_ROOM_FOR_FRUIT,
        reasons::NOT_AT_REST,
    ];

    const METRICS: &'static [MetricDoc] = with_agents![
        metric(
            "optimal_solutions",
            "count",
            "distinct optimal move sequences that win (saturating)",
        ),
        metric(
            "states",
            "count",
            "states reachable from the start, won states not counted",
        ),
        metric(
            "dead_state_share",
            "share",
            "reachable states from which no win is reachable",
        ),
        metric(
            "first_moves",
            "count",
            "tilts at the start that change something",
        ),
        metric(
            "losing_first_move_share",
            "share",
            "first moves that lose at once or lead to a dead state",
        ),
        metric("fruits", "count", "fruits on the board"),
        metric("obstacles", "count", "obstacles on the board"),
    ];

    fn validate(p: &TiltParams) -> Result<(), ParamError> {
        if !(2..=6).contains(&p.width) || !(2..=6).contains(&p.height) {
            return Err(ParamError::out_of_range(
                "width and height",
                "2..=6",
                format!("{}x{}", p.width, p.height),
            ));
        }
        ParamError::check("pairs", p.pairs, 1..=MAX_PAIRS)?;
        ParamError::check("obstacle_density", p.obstacle_density, 0.0..=0.5)?;
        if p.min_moves < 1 || p.min_moves > p.max_moves || p.max_moves > 60 {
            return Err(ParamError::Conflict(format!(
                "need 1 <= min_moves <= max_moves <= 60 (got {}..={})",
                p.min_moves, p.max_moves
            )));
        }
        Ok(())
    }

    fn generate(params: &TiltParams, rng: &mut Rng, _budget: &Budget) -> Result<Level, Rejection> {
        generate::generate(params, rng)
    }

    fn solve(level: &Level, budget: &Budget) -> Result<Solved<Analysis>, Rejection> {
        let a = solve::analyse(level, budget)?;
        Ok(Solved {
            solution: a.solution.iter().map(|d| d.letter()).collect(),
            moves: a.moves,
            optimal: true,
            nodes: a.nodes,
            analysis: a,
        })
    }

    fn accept(
        params: &TiltParams,
        _level: &Level,
        solved: &Solved<Analysis>,
    ) -> Result<(), Rejection> {
        crate::game::within(solved.moves, "moves", params.min_moves, params.max_moves)
    }

    const RATING_MODEL: &'static str = include_str!("../../models/tilt.toml");

    fn metrics(level: &Level, solved: &Solved<Analysis>) -> Metrics {
        let a = &solved.analysis;
        Metrics::from([
            ("optimal_solutions".into(), a.optimal_solutions as f64),
            ("states".into(), a.states as f64),
            ("dead_state_share".into(), a.dead_state_share()),
            ("first_moves".into(), f64::from(a.first_moves)),
            (
                "losing_first_move_share".into(),
                share(a.losing_first_moves, a.first_moves),
            ),
            ("fruits".into(), level.fruits.len() as f64),
            ("obstacles".into(), level.obstacles.len() as f64),
        ])
    }

    fn solution_moves(solution: &str) -> u32 {
        solution.chars().count() as u32
    }

    fn agents(
        level: &Level,
        moves: u32,
        _metrics: &Metrics,
        until: Option<Instant>,
    ) -> Option<crate::agents::Figures> {
        agents::figures(level, moves, until)
    }

    fn fits(params: &TiltParams, level: &Level, moves: u32) -> Result<(), Misfit> {
        let inside = (level.width.wrapping_sub(2), level.height.wrapping_sub(2));
        if inside != (params.width, params.height) {
            return Err(Misfit::Shape {
                level: format!("a {}x{} level", inside.0, inside.1),
                job: format!("a {}x{} job", params.width, params.height),
            });
        }
        Ok(crate::game::within(
            moves,
            "moves",
            params.min_moves,
            params.max_moves,
        )?)
    }

    fn to_text(level: &Level) -> String {
        level.to_text()
    }

    fn from_text(text: &str) -> Result<Level, GameError> {
        Level::from_text(text)
    }

    const WHOLE_TEXT: bool = true;

    /// A file of levels as a pack's release files hold them.
    fn from_collection(text: &str) -> Result<crate::game::Collection<Self::Level>, GameError> {
        crate::game::collection_of_blocks(text, Self::from_text)
    }
    // Generating is a few per cent of making a level (`--bench check`): the
    // coordinator makes each worker's level again from its seed.
    const REGENERATE: bool = true;

    fn replay(level: &Level, solution: &str) -> Result<(), GameError> {
        replay::replay(level, solution)
    }

    fn play(level: &Level, moves: &str) -> Option<Result<(String, bool), GameError>> {
        Some(replay::play(level, moves).map(|after| (after.to_text(), after.fruits.is_empty())))
    }
}

fn share(part: u32, whole: u32) -> f64 {
    if whole == 0 {
        0.0
    } else {
        f64::from(part) / f64::from(whole)
    }
}

#[cfg(test)]
mod tests;
