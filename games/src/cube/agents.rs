//! Cube as the agents play it ([`crate::agents`]): a move is a walk within
//! the monk's region and a turn after which no soldier reaches it (the karma
//! then in reach is taken); progress is the karma held; a position is won
//! when the goal's karma is held and the exit is in reach.

use crate::clock::Instant;

use super::level::{EXIT, Level, START};
use super::solve::{collect, each_turn, in_danger, pack, region};
use crate::agents::{self, Figures, Limits, Puzzle};

/// Tries per agent, and positions the search may expand.
const TRIES: u32 = 8;
const NODES: u32 = 300;
/// A try may make this many times the fewest turns.
const FACTOR: u32 = 3;

/// A position: the cube (karma taken off) packed, the monk's region, the
/// karma held.
type Position = (u128, u16, u32);

struct Turning {
    start: Position,
    goal: u32,
}

impl Puzzle for Turning {
    type State = Position;

    fn start(&self) -> Position {
        self.start
    }

    fn moves(&self, &(key, reach, karma): &Position, out: &mut Vec<Position>) {
        each_turn(key, reach, |_, next_key, next_reach, taken| {
            let next = (next_key, next_reach, karma + taken);
            if !out.contains(&next) {
                out.push(next);
            }
            true
        });
    }

    fn won(&self, &(_, reach, karma): &Position) -> bool {
        karma >= self.goal && reach >> (EXIT.1 * 3 + EXIT.0) & 1 == 1
    }

    fn progress(&self, &(_, _, karma): &Position) -> u32 {
        karma
    }
}

/// The agents' figures for a level whose fewest turns are `turns`; `None`
/// when the monk starts in danger (no accepted level does).
pub(crate) fn figures(level: &Level, turns: u32, until: Option<Instant>) -> Option<Figures> {
    let mut cells = level.array();
    let reach = region(&cells, START.1 * 3 + START.0);
    if in_danger(&cells, reach) {
        return None;
    }
    let karma = collect(&mut cells, reach);
    let puzzle = Turning {
        start: (pack(&cells), reach, karma),
        goal: level.karma_goal,
    };
    agents::play(
        &puzzle,
        Limits::new(TRIES, FACTOR, turns, NODES).until(until),
    )
}
