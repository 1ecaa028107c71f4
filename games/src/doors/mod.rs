//! `doors`: rooms, coloured doors and buttons (seed 001, Rescue Elite).
//!
//! - [`level`]: the level description, its feature bits and the rules as a
//!   graph over (room, active colour); solutions and the uniqueness key.
//! - [`planar`]: the planarity test.
//! - [`grade`]: the seed's fail-fast score and 0..100 grade with its agents.
//! - [`mcts`]: the seed's Monte Carlo tree search over feature toggles.

pub mod grade;
pub mod level;
pub mod mcts;
pub mod planar;

/// The seed's Table 3 settings for one (n, b).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Preset {
    /// UCB1's exploration constant.
    pub epsilon: f64,
    /// Score threshold for early stops.
    pub threshold: f64,
    /// Share of M toggled at random first.
    pub random_moves: f64,
    /// Runs the seed averaged over.
    pub runs: usize,
    /// Tree nodes per move.
    pub brain: usize,
    /// Longest roll-out.
    pub depth: usize,
    /// Moves played at most.
    pub moves: usize,
}

/// Seed 001's Table 3 rows: ((n, b), settings, average grade, unique good
/// levels found, total unique good levels if known, defects per its runs).
#[allow(clippy::type_complexity)]
pub const TABLE_3: &[((usize, usize), Preset, f64, u32, Option<u32>, u32)] = &[
    (
        (2, 1),
        p(0.2, 0.97, 0.3, 10000, 100, 3, 10),
        86.02,
        1,
        Some(1),
        0,
    ),
    (
        (3, 1),
        p(0.2, 0.97, 0.33, 10000, 100, 30, 30),
        90.003,
        13,
        Some(13),
        0,
    ),
    (
        (3, 2),
        p(0.2, 0.995, 0.33, 1000, 500, 10, 30),
        94.0012,
        51,
        Some(51),
        14,
    ),
    (
        (4, 1),
        p(0.2, 0.995, 0.3, 1000, 1000, 10, 30),
        91.4292,
        23,
        Some(23),
        6,
    ),
    (
        (4, 2),
        p(0.2, 0.995, 0.3, 1000, 2000, 30, 30),
        92.4278,
        365,
        Some(938),
        104,
    ),
    (
        (4, 3),
        p(0.5, 0.95, 0.3, 1000, 3000, 30, 40),
        84.5233,
        42,
        None,
        956,
    ),
    (
        (4, 4),
        p(0.5, 0.9, 0.3, 1000, 2000, 30, 30),
        75.364,
        0,
        None,
        1000,
    ),
    (
        (5, 1),
        p(0.2, 0.994, 0.33, 1000, 2000, 30, 30),
        92.0727,
        81,
        Some(85),
        4,
    ),
    (
        (5, 2),
        p(0.3, 0.95, 0.3, 1000, 3000, 30, 30),
        90.1422,
        174,
        None,
        781,
    ),
    (
        (5, 3),
        p(0.2, 0.95, 0.3, 1000, 3000, 30, 40),
        83.9642,
        29,
        None,
        970,
    ),
    (
        (6, 1),
        p(2.0, 0.975, 0.2, 1000, 5000, 30, 50),
        89.2477,
        56,
        None,
        832,
    ),
    (
        (6, 2),
        p(2.5, 0.975, 0.2, 1000, 6000, 40, 50),
        87.6211,
        259,
        None,
        702,
    ),
    (
        (7, 1),
        p(1.8, 0.97, 0.15, 1000, 5000, 30, 50),
        88.831,
        48,
        None,
        904,
    ),
    (
        (8, 1),
        p(0.5, 0.9, 0.15, 1000, 5000, 30, 30),
        80.4069,
        4,
        None,
        995,
    ),
];

const fn p(
    epsilon: f64,
    threshold: f64,
    random_moves: f64,
    runs: usize,
    brain: usize,
    depth: usize,
    moves: usize,
) -> Preset {
    Preset {
        epsilon,
        threshold,
        random_moves,
        runs,
        brain,
        depth,
        moves,
    }
}

/// The seed's settings for (n, b), if Table 3 has them.
pub fn preset(rooms: usize, colours: usize) -> Option<Preset> {
    TABLE_3
        .iter()
        .find(|row| row.0 == (rooms, colours))
        .map(|row| row.1)
}
