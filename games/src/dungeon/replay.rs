//! The dungeon rules, stated plainly, to replay a solution: no compiled
//! bitsets, only the level's doors, keys and switches.

use super::level::Level;
use crate::GameError;
use crate::search::Bfs;

/// A dungeon in play: the player's room, the keys held, the switches on.
/// Two plays are the same position when these are.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Play {
    room: usize,
    held: Vec<bool>,
    on: Vec<bool>,
}

impl Play {
    /// The start: in the start room, nothing held, every switch off.
    pub fn start(level: &Level) -> Play {
        Play {
            room: level.start,
            held: vec![false; level.keys.len()],
            on: vec![false; level.switches.len()],
        }
    }

    /// Takes one action: a key's letter collects it, a switch's digit flips
    /// it, `exit` walks out. `Ok(true)` when the player is out; why not, when
    /// the action is not legal here (the play is then unchanged).
    pub fn act(&mut self, level: &Level, token: &str) -> Result<bool, String> {
        let c = token.chars().next().unwrap_or(' ');
        if token == "exit" {
            if !self.can_walk_to(level, level.exit) {
                return Err("the exit cannot be reached".into());
            }
            return Ok(true);
        } else if token.len() == 1 && c.is_ascii_lowercase() {
            let k = usize::from(c as u8 - b'a');
            let Some(key) = level.keys.get(k) else {
                return Err(format!("there is no key {c}"));
            };
            if self.held[k] {
                return Err(format!("key {c} is already held"));
            }
            if !self.can_walk_to(level, key.room) {
                return Err(format!("key {c} cannot be reached"));
            }
            if key.chest.is_some_and(|chest| !self.held[chest]) {
                return Err(format!("the chest holding key {c} is locked"));
            }
            self.held[k] = true;
            self.room = key.room;
        } else if token.len() == 1 && c.is_ascii_digit() {
            let s = usize::from(c as u8 - b'0');
            let Some(switch) = level.switches.get(s) else {
                return Err(format!("there is no switch {c}"));
            };
            if !self.can_walk_to(level, switch.room) {
                return Err(format!("switch {c} cannot be reached"));
            }
            self.on[s] = !self.on[s];
            self.room = switch.room;
        } else {
            return Err(format!("`{token}` is not a key, a switch or `exit`"));
        }
        Ok(false)
    }

    fn door_enabled(&self, level: &Level, d: usize) -> bool {
        let locks_open = level
            .keys
            .iter()
            .zip(&self.held)
            .all(|(k, &held)| held || !k.opens.contains(&d));
        let switches_right = level
            .switches
            .iter()
            .zip(&self.on)
            .all(|(s, &on)| (on || !s.on.contains(&d)) && (!on || !s.off.contains(&d)));
        locks_open && switches_right
    }

    /// Whether the player can walk from their room to `target`.
    fn can_walk_to(&self, level: &Level, target: usize) -> bool {
        let bfs = Bfs::new(level.rooms.len(), [self.room], |r| {
            level.doors.iter().enumerate().flat_map(move |(i, d)| {
                [d.a, d.b]
                    .into_iter()
                    .filter(move |&next| d.leads(r, next) && self.door_enabled(level, i))
            })
        });
        bfs.reached(target)
    }
}

/// Plays a solution (tokens separated by spaces: a key's letter collects it, a
/// switch's digit flips it, `exit` walks out) and checks that it ends by
/// reaching the exit.
pub fn replay(level: &Level, solution: &str) -> Result<(), GameError> {
    let tokens = solution.split_whitespace().count();
    match play(level, solution)? {
        (_, true) => Ok(()),
        _ => Err(GameError::NotWon {
            moves: tokens,
            message: "the solution does not reach the exit".into(),
        }),
    }
}

/// The dungeon as `moves` leave it, each legal (nothing after `exit`): the
/// player's room, the keys held and the switches on, above the level's
/// text; and whether the player is out.
pub fn play(level: &Level, moves: &str) -> Result<(Play, bool), GameError> {
    level.check().map_err(GameError::Level)?;
    let mut play = Play::start(level);
    let mut out = false;
    for (index, token) in moves.split_whitespace().enumerate() {
        let fail = |message: String| GameError::Replay { index, message };
        if out {
            return Err(fail("moves after reaching the exit".into()));
        }
        out = play.act(level, token).map_err(fail)?;
    }
    Ok((play, out))
}

impl Play {
    /// The position in words: the room, the keys held, the switches on.
    pub fn describe(&self) -> String {
        let letters = |flags: &[bool], first: u8| -> String {
            let named: Vec<String> = flags
                .iter()
                .enumerate()
                .filter(|(_, f)| **f)
                .map(|(i, _)| char::from(first + i as u8).to_string())
                .collect();
            if named.is_empty() {
                "none".into()
            } else {
                named.join(" ")
            }
        };
        format!(
            "in room {}; keys held: {}; switches on: {}",
            self.room,
            letters(&self.held, b'a'),
            letters(&self.on, b'0')
        )
    }
}
