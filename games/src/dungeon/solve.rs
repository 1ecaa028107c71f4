//! The dungeon verifier: a search over puzzle states.
//!
//! A puzzle state is (configuration, where the player is). The configuration
//! holds one bit per key (collected) and per switch (on); it decides which
//! doors are enabled. The player can walk anywhere reachable, so the position
//! only matters up to strongly connected components of the enabled rooms
//! graph: a state keeps the lowest room of the player's component.
//!
//! From a state the player can
//! - walk into another component they can reach (a drop they cannot climb
//!   back): free, but it changes the state, so a trap is a state too;
//! - act on a reachable element: collect a key (if its chest's key is held),
//!   or flip a switch; the player is then in the element's room: one action;
//! - reach the exit room: the goal, one action.
//!
//! The search builds every state reachable from the start, then finds the
//! fewest actions to the goal (a 0-1 breadth-first search: walking is free)
//! and, by a reverse search from the states that see the exit, every state
//! from which the goal is lost: the dead ends.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use super::level::{Level, MAX_ROOMS, Passage, key_name, switch_name};
use crate::{Budget, Rejection};

/// A key or a switch, as the search sees it (config bit = its index).
#[derive(Debug, Clone, Copy)]
struct Element {
    room: usize,
    /// For a key: the config bit of its chest's key; `None` for a switch or a
    /// key lying free.
    chest: Option<usize>,
    is_key: bool,
}

/// The rules compiled for search: directed edges guarded by config bits.
#[derive(Debug, Clone)]
pub(crate) struct Rules {
    rooms: usize,
    /// (from, to, door) for each way a door can be passed.
    edges: Vec<(usize, usize, usize)>,
    /// Per door: bits that must be set for it to be enabled.
    need_set: Vec<u64>,
    /// Per door: bits that must be clear.
    need_clear: Vec<u64>,
    elements: Vec<Element>,
    start: usize,
    exit: usize,
}

/// Reachability under one configuration.
#[derive(Debug, Clone)]
pub(crate) struct View {
    /// Rooms reachable from each room (itself included).
    pub reach: [u64; MAX_ROOMS],
    /// The lowest room of each room's strongly connected component.
    pub rep: [u8; MAX_ROOMS],
}

impl Rules {
    /// Compiles a level (which must pass [`Level::check`]).
    pub(crate) fn new(level: &Level) -> Rules {
        let keys = level.keys.len();
        let mut need_set = vec![0u64; level.doors.len()];
        let mut need_clear = vec![0u64; level.doors.len()];
        for (k, key) in level.keys.iter().enumerate() {
            for &d in &key.opens {
                need_set[d] |= 1 << k;
            }
        }
        for (s, switch) in level.switches.iter().enumerate() {
            let bit = 1u64 << (keys + s);
            for &d in &switch.on {
                need_set[d] |= bit;
            }
            for &d in &switch.off {
                need_clear[d] |= bit;
            }
        }
        let mut edges = Vec::new();
        for (i, d) in level.doors.iter().enumerate() {
            if d.passage != Passage::BToA {
                edges.push((d.a, d.b, i));
            }
            if d.passage != Passage::AToB {
                edges.push((d.b, d.a, i));
            }
        }
        let elements = level
            .keys
            .iter()
            .map(|k| Element {
                room: k.room,
                chest: k.chest,
                is_key: true,
            })
            .chain(level.switches.iter().map(|s| Element {
                room: s.room,
                chest: None,
                is_key: false,
            }))
            .collect();
        Rules {
            rooms: level.rooms.len(),
            edges,
            need_set,
            need_clear,
            elements,
            start: level.start,
            exit: level.exit,
        }
    }

    /// The element index of a key or switch action.
    fn element_of(&self, action: Action) -> Option<usize> {
        let keys = self.elements.iter().filter(|e| e.is_key).count();
        match action {
            Action::Key(k) => Some(k),
            Action::Switch(s) => Some(keys + s),
            Action::Exit => None,
        }
    }

    /// The actions open to a player who reaches the rooms of `reach` under
    /// `config`: each element acted on, with the configuration it leads to
    /// (a key not held whose chest is open, or any switch).
    pub(crate) fn actions(
        &self,
        config: u64,
        reach: u64,
    ) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.elements
            .iter()
            .enumerate()
            .filter(move |(_, e)| reach >> e.room & 1 == 1)
            .filter_map(move |(i, e)| {
                if !e.is_key {
                    return Some((i, config ^ 1 << i));
                }
                let held = config >> i & 1 == 1;
                let chest_open = e.chest.is_none_or(|c| config >> c & 1 == 1);
                (!held && chest_open).then_some((i, config | 1 << i))
            })
    }

    /// The room of element `i` (a key, then the switches).
    pub(crate) fn element_room(&self, i: usize) -> usize {
        self.elements[i].room
    }

    /// The start room and the exit room.
    pub(crate) fn ends(&self) -> (usize, usize) {
        (self.start, self.exit)
    }

    /// The configuration bits of the keys.
    pub(crate) fn key_bits(&self) -> u64 {
        let keys = self.elements.iter().filter(|e| e.is_key).count();
        (1u64 << keys) - 1
    }

    /// Whether door `d` is enabled under `config`.
    pub(crate) fn enabled(&self, config: u64, d: usize) -> bool {
        config & self.need_set[d] == self.need_set[d] && config & self.need_clear[d] == 0
    }

    /// Reachability under `config`, with the doors `without` disabled too.
    pub(crate) fn view(&self, config: u64, without: &[usize]) -> View {
        let n = self.rooms;
        let mut reach = [0u64; MAX_ROOMS];
        for (r, bits) in reach.iter_mut().enumerate().take(n) {
            *bits = 1 << r;
        }
        for &(from, to, d) in &self.edges {
            if self.enabled(config, d) && !without.contains(&d) {
                reach[from] |= 1 << to;
            }
        }
        // Transitive closure, one pivot room at a time (branch-free).
        for k in 0..n {
            let through = reach[k];
            for r in reach.iter_mut().take(n) {
                *r |= through & 0u64.wrapping_sub(*r >> k & 1);
            }
        }
        // A room's component: the rooms it reaches that reach it back.
        let mut back = [0u64; MAX_ROOMS];
        for (q, &bits) in reach.iter().enumerate().take(n) {
            let mut rest = bits;
            while rest != 0 {
                let r = rest.trailing_zeros() as usize;
                back[r] |= 1 << q;
                rest &= rest - 1;
            }
        }
        let mut rep = [0u8; MAX_ROOMS];
        for r in 0..n {
            rep[r] = (reach[r] & back[r]).trailing_zeros() as u8;
        }
        View { reach, rep }
    }
}

/// One step of a solution: an element acted on, or the exit reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Collect key `i`.
    Key(usize),
    /// Flip switch `i`.
    Switch(usize),
    /// Reach the exit.
    Exit,
}

impl Action {
    /// The action's token in a solution string.
    pub fn token(self) -> String {
        match self {
            Action::Key(i) => key_name(i).to_string(),
            Action::Switch(i) => switch_name(i).to_string(),
            Action::Exit => "exit".into(),
        }
    }
}

/// What the verifier found.
#[derive(Debug, Clone, PartialEq)]
pub struct Analysis {
    /// One shortest solution, ending with [`Action::Exit`].
    pub solution: Vec<Action>,
    /// Before each action of `solution`: the configuration and the room the
    /// player stands in (the start, then the room of the last element used).
    pub path: Vec<(u64, usize)>,
    /// Puzzle states reachable from the start.
    pub states: usize,
    /// Of those, the states from which the exit can no longer be reached.
    pub dead_states: usize,
}

impl Analysis {
    /// The fewest actions to the goal, the goal action included.
    pub fn complexity(&self) -> u32 {
        self.solution.len() as u32
    }

    /// Switch flips on the solution's way.
    pub fn switch_flips(&self) -> u32 {
        self.solution
            .iter()
            .filter(|s| matches!(s, Action::Switch(_)))
            .count() as u32
    }
}

/// Builds every puzzle state reachable from the start and analyses the graph.
///
/// `Err(Unsolvable)` when the goal cannot be reached, `Err(Rejected)` when the
/// node budget runs out, `Err(Timeout)` on the watchdog. Dead ends are reported
/// in the analysis, not refused here.
pub fn analyse(level: &Level, budget: &Budget) -> Result<Analysis, Rejection> {
    let rules = Rules::new(level);
    // One reachability view per configuration met, computed once.
    let mut views: Vec<View> = Vec::new();
    let mut view_ids: FxHashMap<u64, usize> = FxHashMap::default();
    let mut view_of = |config: u64, views: &mut Vec<View>| -> usize {
        *view_ids.entry(config).or_insert_with(|| {
            views.push(rules.view(config, &[]));
            views.len() - 1
        })
    };
    let start_view = view_of(0, &mut views);
    let mut states: Vec<(u64, usize)> = vec![(0, usize::from(views[start_view].rep[rules.start]))];
    let mut index: FxHashMap<(u64, usize), u32> = FxHashMap::default();
    index.insert(states[0], 0);
    // Successors of state s: succ[first[s]..first[s + 1]], each (state,
    // action or None for a walk).
    let mut succ: Vec<(u32, Option<Action>)> = Vec::new();
    let mut first: Vec<usize> = vec![0];
    let mut sees_exit: Vec<bool> = Vec::new();
    let keys = rules.elements.iter().filter(|e| e.is_key).count();
    let mut head = 0;
    while head < states.len() {
        if head as u64 >= budget.max_nodes {
            return Err(Rejection::out_of_nodes(budget.max_nodes));
        }
        if head % 256 == 255 && budget.expired() {
            return Err(Rejection::Timeout);
        }
        let (config, room) = states[head];
        let view = view_of(config, &mut views);
        let reach = views[view].reach[room];
        sees_exit.push(reach >> rules.exit & 1 == 1);
        let out = &mut succ;
        let mut add = |state: (u64, usize), action: Option<Action>, out: &mut Vec<_>| {
            let id = *index.entry(state).or_insert_with(|| {
                states.push(state);
                (states.len() - 1) as u32
            });
            out.push((id, action));
        };
        for q in 0..rules.rooms {
            if reach >> q & 1 == 1 && usize::from(views[view].rep[q]) == q && q != room {
                add((config, q), None, out);
            }
        }
        for (i, next) in rules.actions(config, reach) {
            let next_view = view_of(next, &mut views);
            let rep = usize::from(views[next_view].rep[rules.elements[i].room]);
            let action = if i < keys {
                Action::Key(i)
            } else {
                Action::Switch(i - keys)
            };
            add((next, rep), Some(action), out);
        }
        first.push(succ.len());
        head += 1;
    }

    // Fewest actions: walks cost nothing, actions one.
    let n = states.len();
    let mut dist = vec![u32::MAX; n];
    let mut parent: Vec<(u32, Option<Action>)> = vec![(u32::MAX, None); n];
    let mut deque = VecDeque::from([0u32]);
    dist[0] = 0;
    while let Some(s) = deque.pop_front() {
        for &(t, action) in &succ[first[s as usize]..first[s as usize + 1]] {
            let cost = dist[s as usize] + u32::from(action.is_some());
            if cost < dist[t as usize] {
                dist[t as usize] = cost;
                parent[t as usize] = (s, action);
                if action.is_some() {
                    deque.push_back(t);
                } else {
                    deque.push_front(t);
                }
            }
        }
    }
    let goal = (0..n)
        .filter(|&s| sees_exit[s] && dist[s] != u32::MAX)
        .min_by_key(|&s| (dist[s], s))
        .ok_or(Rejection::Unsolvable)?;
    let mut solution = vec![Action::Exit];
    let mut path = vec![states[goal]];
    let mut at = goal;
    while at != 0 {
        let (p, action) = parent[at];
        if let Some(action) = action {
            solution.push(action);
            path.push(states[p as usize]);
        }
        at = p as usize;
    }
    solution.reverse();
    path.reverse();
    // Where the player really stands before each action: the start, then the
    // room of the element last acted on (a state keeps only its component).
    let mut at_room = rules.start;
    for (step, action) in path.iter_mut().zip(&solution) {
        step.1 = at_room;
        if let Some(e) = rules.element_of(*action) {
            at_room = rules.elements[e].room;
        }
    }

    // Dead ends: states that cannot reach a state seeing the exit.
    let mut alive = sees_exit.clone();
    crate::search::mark_reverse_reachable(&mut alive, |s| {
        succ[first[s]..first[s + 1]].iter().map(|&(t, _)| t)
    });
    Ok(Analysis {
        solution,
        path,
        states: n,
        dead_states: alive.iter().filter(|&&a| !a).count(),
    })
}
