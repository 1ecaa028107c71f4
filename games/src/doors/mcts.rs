//! The source's generator (section 3.1): Monte Carlo tree search whose moves
//! toggle one feature of the level.
//!
//! Start from the empty level plus `random_moves` x M random toggles. Then, up
//! to `moves` times (stopping as soon as the level scores above `threshold`):
//! grow a tree of at most `brain` nodes from the current level (UCB1 with
//! exploration `epsilon` and a tiny random tie-break, `brain` - 1 iterations
//! of at most one new node each; selection stops at a node
//! not fully expanded or scoring above the threshold; expansion applies a
//! random untried toggle; the roll-out applies up to `depth` random toggles,
//! stopping early above the threshold, and its last level's score is
//! back-propagated), then play the root child visited most (the first added
//! on ties).
//!
//! The search ends with the level it reached, or with the best level it
//! scored on the way if that scores higher (the first of equals): the source's
//! threshold lets a level with a point short stop the search, while a
//! perfect one was often seen in the tree.

use rustc_hash::FxHashMap;

use super::grade::score;
use super::level::Features;
use crate::rng::Rng;
use crate::{Budget, Rejection};

/// The generator's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Search {
    /// The level's features.
    pub features: Features,
    /// The colour the exit needs.
    pub required: u8,
    /// Share of M toggled at random before the search.
    pub random_moves: f64,
    /// Tree nodes per move.
    pub brain: usize,
    /// Longest roll-out.
    pub depth: usize,
    /// Moves played at most.
    pub moves: usize,
    /// UCB1's exploration constant.
    pub epsilon: f64,
    /// Stop once a level scores above this.
    pub threshold: f64,
}

/// What the search ends with.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The level's feature bits.
    pub bits: u64,
    /// Its score.
    pub score: f64,
    /// Moves played.
    pub moves_played: usize,
    /// Levels scored (cache misses).
    pub scored: usize,
}

struct Node {
    bits: u64,
    score: f64,
    visits: u32,
    total: f64,
    /// Toggles not tried from here, a bit each.
    untried: u64,
    children: Vec<(u8, u32)>,
}

impl Search {
    /// Runs the search from the random stream.
    pub fn run(&self, rng: &mut Rng, budget: &Budget) -> Result<Outcome, Rejection> {
        let m = self.features.count();
        let all = if m == 64 { u64::MAX } else { (1u64 << m) - 1 };
        let mut scores: FxHashMap<u64, f64> = FxHashMap::default();
        let mut scored = 0usize;
        let mut best = (f64::NEG_INFINITY, 0u64);
        let mut score_of = |bits: u64| {
            *scores.entry(bits).or_insert_with(|| {
                scored += 1;
                let s = score(&self.features.level(bits, self.required));
                if s > best.0 {
                    best = (s, bits);
                }
                s
            })
        };
        let mut bits = 0u64;
        let random = (self.random_moves * m as f64).round() as usize;
        for _ in 0..random {
            bits ^= 1 << rng.index(m);
        }
        let mut played = 0;
        while played < self.moves && score_of(bits) <= self.threshold {
            if budget.expired() {
                return Err(Rejection::Timeout);
            }
            let mut tree = vec![Node {
                bits,
                score: score_of(bits),
                visits: 0,
                total: 0.0,
                untried: all,
                children: Vec::new(),
            }];
            // One node at most per iteration, so the tree stays within
            // `brain` nodes; an iteration that selects a level scoring above
            // the threshold adds none.
            for _ in 1..self.brain {
                // Selection.
                let mut path = vec![0usize];
                let mut node = 0usize;
                while tree[node].untried == 0 && tree[node].score <= self.threshold {
                    if tree[node].children.is_empty() {
                        break;
                    }
                    node = self.select(&tree, node, rng);
                    path.push(node);
                }
                // Expansion.
                if tree[node].untried != 0 && tree[node].score <= self.threshold {
                    let untried = tree[node].untried;
                    let k = rng.index(untried.count_ones() as usize);
                    let toggle = nth_bit(untried, k);
                    tree[node].untried &= !(1 << toggle);
                    let child_bits = tree[node].bits ^ 1 << toggle;
                    let id = tree.len();
                    tree.push(Node {
                        bits: child_bits,
                        score: score_of(child_bits),
                        visits: 0,
                        total: 0.0,
                        untried: all,
                        children: Vec::new(),
                    });
                    tree[node].children.push((toggle as u8, id as u32));
                    node = id;
                    path.push(node);
                }
                // Roll-out.
                let mut sim = tree[node].bits;
                let mut value = tree[node].score;
                for _ in 0..self.depth {
                    if value > self.threshold {
                        break;
                    }
                    sim ^= 1 << rng.index(m);
                    value = score_of(sim);
                }
                for &id in &path {
                    tree[id].visits += 1;
                    tree[id].total += value;
                }
            }
            // Play the most visited child, the first added on ties.
            let Some(&(toggle, _)) = tree[0]
                .children
                .iter()
                .rev()
                .max_by_key(|(_, id)| tree[*id as usize].visits)
            else {
                break;
            };
            bits ^= 1 << toggle;
            played += 1;
        }
        // The best level seen, if better than the one reached.
        let reached = score_of(bits);
        let (score, bits) = if best.0 > reached {
            best
        } else {
            (reached, bits)
        };
        Ok(Outcome {
            bits,
            score,
            moves_played: played,
            scored,
        })
    }

    fn select(&self, tree: &[Node], parent: usize, rng: &mut Rng) -> usize {
        let ln_parent = f64::from(tree[parent].visits.max(1)).ln();
        let mut best = (f64::NEG_INFINITY, parent);
        for &(_, id) in &tree[parent].children {
            let n = &tree[id as usize];
            let visits = f64::from(n.visits.max(1));
            let ucb =
                n.total / visits + self.epsilon * (ln_parent / visits).sqrt() + rng.unit() * 1e-6;
            if ucb > best.0 {
                best = (ucb, id as usize);
            }
        }
        best.1
    }
}

/// The index of the `k`-th set bit of `m`.
fn nth_bit(mut m: u64, k: usize) -> usize {
    for _ in 0..k {
        m &= m - 1;
    }
    m.trailing_zeros() as usize
}
