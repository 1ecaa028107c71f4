//! The level description (rooms, doors, buttons), its feature bits, and the
//! rules as a graph over states (room, active colour).
//!
//! Rules: between two rooms at most one door of each kind
//! (unlocked, or locked with one of `b` colours); at most one button per colour
//! per room. The player starts in room 0 with no colour active. Pressing a
//! button makes its colour the only active one (pressing the active colour does
//! nothing, so it is not a move). A coloured door is open only while its colour
//! is active; unlocked doors are always open. Win: be in room 0 with the
//! required colour active.

use serde::{Deserialize, Serialize};

use crate::GameError;
use crate::search::Bfs;

/// Most rooms a level may have.
pub const MAX_ROOMS: usize = 12;

/// A level description, with its tile grid once laid out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Level {
    /// Rooms (n); room 0 holds the start and the exit.
    pub rooms: usize,
    /// Button colours (b), numbered 1..=b.
    pub colours: usize,
    /// The colour the exit needs.
    pub required: u8,
    /// Doors as (room, room, colour) with the lower room first and colour 0
    /// for unlocked; sorted.
    pub doors: Vec<(u8, u8, u8)>,
    /// Buttons as (room, colour); sorted.
    pub buttons: Vec<(u8, u8)>,
    /// The tile grid, one string a row (empty until laid out).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub grid: Vec<String>,
}

/// The toggleable features of an (n, b) level as bits: doors first (pair by
/// pair in order (0,1), (0,2), ..., kinds unlocked then colours 1..=b), then
/// buttons (room by room, colours 1..=b).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Features {
    /// Rooms.
    pub rooms: usize,
    /// Colours.
    pub colours: usize,
}

impl Features {
    /// M = n(n-1)(b+1)/2 + b n.
    pub fn count(self) -> usize {
        self.door_count() + self.colours * self.rooms
    }

    fn door_count(self) -> usize {
        self.rooms * (self.rooms - 1) / 2 * (self.colours + 1)
    }

    /// The level with the features in `bits` (no grid).
    pub fn level(self, bits: u64, required: u8) -> Level {
        let (n, b) = (self.rooms, self.colours);
        let mut doors = Vec::new();
        let mut index = 0;
        for i in 0..n {
            for j in i + 1..n {
                for k in 0..=b {
                    if bits >> index & 1 == 1 {
                        doors.push((i as u8, j as u8, k as u8));
                    }
                    index += 1;
                }
            }
        }
        let mut buttons = Vec::new();
        for r in 0..n {
            for c in 1..=b {
                if bits >> index & 1 == 1 {
                    buttons.push((r as u8, c as u8));
                }
                index += 1;
            }
        }
        Level {
            rooms: n,
            colours: b,
            required,
            doors,
            buttons,
            grid: Vec::new(),
        }
    }

    /// The feature bits of `level` (its rooms and colours must be these).
    pub fn bits(self, level: &Level) -> u64 {
        let (n, b) = (self.rooms, self.colours);
        let pair = |i: usize, j: usize| i * (2 * n - i - 1) / 2 + (j - i - 1);
        let doors = level
            .doors
            .iter()
            .map(|&(i, j, k)| pair(i as usize, j as usize) * (b + 1) + k as usize);
        let base = self.door_count();
        let buttons = level
            .buttons
            .iter()
            .map(|&(r, c)| base + r as usize * b + c as usize - 1);
        doors.chain(buttons).fold(0u64, |bits, i| bits | 1 << i)
    }
}

/// One move: walk through an open door into a room, or press a button.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Move {
    /// Through door `door` (index into [`Level::doors`]) into room `to`.
    Walk {
        /// The door.
        door: u8,
        /// The room entered.
        to: u8,
    },
    /// Press the button of this colour in the current room.
    Press(u8),
}

/// The rules compiled: for every state, its moves and where they lead.
#[derive(Debug, Clone)]
pub struct Rules {
    /// Colours + 1 (states per room).
    width: usize,
    required: usize,
    /// Per state: (move, next state).
    pub moves: Vec<Vec<(Move, usize)>>,
}

impl Rules {
    /// Compiles the level's rules.
    pub fn new(level: &Level) -> Rules {
        let width = level.colours + 1;
        let states = level.rooms * width;
        let mut moves = vec![Vec::new(); states];
        for room in 0..level.rooms {
            for active in 0..width {
                let s = room * width + active;
                for (d, &(a, b, k)) in level.doors.iter().enumerate() {
                    let other = match (a as usize == room, b as usize == room) {
                        (true, _) => b,
                        (_, true) => a,
                        _ => continue,
                    };
                    if k == 0 || k as usize == active {
                        let to = other as usize * width + active;
                        moves[s].push((
                            Move::Walk {
                                door: d as u8,
                                to: other,
                            },
                            to,
                        ));
                    }
                }
                for &(r, c) in &level.buttons {
                    if r as usize == room && c as usize != active {
                        moves[s].push((Move::Press(c), room * width + c as usize));
                    }
                }
            }
        }
        Rules {
            width,
            required: level.required as usize,
            moves,
        }
    }

    /// The start state: room 0, no colour.
    pub const START: usize = 0;

    /// Whether `state` wins.
    pub fn wins(&self, state: usize) -> bool {
        state == self.required
    }

    /// The room of a state.
    pub fn room(&self, state: usize) -> usize {
        state / self.width
    }

    /// The active colour of a state (0 = none).
    pub fn colour(&self, state: usize) -> usize {
        state % self.width
    }

    /// States reachable from the start.
    pub fn reachable(&self) -> Vec<bool> {
        let bfs = self.search_from_start();
        (0..self.moves.len()).map(|s| bfs.reached(s)).collect()
    }

    /// Fewest moves from each state to a win (`u32::MAX`: none).
    pub fn distance_to_win(&self) -> Vec<u32> {
        let n = self.moves.len();
        let mut back = vec![Vec::new(); n];
        for (s, moves) in self.moves.iter().enumerate() {
            for &(_, t) in moves {
                back[t].push(s);
            }
        }
        let bfs = Bfs::new(n, [self.required], |t| back[t].iter().copied());
        (0..n)
            .map(|s| bfs.distance(s).unwrap_or(u32::MAX))
            .collect()
    }

    /// A shortest solution (breadth first), if any.
    pub fn shortest(&self) -> Option<Vec<(Move, usize)>> {
        let bfs = self.search_from_start();
        let won = bfs.order().find(|&s| self.wins(s))?;
        let path = bfs.path_to(won)?;
        Some(
            path.windows(2)
                .map(|step| {
                    let (from, to) = (step[0], step[1]);
                    let m = self.moves[from]
                        .iter()
                        .find(|&&(_, t)| t == to)
                        .map(|&(m, _)| m)
                        .expect("a search step is a move");
                    (m, to)
                })
                .collect(),
        )
    }

    fn search_from_start(&self) -> Bfs {
        Bfs::new(self.moves.len(), [Self::START], |s| {
            self.moves[s].iter().map(|&(_, t)| t)
        })
    }

    /// The solutions as the source enumerates them (its Algorithm 2): every path
    /// of moves from the start to a win that visits no state twice, stopping
    /// at `cap` solutions. Parallel doors make distinct solutions.
    pub fn solutions(&self, cap: usize) -> Vec<Vec<(Move, usize)>> {
        let mut found = Vec::new();
        let mut on_path = vec![false; self.moves.len()];
        let mut path = Vec::new();
        self.extend(Self::START, cap, &mut on_path, &mut path, &mut found);
        found
    }

    fn extend(
        &self,
        state: usize,
        cap: usize,
        on_path: &mut [bool],
        path: &mut Vec<(Move, usize)>,
        found: &mut Vec<Vec<(Move, usize)>>,
    ) {
        if on_path[state] || found.len() >= cap {
            return;
        }
        if self.wins(state) {
            found.push(path.clone());
            return;
        }
        on_path[state] = true;
        for &(m, t) in &self.moves[state] {
            path.push((m, t));
            self.extend(t, cap, on_path, path, found);
            path.pop();
        }
        on_path[state] = false;
    }
}

/// Every ordering of `items`.
fn orderings(items: &[u8]) -> Vec<Vec<u8>> {
    if items.is_empty() {
        return vec![Vec::new()];
    }
    let mut all = Vec::new();
    for (i, &first) in items.iter().enumerate() {
        let mut rest = items.to_vec();
        rest.remove(i);
        for mut tail in orderings(&rest) {
            tail.insert(0, first);
            all.push(tail);
        }
    }
    all
}

/// The smallest feature bits of the level over every renaming of rooms
/// 1..n and of the colours other than the required one: equal for two levels
/// exactly when one is the other with rooms and colours renamed.
pub fn structure_key(level: &Level) -> u64 {
    let features = Features {
        rooms: level.rooms,
        colours: level.colours,
    };
    let others: Vec<u8> = (1..level.rooms as u8).collect();
    let colours: Vec<u8> = (1..=level.colours as u8)
        .filter(|&c| c != level.required)
        .collect();
    let colour_orders = orderings(&colours);
    let mut best = u64::MAX;
    for rooms in orderings(&others) {
        let room = |r: u8| if r == 0 { 0 } else { rooms[r as usize - 1] };
        for order in &colour_orders {
            let colour = |c: u8| match colours.iter().position(|&k| k == c) {
                Some(i) => order[i],
                None => c,
            };
            let mut renamed = Level {
                doors: level
                    .doors
                    .iter()
                    .map(|&(a, b, k)| {
                        let (a, b) = (room(a), room(b));
                        (a.min(b), a.max(b), if k == 0 { 0 } else { colour(k) })
                    })
                    .collect(),
                buttons: level
                    .buttons
                    .iter()
                    .map(|&(r, c)| (room(r), colour(c)))
                    .collect(),
                grid: Vec::new(),
                ..level.clone()
            };
            renamed.doors.sort_unstable();
            renamed.buttons.sort_unstable();
            best = best.min(features.bits(&renamed));
        }
    }
    best
}

/// The source's encoding of a solution: `1` per walk, `0` per press.
pub fn encode(solution: &[(Move, usize)]) -> String {
    solution
        .iter()
        .map(|(m, _)| match m {
            Move::Walk { .. } => '1',
            Move::Press(_) => '0',
        })
        .collect()
}

/// The source's uniqueness key: the solutions' encodings sorted by length, then
/// lexicographically.
pub fn uniqueness_key(solutions: &[Vec<(Move, usize)>]) -> Vec<String> {
    let mut codes: Vec<String> = solutions.iter().map(|s| encode(s)).collect();
    codes.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
    codes
}

/// A solution's text: `R<room>` walks into a room, `B<colour>` presses.
pub fn notation(solution: &[(Move, usize)]) -> String {
    solution
        .iter()
        .map(|(m, _)| match m {
            Move::Walk { to, .. } => format!("R{to}"),
            Move::Press(c) => format!("B{c}"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

impl Level {
    /// Whether every door and button names rooms and colours the level has.
    pub fn check(&self) -> Result<(), String> {
        let room = |r: u8| (r as usize) < self.rooms;
        let colour = |c: u8| (c as usize) <= self.colours;
        if let Some(d) = self
            .doors
            .iter()
            .find(|&&(a, b, k)| !room(a) || !room(b) || !colour(k))
        {
            return Err(format!(
                "door {d:?} names a room or colour beyond rooms {} colours {}",
                self.rooms, self.colours
            ));
        }
        if let Some(b) = self
            .buttons
            .iter()
            .find(|&&(r, c)| !room(r) || c == 0 || !colour(c))
        {
            return Err(format!(
                "button {b:?} names a room or colour beyond rooms {} colours {}",
                self.rooms, self.colours
            ));
        }
        Ok(())
    }

    /// The adjacency masks of the simple graph under the doors.
    pub fn adjacency(&self) -> Vec<u32> {
        let mut adj = vec![0u32; self.rooms];
        for &(a, b, _) in &self.doors {
            adj[a as usize] |= 1 << b;
            adj[b as usize] |= 1 << a;
        }
        adj
    }

    /// Rooms connected to room 0 through doors, locks ignored.
    pub fn connected(&self) -> u32 {
        let adj = self.adjacency();
        let mut seen = 1u32;
        loop {
            let grown = (0..self.rooms)
                .filter(|&r| seen >> r & 1 == 1)
                .fold(seen, |s, r| s | adj[r]);
            if grown == seen {
                return seen;
            }
            seen = grown;
        }
    }

    /// Plays a solution in [`notation`] under the rules: it must end in a win.
    pub fn replay(&self, solution: &str) -> Result<(), GameError> {
        match self.play(solution)? {
            (_, true) => Ok(()),
            _ => Err(GameError::NotWon {
                moves: solution.split_whitespace().count(),
                message: "the player is not out: not in room 0 with the required colour".into(),
            }),
        }
    }

    /// Plays `moves` (each legal): the player's room and colour in words,
    /// and whether the player is out.
    pub fn play(&self, moves: &str) -> Result<(String, bool), GameError> {
        let rules = Rules::new(self);
        let mut state = Rules::START;
        for (index, token) in moves.split_whitespace().enumerate() {
            let fail = |message: String| GameError::Replay { index, message };
            let (kind, number) = token.split_at(1);
            let number: u8 = number
                .parse()
                .map_err(|_| fail(format!("`{token}` is not R<room> or B<colour>")))?;
            let next = rules.moves[state].iter().find(|(m, _)| match (kind, m) {
                ("R", Move::Walk { to, .. }) => *to == number,
                ("B", Move::Press(c)) => *c == number,
                _ => false,
            });
            state = match next {
                Some(&(_, t)) => t,
                None => {
                    return Err(fail(format!(
                        "`{token}` is not possible in room {} with colour {}",
                        rules.room(state),
                        rules.colour(state)
                    )));
                }
            };
        }
        let said = format!(
            "in room {} with colour {}",
            rules.room(state),
            rules.colour(state)
        );
        Ok((said, rules.wins(state)))
    }
}
