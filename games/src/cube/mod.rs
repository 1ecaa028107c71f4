//! `cube`: A Mazing Monk (source 000): a monk on the top of a 3x3x3 cube turns
//! rows and columns to bring karma within reach, avoiding soldiers.
//!
//! - [`geometry`]: the cube as 54 stickers, turns as permutations.
//! - [`level`]: the level, its net (text) and JSON forms.
//! - [`generate`]: the source's backward generator.
//! - [`solve`]: the exact solver, fewest turns first.
//! - [`replay`]: checks a solution under the rules.
//!
//! Rule decisions beyond the rules in its doc (docs/cube.md), fixed here:
//! - Bottom's cells use Top's orientation (the source's reversed y), so Bottom
//!   (x, y) lies under Top (x, y);
//! - karma reachable from the start is collected before the first turn;
//! - the monk stands on a path cell; the exit must be walkable to be reached.

mod agents;
mod generate;
mod geometry;
mod level;
mod replay;
mod solve;

use crate::clock::Instant;

use serde::{Deserialize, Serialize};

use crate::agents::with_agents;
use crate::reason::Code;
use crate::rng::Rng;
use crate::{Budget, Game, GameError, MetricDoc, Metrics, Misfit, ParamError, Rejection, Solved};
use geometry::Face;
use level::{Cell, Level};
use pregen_game_core::metrics::metric;

/// Parameters of the cube generator (the job's `[params]` table).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CubeParams {
    /// Overall difficulty 1..=10: karma = 17 - d, soldiers = d (source 000).
    pub difficulty: u32,
    /// Karma to collect before the exit opens.
    pub karma_goal: u32,
    /// Random turns of each scramble.
    pub scramble_turns: usize,
    /// Share of backward moves that are turns (the rest move the monk).
    pub turn_share: f64,
    /// Chance that a cell the monk leaves gets karma.
    pub karma_chance: f64,
    /// Fewest turns an accepted level needs.
    pub min_turns: u32,
    /// Accept only levels whose shortest solution the exact search proved
    /// within `max_nodes`; `false` also accepts the greedy fallback's answer
    /// (`moves_optimal = false`).
    pub prove_optimal: bool,
}

impl Default for CubeParams {
    fn default() -> Self {
        Self {
            difficulty: 5,
            karma_goal: 7,
            scramble_turns: 12,
            turn_share: 0.5,
            karma_chance: 0.5,
            min_turns: 1,
            prove_optimal: true,
        }
    }
}

/// The cube game.
pub struct Cube;

/// Face weights of the source's karma distance.
fn face_weight(face: Face) -> u32 {
    match face {
        Face::Top => 1,
        Face::Left | Face::Front => 2,
        Face::Bottom => 3,
        Face::Right | Face::Back => 4,
    }
}

/// What the verifier learns about a cube level: the search and the source's
/// four relative-rating factors.
#[derive(Debug, Clone, PartialEq)]
pub struct CubeAnalysis {
    /// The search's answer.
    pub search: solve::Analysis,
    /// Karma distance, centre soldiers, visible soldiers, path scarcity.
    pub factors: [f64; 4],
}

impl CubeAnalysis {
    /// The source's relative rating (0..4): the sum of the factors.
    pub fn relative_rating(&self) -> f64 {
        self.factors.iter().sum()
    }
}

/// The source's relative rating factors: (karma distance, soldiers on face
/// centres, visible soldiers, scarcity of paths); their sum is 0..=4.
pub fn relative_rating(level: &Level) -> [f64; 4] {
    let face = |i: usize| Face::ALL[i / 9];
    let mut weights: Vec<u32> = (0..54)
        .filter(|&i| level.cells[i] == Cell::Karma)
        .map(|i| face_weight(face(i)))
        .collect();
    weights.sort_unstable();
    let distance = f64::from(weights.iter().take(7).sum::<u32>()) / 28.0;
    let soldiers: Vec<usize> = (0..54)
        .filter(|&i| level.cells[i] == Cell::Soldier)
        .collect();
    let centres = soldiers.iter().filter(|&&i| i % 9 == 4).count() as f64 / 6.0;
    let visible = soldiers
        .iter()
        .filter(|&&i| matches!(face(i), Face::Top | Face::Left | Face::Front))
        .count() as f64
        / soldiers.len().max(1) as f64;
    let paths = level.cells.iter().filter(|c| c.walkable()).count() as f64;
    [distance, centres, visible, 1.0 - paths / 54.0]
}

/// Cube's own reason codes (beside [`Code::COMMON`]); the numbers are
/// stable, the wire and the commit log carry them.
pub mod reasons {
    use crate::reason::{Code, Status};

    /// The exact search ran out, so the solution is not proven fewest.
    pub const NOT_PROVEN_SHORTEST: Code = Code::new(
        5,
        "not proven shortest",
        Status::Rejected,
        "The exact search ran out, so the solution is not proven fewest.",
    );

    /// The monk's first square is attacked.
    pub const STARTS_IN_DANGER: Code = Code::new(
        6,
        "the monk starts in danger",
        Status::Rejected,
        "The monk's first square is attacked.",
    );

    /// Karma lies under the start with no path for it.
    pub const KARMA_UNDER_START: Code = Code::new(
        7,
        "karma under the start and no path for it",
        Status::Rejected,
        "Karma lies under the start with no path for it.",
    );
}

impl Game for Cube {
    type Params = CubeParams;
    type Level = Level;
    type Analysis = CubeAnalysis;
    const NAME: &'static str = "cube";

    const REASONS: &'static [Code] = &[
        reasons::NOT_PROVEN_SHORTEST,
        reasons::STARTS_IN_DANGER,
        reasons::KARMA_UNDER_START,
    ];

    const METRICS: &'static [MetricDoc] = with_agents![
        metric(
            "overall_difficulty",
            "level 1..=10",
            "the overall difficulty the level was generated for (0 if unknown)",
        ),
        metric(
            "relative_rating",
            "0..=4",
            "the source's relative rating: the sum of the four factors below",
        ),
        metric(
            "karma_distance",
            "0..=1",
            "factor: how far the karma lies from the monk's face",
        ),
        metric(
            "centre_soldiers",
            "0..=1",
            "factor: soldiers on face centres",
        ),
        metric(
            "visible_soldiers",
            "0..=1",
            "factor: soldiers visible from the start",
        ),
        metric("path_scarcity", "0..=1", "factor: scarcity of paths"),
        metric(
            "walks",
            "count",
            "walks in the solution that move the monk, the final one included",
        ),
        metric("states", "count", "cube states the solver expanded"),
        metric("karma", "count", "karma cells on the cube"),
    ];

    fn validate(p: &CubeParams) -> Result<(), ParamError> {
        ParamError::check("difficulty", p.difficulty, 1..=10)?;
        if !(1..=17 - p.difficulty).contains(&p.karma_goal) {
            return Err(ParamError::out_of_range(
                "karma_goal",
                format!("1..={} at difficulty {}", 17 - p.difficulty, p.difficulty),
                p.karma_goal,
            ));
        }
        ParamError::check("scramble_turns", p.scramble_turns, 1..=200)?;
        ParamError::check("turn_share", p.turn_share, 0.05..=0.95)?;
        ParamError::check("karma_chance", p.karma_chance, 0.05..=0.95)
    }

    fn generate(params: &CubeParams, rng: &mut Rng, _budget: &Budget) -> Result<Level, Rejection> {
        generate::generate(params, rng)
    }

    fn solve(level: &Level, budget: &Budget) -> Result<Solved<CubeAnalysis>, Rejection> {
        level
            .check()
            .map_err(|e| Rejection::refused(Code::MalformedLevel, e.to_string()))?;
        let search = solve::solve(level, budget)?;
        Ok(Solved {
            solution: search.notation(),
            moves: search.steps.len() as u32,
            optimal: search.optimal,
            nodes: search.states as u64,
            analysis: CubeAnalysis {
                factors: relative_rating(level),
                search,
            },
        })
    }

    fn accept(
        params: &CubeParams,
        _level: &Level,
        solved: &Solved<CubeAnalysis>,
    ) -> Result<(), Rejection> {
        if solved.moves < params.min_turns {
            return Err(Rejection::refused(
                Code::TooEasy,
                format!("{} turns < min_turns {}", solved.moves, params.min_turns),
            ));
        }
        if params.prove_optimal && !solved.optimal {
            return Err(Rejection::refused(
                reasons::NOT_PROVEN_SHORTEST,
                format!(
                    "the exact search ran out of nodes; a greedy solution has {} turns",
                    solved.moves
                ),
            ));
        }
        Ok(())
    }

    fn proves_optimal(params: &CubeParams) -> bool {
        params.prove_optimal
    }

    const RATING_MODEL: &'static str = include_str!("../../models/cube.toml");

    fn metrics(level: &Level, solved: &Solved<CubeAnalysis>) -> Metrics {
        let a = &solved.analysis;
        Metrics::from([
            ("overall_difficulty".into(), f64::from(level.difficulty)),
            ("relative_rating".into(), a.relative_rating()),
            ("karma_distance".into(), a.factors[0]),
            ("centre_soldiers".into(), a.factors[1]),
            ("visible_soldiers".into(), a.factors[2]),
            ("path_scarcity".into(), a.factors[3]),
            ("walks".into(), f64::from(a.search.walks())),
            ("states".into(), a.search.states as f64),
            ("karma".into(), f64::from(level.karma())),
        ])
    }

    /// One move per turn; the walks (`@x,y`) between them are not counted.
    fn solution_moves(solution: &str) -> u32 {
        solution
            .split_whitespace()
            .filter(|t| !t.starts_with('@'))
            .count() as u32
    }

    fn fits(params: &CubeParams, level: &Level, moves: u32) -> Result<(), Misfit> {
        if (level.difficulty, level.karma_goal) != (params.difficulty, params.karma_goal) {
            return Err(Misfit::Shape {
                level: format!(
                    "difficulty {} karma goal {}",
                    level.difficulty, level.karma_goal
                ),
                job: format!(
                    "a job of difficulty {} karma goal {}",
                    params.difficulty, params.karma_goal
                ),
            });
        }
        if moves < params.min_turns {
            return Err(Misfit::Count(format!(
                "{moves} turns < min_turns {}",
                params.min_turns
            )));
        }
        Ok(())
    }

    fn agents(
        level: &Level,
        moves: u32,
        _metrics: &Metrics,
        until: Option<Instant>,
    ) -> Option<crate::agents::Figures> {
        agents::figures(level, moves, until)
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
        Some(replay::play(level, moves))
    }
}

#[cfg(test)]
mod tests;
