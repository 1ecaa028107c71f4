//! The source's fail-fast score (section 3.3, what the MCTS maximises) and its
//! 0..100 grade (Table 1) with the three agents (section 3.4).
//!
//! The source leaves the criteria's numbers open; fixed here:
//! - the right number of connections: n-1 ..= 2n-1 doors;
//! - not too many buttons: at most n; the right number per room: at most
//!   ceil(b/n) (one, while b <= n);
//! - every colour used: each colour has a door of its colour (a colour that
//!   opens nothing is unused); the right number of unique colours: each colour
//!   has a button;
//! - a solution is long enough with at least n + b moves;
//! - solutions are enumerated with a cap of 6 (more than 5 fails the count).
//!
//! Partial points: a criterion over rooms, colours or solutions earns its
//! points times the share that meets it.

use super::level::{Level, Move, Rules};
use super::planar::is_planar;
use crate::rng::Rng;

/// Solutions enumerated at most (one more than a good level may have).
pub const SOLUTION_CAP: usize = 6;

/// Table 1's criteria with their full points, in its order; the first 17
/// are the structure (80 points), the last 3 the agents (20).
pub const CRITERIA: [(&str, f64); 20] = [
    ("every button colour is used", 5.0),
    ("not too many buttons", 5.0),
    ("the required colour is in the level", 2.0),
    ("the required colour is not in the start room", 3.0),
    ("every room has a connection", 5.0),
    ("an unlocked connection", 5.0),
    ("the right number of connections", 5.0),
    ("the right number of unique colours", 5.0),
    ("the right number of buttons per room", 5.0),
    ("all rooms reachable", 5.0),
    ("all connections reachable", 5.0),
    ("a solution", 10.0),
    ("2 to 5 solutions", 5.0),
    ("every solution long enough", 5.0),
    ("every colour in each solution", 2.0),
    ("every button used by a solution", 4.0),
    ("every room used by a solution", 4.0),
    ("the suboptimal agent wins", 10.0),
    ("the greedy agent wins", 5.0),
    ("the limited-information agent wins", 5.0),
];

/// The grade's parts.
#[derive(Debug, Clone, PartialEq)]
pub struct Grade {
    /// Basic (30), medium (30) and advanced (20) points: the structure.
    pub structure: f64,
    /// Suboptimal (10), greedy (5) and limited-information (5) agents.
    pub agents: f64,
    /// Per criterion, in Table 1's order.
    pub points: Vec<(&'static str, f64)>,
}

impl Grade {
    /// 0..100.
    pub fn total(&self) -> f64 {
        self.structure + self.agents
    }

    /// A defect: below 80 of the first 80 points.
    pub fn defect(&self) -> bool {
        self.structure < 80.0 - 1e-9
    }
}

/// What the criteria look at, computed once per level.
struct Facts<'a> {
    level: &'a Level,
    rules: Rules,
    solutions: Vec<Vec<(Move, usize)>>,
}

/// `count` of `of` as a share (1 when there is nothing to count).
fn share(count: usize, of: usize) -> f64 {
    if of == 0 {
        1.0
    } else {
        count as f64 / of as f64
    }
}

/// Full points less `full / of` for each of `bad` things out of `of`.
fn less_per(bad: usize, full: f64, of: usize) -> f64 {
    (full - full / of.max(1) as f64 * bad as f64).max(0.0)
}

fn all_colours(b: usize) -> u32 {
    ((1u32 << b) - 1) << 1
}

impl<'a> Facts<'a> {
    fn new(level: &'a Level) -> Facts<'a> {
        let rules = Rules::new(level);
        let solutions = rules.solutions(SOLUTION_CAP);
        Facts {
            level,
            rules,
            solutions,
        }
    }

    /// Per solution: the rooms it visits and the colours it presses as
    /// masks, and its length.
    fn figures(&self) -> impl Iterator<Item = (u32, usize, u32)> + '_ {
        self.solutions.iter().map(|s| {
            let mut rooms = 1u32;
            let mut colours = 0u32;
            for &(m, t) in s {
                rooms |= 1 << self.rules.room(t);
                if let Move::Press(c) = m {
                    colours |= 1 << c;
                }
            }
            (rooms, s.len(), colours)
        })
    }

    /// A solution's criteria met: all rooms, long enough, all colours.
    fn quality(&self, f: (u32, usize, u32)) -> [bool; 3] {
        let (n, b) = (self.level.rooms, self.level.colours);
        [f.0 == (1 << n) - 1, f.1 >= n + b, f.2 == all_colours(b)]
    }

    /// Rooms with more buttons than the right number per room.
    fn crowded_rooms(&self) -> usize {
        let level = self.level;
        let per_room = level.colours.div_ceil(level.rooms).max(1);
        (0..level.rooms)
            .filter(|&r| level.buttons.iter().filter(|b| b.0 as usize == r).count() > per_room)
            .count()
    }

    /// Rooms and doors reachable from the start, locks obeyed.
    fn reached(&self) -> (usize, usize) {
        let reachable = self.rules.reachable();
        let mut rooms = 0u32;
        let mut doors = 0u64;
        for (s, moves) in self.rules.moves.iter().enumerate() {
            if reachable[s] {
                rooms |= 1 << self.rules.room(s);
                for &(m, _) in moves {
                    if let Move::Walk { door, .. } = m {
                        doors |= 1 << door;
                    }
                }
            }
        }
        (rooms.count_ones() as usize, doors.count_ones() as usize)
    }

    /// Buttons pressed by at least one solution.
    fn buttons_used(&self) -> usize {
        let mut pressed = 0u64;
        for s in &self.solutions {
            for &(m, t) in s {
                if let Move::Press(c) = m {
                    let room = self.rules.room(t);
                    pressed |= 1 << (room * (self.level.colours + 1) + c as usize);
                }
            }
        }
        let width = self.level.colours + 1;
        self.level
            .buttons
            .iter()
            .filter(|&&(r, c)| pressed >> (r as usize * width + c as usize) & 1 == 1)
            .count()
    }
}

fn required_placement_ok(level: &Level) -> (bool, bool) {
    let placed = level.buttons.iter().any(|&(_, c)| c == level.required);
    let not_in_start = level.rooms < 2
        || !level
            .buttons
            .iter()
            .any(|&(r, c)| r == 0 && c == level.required);
    (placed, not_in_start)
}

fn connections_ok(level: &Level) -> bool {
    let n = level.rooms;
    (n.saturating_sub(1)..=2 * n - 1).contains(&level.doors.len())
}

/// The fail-fast score, 0..1, in the source's three stages: basic structure,
/// then the must-haves, then the expensive criteria; a stage that fails
/// returns the points so far.
///
/// Every colour appears when it has a button and a door. Stage 3 also
/// holds, a point each, the structure criteria of Table 1 the
/// source's score leaves out (an unlocked door, buttons per room, all rooms and
/// doors reachable, every button used by a solution), so that a level the
/// search scores 1 has every structure point of the grade and is no defect.
pub fn score(level: &Level) -> f64 {
    const TOTAL: f64 = 18.0;
    let (n, b) = (level.rooms, level.colours);
    let mut points = 0.0;
    // Stage 1: basic structure, one point each.
    let (placed, not_in_start) = required_placement_ok(level);
    let button_colours = level.buttons.iter().fold(0u32, |m, &(_, c)| m | 1 << c);
    let door_colours = level.doors.iter().fold(0u32, |m, d| m | 1 << d.2);
    let basic = [
        placed && not_in_start,
        connections_ok(level),
        level.buttons.len() <= n,
        button_colours & door_colours & all_colours(b) == all_colours(b),
    ];
    points += basic.iter().filter(|&&ok| ok).count() as f64;
    if basic.contains(&false) {
        return points / TOTAL;
    }
    // Stage 2: the must-haves, two points each.
    if level.connected() != (1 << n) - 1 {
        return points / TOTAL;
    }
    points += 2.0;
    let facts = Facts::new(level);
    if facts.solutions.is_empty() {
        return points / TOTAL;
    }
    points += 2.0;
    // Stage 3: the solutions (count, then each one's quality), planarity,
    // then the rest of Table 1's structure.
    points += match facts.solutions.len() {
        1 => 1.0,
        2..=5 => 2.0,
        _ => 0.0,
    };
    let quality: usize = facts
        .figures()
        .map(|f| facts.quality(f).iter().filter(|&&ok| ok).count())
        .sum();
    points += quality as f64 / facts.solutions.len() as f64;
    let (rooms_reached, doors_reached) = facts.reached();
    let rest = [
        is_planar(&level.adjacency()),
        level.doors.iter().any(|d| d.2 == 0),
        facts.crowded_rooms() == 0,
        rooms_reached == n && doors_reached == level.doors.len(),
        facts.buttons_used() == level.buttons.len(),
    ];
    points += rest.iter().filter(|&&ok| ok).count() as f64;
    points / TOTAL
}

/// A good level: no defect, and planar. The score is 1 exactly then, and
/// fails fast on most levels.
pub fn is_good(level: &Level) -> bool {
    score(level) > 1.0 - 1e-9
}

/// The source's 0..100 grade (Table 1, in [`CRITERIA`]' order); the agents
/// draw from `rng`.
pub fn grade(level: &Level, rng: &mut Rng) -> Grade {
    let facts = Facts::new(level);
    let (n, b) = (level.rooms, level.colours);
    let all_or_none = |ok: bool| if ok { 1.0 } else { 0.0 };
    let door_colours = level.doors.iter().fold(0u32, |m, d| m | 1 << d.2);
    let button_colours = level.buttons.iter().fold(0u32, |m, &(_, c)| m | 1 << c);
    let (placed, not_in_start) = required_placement_ok(level);
    let lonely = level.adjacency().iter().filter(|&&m| m == 0).count();
    let (rooms_reached, doors_reached) = facts.reached();
    let solvable = !facts.solutions.is_empty();
    let figures: Vec<(u32, usize, u32)> = facts.figures().collect();
    let of_solutions = |criterion: usize| {
        let ok = figures.iter().filter(|&&f| facts.quality(f)[criterion]);
        if solvable {
            share(ok.count(), figures.len())
        } else {
            0.0
        }
    };
    let rooms_used = figures.iter().fold(0u32, |m, f| m | f.0);
    let dist = facts.rules.distance_to_win();
    // Each criterion's share of its full points, in Table 1's order.
    let shares = [
        share((door_colours & all_colours(b)).count_ones() as usize, b),
        less_per(level.buttons.len().saturating_sub(n), 1.0, n),
        all_or_none(placed),
        all_or_none(placed && not_in_start),
        less_per(lonely, 1.0, n),
        all_or_none(level.doors.iter().any(|d| d.2 == 0)),
        all_or_none(connections_ok(level)),
        share((button_colours & all_colours(b)).count_ones() as usize, b),
        less_per(facts.crowded_rooms(), 1.0, n),
        share(rooms_reached, n),
        share(doors_reached, level.doors.len()),
        all_or_none(solvable),
        all_or_none((2..=5).contains(&facts.solutions.len())),
        of_solutions(1),
        of_solutions(2),
        if solvable {
            share(facts.buttons_used(), level.buttons.len())
        } else {
            0.0
        },
        if solvable {
            share(rooms_used.count_ones() as usize, n)
        } else {
            0.0
        },
        all_or_none(suboptimal_agent(&facts.rules, &dist, n + b, rng)),
        all_or_none(greedy_agent(level, &facts.rules, rng)),
        all_or_none(limited_agent(&facts.rules, &dist)),
    ];
    let points: Vec<(&'static str, f64)> = CRITERIA
        .iter()
        .zip(shares)
        .map(|(&(name, full), share)| (name, full * share))
        .collect();
    let structure = points[..17].iter().map(|p| p.1).sum();
    let agents = points[17..].iter().map(|p| p.1).sum();
    Grade {
        structure,
        agents,
        points,
    }
}

/// 80% the first move on a shortest way out, 20% a uniform random move; wins
/// if it is out within n+b ..= 4(n+b) moves.
fn suboptimal_agent(rules: &Rules, dist: &[u32], nb: usize, rng: &mut Rng) -> bool {
    let mut state = Rules::START;
    for taken in 1..=4 * nb {
        let moves = &rules.moves[state];
        if moves.is_empty() {
            return false;
        }
        let best = moves
            .iter()
            .filter(|(_, t)| dist[*t] != u32::MAX)
            .min_by_key(|(_, t)| dist[*t]);
        state = match best {
            Some(&(_, t)) if rng.chance(0.8) => t,
            _ => moves[rng.index(moves.len())].1,
        };
        if rules.wins(state) {
            return taken >= nb;
        }
    }
    false
}

/// One move ahead with the source's scores (win 100, the required button here
/// 20, the required button next door 8, else 3) and penalties (stuck -22, back
/// to the previous state -5, another colour over the required one -2), a tiny
/// random tie-break; wins if out within 1.2n ..= 5n moves.
fn greedy_agent(level: &Level, rules: &Rules, rng: &mut Rng) -> bool {
    let n = level.rooms;
    let required = level.required;
    let has_required = |room: usize| {
        level
            .buttons
            .iter()
            .any(|&(r, c)| r as usize == room && c == required)
    };
    let mut state = Rules::START;
    let mut previous = usize::MAX;
    for taken in 1..=5 * n {
        let moves = &rules.moves[state];
        if moves.is_empty() {
            return false;
        }
        let active = rules.colour(state) as u8;
        let mut best = (f64::NEG_INFINITY, state);
        for &(m, t) in moves {
            let mut score = if rules.wins(t) {
                100.0
            } else if matches!(m, Move::Press(c) if c == required) && active != required {
                20.0
            } else if matches!(m, Move::Walk { to, .. } if has_required(to as usize))
                && active != required
            {
                8.0
            } else {
                3.0
            };
            if rules.moves[t].is_empty() {
                score -= 22.0;
            }
            if t == previous {
                score -= 5.0;
            }
            if matches!(m, Move::Press(c) if c != required) && active == required {
                score -= 2.0;
            }
            score += rng.unit() * 1e-3;
            if score > best.0 {
                best = (score, t);
            }
        }
        previous = state;
        state = best.1;
        if rules.wins(state) {
            return taken as f64 >= 1.2 * n as f64;
        }
    }
    false
}

/// Knows only the rooms it has entered. While no way out is known it has to
/// decide, and of the moves to states it has not been in (into an unknown
/// room, or a button not yet pressed there) it always takes the worst: one
/// after which the level can no longer be won, else the farthest from a win.
/// Wins if it gets out; every decision is a new state, so it stops.
fn limited_agent(rules: &Rules, dist: &[u32]) -> bool {
    let states = rules.moves.len();
    let mut known = 1u32; // rooms entered
    let mut visited = vec![false; states];
    visited[Rules::START] = true;
    let mut state = Rules::START;
    loop {
        if dist[state] == u32::MAX {
            return false; // stuck for good
        }
        // States reachable through known rooms, and the untried ones beside.
        let mut seen = vec![false; states];
        let mut stack = vec![state];
        seen[state] = true;
        let mut untried: Vec<usize> = Vec::new();
        while let Some(s) = stack.pop() {
            if rules.wins(s) {
                return true;
            }
            for &(_, t) in &rules.moves[s] {
                if !visited[t] {
                    untried.push(t);
                }
                if known >> rules.room(t) & 1 == 1 && !seen[t] {
                    seen[t] = true;
                    stack.push(t);
                }
            }
        }
        let Some(&worst) = untried
            .iter()
            .max_by_key(|&&t| (dist[t] == u32::MAX, dist[t]))
        else {
            return false;
        };
        visited[worst] = true;
        known |= 1 << rules.room(worst);
        state = worst;
    }
}
