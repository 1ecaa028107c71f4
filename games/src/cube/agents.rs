//! Cube as the agents play it ([`crate::agents`]): a move is a walk within
//! the monk's region and a turn after which no soldier reaches it (the karma
//! then in reach is taken); progress is the karma held; a position is won
//! when the goal's karma is held and the exit is in reach.

use super::geometry::Turn;
use super::level::{EXIT, Level, START};
use super::solve::{
    collect, flood, in_danger, moves_monk, neighbours, pack, region, take_karma, top_masks,
    turn_packed,
};
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
        for turn in Turn::ALL {
            let turned = turn_packed(turn, key);
            let (walk, soldiers, karma_cells) = top_masks(turned);
            // Cells of the region already turned from to the same place.
            let mut done = 0u16;
            for from in 0..9 {
                if reach >> from & 1 == 0 || moves_monk(turn, from) || done >> from & 1 == 1 {
                    continue;
                }
                let next_reach = flood(1 << from, walk);
                done |= next_reach;
                if neighbours(next_reach) & soldiers != 0 {
                    continue;
                }
                let taken = next_reach & karma_cells;
                let next = (
                    take_karma(turned, taken),
                    next_reach,
                    karma + taken.count_ones(),
                );
                if !out.contains(&next) {
                    out.push(next);
                }
            }
        }
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
pub(crate) fn figures(level: &Level, turns: u32) -> Option<Figures> {
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
    Some(agents::play(
        &puzzle,
        Limits::new(TRIES, FACTOR, turns, NODES),
    ))
}
