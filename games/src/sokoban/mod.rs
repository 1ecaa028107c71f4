//! `sokoban`: box pushing (source 003), with two generators and one exact
//! solver.
//!
//! - [`level`]: the level, XSB (single levels and collection files), LURD
//!   replay, the 8 symmetries and the canonical form used against duplicates.
//! - [`mcts`]: `method = "mcts"`, the source's Monte Carlo tree search.
//! - [`reverse`]: `method = "reverse"`, the reverse-play generator behind the
//!   Boxoban packs.
//! - [`solve`]: push-optimal, then move-optimal search, independent of both.
//!
//! Sizes: `mcts` counts the board inside the outer wall (the source's 6x6), and
//! its levels are cropped to their walls; `reverse` counts the whole level,
//! outer wall included (Boxoban's 10x10).

mod agents;
pub mod level;
mod mcts;
mod reverse;
pub mod solve;

#[cfg(test)]
mod reference;

use crate::clock::Instant;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::agents::with_agents;
use crate::reason::Code;
use crate::rng::Rng;
use crate::{
    Budget, Collection, Game, GameError, MetricDoc, Metrics, Misfit, ParamError, Rejection, Solved,
};
use level::Level;
use pregen_game_core::metrics::metric;
use solve::Answer;

/// Which generator builds the levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// The source's Monte Carlo tree search.
    #[default]
    Mcts,
    /// Boxoban-style reverse play.
    Reverse,
}

/// Parameters of the sokoban generators (the job's `[params]` table).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SokobanParams {
    /// `mcts` or `reverse`.
    pub method: Method,
    /// Width: the board inside the wall (`mcts`, default 6) or the whole
    /// level (`reverse`, default 10).
    pub width: Option<usize>,
    /// Height, as `width`.
    pub height: Option<usize>,
    /// `reverse`: boxes.
    pub boxes: usize,
    /// `reverse`: random-walk steps (default 1.7 x (width + height)).
    pub walk_steps: Option<u32>,
    /// `reverse`: chance the walk turns at a step.
    pub turn_chance: f64,
    /// `reverse`: deepest line of reverse play.
    pub reverse_depth: u32,
    /// `reverse`: states reverse play looks at.
    pub reverse_states: usize,
    /// `reverse`: topologies drawn before the seed is rejected.
    pub tries: u32,
    /// `reverse`: whether the player may start on a goal (false, as in the
    /// Boxoban packs: reverse play never picks such a start).
    pub player_on_goal: bool,
    /// `mcts`: iterations.
    pub iterations: u64,
    /// `mcts`: the UCB constant C.
    pub exploration: f64,
    /// `mcts`: fewest boxes placed before the freeze.
    pub min_boxes: usize,
    /// `mcts`: most boxes placed before the freeze.
    pub max_boxes: usize,
    /// `mcts`: first layer (root = 1) where the freeze may be played.
    pub freeze_layer: u32,
    /// `mcts`: the score's normaliser.
    pub normaliser: f64,
    /// `mcts`: each seed draws its box count from `min_boxes..=max_boxes`
    /// (true), or the search places any count in the range (false, the
    /// source's rule; its score then nearly always picks `max_boxes`).
    pub draw_boxes: bool,
    /// `mcts`: the score's weight on the pushed boxes' displacement (start
    /// cells matched to goals at the least total distance, a lower bound on
    /// the pushes), which favours longer solutions; 0 gives the source's score.
    pub displacement_weight: f64,
    /// Fewest pushes an accepted level needs.
    pub min_pushes: u32,
    /// Most pushes an accepted level may need.
    pub max_pushes: u32,
}

impl Default for SokobanParams {
    fn default() -> Self {
        Self {
            method: Method::Mcts,
            width: None,
            height: None,
            boxes: 4,
            walk_steps: None,
            turn_chance: 0.35,
            reverse_depth: 300,
            reverse_states: 20_000,
            tries: 4,
            player_on_goal: false,
            iterations: 100_000,
            exploration: 5.0 * std::f64::consts::SQRT_2,
            min_boxes: 3,
            max_boxes: 7,
            freeze_layer: 9,
            normaliser: 50.0,
            draw_boxes: true,
            displacement_weight: 5.0,
            min_pushes: 1,
            max_pushes: 1_000,
        }
    }
}

impl SokobanParams {
    /// (width, height) with the method's defaults.
    pub fn size(&self) -> (usize, usize) {
        let default = match self.method {
            Method::Mcts => 6,
            Method::Reverse => 10,
        };
        (
            self.width.unwrap_or(default),
            self.height.unwrap_or(default),
        )
    }

    /// The reverse generator these params describe.
    pub fn reverse(&self) -> reverse::Reverse {
        let (width, height) = self.size();
        reverse::Reverse {
            width,
            height,
            boxes: self.boxes,
            walk_steps: self
                .walk_steps
                .unwrap_or((1.7 * (width + height) as f64) as u32),
            turn_chance: self.turn_chance,
            reverse_depth: self.reverse_depth,
            reverse_states: self.reverse_states,
            tries: self.tries,
            player_on_goal: self.player_on_goal,
        }
    }

    /// The MCTS generator these params describe.
    pub fn mcts(&self) -> mcts::Mcts {
        let (width, height) = self.size();
        mcts::Mcts {
            width,
            height,
            iterations: self.iterations,
            exploration: self.exploration,
            min_boxes: self.min_boxes,
            max_boxes: self.max_boxes,
            freeze_layer: self.freeze_layer,
            normaliser: self.normaliser,
            draw_boxes: self.draw_boxes,
            displacement_weight: self.displacement_weight,
        }
    }
}

/// A level with the figures its generator recorded (empty for a level read
/// from its text or JSON form). The JSON form, which the level hash covers,
/// is the puzzle alone: the figures describe how it was made, not what it
/// is, and reach the pack as metrics.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Puzzle {
    /// The level.
    #[serde(flatten)]
    pub level: Level,
    /// Generator figures: `mcts_score` and its parts, or `reverse_score`.
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

/// The sokoban game.
pub struct Sokoban;

/// Sokoban's own reason codes (beside [`Code::COMMON`]); the numbers are
/// stable, the wire and the commit log carry them.
pub mod reasons {
    use crate::reason::{Code, Status};

    /// MCTS found no puzzle with a pushed box.
    pub const NO_PUSHED_BOX: Code = Code::new(
        16,
        "no puzzle with a pushed box was found",
        Status::Rejected,
        "MCTS found no puzzle with a pushed box.",
    );

    /// The reverse generator moved no box off its goal.
    pub const NO_BOX_MOVED: Code = Code::new(
        17,
        "no box moved",
        Status::Rejected,
        "The reverse generator moved no box off its goal.",
    );

    /// The solver's time limit came before any solution (`pregen solve` only).
    pub const TIME_LIMIT: Code = Code::new(
        18,
        "time limit reached before any solution was found",
        Status::Rejected,
        "The solver's time limit came before any solution (`pregen solve` only).",
    );
}

impl Game for Sokoban {
    type Params = SokobanParams;
    type Level = Puzzle;
    type Analysis = Answer;
    const NAME: &'static str = "sokoban";

    const REASONS: &'static [Code] = &[
        reasons::NO_PUSHED_BOX,
        reasons::NO_BOX_MOVED,
        reasons::TIME_LIMIT,
    ];

    const METRICS: &'static [MetricDoc] = with_agents![
        metric("pushes", "pushes", "pushes of the stored solution"),
        metric(
            "moves",
            "moves",
            "player moves of the stored solution, pushes included",
        ),
        metric("boxes", "count", "boxes on the board"),
        metric("push_nodes", "count", "nodes of the push search"),
        metric(
            "start_bound",
            "pushes",
            "the solver's lower bound on the pushes at the start (each box's fewest pushes to a goal, matched)",
        ),
        metric("push_optimal", "flag", "1 when `pushes` is proven fewest"),
        metric(
            "push_lower_bound",
            "pushes",
            "the proven lower bound on pushes; only when push_optimal is 0",
        ),
        metric(
            "reverse_score",
            "points",
            "reverse play's score of the start (box switches times displacement); method reverse",
        ),
        metric(
            "topologies",
            "count",
            "floor plans drawn before one scored; method reverse",
        ),
        metric(
            "mcts_score",
            "points",
            "the source's MCTS score of the level; method mcts",
        ),
        metric(
            "box_count",
            "points",
            "the score's box count term; method mcts",
        ),
        metric(
            "congestion",
            "points",
            "the score's congestion term before its weight; method mcts",
        ),
        metric(
            "non_uniform_tiles",
            "count",
            "tiles in no uniform 3x3 block; method mcts",
        ),
        metric(
            "displacement",
            "cells",
            "start cells matched to goals at the least total distance (a lower bound on pushes); method mcts",
        ),
        metric(
            "tree_nodes",
            "count",
            "MCTS tree nodes at the end; method mcts",
        ),
    ];

    fn validate(p: &SokobanParams) -> Result<(), ParamError> {
        let (w, h) = p.size();
        let sizes = match p.method {
            Method::Mcts => 3..=12,
            Method::Reverse => 5..=40,
        };
        for (name, v) in [("width", w), ("height", h)] {
            if !sizes.contains(&v) {
                return Err(ParamError::out_of_range(
                    name,
                    format!(
                        "{}..={} for method {:?}",
                        sizes.start(),
                        sizes.end(),
                        p.method
                    ),
                    v,
                ));
            }
        }
        if p.method == Method::Mcts && (w + 2) * (h + 2) > mcts::MAX_CELLS {
            return Err(ParamError::Conflict(format!(
                "mcts boards need (width + 2) x (height + 2) <= {} cells, e.g. 9x9 or 6x12 (got {w}x{h})",
                mcts::MAX_CELLS
            )));
        }
        ParamError::check("boxes", p.boxes, 1..=15)?;
        if !(1..=p.max_boxes).contains(&p.min_boxes) || p.max_boxes > 15 {
            return Err(ParamError::Conflict(format!(
                "min_boxes and max_boxes must satisfy 1 <= min_boxes <= max_boxes <= 15 (got {} and {})",
                p.min_boxes, p.max_boxes
            )));
        }
        if !(0.0..=1.0).contains(&p.turn_chance) {
            return Err(ParamError::out_of_range(
                "turn_chance",
                "0..=1",
                p.turn_chance,
            ));
        }
        ParamError::check("reverse_depth", p.reverse_depth, 1..=1_000)?;
        for (name, v) in [
            ("reverse_states", p.reverse_states as u64),
            ("tries", u64::from(p.tries)),
            ("iterations", p.iterations),
        ] {
            if v == 0 {
                return Err(ParamError::out_of_range(name, "positive", v));
            }
        }
        if p.iterations > 100_000_000 {
            return Err(ParamError::out_of_range(
                "iterations",
                "at most 100000000",
                p.iterations,
            ));
        }
        for (name, v) in [
            ("exploration", p.exploration),
            ("displacement_weight", p.displacement_weight),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(ParamError::out_of_range(name, "a finite number >= 0", v));
            }
        }
        if !(p.normaliser.is_finite() && p.normaliser > 0.0) {
            return Err(ParamError::out_of_range(
                "normaliser",
                "positive",
                p.normaliser,
            ));
        }
        if p.min_pushes > p.max_pushes {
            return Err(ParamError::Conflict(format!(
                "min_pushes ({}) is above max_pushes ({})",
                p.min_pushes, p.max_pushes
            )));
        }
        Ok(())
    }

    fn generate(
        params: &SokobanParams,
        rng: &mut Rng,
        budget: &Budget,
    ) -> Result<Puzzle, Rejection> {
        let mut generator = BTreeMap::new();
        let level = match params.method {
            Method::Reverse => {
                let g = params.reverse().generate(rng)?;
                generator.insert("reverse_score".into(), g.score as f64);
                generator.insert("topologies".into(), f64::from(g.tries));
                g.level
            }
            Method::Mcts => {
                let f = params.mcts().generate(rng, budget)?;
                generator.insert("mcts_score".into(), f.score);
                generator.insert("box_count".into(), f.box_count);
                generator.insert("congestion".into(), f.congestion);
                generator.insert("non_uniform_tiles".into(), f.non_uniform);
                generator.insert("displacement".into(), f.displacement);
                generator.insert("tree_nodes".into(), f.tree_nodes as f64);
                f.level
            }
        };
        Ok(Puzzle { level, generator })
    }

    fn solve(puzzle: &Puzzle, budget: &Budget) -> Result<Solved<Answer>, Rejection> {
        let a = solve::solve(&puzzle.level, budget)?;
        Ok(Solved {
            solution: a.solution.clone(),
            moves: a.moves,
            optimal: a.push_optimal && a.move_optimal,
            nodes: a.nodes,
            analysis: a,
        })
    }

    fn accept(
        params: &SokobanParams,
        _level: &Puzzle,
        solved: &Solved<Answer>,
    ) -> Result<(), Rejection> {
        let pushes = solved.analysis.pushes;
        crate::game::within(pushes, "pushes", params.min_pushes, params.max_pushes)
    }

    const RATING_MODEL: &'static str = include_str!("../../models/sokoban.toml");

    fn metrics(puzzle: &Puzzle, solved: &Solved<Answer>) -> Metrics {
        let a = &solved.analysis;
        let mut metrics = puzzle.generator.clone();
        metrics.extend([
            ("pushes".into(), f64::from(a.pushes)),
            ("moves".into(), f64::from(a.moves)),
            ("boxes".into(), puzzle.level.boxes.len() as f64),
            ("push_nodes".into(), a.push_nodes as f64),
            ("start_bound".into(), f64::from(a.start_bound)),
            ("push_optimal".into(), f64::from(u8::from(a.push_optimal))),
        ]);
        if !a.push_optimal {
            metrics.insert("push_lower_bound".into(), f64::from(a.lower_bound));
        }
        metrics
    }

    fn solution_moves(solution: &str) -> u32 {
        solution.chars().count() as u32
    }

    fn fits(params: &SokobanParams, puzzle: &Puzzle, _moves: u32) -> Result<(), Misfit> {
        let boxes = puzzle.level.boxes.len();
        let (least, most) = match params.method {
            Method::Reverse => (params.boxes, params.boxes),
            Method::Mcts => (1, params.max_boxes),
        };
        if !(least..=most).contains(&boxes) {
            return Err(Misfit::Count(format!(
                "{boxes} boxes; the job allows {least}..={most}"
            )));
        }
        let level = &puzzle.level;
        if params.method == Method::Reverse
            && !params.player_on_goal
            && level.goals.binary_search(&level.player).is_ok()
        {
            return Err(Misfit::Shape {
                level: "the player starting on a goal".into(),
                job: "a job of player_on_goal = false".into(),
            });
        }
        Ok(())
    }

    fn agents(
        puzzle: &Puzzle,
        _moves: u32,
        metrics: &Metrics,
        until: Option<Instant>,
    ) -> Option<crate::agents::Figures> {
        // The agents push: a try may make a multiple of the fewest pushes.
        let pushes = metrics.get("pushes").copied().unwrap_or(0.0) as u32;
        agents::figures(&puzzle.level, pushes, until)
    }

    fn to_text(puzzle: &Puzzle) -> String {
        puzzle.level.to_xsb()
    }

    fn from_text(text: &str) -> Result<Puzzle, GameError> {
        Ok(Puzzle {
            level: Level::from_xsb(text)?,
            generator: BTreeMap::new(),
        })
    }

    const WHOLE_TEXT: bool = true;

    /// A collection file (levels with `Title:` or `;` titles) or one level.
    fn from_collection(text: &str) -> Result<Collection<Puzzle>, GameError> {
        Ok(level::read_collection(text)?
            .into_iter()
            .map(|(title, level)| {
                let puzzle = level.map(|level| Puzzle {
                    level,
                    generator: BTreeMap::new(),
                });
                (title, puzzle)
            })
            .collect())
    }

    fn replay(puzzle: &Puzzle, solution: &str) -> Result<(), GameError> {
        puzzle.level.replay(solution)
    }

    fn play(puzzle: &Puzzle, moves: &str) -> Option<Result<(String, bool), GameError>> {
        Some(puzzle.level.play(moves).map(|level| {
            let won = level.boxes.iter().all(|b| level.goals.contains(b));
            let after = Puzzle {
                level,
                generator: puzzle.generator.clone(),
            };
            (Sokoban::to_text(&after), won)
        }))
    }

    fn canonical(_params: &SokobanParams, puzzle: &Puzzle) -> Option<String> {
        Some(puzzle.level.canonical())
    }
}

#[cfg(test)]
mod tests;
