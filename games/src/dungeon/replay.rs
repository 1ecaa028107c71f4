//! The dungeon rules, stated plainly, to replay a solution: no compiled
//! bitsets, only the level's doors, keys and switches.

use super::level::Level;
use crate::GameError;
use crate::search::Bfs;

/// What the player holds and where they are.
#[derive(Debug, Clone)]
struct Play {
    room: usize,
    held: Vec<bool>,
    on: Vec<bool>,
}

impl Play {
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
    level
        .check()
        .map_err(|message| GameError::Replay { index: 0, message })?;
    let mut play = Play {
        room: level.start,
        held: vec![false; level.keys.len()],
        on: vec![false; level.switches.len()],
    };
    let tokens: Vec<&str> = solution.split_whitespace().collect();
    let fail = |index: usize, message: String| Err(GameError::Replay { index, message });
    for (index, &token) in tokens.iter().enumerate() {
        let c = token.chars().next().unwrap_or(' ');
        if token == "exit" {
            if !play.can_walk_to(level, level.exit) {
                return fail(index, "the exit cannot be reached".into());
            }
            if index + 1 != tokens.len() {
                return fail(index, "moves after reaching the exit".into());
            }
            return Ok(());
        } else if token.len() == 1 && c.is_ascii_lowercase() {
            let k = usize::from(c as u8 - b'a');
            let Some(key) = level.keys.get(k) else {
                return fail(index, format!("there is no key {c}"));
            };
            if play.held[k] {
                return fail(index, format!("key {c} is already held"));
            }
            if !play.can_walk_to(level, key.room) {
                return fail(index, format!("key {c} cannot be reached"));
            }
            if key.chest.is_some_and(|chest| !play.held[chest]) {
                return fail(index, format!("the chest holding key {c} is locked"));
            }
            play.held[k] = true;
            play.room = key.room;
        } else if token.len() == 1 && c.is_ascii_digit() {
            let s = usize::from(c as u8 - b'0');
            let Some(switch) = level.switches.get(s) else {
                return fail(index, format!("there is no switch {c}"));
            };
            if !play.can_walk_to(level, switch.room) {
                return fail(index, format!("switch {c} cannot be reached"));
            }
            play.on[s] = !play.on[s];
            play.room = switch.room;
        } else {
            return fail(index, format!("`{token}` is not a key, a switch or `exit`"));
        }
    }
    fail(tokens.len(), "the solution does not reach the exit".into())
}
