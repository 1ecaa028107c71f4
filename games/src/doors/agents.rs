//! Doors as the agents play it ([`crate::agents`]): a move is a walk
//! through a door open to the active colour or a button press; a player sees
//! no progress short of the win, so the greedy agent is a curious explorer
//! (somewhere new when it can) and the search a breadth-first one.

use crate::clock::Instant;

use super::level::{Level, Rules};
use crate::agents::{self, Figures, Limits, Puzzle};

/// Tries per agent, and positions the search may expand.
const TRIES: u32 = 16;
const NODES: u32 = 1_000;
/// A try may make this many times the fewest moves.
const FACTOR: u32 = 2;

struct Walking(Rules);

impl Puzzle for Walking {
    /// A room and the active colour, as [`Rules`] numbers them.
    type State = usize;

    fn start(&self) -> usize {
        Rules::START
    }

    fn moves(&self, &state: &usize, out: &mut Vec<usize>) {
        for &(_, to) in &self.0.moves[state] {
            if !out.contains(&to) {
                out.push(to);
            }
        }
    }

    fn won(&self, &state: &usize) -> bool {
        self.0.wins(state)
    }

    fn progress(&self, _state: &usize) -> u32 {
        0
    }
}

/// The agents' figures for a level whose fewest moves are `moves`.
pub(crate) fn figures(level: &Level, moves: u32, until: Option<Instant>) -> Option<Figures> {
    agents::play(
        &Walking(Rules::new(level)),
        Limits::new(TRIES, FACTOR, moves, NODES).until(until),
    )
}
