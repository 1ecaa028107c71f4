//! The source's backward generator.
//!
//! Start from a cube of obstacles with the monk at the exit, Top (2, 2), and
//! `d` soldiers scrambled over the cube. Then, backwards, repeat: turn a row or
//! column (either way; never the monk's own), or step the monk to a
//! neighbouring Top cell, clearing an obstacle that is not protective; the cell
//! it leaves becomes a path, or a path with karma until all karma is placed. A
//! move that puts the monk in danger is undone. After each move, every Top
//! obstacle whose removal would let a soldier reach the monk is marked
//! protective: it is never cleared, since undoing the moves needs it. Then the
//! monk walks to the start, Top (0, 0), over paths only (turning rows and
//! columns at random until a path appears; karma under the start moves to a
//! random path cell off Top), the cube is scrambled with legal
//! turns, and a level with more than half its karma on Top is rejected. Every
//! random loop has a cap; hitting it is a `rejected` with its reason.

use super::CubeParams;
use super::geometry::{Face, Turn, cell};
use super::level::{Cell, EXIT, Level, START};
use super::solve::{in_danger, moves_monk, region};
use crate::Rejection;
use crate::reason::Code;
use crate::rng::Rng;

/// Moves of the backward walk before giving up.
const MAX_STEPS: usize = 2_000;
/// Random turns tried to open a path to the start.
const MAX_START_TURNS: usize = 200;
/// Scrambles tried for a safe soldier placement.
const MAX_SCRAMBLES: usize = 50;

/// A cube being built, with the protective marks that travel with the cells.
struct Work {
    cells: [Cell; 54],
    protective: [bool; 54],
    monk: usize,
}

impl Work {
    fn turn(&mut self, turn: Turn, times: usize) {
        for _ in 0..times {
            self.cells = turn.apply(&self.cells);
            self.protective = turn.apply(&self.protective);
        }
    }

    fn danger(&self) -> bool {
        in_danger(&self.cells, region(&self.cells, self.monk))
    }

    /// Marks the Top obstacles that keep a soldier from the monk.
    fn protect(&mut self) {
        for i in 0..9 {
            if self.cells[i] == Cell::Obstacle && !self.protective[i] {
                self.cells[i] = Cell::Path;
                if self.danger() {
                    self.protective[i] = true;
                }
                self.cells[i] = Cell::Obstacle;
            }
        }
    }
}

/// A random turn that leaves the monk's row and column alone, with how many
/// quarter turns (1 or 3: either way).
fn random_turn(rng: &mut Rng, monk: usize) -> (Turn, usize) {
    let allowed: Vec<Turn> = Turn::ALL
        .into_iter()
        .filter(|&t| !moves_monk(t, monk))
        .collect();
    let turn = allowed[rng.index(allowed.len())];
    (turn, if rng.chance(0.5) { 1 } else { 3 })
}

/// Builds a level of overall difficulty `params.difficulty`.
pub fn generate(params: &CubeParams, rng: &mut Rng) -> Result<Level, Rejection> {
    let d = params.difficulty as usize;
    let karma_total = 17 - d;
    let exit = EXIT.1 * 3 + EXIT.0;
    let mut w = Work {
        cells: [Cell::Obstacle; 54],
        protective: [false; 54],
        monk: exit,
    };
    w.cells[exit] = Cell::Path;
    w.place_soldiers(d, params.scramble_turns, rng)?;
    w.protect();
    w.walk_back(params, karma_total, rng)?;
    w.go_to_start(rng)?;
    w.scramble(params.scramble_turns, rng)?;
    let on_top = (0..9).filter(|&i| w.cells[i] == Cell::Karma).count();
    if on_top * 2 > karma_total {
        return Err(Rejection::refused(
            Code::TooEasy,
            format!("{on_top} of {karma_total} karma on Top"),
        ));
    }
    debug_assert!(w.cells[cell(Face::Top, START.0, START.1)] == Cell::Path);
    Ok(Level {
        cells: w.cells.to_vec(),
        karma_goal: params.karma_goal,
        difficulty: params.difficulty,
    })
}

impl Work {
    /// `d` soldiers off Top, then scrambled until none threatens the monk.
    fn place_soldiers(&mut self, d: usize, turns: usize, rng: &mut Rng) -> Result<(), Rejection> {
        let mut spots: Vec<usize> = (9..54).collect();
        rng.shuffle(&mut spots);
        for &s in spots.iter().take(d) {
            self.cells[s] = Cell::Soldier;
        }
        let mut scrambles = 0;
        loop {
            for _ in 0..turns {
                let (t, n) = random_turn(rng, self.monk);
                self.turn(t, n);
            }
            if !self.danger() {
                return Ok(());
            }
            scrambles += 1;
            if scrambles >= MAX_SCRAMBLES {
                return Err(Rejection::refused(
                    Code::CapHit,
                    "no safe soldier placement",
                ));
            }
        }
    }

    /// The backward walk from the exit: turns and steps, dropping karma on
    /// paths left behind, until `karma_total` is placed.
    fn walk_back(
        &mut self,
        params: &CubeParams,
        karma_total: usize,
        rng: &mut Rng,
    ) -> Result<(), Rejection> {
        let mut placed = 0;
        let mut steps = 0;
        while placed < karma_total {
            steps += 1;
            if steps > MAX_STEPS {
                return Err(Rejection::refused(
                    Code::CapHit,
                    format!("{placed} of {karma_total} karma placed in {MAX_STEPS} moves"),
                ));
            }
            if rng.chance(params.turn_share) {
                let (t, n) = random_turn(rng, self.monk);
                self.turn(t, n);
                if self.danger() {
                    self.turn(t, 4 - n);
                    continue;
                }
            } else {
                match self.step_back(params.karma_chance, rng) {
                    Some(dropped) => placed += usize::from(dropped),
                    None => continue,
                }
            }
            self.protect();
        }
        Ok(())
    }

    /// One step of the walk to a random neighbour on the monk's face, maybe
    /// dropping karma where he stood: whether he dropped it, or `None` when
    /// the step is not taken (a soldier or a protective cell there, or danger).
    fn step_back(&mut self, karma_chance: f64, rng: &mut Rng) -> Option<bool> {
        let (x, y) = (self.monk % 3, self.monk / 3);
        let mut near = Vec::new();
        if x > 0 {
            near.push(self.monk - 1);
        }
        if x < 2 {
            near.push(self.monk + 1);
        }
        if y > 0 {
            near.push(self.monk - 3);
        }
        if y < 2 {
            near.push(self.monk + 3);
        }
        let to = near[rng.index(near.len())];
        if self.cells[to] == Cell::Soldier || self.protective[to] {
            return None;
        }
        let (before_to, before_from) = (self.cells[to], self.cells[self.monk]);
        let from = self.monk;
        self.cells[to] = if before_to == Cell::Karma {
            Cell::Karma
        } else {
            Cell::Path
        };
        let drop = before_from == Cell::Path && rng.chance(karma_chance);
        if drop {
            self.cells[from] = Cell::Karma;
        }
        self.monk = to;
        if self.danger() {
            self.cells[to] = before_to;
            self.cells[from] = before_from;
            self.monk = from;
            return None;
        }
        Some(drop)
    }

    /// The monk goes to the start over paths, turning until one appears; karma
    /// on the start moves to a path cell off Top.
    fn go_to_start(&mut self, rng: &mut Rng) -> Result<(), Rejection> {
        let start = START.1 * 3 + START.0;
        let mut tries = 0;
        while region(&self.cells, self.monk) >> start & 1 == 0 {
            tries += 1;
            if tries > MAX_START_TURNS {
                return Err(Rejection::refused(Code::CapHit, "no path to the start"));
            }
            let (t, n) = random_turn(rng, self.monk);
            self.turn(t, n);
            if self.danger() {
                self.turn(t, 4 - n);
            }
        }
        self.monk = start;
        if self.cells[start] == Cell::Karma {
            let free: Vec<usize> = (9..54).filter(|&i| self.cells[i] == Cell::Path).collect();
            if free.is_empty() {
                return Err(Rejection::refused(super::reasons::KARMA_UNDER_START, ""));
            }
            self.cells[free[rng.index(free.len())]] = Cell::Karma;
            self.cells[start] = Cell::Path;
        }
        Ok(())
    }

    /// `turns` legal turns (none that endangers the monk).
    fn scramble(&mut self, turns: usize, rng: &mut Rng) -> Result<(), Rejection> {
        let mut done = 0;
        let mut tries = 0;
        while done < turns {
            tries += 1;
            if tries > turns * 20 {
                return Err(Rejection::refused(Code::CapHit, "no legal scramble"));
            }
            let (t, n) = random_turn(rng, self.monk);
            self.turn(t, n);
            if self.danger() {
                self.turn(t, 4 - n);
            } else {
                done += 1;
            }
        }
        Ok(())
    }
}
