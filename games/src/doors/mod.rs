//! `doors`: rooms, coloured doors and buttons (source 001, Rescue Elite).
//!
//! - [`level`]: the level description, its feature bits and the rules as a
//!   graph over (room, active colour); solutions and the uniqueness key.
//! - [`planar`]: the planarity test.
//! - [`grade`]: the source's fail-fast score and 0..100 grade with its agents.
//! - [`mcts`]: the source's Monte Carlo tree search over feature toggles.
//! - [`layout`]: the tile grid (seed section 4.2).
//! - [`census`]: every level of a small search space, counted.
//! - `text`: the level's text form, read back through the layout (private).

use crate::clock::Instant;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::agents::with_agents;
use crate::reason::Code;
use crate::rng::Rng;
use crate::{
    Budget, Collection, Game, GameError, MetricDoc, Metrics, Misfit, ParamError, Rejection, Solved,
};
use grade::Grade;
use grade::{CRITERIA, SOLUTION_CAP, grade, score};
use level::{Features, Level, Rules, notation, uniqueness_key};
use mcts::Search;
use pregen_game_core::metrics::metric;

mod agents;
pub mod census;
pub mod grade;
mod layout;
pub mod level;
pub mod mcts;
pub mod planar;
mod text;

/// The source's Table 3 settings for one (n, b).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Preset {
    /// UCB1's exploration constant.
    pub epsilon: f64,
    /// Score threshold for early stops.
    pub threshold: f64,
    /// Share of M toggled at random first.
    pub random_moves: f64,
    /// Runs the seed averaged over.
    pub runs: usize,
    /// Tree nodes per move.
    pub brain: usize,
    /// Longest roll-out.
    pub depth: usize,
    /// Moves played at most.
    pub moves: usize,
}

/// Source 001's Table 3 rows: ((n, b), settings, average grade, unique good
/// levels found, total unique good levels if known, defects per its runs).
#[allow(clippy::type_complexity)]
pub const TABLE_3: &[((usize, usize), Preset, f64, u32, Option<u32>, u32)] = &[
    (
        (2, 1),
        p(0.2, 0.97, 0.3, 10000, 100, 3, 10),
        86.02,
        1,
        Some(1),
        0,
    ),
    (
        (3, 1),
        p(0.2, 0.97, 0.33, 10000, 100, 30, 30),
        90.003,
        13,
        Some(13),
        0,
    ),
    (
        (3, 2),
        p(0.2, 0.995, 0.33, 1000, 500, 10, 30),
        94.0012,
        51,
        Some(51),
        14,
    ),
    (
        (4, 1),
        p(0.2, 0.995, 0.3, 1000, 1000, 10, 30),
        91.4292,
        23,
        Some(23),
        6,
    ),
    (
        (4, 2),
        p(0.2, 0.995, 0.3, 1000, 2000, 30, 30),
        92.4278,
        365,
        Some(938),
        104,
    ),
    (
        (4, 3),
        p(0.5, 0.95, 0.3, 1000, 3000, 30, 40),
        84.5233,
        42,
        None,
        956,
    ),
    (
        (4, 4),
        p(0.5, 0.9, 0.3, 1000, 2000, 30, 30),
        75.364,
        0,
        None,
        1000,
    ),
    (
        (5, 1),
        p(0.2, 0.994, 0.33, 1000, 2000, 30, 30),
        92.0727,
        81,
        Some(85),
        4,
    ),
    (
        (5, 2),
        p(0.3, 0.95, 0.3, 1000, 3000, 30, 30),
        90.1422,
        174,
        None,
        781,
    ),
    (
        (5, 3),
        p(0.2, 0.95, 0.3, 1000, 3000, 30, 40),
        83.9642,
        29,
        None,
        970,
    ),
    (
        (6, 1),
        p(2.0, 0.975, 0.2, 1000, 5000, 30, 50),
        89.2477,
        56,
        None,
        832,
    ),
    (
        (6, 2),
        p(2.5, 0.975, 0.2, 1000, 6000, 40, 50),
        87.6211,
        259,
        None,
        702,
    ),
    (
        (7, 1),
        p(1.8, 0.97, 0.15, 1000, 5000, 30, 50),
        88.831,
        48,
        None,
        904,
    ),
    (
        (8, 1),
        p(0.5, 0.9, 0.15, 1000, 5000, 30, 30),
        80.4069,
        4,
        None,
        995,
    ),
];

const fn p(
    epsilon: f64,
    threshold: f64,
    random_moves: f64,
    runs: usize,
    brain: usize,
    depth: usize,
    moves: usize,
) -> Preset {
    Preset {
        epsilon,
        threshold,
        random_moves,
        runs,
        brain,
        depth,
        moves,
    }
}

/// The source's settings for (n, b), if Table 3 has them.
pub fn preset(rooms: usize, colours: usize) -> Option<Preset> {
    TABLE_3
        .iter()
        .find(|row| row.0 == (rooms, colours))
        .map(|row| row.1)
}

/// Parameters of the doors generator (the job's `[params]` table). The MCTS
/// settings default to the source's Table 3 row for (rooms, colours).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DoorsParams {
    /// Rooms (n), 2..=8.
    pub rooms: usize,
    /// Button colours (b), 1..=8.
    pub colours: usize,
    /// The colour the exit needs, 1..=colours.
    pub required: u8,
    /// UCB1's exploration constant.
    pub epsilon: Option<f64>,
    /// Stop the search once a level scores above this (0..1).
    pub threshold: Option<f64>,
    /// Share of the M features toggled at random first.
    pub random_moves: Option<f64>,
    /// Tree nodes per move.
    pub brain: Option<usize>,
    /// Longest roll-out.
    pub depth: Option<usize>,
    /// Moves played at most.
    pub moves: Option<usize>,
    /// Keep levels with a defect (below 80 of Table 1's first 80 points).
    pub allow_defects: bool,
    /// When two levels of a pack count as the same (the later seed's is
    /// rejected as a duplicate).
    pub unique: Unique,
    /// Fewest moves the shortest solution may have.
    pub min_moves: u32,
    /// Most moves the shortest solution may have.
    pub max_moves: u32,
}

impl Default for DoorsParams {
    fn default() -> Self {
        DoorsParams {
            rooms: 4,
            colours: 2,
            required: 1,
            epsilon: None,
            threshold: None,
            random_moves: None,
            brain: None,
            depth: None,
            moves: None,
            allow_defects: false,
            unique: Unique::Solutions,
            min_moves: 1,
            max_moves: 1000,
        }
    }
}

impl DoorsParams {
    /// The search these params describe: given settings over the preset's.
    pub fn search(&self) -> Result<Search, String> {
        let preset = preset(self.rooms, self.colours);
        let missing = |name: &str| {
            format!(
                "{name} has no default for rooms = {}, colours = {}: Table 3 has no such row; set \
                 epsilon, threshold, random_moves, brain, depth and moves",
                self.rooms, self.colours
            )
        };
        Ok(Search {
            features: Features {
                rooms: self.rooms,
                colours: self.colours,
            },
            required: self.required,
            epsilon: self
                .epsilon
                .or(preset.map(|p| p.epsilon))
                .ok_or_else(|| missing("epsilon"))?,
            threshold: self
                .threshold
                .or(preset.map(|p| p.threshold))
                .ok_or_else(|| missing("threshold"))?,
            random_moves: self
                .random_moves
                .or(preset.map(|p| p.random_moves))
                .ok_or_else(|| missing("random_moves"))?,
            brain: self
                .brain
                .or(preset.map(|p| p.brain))
                .ok_or_else(|| missing("brain"))?,
            depth: self
                .depth
                .or(preset.map(|p| p.depth))
                .ok_or_else(|| missing("depth"))?,
            moves: self
                .moves
                .or(preset.map(|p| p.moves))
                .ok_or_else(|| missing("moves"))?,
        })
    }
}

/// When two levels of a pack are the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Unique {
    /// The source's similarity: equal sorted solution encodings. Few classes
    /// exist (`pregen doors-census` counts them), and a pack holds at most
    /// that many levels.
    Solutions,
    /// The same level up to renaming rooms (all but room 0) and colours (all
    /// but the required one).
    Structure,
    /// Equal descriptions: the same doors and buttons in the same rooms.
    Description,
}

/// A level with the figures its generator recorded (empty for a level read
/// from its text or JSON form). The JSON form, which the level hash covers,
/// is the puzzle alone: the figures describe how it was made, not what it
/// is, and reach the pack as metrics.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Puzzle {
    /// The level: description and grid.
    #[serde(flatten)]
    pub level: Level,
    /// Generator figures: `mcts_score`, `mcts_moves`, `levels_scored`.
    #[serde(skip)]
    pub generator: BTreeMap<String, f64>,
}

/// Two puzzles are equal when their levels are: the generator's figures are
/// not part of what a level is.
impl PartialEq for Puzzle {
    fn eq(&self, other: &Self) -> bool {
        self.level == other.level
    }
}

/// The agents' random stream for a level: a function of its features alone,
/// so every verifier grades a level the same.
fn agent_rng(level: &Level) -> Rng {
    let features = Features {
        rooms: level.rooms,
        colours: level.colours,
    };
    Rng::new(features.bits(level) ^ u64::from(level.required) << 60)
}

/// A metric name for a Table 1 criterion: `grade_` and its words joined by `_`.
pub(crate) fn criterion_metric(name: &str) -> String {
    format!("grade_{}", name.replace([' ', '-'], "_"))
}

/// What the verifier learns about a doors level.
#[derive(Debug, Clone, PartialEq)]
pub struct DoorsAnalysis {
    /// The grading of Table 1: structure and agents' points per criterion.
    pub grade: Grade,
    /// Distinct solutions found (capped).
    pub solutions: usize,
    /// Their mean length in moves.
    pub mean_solution_length: f64,
    /// Whether the room graph is planar.
    pub planar: bool,
    /// The generator's score of the level.
    pub score: f64,
}

/// The doors game.
pub struct Doors;

/// Doors's own reason codes (beside [`Code::COMMON`]); the numbers are
/// stable, the wire and the commit log carry them.
pub mod reasons {
    use crate::reason::{Code, Status};

    /// No layout fitted in the generator's attempts.
    pub const LAYOUT: Code = Code::new(
        8,
        "layout",
        Status::Rejected,
        "No layout fitted in the generator's attempts.",
    );

    /// The rooms' graph is not planar.
    pub const NOT_PLANAR: Code = Code::new(
        9,
        "not planar",
        Status::Rejected,
        "The rooms' graph is not planar.",
    );

    /// The level breaks a design rule (named in the detail).
    pub const DEFECT: Code = Code::new(
        10,
        "defect",
        Status::Rejected,
        "The level breaks a design rule (named in the detail).",
    );
}

impl Game for Doors {
    type Params = DoorsParams;
    type Level = Puzzle;
    type Analysis = DoorsAnalysis;
    const NAME: &'static str = "doors";

    const REASONS: &'static [Code] = &[reasons::LAYOUT, reasons::NOT_PLANAR, reasons::DEFECT];

    const METRICS: &'static [MetricDoc] = with_agents![
        metric(
            "mcts_score",
            "0..=1",
            "the search's best score (the fail-fast grade it maximises)",
        ),
        metric("mcts_moves", "count", "toggles the search played"),
        metric("levels_scored", "count", "levels the search scored"),
        metric(
            "grade",
            "points 0..=100",
            "Table 1's grade: structure plus agents",
        ),
        metric("grade_structure", "points 0..=80", "the structure's points"),
        metric("grade_agents", "points 0..=20", "the three agents' points"),
        metric(
            "defect",
            "flag",
            "1 when any criterion is missed (0 in an accepted level)",
        ),
        metric(
            "solutions",
            "count",
            "distinct simple-path solutions found (capped)",
        ),
        metric("mean_solution_length", "moves", "their mean length"),
        metric("planar", "flag", "1 when the room graph is planar"),
        metric("score", "0..=1", "the generator's score of the level"),
        metric(
            "grade_every_button_colour_is_used",
            "points",
            "Table 1: every button colour is used",
        ),
        metric(
            "grade_not_too_many_buttons",
            "points",
            "Table 1: not too many buttons",
        ),
        metric(
            "grade_the_required_colour_is_in_the_level",
            "points",
            "Table 1: the required colour is in the level",
        ),
        metric(
            "grade_the_required_colour_is_not_in_the_start_room",
            "points",
            "Table 1: the required colour is not in the start room",
        ),
        metric(
            "grade_every_room_has_a_connection",
            "points",
            "Table 1: every room has a connection",
        ),
        metric(
            "grade_an_unlocked_connection",
            "points",
            "Table 1: an unlocked connection",
        ),
        metric(
            "grade_the_right_number_of_connections",
            "points",
            "Table 1: the right number of connections",
        ),
        metric(
            "grade_the_right_number_of_unique_colours",
            "points",
            "Table 1: the right number of unique colours",
        ),
        metric(
            "grade_the_right_number_of_buttons_per_room",
            "points",
            "Table 1: the right number of buttons per room",
        ),
        metric(
            "grade_all_rooms_reachable",
            "points",
            "Table 1: all rooms reachable",
        ),
        metric(
            "grade_all_connections_reachable",
            "points",
            "Table 1: all connections reachable",
        ),
        metric("grade_a_solution", "points", "Table 1: a solution"),
        metric(
            "grade_2_to_5_solutions",
            "points",
            "Table 1: 2 to 5 solutions",
        ),
        metric(
            "grade_every_solution_long_enough",
            "points",
            "Table 1: every solution long enough",
        ),
        metric(
            "grade_every_colour_in_each_solution",
            "points",
            "Table 1: every colour in each solution",
        ),
        metric(
            "grade_every_button_used_by_a_solution",
            "points",
            "Table 1: every button used by a solution",
        ),
        metric(
            "grade_every_room_used_by_a_solution",
            "points",
            "Table 1: every room used by a solution",
        ),
        metric(
            "grade_the_suboptimal_agent_wins",
            "points",
            "Table 1: the suboptimal agent wins",
        ),
        metric(
            "grade_the_greedy_agent_wins",
            "points",
            "Table 1: the greedy agent wins",
        ),
        metric(
            "grade_the_limited_information_agent_wins",
            "points",
            "Table 1: the limited-information agent wins",
        ),
    ];

    fn validate(p: &DoorsParams) -> Result<(), ParamError> {
        ParamError::check("rooms", p.rooms, 2..=8)?;
        ParamError::check("colours", p.colours, 1..=8)?;
        let m = Features {
            rooms: p.rooms,
            colours: p.colours,
        }
        .count();
        if m > 64 {
            return Err(ParamError::Conflict(format!(
                "rooms = {} with colours = {} make {m} features; at most 64 fit",
                p.rooms, p.colours
            )));
        }
        ParamError::check("required", p.required as usize, 1..=p.colours)?;
        let s = p.search().map_err(ParamError::Conflict)?;
        if !(s.threshold > 0.0 && s.threshold <= 1.0) {
            return Err(ParamError::out_of_range(
                "threshold",
                "in (0, 1]",
                s.threshold,
            ));
        }
        if !(0.0..=1.0).contains(&s.random_moves) {
            return Err(ParamError::out_of_range(
                "random_moves",
                "0..=1",
                s.random_moves,
            ));
        }
        if !(s.epsilon >= 0.0 && s.epsilon.is_finite()) {
            return Err(ParamError::out_of_range("epsilon", ">= 0", s.epsilon));
        }
        ParamError::check("brain", s.brain, 2..=100_000)?;
        if s.depth > 10_000 || !(1..=10_000).contains(&s.moves) {
            return Err(ParamError::out_of_range(
                "depth and moves",
                "0..=10000 and 1..=10000",
                format!("{} and {}", s.depth, s.moves),
            ));
        }
        if p.min_moves > p.max_moves {
            return Err(ParamError::Conflict(format!(
                "min_moves ({}) must not exceed max_moves ({})",
                p.min_moves, p.max_moves
            )));
        }
        Ok(())
    }

    fn generate(params: &DoorsParams, rng: &mut Rng, budget: &Budget) -> Result<Puzzle, Rejection> {
        let search = params
            .search()
            .map_err(|e| Rejection::refused(Code::Internal, e))?;
        let out = search.run(rng, budget)?;
        let mut level = search.features.level(out.bits, params.required);
        level.grid = layout::lay_out(&level, rng).ok_or_else(|| {
            Rejection::refused(
                reasons::LAYOUT,
                format!("none in {} attempts", layout::ATTEMPTS),
            )
        })?;
        let generator = BTreeMap::from([
            ("mcts_score".to_string(), out.score),
            ("mcts_moves".to_string(), out.moves_played as f64),
            ("levels_scored".to_string(), out.scored as f64),
        ]);

        Ok(Puzzle { level, generator })
    }

    fn solve(puzzle: &Puzzle, _budget: &Budget) -> Result<Solved<DoorsAnalysis>, Rejection> {
        let level = &puzzle.level;
        if !level.grid.is_empty() {
            let read = layout::read_back(level.rooms, level.colours, &level.grid).map_err(|e| {
                Rejection::refused(
                    Code::Internal,
                    format!("the grid does not hold the level: {e}"),
                )
            })?;
            let description = Level {
                grid: Vec::new(),
                ..level.clone()
            };
            if read != description {
                return Err(Rejection::refused(
                    Code::Internal,
                    "the grid's doors, buttons or exit differ from the level's",
                ));
            }
        }
        let rules = Rules::new(level);
        let Some(shortest) = rules.shortest() else {
            return Err(Rejection::Unsolvable);
        };
        let solutions = rules.solutions(SOLUTION_CAP);
        let mean_solution_length =
            solutions.iter().map(Vec::len).sum::<usize>() as f64 / solutions.len().max(1) as f64;
        let analysis = DoorsAnalysis {
            grade: grade(level, &mut agent_rng(level)),
            solutions: solutions.len(),
            mean_solution_length,
            planar: planar::is_planar(&level.adjacency()),
            score: score(level),
        };
        Ok(Solved {
            solution: notation(&shortest),
            moves: shortest.len() as u32,
            optimal: true,
            nodes: rules.moves.len() as u64,
            analysis,
        })
    }

    fn accept(
        params: &DoorsParams,
        _puzzle: &Puzzle,
        solved: &Solved<DoorsAnalysis>,
    ) -> Result<(), Rejection> {
        let a = &solved.analysis;
        if !a.planar {
            return Err(Rejection::refused(reasons::NOT_PLANAR, ""));
        }
        if !params.allow_defects && a.grade.defect() {
            let short = CRITERIA[..17]
                .iter()
                .zip(&a.grade.points)
                .find(|((_, full), (_, points))| *points < full - 1e-9)
                .map_or("", |((name, _), _)| name);
            return Err(Rejection::refused(reasons::DEFECT, short));
        }
        crate::game::within(solved.moves, "moves", params.min_moves, params.max_moves)
    }

    const RATING_MODEL: &'static str = include_str!("../../models/doors.toml");

    fn metrics(puzzle: &Puzzle, solved: &Solved<DoorsAnalysis>) -> Metrics {
        let a = &solved.analysis;
        let mut metrics = puzzle.generator.clone();
        for (name, points) in &a.grade.points {
            metrics.insert(criterion_metric(name), *points);
        }
        metrics.extend([
            ("grade".to_string(), a.grade.total()),
            ("grade_structure".to_string(), a.grade.structure),
            ("grade_agents".to_string(), a.grade.agents),
            ("defect".to_string(), f64::from(u8::from(a.grade.defect()))),
            ("solutions".to_string(), a.solutions as f64),
            ("mean_solution_length".to_string(), a.mean_solution_length),
            ("planar".to_string(), f64::from(u8::from(a.planar))),
            ("score".to_string(), a.score),
        ]);
        metrics
    }

    fn fits(params: &DoorsParams, puzzle: &Puzzle, moves: u32) -> Result<(), Misfit> {
        let l = &puzzle.level;
        if (l.rooms, l.colours, l.required) != (params.rooms, params.colours, params.required) {
            return Err(Misfit::Shape {
                level: format!(
                    "rooms {} colours {} required {}",
                    l.rooms, l.colours, l.required
                ),
                job: format!(
                    "a job of rooms {} colours {} required {}",
                    params.rooms, params.colours, params.required
                ),
            });
        }
        Ok(crate::game::within(
            moves,
            "moves",
            params.min_moves,
            params.max_moves,
        )?)
    }

    fn agents(
        puzzle: &Puzzle,
        moves: u32,
        _metrics: &Metrics,
        until: Option<Instant>,
    ) -> Option<crate::agents::Figures> {
        agents::figures(&puzzle.level, moves, until)
    }

    fn to_text(puzzle: &Puzzle) -> String {
        puzzle.level.to_text()
    }

    fn from_text(text: &str) -> Result<Puzzle, GameError> {
        Ok(Puzzle {
            level: Level::from_text(text)?,
            generator: BTreeMap::new(),
        })
    }

    const WHOLE_TEXT: bool = true;

    /// Levels apart by blank or `;` comment lines, as a pack's release
    /// files and `pregen analysis levels` print them, or one level.
    fn from_collection(text: &str) -> Result<Collection<Puzzle>, GameError> {
        crate::game::collection_of_blocks(text, Self::from_text)
    }

    fn replay(puzzle: &Puzzle, solution: &str) -> Result<(), GameError> {
        puzzle.level.check().map_err(GameError::Level)?;
        puzzle.level.replay(solution)
    }

    fn play(puzzle: &Puzzle, moves: &str) -> Option<Result<(String, bool), GameError>> {
        Some(
            puzzle
                .level
                .check()
                .map_err(GameError::Level)
                .and_then(|()| puzzle.level.play(moves))
                .map(|(said, out)| (format!("{said}\n\n{}", puzzle.level.to_text()), out)),
        )
    }

    /// The source's uniqueness key (the sorted solution encodings), the
    /// structure or the description, as the params' `unique` says.
    fn canonical(params: &DoorsParams, puzzle: &Puzzle) -> Option<String> {
        let level = &puzzle.level;
        let features = Features {
            rooms: level.rooms,
            colours: level.colours,
        };
        Some(match params.unique {
            Unique::Solutions => {
                uniqueness_key(&Rules::new(level).solutions(SOLUTION_CAP)).join(" ")
            }
            Unique::Structure => format!("{} {}", level.required, level::structure_key(level)),
            Unique::Description => format!("{} {}", level.required, features.bits(level)),
        })
    }
}

#[cfg(test)]
mod tests;
