//! Solution replay under the literal rules: every movable object steps one cell
//! at a time, all together, until none can move. This is a second, independent
//! implementation of the rules (the solver uses the compiled [`super::rules`]),
//! so replaying every accepted level cross-checks the two.

use super::level::{Anteater, Dir, Fruit, Level, Obstacle, Pos, Terrain};
use crate::GameError;

#[derive(Clone, Copy)]
struct Object {
    at: Pos,
    /// `Some(colour)` for a fruit, `None` for an obstacle.
    colour: Option<u8>,
}

/// Plays `solution` (letters U R D L) on `level`; Ok when the last move wins.
pub fn replay(level: &Level, solution: &str) -> Result<(), GameError> {
    match fruits_left(&objects_after(level, solution)?) {
        0 => Ok(()),
        n => Err(GameError::NotWon {
            moves: solution.chars().count(),
            message: format!("{n} fruits are left after the last move"),
        }),
    }
}

/// Plays `moves` on `level` and returns the level as the last move left it.
/// Every move must change the board and none may lose.
pub fn play(level: &Level, moves: &str) -> Result<Level, GameError> {
    let objects = objects_after(level, moves)?;
    let mut after = level.clone();
    let mut obstacles = level.obstacles.iter();
    after.fruits.clear();
    after.obstacles.clear();
    for o in objects {
        match o.colour {
            Some(colour) => after.fruits.push(Fruit { colour, at: o.at }),
            None => {
                if let Some(&ob) = obstacles.next() {
                    after.obstacles.push(Obstacle { at: o.at, ..ob });
                }
            }
        }
    }
    Ok(after)
}

/// The movable objects after `moves`, under [`play`]'s rules.
fn objects_after(level: &Level, moves: &str) -> Result<Vec<Object>, GameError> {
    let mut objects: Vec<Object> = level
        .fruits
        .iter()
        .map(|f| Object {
            at: f.at,
            colour: Some(f.colour),
        })
        .chain(level.obstacles.iter().map(|o| Object {
            at: o.at,
            colour: None,
        }))
        .collect();
    let fail = |index: usize, message: String| GameError::Replay { index, message };
    let mut scratch = Scratch::default();
    let cells = Cells::of(level);
    for (index, letter) in moves.chars().enumerate() {
        if fruits_left(&objects) == 0 {
            return Err(fail(index, "the level is already won".into()));
        }
        let dir = Dir::from_letter(letter)
            .ok_or_else(|| fail(index, format!("`{letter}` is not one of U R D L")))?;
        match slide(level, &cells, &mut objects, dir, &mut scratch) {
            Err(why) => return Err(fail(index, why)),
            Ok(false) => {
                return Err(fail(
                    index,
                    format!("tilting {} changes nothing", dir.letter()),
                ));
            }
            Ok(true) => {}
        }
        settle(level, &cells, &mut objects, &mut scratch).map_err(|why| fail(index, why))?;
    }
    Ok(objects)
}

fn fruits_left(objects: &[Object]) -> usize {
    objects.iter().filter(|o| o.colour.is_some()).count()
}

/// What the rules ask of a cell, read from the level once per replay.
struct Cells {
    width: usize,
    /// Per cell: the `WALL`, `PUDDLE`, `FIXED`, `HEDGEHOG` bits, and a gate's
    /// ban on leaving it in direction `d` as bit `FORBIDS << d`.
    flags: Vec<u8>,
}

const WALL: u8 = 1;
const PUDDLE: u8 = 2;
/// A hedgehog or an anteater: nothing moves into it.
const FIXED: u8 = 4;
const HEDGEHOG: u8 = 8;
const FORBIDS: u8 = 16;

impl Cells {
    fn of(level: &Level) -> Cells {
        let (width, height) = (usize::from(level.width), usize::from(level.height));
        let mut flags = vec![0; width * height];
        let index = |p: Pos| usize::from(p.y) * width + usize::from(p.x);
        for y in 0..level.height {
            for x in 0..level.width {
                flags[index(Pos { x, y })] = match level.terrain_at(Pos { x, y }) {
                    Terrain::Wall => WALL,
                    Terrain::Puddle => PUDDLE,
                    Terrain::Floor => 0,
                };
            }
        }
        let mut mark = |p: Pos, f: u8| {
            if p.x < level.width && p.y < level.height {
                flags[index(p)] |= f;
            }
        };
        for &h in &level.hedgehogs {
            mark(h, FIXED | HEDGEHOG);
        }
        for a in &level.anteaters {
            mark(a.at, FIXED);
        }
        // A gate at q pointing to p forbids p -> q, the way back from p
        // (`Level::gate_forbids`).
        for g in &level.gates {
            if let Some(p) = level.step(g.at, g.dir) {
                let back = Dir::ALL[(g.dir.index() + 2) % 4];
                mark(p, FORBIDS << back.index());
            }
        }
        Cells { width, flags }
    }

    fn index(&self, p: Pos) -> usize {
        usize::from(p.y) * self.width + usize::from(p.x)
    }

    /// The flags of `p` (inside the grid).
    fn at(&self, p: Pos) -> u8 {
        self.flags[self.index(p)]
    }

    fn forbids(&self, p: Pos, d: Dir) -> bool {
        self.at(p) & (FORBIDS << d.index()) != 0
    }
}

/// Buffers a replay reuses from step to step (a replay runs for every
/// accepted level a coordinator receives).
#[derive(Default)]
struct Scratch {
    target: Vec<Option<Pos>>,
    blocked: Vec<bool>,
    ahead: Vec<Option<usize>>,
    occupant: Vec<usize>,
    mouths: Vec<Pos>,
    snapshot: Vec<Object>,
}

/// One tilt, step by step. Ok(moved) or Err(why the level is lost).
fn slide(
    level: &Level,
    cells: &Cells,
    objects: &mut [Object],
    dir: Dir,
    scratch: &mut Scratch,
) -> Result<bool, String> {
    let Scratch {
        target,
        blocked,
        ahead,
        occupant,
        ..
    } = scratch;
    let mut moved = false;
    loop {
        // Where each object would step, ignoring other objects; a fruit
        // stepping onto a hedgehog loses the level.
        target.clear();
        for o in objects.iter() {
            let Some(q) = level.step(o.at, dir) else {
                target.push(None);
                continue;
            };
            let (flags, gated) = (cells.at(q), cells.forbids(o.at, dir));
            if o.colour.is_some() && flags & HEDGEHOG != 0 && !gated {
                return Err(format!(
                    "a fruit at ({},{}) runs into a hedgehog",
                    o.at.x, o.at.y
                ));
            }
            target.push((flags & (WALL | FIXED) == 0 && !gated).then_some(q));
        }
        // An object is blocked if it cannot step or the object ahead is blocked.
        blocked.clear();
        blocked.extend(target.iter().map(Option::is_none));
        // The object each would step into (objects stand still meanwhile),
        // read from a grid of the objects' places (1 + index, 0 for none).
        occupant.clear();
        occupant.resize(cells.flags.len(), 0);
        for (i, o) in objects.iter().enumerate() {
            occupant[cells.index(o.at)] = i + 1;
        }
        ahead.clear();
        ahead.extend(
            target
                .iter()
                .map(|t| t.and_then(|q| occupant[cells.index(q)].checked_sub(1))),
        );
        // Objects ahead are further along `dir`, so each chain ends: an
        // object is blocked when its chain reaches a blocked object before
        // one with nothing ahead.
        for i in 0..objects.len() {
            let mut k = i;
            while let (false, Some(next)) = (blocked[k], ahead[k]) {
                k = next;
            }
            blocked[i] = blocked[k];
        }
        if blocked.iter().all(|&b| b) {
            return Ok(moved);
        }
        for (i, o) in objects.iter_mut().enumerate() {
            if let (false, Some(q)) = (blocked[i], target[i]) {
                o.at = q;
                if o.colour.is_some() && cells.at(q) & PUDDLE != 0 {
                    return Err(format!("a fruit enters the puddle at ({},{})", q.x, q.y));
                }
            }
        }
        moved = true;
    }
}

/// Anteater `a` pulls the first object in its gaze to its mouth if it is a
/// fruit not already at a mouth: whether it pulled one. A fruit pulled across
/// a puddle is an error of the rules' model.
fn pull(
    level: &Level,
    cells: &Cells,
    objects: &mut [Object],
    mouths: &[Pos],
    a: &Anteater,
) -> Result<bool, String> {
    let Some(front) = level.step(a.at, a.facing) else {
        return Ok(false);
    };
    let mut crossed_puddle = false;
    let mut p = a.at;
    while let Some(q) = level.step(p, a.facing) {
        if cells.at(q) & (WALL | FIXED) != 0 {
            return Ok(false);
        }
        if let Some(i) = objects.iter().position(|o| o.at == q) {
            if objects[i].colour.is_none() || q == front || mouths.contains(&q) {
                return Ok(false);
            }
            if crossed_puddle {
                return Err(format!(
                    "an anteater pulls a fruit across a puddle from ({},{})",
                    q.x, q.y
                ));
            }
            objects[i].at = front;
            return Ok(true);
        }
        crossed_puddle |= cells.at(q) & PUDDLE != 0;
        p = q;
    }
    Ok(false)
}

/// Anteaters pull, pairs meet, until nothing changes.
fn settle(
    level: &Level,
    cells: &Cells,
    objects: &mut Vec<Object>,
    scratch: &mut Scratch,
) -> Result<(), String> {
    let Scratch {
        mouths, snapshot, ..
    } = scratch;
    mouths.clear();
    mouths.extend(
        level
            .anteaters
            .iter()
            .filter_map(|a| level.step(a.at, a.facing)),
    );
    loop {
        let mut pulled = true;
        while pulled {
            pulled = false;
            for a in &level.anteaters {
                pulled |= pull(level, cells, objects, mouths, a)?;
            }
        }
        let before = objects.len();
        snapshot.clear();
        snapshot.extend_from_slice(objects);
        objects.retain(|o| {
            let Some(c) = o.colour else { return true };
            !snapshot.iter().any(|m| {
                m.colour == Some(c)
                    && m.at != o.at
                    && m.at.x.abs_diff(o.at.x) + m.at.y.abs_diff(o.at.y) == 1
            })
        });
        if objects.len() == before {
            return Ok(());
        }
    }
}
