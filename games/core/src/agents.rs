//! Agents of graded strength that play a level as players might, so that a
//! rating can be held against something other than the solver's figures.
//!
//! Every game gives its rules to the agents as a [`Puzzle`]: the start, the
//! positions one move leads to, whether a position is won, and the progress
//! a player can see (pairs made, boxes on goals, keys held, karma). Three
//! agents play it, weakest first:
//!
//! - **random**: a random legal move (moves that lose at once are not
//!   legal here: a player sees those), [`Limits::tries`] times;
//! - **greedy**: a win when one move wins, else the move that shows the most
//!   progress when one shows more than now, else a move to a position not
//!   yet met in this try, else a random move; as many tries;
//! - **search**: a best-first search, most progress first and then fewest
//!   moves: a player who thinks ahead and trusts what they see, with at most
//!   [`Limits::nodes`] positions expanded.
//!
//! A try may make [`Limits::moves`] moves (a multiple of the optimal count,
//! chosen per game). What each agent gives is in [`METRICS`]: its success
//! (the share of tries won; for the search, whether it won within its nodes)
//! and its effort (the mean moves of a try, a lost try counting the limit;
//! for the search, the positions it expanded, the limit when it did not win).
//!
//! Everything here is deterministic: try `t` of an agent draws from its own
//! [`Rng`] stream, seeded by the agent and `t` alone, so the figures are a
//! function of the level.

use crate::clock::Instant;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hash::Hash;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::metrics::{MetricDoc, Metrics, metric};
use crate::rng::Rng;

/// A level in play, as the agents see it.
pub trait Puzzle {
    /// A position: what tells two moments of play apart.
    type State: Clone + Eq + Hash;

    /// The position at the start.
    fn start(&self) -> Self::State;

    /// Appends to `out` the positions one legal move leads to from `state`,
    /// each once; a move that loses at once is not legal here.
    fn moves(&self, state: &Self::State, out: &mut Vec<Self::State>);

    /// Whether `state` is won.
    fn won(&self, state: &Self::State) -> bool;

    /// The progress a player sees in `state`, higher nearer a win.
    fn progress(&self, state: &Self::State) -> u32;
}

/// How much the agents may play one level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Tries of the random and of the greedy agent.
    pub tries: u32,
    /// Moves a try may make.
    pub moves: u32,
    /// Positions the search agent may expand.
    pub nodes: u32,
    /// A time limit the caller chose (`pregen solve --time-limit`): past it
    /// the agents stop and give no figures. Packs never set it: their
    /// figures must not depend on the clock.
    pub until: Option<Instant>,
}

impl Limits {
    /// `tries` tries of `factor` times `optimal` moves (at least one), and a
    /// search of `nodes` positions.
    pub fn new(tries: u32, factor: u32, optimal: u32, nodes: u32) -> Limits {
        Limits {
            tries,
            moves: factor.saturating_mul(optimal).max(1),
            nodes,
            until: None,
        }
    }

    /// These limits, stopped at `until` as well.
    pub fn until(self, until: Option<Instant>) -> Limits {
        Limits { until, ..self }
    }

    /// Whether the time limit has passed (a look at the clock only when
    /// there is one: a pack's agents never read it).
    fn out_of_time(&self) -> bool {
        self.until.is_some_and(|until| Instant::now() >= until)
    }
}

/// What the tries of one agent gave.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Tries {
    /// Tries won.
    pub won: u32,
    /// Tries played.
    pub tries: u32,
    /// Moves made in all tries, a lost try counting the limit.
    pub moves: u64,
}

impl Tries {
    /// The share of tries won.
    pub fn share(&self) -> f64 {
        f64::from(self.won) / f64::from(self.tries.max(1))
    }

    /// The mean moves of a try.
    pub fn mean_moves(&self) -> f64 {
        self.moves as f64 / f64::from(self.tries.max(1))
    }
}

/// What the agents made of one level.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Figures {
    /// The random agent's tries.
    pub random: Tries,
    /// The greedy agent's tries.
    pub greedy: Tries,
    /// Whether the search agent won within its nodes.
    pub search_won: bool,
    /// Positions the search agent expanded (its limit when it did not win).
    pub search_nodes: u32,
}

/// A game's metric docs followed by the agents' [`METRICS`]: the `METRICS`
/// of a game whose levels the agents play.
#[doc(hidden)]
#[macro_export]
macro_rules! __with_agents {
    ($($doc:expr),* $(,)?) => {
        &[
            $($doc,)*
            $crate::agents::METRICS[0],
            $crate::agents::METRICS[1],
            $crate::agents::METRICS[2],
            $crate::agents::METRICS[3],
            $crate::agents::METRICS[4],
            $crate::agents::METRICS[5],
        ]
    };
}
pub use crate::__with_agents as with_agents;

/// The keys the agents publish in a level's `metrics`, with their docs.
pub const METRICS: [MetricDoc; 6] = [
    metric(
        "agent_random_wins",
        "share",
        "tries the random agent won (a random legal move each time)",
    ),
    metric(
        "agent_random_moves",
        "moves",
        "mean moves of the random agent's tries, a lost try counting the limit",
    ),
    metric(
        "agent_greedy_wins",
        "share",
        "tries the greedy agent won (a win, else visible progress, else somewhere new)",
    ),
    metric(
        "agent_greedy_moves",
        "moves",
        "mean moves of the greedy agent's tries, a lost try counting the limit",
    ),
    metric(
        "agent_search_wins",
        "flag",
        "1 when the best-first search agent won within its positions",
    ),
    metric(
        "agent_search_nodes",
        "count",
        "positions the best-first search agent expanded, its limit when it did not win",
    ),
];

impl Figures {
    /// The figures under their [`METRICS`] keys.
    pub fn metrics(&self) -> Metrics {
        let values = [
            self.random.share(),
            self.random.mean_moves(),
            self.greedy.share(),
            self.greedy.mean_moves(),
            f64::from(u8::from(self.search_won)),
            f64::from(self.search_nodes),
        ];
        METRICS
            .iter()
            .zip(values)
            .map(|(doc, value)| (doc.name.to_string(), value))
            .collect()
    }
}

/// Plays `puzzle` with every agent within `limits`; `None` when their time
/// limit passed first.
pub fn play<P: Puzzle>(puzzle: &P, limits: Limits) -> Option<Figures> {
    let mut options = Vec::new();
    let mut tries = |greedy: bool| {
        let mut figures = Tries::default();
        for t in 0..limits.tries {
            let mut rng = Rng::new(u64::from(t) << 1 | u64::from(greedy));
            let moves = match play_once(puzzle, &limits, greedy, &mut rng, &mut options) {
                Try::Won(moves) => Some(moves),
                Try::Lost => None,
                Try::OutOfTime => return None,
            };
            figures.tries += 1;
            figures.won += u32::from(moves.is_some());
            figures.moves += u64::from(moves.unwrap_or(limits.moves));
        }
        Some(figures)
    };
    let random = tries(false)?;
    let greedy = tries(true)?;
    let searched = match search(puzzle, &limits) {
        Try::Won(nodes) => Some(nodes),
        Try::Lost => None,
        Try::OutOfTime => return None,
    };
    Some(Figures {
        random,
        greedy,
        search_won: searched.is_some(),
        search_nodes: searched.unwrap_or(limits.nodes),
    })
}

/// How one try (or the search) ended.
enum Try {
    /// Won after this many moves (positions, for the search).
    Won(u32),
    /// Lost: the limit spent, or no legal move left.
    Lost,
    /// The caller's time limit passed.
    OutOfTime,
}

/// One try: won in so many moves, or lost within `limits.moves` (or stuck
/// with no legal move).
fn play_once<P: Puzzle>(
    puzzle: &P,
    limits: &Limits,
    greedy: bool,
    rng: &mut Rng,
    options: &mut Vec<P::State>,
) -> Try {
    let mut state = puzzle.start();
    if puzzle.won(&state) {
        return Try::Won(0);
    }
    // The positions of this try, for the greedy agent's curiosity.
    let mut met: FxHashSet<P::State> = FxHashSet::default();
    for made in 1..=limits.moves {
        if limits.out_of_time() {
            return Try::OutOfTime;
        }
        options.clear();
        puzzle.moves(&state, options);
        if options.is_empty() {
            return Try::Lost;
        }
        let pick = if greedy {
            met.insert(state.clone());
            choose_greedy(puzzle, &state, options, &met, rng)
        } else {
            rng.index(options.len())
        };
        state = options.swap_remove(pick);
        if puzzle.won(&state) {
            return Try::Won(made);
        }
    }
    Try::Lost
}

/// The greedy agent's move among `options` (not empty).
fn choose_greedy<P: Puzzle>(
    puzzle: &P,
    state: &P::State,
    options: &[P::State],
    met: &FxHashSet<P::State>,
    rng: &mut Rng,
) -> usize {
    if let Some(win) = options.iter().position(|o| puzzle.won(o)) {
        return win;
    }
    let now = puzzle.progress(state);
    let progress: Vec<u32> = options.iter().map(|o| puzzle.progress(o)).collect();
    let best = progress.iter().copied().max().unwrap_or(0);
    let among = |wanted: &dyn Fn(usize) -> bool, rng: &mut Rng| {
        let picks: Vec<usize> = (0..options.len()).filter(|&i| wanted(i)).collect();
        (!picks.is_empty()).then(|| picks[rng.index(picks.len())])
    };
    if best > now
        && let Some(i) = among(&|i| progress[i] == best, rng)
    {
        return i;
    }
    among(&|i| !met.contains(&options[i]), rng).unwrap_or_else(|| rng.index(options.len()))
}

/// The search agent: best-first, most progress first, then fewest moves,
/// then first met. Won after so many positions expanded, lost when
/// `limits.nodes` are spent or every position is met without a win.
fn search<P: Puzzle>(puzzle: &P, limits: &Limits) -> Try {
    let start = puzzle.start();
    if puzzle.won(&start) {
        return Try::Won(0);
    }
    let mut states = vec![start.clone()];
    let mut ids: FxHashMap<P::State, u32> = FxHashMap::default();
    ids.insert(start.clone(), 0);
    let mut queue = BinaryHeap::from([(puzzle.progress(&start), Reverse(0u32), Reverse(0u32))]);
    let mut options = Vec::new();
    let mut expanded = 0;
    while let Some((_, Reverse(depth), Reverse(id))) = queue.pop() {
        if expanded == limits.nodes {
            return Try::Lost;
        }
        if limits.out_of_time() {
            return Try::OutOfTime;
        }
        expanded += 1;
        options.clear();
        puzzle.moves(&states[id as usize], &mut options);
        for next in options.drain(..) {
            if puzzle.won(&next) {
                return Try::Won(expanded);
            }
            if ids.contains_key(&next) {
                continue;
            }
            let next_id = states.len() as u32;
            queue.push((puzzle.progress(&next), Reverse(depth + 1), Reverse(next_id)));
            ids.insert(next.clone(), next_id);
            states.push(next);
        }
    }
    Try::Lost
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A walk along a line of `len` cells from 0 to the last; cell `trap`
    /// has no way on (a dead end the random agent can fall into).
    struct Line {
        len: u32,
        trap: Option<u32>,
    }

    impl Puzzle for Line {
        type State = u32;
        fn start(&self) -> u32 {
            0
        }
        fn moves(&self, &at: &u32, out: &mut Vec<u32>) {
            if Some(at) == self.trap {
                return;
            }
            if at > 0 {
                out.push(at - 1);
            }
            out.push(at + 1);
        }
        fn won(&self, &at: &u32) -> bool {
            at + 1 == self.len
        }
        fn progress(&self, &at: &u32) -> u32 {
            at
        }
    }

    #[test]
    fn the_greedy_and_the_search_agent_walk_straight_to_a_visible_goal() {
        let line = Line { len: 6, trap: None };
        let f = play(&line, Limits::new(10, 3, 5, 100)).expect("no time limit");
        assert_eq!(f.greedy.won, 10);
        assert_eq!(f.greedy.moves, 50);
        assert!(f.search_won);
        assert_eq!(f.search_nodes, 5);
        assert!(f.random.won < 10, "a random walk of 15 moves often misses");
        assert!(f.random.moves > 50);
    }

    #[test]
    fn a_lost_try_counts_the_limit_and_a_capped_search_its_nodes() {
        let line = Line {
            len: 50,
            trap: None,
        };
        let f = play(&line, Limits::new(4, 1, 10, 7)).expect("no time limit");
        assert_eq!(
            f.greedy,
            Tries {
                won: 0,
                tries: 4,
                moves: 40
            }
        );
        assert!(!f.search_won);
        assert_eq!(f.search_nodes, 7);
        let m = f.metrics();
        assert_eq!(m["agent_greedy_moves"], 10.0);
        assert_eq!(m["agent_search_wins"], 0.0);
        assert_eq!(m.len(), METRICS.len());
    }

    #[test]
    fn the_figures_are_a_function_of_the_level() {
        let line = Line { len: 8, trap: None };
        let limits = Limits::new(20, 2, 7, 100);
        assert_eq!(play(&line, limits), play(&line, limits));
    }

    #[test]
    fn a_greedy_player_walks_into_a_visible_trap_that_a_search_goes_around() {
        // From 0 the way on is 1, then 2; 2 is a dead end.
        let line = Line {
            len: 8,
            trap: Some(2),
        };
        let f = play(&line, Limits::new(5, 4, 7, 100)).expect("no time limit");
        assert_eq!(f.greedy.won, 0);
        assert!(!f.search_won, "the only way on is through the trap");
        assert_eq!(f.search_nodes, 100);
    }

    #[test]
    fn agents_past_their_time_limit_give_no_figures() {
        // A walk far longer than the clock's stride, already out of time.
        let line = Line {
            len: 100_000,
            trap: None,
        };
        let limits = Limits::new(3, 2, 99_999, 1_000_000).until(Some(Instant::now()));
        assert_eq!(play(&line, limits), None);
        let unlimited = Limits::new(1, 1, 10, 10);
        assert!(play(&line, unlimited.until(None)).is_some());
    }
}
