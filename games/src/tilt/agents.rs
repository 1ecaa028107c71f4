//! Tilt as the agents play it ([`crate::agents`]): a move is a tilt that
//! changes the board and neither dirties nor loses a fruit; progress is the
//! fruits paired.

use crate::clock::Instant;

use super::level::{Dir, Level};
use super::rules::{Board, GONE, State, Step};
use crate::agents::{self, Figures, Limits, Puzzle};

/// Tries per agent, and positions the search may expand.
const TRIES: u32 = 8;
const NODES: u32 = 50;
/// A try may make this many times the fewest tilts.
const FACTOR: u32 = 3;

struct Tilting {
    board: Board,
    start: State,
}

impl Puzzle for Tilting {
    type State = State;

    fn start(&self) -> State {
        self.start
    }

    fn moves(&self, state: &State, out: &mut Vec<State>) {
        let lines = self.board.lines(state);
        for d in Dir::ALL {
            if let Step::Moved(next) = self.board.tilt_from(state, &lines, d) {
                out.push(next);
            }
        }
    }

    fn won(&self, state: &State) -> bool {
        self.board.is_won(state)
    }

    fn progress(&self, state: &State) -> u32 {
        state.pos[..self.board.fruits]
            .iter()
            .filter(|&&p| p == GONE)
            .count() as u32
    }
}

/// The agents' figures for a level whose fewest tilts are `moves`.
pub(crate) fn figures(level: &Level, moves: u32, until: Option<Instant>) -> Option<Figures> {
    let (board, start) = Board::new(level);
    agents::play(
        &Tilting { board, start },
        Limits::new(TRIES, FACTOR, moves, NODES).until(until),
    )
}
