//! What every pregen game is built on, knowing no game.
//!
//! A game is a pure, deterministic function `(params, seed, budget) ->
//! Outcome`. This crate holds the contract and the parts every game shares;
//! the games and their registry (`pregen-games`) sit on top of it.
//!
//! Its modules form layers, each importing only those below it:
//! - leaves: [`clock`], [`rng`], [`search`], [`digest`], [`metrics`],
//!   [`reason`];
//! - [`rating`] (a rating as data, over [`metrics`]) and [`agents`] (random,
//!   greedy and best-first players, over [`metrics`], [`rng`] and [`clock`]);
//! - [`game`]: the [`Game`] trait, [`Budget`], [`Outcome`], [`Candidate`],
//!   [`Rejection`] and the runner that turns one seed into an outcome;
//! - [`registration`]: what a registry needs of a game as an object
//!   ([`registration::Registered`], [`registration::Ready`]), a built-in
//!   game's [`registration::Entry`], and what they answer.

pub mod agents;
pub mod clock;
pub mod digest;
pub mod game;
pub mod metrics;
pub mod rating;
pub mod reason;
pub mod registration;
pub mod rng;
pub mod run;
pub mod search;

pub use digest::{hex, sha256_hex};
pub use game::{
    Budget, Candidate, Collection, Game, GameError, Misfit, Outcome, ParamError, Rejection, Solved,
};
pub use metrics::{MetricDoc, Metrics};
pub use reason::{Code, Reason, Refusal, Status};
pub use run::{default_model, run_game, run_game_banded, run_game_rated};
