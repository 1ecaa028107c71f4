//! The pregen level generators, their verifiers and ratings.
//!
//! Every game is a pure, deterministic function
//! `(params, seed, budget) -> Outcome`: the same inputs give the same level on
//! any machine. The crate knows nothing of the network, of Parquet or of async
//! runtimes, so a game client can link it to rebuild a level from its seed.
//!
//! Main types:
//! - [`Game`]: the common trait (generate under a budget, an independent solver,
//!   a rating, text and JSON forms, solution replay).
//! - [`GameKind`]: the registry of games by name, with [`GameKind::run`] as the one
//!   entry point the worker calls.
//! - [`Budget`], [`Outcome`], [`Candidate`], [`Rejection`]: what a run is given and
//!   what it returns.
//! - [`rng::Rng`]: the portable seeded PRNG.

pub mod cube;
pub mod doors;
pub mod dungeon;
pub mod rng;
pub mod sokoban;
pub mod tilt;

mod game;

pub use game::{
    Budget, Candidate, Game, GameError, GameKind, LevelVerdict, Outcome, Rejection, Solved,
    run_game,
};

/// The generator version: part of every pack's manifest, and a worker whose
/// version differs from the coordinator's is refused. Bump it whenever any game's
/// output for a given (params, seed) changes.
pub const GENERATOR_VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "+gen2");
