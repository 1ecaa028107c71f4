//! `dungeon`: keys and switches placed by agents on a map graph (source 004,
//! Venco & Lanzi).
//!
//! - [`level`]: rooms, doors, keys and switches; text and JSON forms.
//! - [`generate`]: the BSP map and the puzzle agents (Algorithm 1 and 2).
//! - [`solve`]: the search over puzzle states: complexity and dead ends.
//! - [`replay`]: the rules stated plainly, to check a solution.
//!
//! Rule decisions beyond the rules in its doc (docs/dungeon.md), fixed here:
//! - a door joins two rooms through one wall cell; most doors pass both ways,
//!   some extra doors are drops that pass one way only (`one_way_chance`);
//! - a door is enabled when every key that locks it is held and every switch
//!   that controls it is in the position that opens it; switches start off;
//! - acting on an element puts the player in its room; collecting a key is
//!   for good; a key may lie in a chest that needs another key;
//! - complexity counts actions (keys collected, switch flips) plus the final
//!   step into the exit, as the source counts puzzle-graph transitions.
//!
//! Without drops no dead end could arise (keys only open, a switch can be
//! flipped back from where it was flipped); drops make the no-dead-end proof
//! a real check, and the generator keeps a change only when it holds.

mod agents;
mod generate;
mod level;
mod replay;
mod solve;

use crate::clock::Instant;

use serde::{Deserialize, Serialize};

use crate::agents::with_agents;
use crate::reason::Code;
use crate::rng::Rng;
use crate::{Budget, Game, GameError, MetricDoc, Metrics, Misfit, ParamError, Rejection, Solved};
use level::{Level, Passage};
use pregen_game_core::metrics::metric;
use solve::Analysis;

/// Parameters of the dungeon generator (the job's `[params]` table).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DungeonParams {
    /// Grid width, outer walls included (7..=64).
    pub width: u16,
    /// Grid height, outer walls included (7..=64).
    pub height: u16,
    /// Smallest room side (2..=4).
    pub min_room: u16,
    /// Chance that two facing rooms not joined by the room tree get a door.
    pub loop_chance: f64,
    /// Chance that such an extra door is a one-way drop.
    pub one_way_chance: f64,
    /// Weight of the collectible agent in the random choice.
    pub key_weight: u32,
    /// Weight of the switch agent.
    pub switch_weight: u32,
    /// Whether the collectible agent may put a key in a chest (seed Fig. 4).
    pub chains: bool,
    /// The agents stop after more than this many failed changes.
    pub max_failures: u32,
    /// Stop after this many puzzles (0: no limit).
    pub max_puzzles: u32,
    /// Stop once the complexity reaches this (0: no target).
    pub target_complexity: u32,
    /// Fewest actions an accepted level needs.
    pub min_complexity: u32,
    /// A change that brings more puzzle states than this is not kept, which
    /// bounds the time a map takes (switches double the states).
    pub max_states: u64,
}

impl Default for DungeonParams {
    fn default() -> Self {
        Self {
            width: 22,
            height: 22,
            min_room: 2,
            loop_chance: 0.2,
            one_way_chance: 0.3,
            key_weight: 1,
            switch_weight: 1,
            chains: false,
            max_failures: 10,
            max_puzzles: 0,
            target_complexity: 0,
            min_complexity: 2,
            max_states: 2_000,
        }
    }
}

/// The dungeon game.
pub struct Dungeon;

/// Dungeon's own reason codes (beside [`Code::COMMON`]); the numbers are
/// stable, the wire and the commit log carry them.
pub mod reasons {
    use crate::reason::{Code, Status};

    /// A reachable state cannot reach the exit.
    pub const DEAD_END: Code = Code::new(
        15,
        "dead end",
        Status::Rejected,
        "A reachable state cannot reach the exit.",
    );
}

impl Game for Dungeon {
    type Params = DungeonParams;
    type Level = Level;
    type Analysis = Analysis;
    const NAME: &'static str = "dungeon";

    const REASONS: &'static [Code] = &[reasons::DEAD_END];

    const METRICS: &'static [MetricDoc] = with_agents![
        metric("rooms", "count", "rooms of the BSP map"),
        metric("doors", "count", "doors between rooms"),
        metric(
            "one_way_doors",
            "count",
            "doors passable in one direction only",
        ),
        metric("keys", "count", "keys placed"),
        metric("chests", "count", "keys locked in chests"),
        metric("switches", "count", "switches placed"),
        metric("states", "count", "puzzle states reachable from the start"),
        metric(
            "dead_states",
            "count",
            "of those, states from which the exit cannot be reached (0 in an accepted level)",
        ),
        metric(
            "complexity",
            "actions",
            "the fewest actions to the goal, the goal action included",
        ),
        metric(
            "switch_flips",
            "count",
            "switch flips on the solution's way",
        ),
    ];

    fn validate(p: &DungeonParams) -> Result<(), ParamError> {
        if !(7..=64).contains(&p.width) || !(7..=64).contains(&p.height) {
            return Err(ParamError::out_of_range(
                "width and height",
                "7..=64",
                format!("{}x{}", p.width, p.height),
            ));
        }
        ParamError::check("min_room", p.min_room, 2..=4)?;
        if p.width < 2 * p.min_room + 3 && p.height < 2 * p.min_room + 3 {
            return Err(ParamError::Conflict(format!(
                "a {}x{} grid holds one room of side {}: start and exit need two",
                p.width, p.height, p.min_room
            )));
        }
        // Rooms are at least min_room + 1 cells apart each way: 64 fit in 64x64 at side 2.
        ParamError::check("loop_chance", p.loop_chance, 0.0..=1.0)?;
        ParamError::check("one_way_chance", p.one_way_chance, 0.0..=1.0)?;
        if p.key_weight == 0 && p.switch_weight == 0 {
            return Err(ParamError::Conflict(
                "key_weight and switch_weight cannot both be 0".into(),
            ));
        }
        ParamError::check("max_failures", p.max_failures, 0..=1000)?;
        ParamError::check("max_states", p.max_states, 1..=1_000_000)?;
        if p.min_complexity < 1 {
            return Err(ParamError::out_of_range(
                "min_complexity",
                "at least 1",
                p.min_complexity,
            ));
        }
        Ok(())
    }

    fn generate(
        params: &DungeonParams,
        rng: &mut Rng,
        budget: &Budget,
    ) -> Result<Level, Rejection> {
        generate::generate(params, rng, budget)
    }

    fn solve(level: &Level, budget: &Budget) -> Result<Solved<Analysis>, Rejection> {
        level
            .check()
            .map_err(|e| Rejection::refused(Code::MalformedLevel, e.to_string()))?;
        let a = solve::analyse(level, budget)?;
        if a.dead_states > 0 {
            return Err(Rejection::refused(
                reasons::DEAD_END,
                format!(
                    "{} of {} reachable states cannot reach the exit",
                    a.dead_states, a.states
                ),
            ));
        }
        Ok(Solved {
            solution: a
                .solution
                .iter()
                .map(|s| s.token())
                .collect::<Vec<_>>()
                .join(" "),
            moves: a.complexity(),
            optimal: true,
            nodes: a.states as u64,
            analysis: a,
        })
    }

    fn accept(
        params: &DungeonParams,
        _level: &Level,
        solved: &Solved<Analysis>,
    ) -> Result<(), Rejection> {
        if solved.moves < params.min_complexity {
            return Err(Rejection::refused(
                Code::TooEasy,
                format!(
                    "complexity {} < min_complexity {}",
                    solved.moves, params.min_complexity
                ),
            ));
        }
        Ok(())
    }

    const RATING_MODEL: &'static str = include_str!("../../models/dungeon.toml");

    fn metrics(level: &Level, solved: &Solved<Analysis>) -> Metrics {
        let a = &solved.analysis;
        let one_way = level
            .doors
            .iter()
            .filter(|d| d.passage != Passage::Both)
            .count();
        let chests = level.keys.iter().filter(|k| k.chest.is_some()).count();
        Metrics::from([
            ("rooms".into(), level.rooms.len() as f64),
            ("doors".into(), level.doors.len() as f64),
            ("one_way_doors".into(), one_way as f64),
            ("keys".into(), level.keys.len() as f64),
            ("chests".into(), chests as f64),
            ("switches".into(), level.switches.len() as f64),
            ("states".into(), a.states as f64),
            ("dead_states".into(), a.dead_states as f64),
            ("complexity".into(), f64::from(a.complexity())),
            ("switch_flips".into(), f64::from(a.switch_flips())),
        ])
    }

    fn fits(params: &DungeonParams, level: &Level, moves: u32) -> Result<(), Misfit> {
        if (level.width, level.height) != (params.width, params.height) {
            return Err(Misfit::Shape {
                level: format!("a {}x{} level", level.width, level.height),
                job: format!("a {}x{} job", params.width, params.height),
            });
        }
        if moves < params.min_complexity {
            return Err(Misfit::Count(format!(
                "complexity {moves} < min_complexity {}",
                params.min_complexity
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

    fn replay(level: &Level, solution: &str) -> Result<(), GameError> {
        replay::replay(level, solution)
    }

    fn play(level: &Level, moves: &str) -> Option<Result<(String, bool), GameError>> {
        Some(
            replay::play(level, moves)
                .map(|(play, out)| (format!("{}\n\n{}", play.describe(), level.to_text()), out)),
        )
    }
}

#[cfg(test)]
mod tests;
