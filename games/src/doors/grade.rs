//! The seed's fail-fast score (section 3.3, what the MCTS maximises) and its
//! 0..100 grade (Table 1) with the three agents (section 3.4).
//!
//! The seed leaves the criteria's numbers open; fixed here:
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

/// Counts the seed's criteria need, computed once per level.
struct Facts {
    n: usize,
    b: usize,
    rules: Rules,
    solutions: Vec<Vec<(Move, usize)>>,
}

impl Facts {
    fn new(level: &Level) -> Facts {
        let rules = Rules::new(level);
        let solutions = rules.solutions(SOLUTION_CAP);
        Facts {
            n: level.rooms,
            b: level.colours,
            rules,
            solutions,
        }
    }

    fn share(count: usize, of: usize) -> f64 {
        if of == 0 {
            1.0
        } else {
            count as f64 / of as f64
        }
    }

    /// Per solution: (rooms visited, moves, colours pressed) as masks and length.
    fn solution_figures(&self, s: &[(Move, usize)]) -> (u32, usize, u32) {
        let mut rooms = 1u32;
        let mut colours = 0u32;
        for &(m, t) in s {
            rooms |= 1 << self.rules.room(t);
            if let Move::Press(c) = m {
                colours |= 1 << c;
            }
        }
        (rooms, s.len(), colours)
    }
}

fn all_colours(b: usize) -> u32 {
    ((1u32 << b) - 1) << 1
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

/// The seed's fail-fast score, 0..1: basic structure, then the must-haves,
/// then the expensive criteria; a stage that fails returns the points so far.
pub fn score(level: &Level) -> f64 {
    const TOTAL: f64 = 14.0;
    let (n, b) = (level.rooms, level.colours);
    let mut points = 0.0;
    // Stage 1: basic structure, one point each.
    let (placed, not_in_start) = required_placement_ok(level);
    let colours_seen = level.buttons.iter().fold(0u32, |m, &(_, c)| m | 1 << c);
    let basic = [
        placed && not_in_start,
        connections_ok(level),
        level.buttons.len() <= n,
        colours_seen == all_colours(b),
    ];
    points += basic.iter().filter(|&&ok| ok).count() as f64;
    if basic.contains(&false) {
        return points / TOTAL;
    }
    // Stage 2: the must-haves, two points each.
    let all_rooms = (1u32 << n) - 1;
    if level.connected() != all_rooms {
        return points / TOTAL;
    }
    points += 2.0;
    let facts = Facts::new(level);
    if facts.solutions.is_empty() {
        return points / TOTAL;
    }
    points += 2.0;
    // Stage 3: the solutions (count, then each one's quality) and planarity.
    points += match facts.solutions.len() {
        1 => 1.0,
        2..=5 => 2.0,
        _ => 0.0,
    };
    let quality: f64 = facts
        .solutions
        .iter()
        .map(|s| {
            let (rooms, len, colours) = facts.solution_figures(s);
            [rooms == all_rooms, len >= n + b, colours == all_colours(b)]
                .iter()
                .filter(|&&ok| ok)
                .count() as f64
        })
        .sum::<f64>()
        / facts.solutions.len() as f64;
    points += quality;
    if is_planar(&level.adjacency()) {
        points += 1.0;
    }
    points / TOTAL
}

/// The seed's 0..100 grade (Table 1); agents draw from `rng`.
pub fn grade(level: &Level, rng: &mut Rng) -> Grade {
    let facts = Facts::new(level);
    let (n, b) = (facts.n, facts.b);
    let mut points: Vec<(&'static str, f64)> = Vec::new();
    let per = |bad: usize, total_points: f64, of: usize| {
        (total_points - total_points / of.max(1) as f64 * bad as f64).max(0.0)
    };
    // Basic (30).
    let door_colours = level.doors.iter().fold(0u32, |m, &(_, _, k)| m | 1 << k);
    let used = (1..=b).filter(|&c| door_colours >> c & 1 == 1).count();
    points.push(("every button colour is used", 5.0 * Facts::share(used, b)));
    points.push((
        "not too many buttons",
        per(level.buttons.len().saturating_sub(n), 5.0, n),
    ));
    let (placed, not_in_start) = required_placement_ok(level);
    points.push((
        "the required colour is in the level",
        if placed { 2.0 } else { 0.0 },
    ));
    points.push((
        "the required colour is not in the start room",
        if placed && not_in_start { 3.0 } else { 0.0 },
    ));
    let adj = level.adjacency();
    let lonely = adj.iter().filter(|&&m| m == 0).count();
    points.push(("every room has a connection", per(lonely, 5.0, n)));
    let unlocked = level.doors.iter().any(|&(_, _, k)| k == 0);
    points.push(("an unlocked connection", if unlocked { 5.0 } else { 0.0 }));
    points.push((
        "the right number of connections",
        if connections_ok(level) { 5.0 } else { 0.0 },
    ));
    // Medium (30).
    let button_colours = level.buttons.iter().fold(0u32, |m, &(_, c)| m | 1 << c);
    let distinct = (1..=b).filter(|&c| button_colours >> c & 1 == 1).count();
    points.push((
        "the right number of unique colours",
        5.0 * Facts::share(distinct, b),
    ));
    let per_room = b.div_ceil(n).max(1);
    let crowded = (0..n)
        .filter(|&r| {
            level
                .buttons
                .iter()
                .filter(|&&(br, _)| br as usize == r)
                .count()
                > per_room
        })
        .count();
    points.push(("the right number of buttons per room", per(crowded, 5.0, n)));
    let reachable = facts.rules.reachable();
    let rooms_reached = (0..reachable.len())
        .filter(|&s| reachable[s])
        .fold(0u32, |m, s| m | 1 << facts.rules.room(s));
    points.push((
        "all rooms reachable",
        5.0 * Facts::share(rooms_reached.count_ones() as usize, n),
    ));
    let mut door_used = vec![false; level.doors.len()];
    for (s, moves) in facts.rules.moves.iter().enumerate() {
        if reachable[s] {
            for &(m, _) in moves {
                if let Move::Walk { door, .. } = m {
                    door_used[door as usize] = true;
                }
            }
        }
    }
    let doors_reached = door_used.iter().filter(|&&u| u).count();
    points.push((
        "all connections reachable",
        5.0 * Facts::share(doors_reached, level.doors.len()),
    ));
    let solvable = !facts.solutions.is_empty();
    points.push(("a solution", if solvable { 10.0 } else { 0.0 }));
    // Advanced (20).
    let count = facts.solutions.len();
    points.push((
        "2 to 5 solutions",
        if (2..=5).contains(&count) { 5.0 } else { 0.0 },
    ));
    let figures: Vec<(u32, usize, u32)> = facts
        .solutions
        .iter()
        .map(|s| facts.solution_figures(s))
        .collect();
    let of_solutions = |ok: &dyn Fn(&(u32, usize, u32)) -> bool| {
        if figures.is_empty() {
            0.0
        } else {
            figures.iter().filter(|f| ok(f)).count() as f64 / figures.len() as f64
        }
    };
    points.push((
        "every solution long enough",
        5.0 * of_solutions(&|f| f.1 >= n + b),
    ));
    points.push((
        "every colour in each solution",
        2.0 * of_solutions(&|f| f.2 == all_colours(b)),
    ));
    let pressed: Vec<(usize, u8)> = facts
        .solutions
        .iter()
        .flat_map(|s| {
            s.iter().filter_map(|&(m, t)| match m {
                Move::Press(c) => Some((facts.rules.room(t), c)),
                Move::Walk { .. } => None,
            })
        })
        .collect();
    let buttons_used = level
        .buttons
        .iter()
        .filter(|&&(r, c)| pressed.contains(&(r as usize, c)))
        .count();
    points.push((
        "every button used by a solution",
        if solvable {
            4.0 * Facts::share(buttons_used, level.buttons.len())
        } else {
            0.0
        },
    ));
    let rooms_used = figures.iter().fold(0u32, |m, f| m | f.0);
    points.push((
        "every room used by a solution",
        if solvable {
            4.0 * Facts::share(rooms_used.count_ones() as usize, n)
        } else {
            0.0
        },
    ));
    let structure: f64 = points.iter().map(|p| p.1).sum();
    // The agents (20).
    let dist = facts.rules.distance_to_win();
    let suboptimal = suboptimal_agent(&facts.rules, &dist, n + b, rng);
    points.push((
        "the suboptimal agent wins",
        if suboptimal { 10.0 } else { 0.0 },
    ));
    let greedy = greedy_agent(level, &facts.rules, rng);
    points.push(("the greedy agent wins", if greedy { 5.0 } else { 0.0 }));
    let limited = limited_agent(&facts.rules, &dist);
    points.push((
        "the limited-information agent wins",
        if limited { 5.0 } else { 0.0 },
    ));
    let agents = points.iter().map(|p| p.1).sum::<f64>() - structure;
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

/// One move ahead with the seed's scores (win 100, the required button here
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

/// Knows only the rooms it has entered. While no way out is known it explores,
/// and of the ways into unknown rooms it always takes the worst: one after
/// which the level can no longer be won, else the farthest from a win. Wins
/// if it gets out.
fn limited_agent(rules: &Rules, dist: &[u32]) -> bool {
    let states = rules.moves.len();
    let mut known = 1u32; // rooms entered
    let mut state = Rules::START;
    loop {
        if dist[state] == u32::MAX {
            return false; // stuck for good
        }
        // States reachable through known rooms only.
        let mut seen = vec![false; states];
        let mut stack = vec![state];
        seen[state] = true;
        let mut frontier: Vec<usize> = Vec::new();
        while let Some(s) = stack.pop() {
            if rules.wins(s) {
                return true;
            }
            for &(_, t) in &rules.moves[s] {
                if known >> rules.room(t) & 1 == 0 {
                    frontier.push(t);
                } else if !seen[t] {
                    seen[t] = true;
                    stack.push(t);
                }
            }
        }
        // The worst step into the unknown.
        let Some(&worst) = frontier
            .iter()
            .max_by_key(|&&t| (dist[t] == u32::MAX, dist[t]))
        else {
            return false;
        };
        known |= 1 << rules.room(worst);
        state = worst;
    }
}
