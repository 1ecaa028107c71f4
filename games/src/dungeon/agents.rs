//! Dungeon as the agents play it ([`crate::agents`]): walking is free; a
//! move is an action on a key or a switch the player can walk to (they then
//! stand in its room); progress is the keys held; a position is won when the
//! exit is in reach.

use crate::clock::Instant;
use std::cell::RefCell;

use rustc_hash::FxHashMap;

use super::level::Level;
use super::solve::{Rules, View};
use crate::agents::{self, Figures, Limits, Puzzle};

/// Tries per agent, and positions the search may expand.
const TRIES: u32 = 8;
const NODES: u32 = 100;
/// A try may make this many times the fewest actions.
const FACTOR: u32 = 2;

/// A position: the keys held and switches on (as configuration bits) and
/// the player's room.
type Position = (u64, u8);

struct Exploring {
    rules: Rules,
    /// Reachability per configuration met, computed once.
    views: RefCell<FxHashMap<u64, View>>,
}

impl Exploring {
    /// The rooms the player reaches from `room` under `config`.
    fn reach(&self, config: u64, room: usize) -> u64 {
        let mut views = self.views.borrow_mut();
        let view = views
            .entry(config)
            .or_insert_with(|| self.rules.view(config, &[]));
        view.reach[room]
    }
}

impl Puzzle for Exploring {
    type State = Position;

    fn start(&self) -> Position {
        (0, self.rules.ends().0 as u8)
    }

    fn moves(&self, &(config, room): &Position, out: &mut Vec<Position>) {
        let reach = self.reach(config, usize::from(room));
        for (i, next) in self.rules.actions(config, reach) {
            out.push((next, self.rules.element_room(i) as u8));
        }
    }

    fn won(&self, &(config, room): &Position) -> bool {
        self.reach(config, usize::from(room)) >> self.rules.ends().1 & 1 == 1
    }

    fn progress(&self, &(config, _): &Position) -> u32 {
        (config & self.rules.key_bits()).count_ones()
    }
}

/// The agents' figures for a level whose solution has `moves` actions.
pub(crate) fn figures(level: &Level, moves: u32, until: Option<Instant>) -> Option<Figures> {
    let puzzle = Exploring {
        rules: Rules::new(level),
        views: RefCell::default(),
    };
    agents::play(
        &puzzle,
        Limits::new(TRIES, FACTOR, moves, NODES).until(until),
    )
}
