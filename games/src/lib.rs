//! The pregen level generators, their verifiers and ratings.
//!
//! Every game is a pure, deterministic function
//! `(params, seed, budget) -> Outcome`: the same inputs give the same level on
//! any machine. The crate knows nothing of the network, of Parquet or of async
//! runtimes, so a game client can link it to rebuild a level from its seed.
//!
//! The games sit on `pregen-game-core` (the trait, budgets, reasons, ratings,
//! agents, search, PRNG and clock), whose modules this crate re-exports.
//!
//! Main types:
//! - [`Game`]: the common trait (generate under a budget, an independent solver,
//!   a rating, text and JSON forms, solution replay).
//! - [`GameKind`]: a game chosen by name from the one registry ([`registry`]);
//!   [`GameKind::prepare`] checks its params once and gives a [`PreparedGame`],
//!   whose [`PreparedGame::run`] is the one entry point the worker calls per seed.
//! - [`Budget`], [`Outcome`], [`Candidate`], [`Rejection`]: what a run is given and
//!   what it returns; [`reason`]: the verdict's [`Status`] and a refusal's
//!   typed [`Code`] and detail.
//! - [`rating::Model`]: a rating as data, each game's built-in one in
//!   `games/models/`.
//! - [`agents`]: random, greedy and best-first players whose figures join a
//!   level's metrics.
//! - [`rng::Rng`]: the portable seeded PRNG.
//! - [`seeds::SeedFile`]: a seed-only release's tier, regenerated level by level.

pub mod cube;
pub mod doors;
pub mod dungeon;
pub mod external;
pub mod seeds;
pub mod sokoban;
pub mod synthetic;
pub mod tilt;

pub mod registry;

pub use pregen_game_core::{
    Budget, Candidate, Code, Collection, Game, GameError, MetricDoc, Metrics, Misfit, Outcome,
    ParamError, Reason, Refusal, Rejection, Solved, Status, default_model, hex, run_game,
    run_game_rated, sha256_hex,
};
pub use pregen_game_core::{agents, clock, game, rating, reason, rng, run, search};
pub use registry::{
    CheckError, GameKind, LevelVerdict, NotDeterministic, PreparedGame, Verdict, code_of_number,
    code_of_word, outcome_difference,
};

/// The generator version: part of every pack's manifest, and a worker whose
/// version differs from the coordinator's is refused. Bump it whenever any game's
/// output for a given (params, seed) changes.
pub const GENERATOR_VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "+gen12");
