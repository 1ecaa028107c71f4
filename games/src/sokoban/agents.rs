//! Sokoban as the agents play it ([`crate::agents`]): a move is a push the
//! player can walk to, but for one that leaves a box in a corner off goal
//! (lost at once, and plain to see); progress is the boxes on goals.

use crate::clock::Instant;

use super::level::{Dir, Level};
use crate::agents::{self, Figures, Limits, Puzzle};

/// Tries per agent, and positions the search may expand.
const TRIES: u32 = 8;
const NODES: u32 = 300;
/// A try may make this many times the fewest pushes.
const FACTOR: u32 = 3;

/// A position: the boxes (sorted) and the lowest cell the player can walk
/// to (positions equal up to the player's walk are one).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Position {
    boxes: Box<[u16]>,
    player: u16,
}

struct Pushing<'a> {
    level: &'a Level,
    /// Per cell: a floor cell in a corner (walls on two sides at a right angle).
    corner: Vec<bool>,
}

impl Pushing<'_> {
    /// The floor the player reaches from `from` without pushing, as a mask
    /// over the cells.
    fn reach(&self, boxes: &[u16], from: usize) -> Vec<bool> {
        let level = self.level;
        let free = |c: usize| level.open(c) && boxes.binary_search(&(c as u16)).is_err();
        let mut reach = vec![false; level.walls.len()];
        let mut stack = vec![from];
        reach[from] = true;
        while let Some(c) = stack.pop() {
            for d in Dir::ALL {
                if let Some(n) = level.step(c, d).filter(|&n| free(n) && !reach[n]) {
                    reach[n] = true;
                    stack.push(n);
                }
            }
        }
        reach
    }

    fn position(&self, boxes: Box<[u16]>, player: usize) -> Position {
        let reach = self.reach(&boxes, player);
        let player = reach.iter().position(|&r| r).unwrap_or(player) as u16;
        Position { boxes, player }
    }
}

impl Puzzle for Pushing<'_> {
    type State = Position;

    fn start(&self) -> Position {
        let boxes = self.level.boxes.iter().map(|&b| b as u16).collect();
        self.position(boxes, self.level.player)
    }

    fn moves(&self, state: &Position, out: &mut Vec<Position>) {
        let level = self.level;
        let reach = self.reach(&state.boxes, usize::from(state.player));
        let free = |c: usize| level.open(c) && state.boxes.binary_search(&(c as u16)).is_err();
        for (i, &b) in state.boxes.iter().enumerate() {
            let b = usize::from(b);
            for d in Dir::ALL {
                let behind = Dir::ALL[(d as usize + 2) % 4];
                let (Some(from), Some(to)) = (level.step(b, behind), level.step(b, d)) else {
                    continue;
                };
                if !reach[from] || !free(to) {
                    continue;
                }
                if self.corner[to] && level.goals.binary_search(&to).is_err() {
                    continue;
                }
                let mut boxes = state.boxes.clone();
                boxes[i] = to as u16;
                boxes.sort_unstable();
                out.push(self.position(boxes, b));
            }
        }
    }

    fn won(&self, state: &Position) -> bool {
        state
            .boxes
            .iter()
            .zip(&self.level.goals)
            .all(|(&b, &g)| usize::from(b) == g)
    }

    fn progress(&self, state: &Position) -> u32 {
        state
            .boxes
            .iter()
            .filter(|&&b| self.level.goals.binary_search(&usize::from(b)).is_ok())
            .count() as u32
    }
}

/// The agents' figures for a level whose fewest pushes are `pushes`; `None`
/// for a level too large for the agents' cells (over 65,536 cells).
pub(crate) fn figures(level: &Level, pushes: u32, until: Option<Instant>) -> Option<Figures> {
    if level.walls.len() > usize::from(u16::MAX) {
        return None;
    }
    let wall = |c: Option<usize>| c.is_none_or(|c| !level.open(c));
    let corner = (0..level.walls.len())
        .map(|c| {
            let side = |d| wall(level.step(c, d));
            level.open(c)
                && (side(Dir::Left) || side(Dir::Right))
                && (side(Dir::Up) || side(Dir::Down))
        })
        .collect();
    let puzzle = Pushing { level, corner };
    agents::play(
        &puzzle,
        Limits::new(TRIES, FACTOR, pushes, NODES).until(until),
    )
}
