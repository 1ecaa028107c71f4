//! The stored level's message, `pregen.v1.Level`, with prost alone, and its
//! conversions to and from the games' [`Candidate`]: what the gRPC crate
//! (`pregen-proto`, whose results carry it), the pack's commit log (which
//! stores an accepted level as this message, byte for byte) and the
//! coordinator share, so that a stored level has one message.

use pregen_game_core::game::Candidate;

/// The generated message of `pregen/v1/level.proto`.
#[allow(missing_docs)]
pub mod v1 {
    include!(concat!(env!("OUT_DIR"), "/pregen.v1.rs"));
}

impl From<Candidate> for v1::Level {
    fn from(c: Candidate) -> Self {
        v1::Level {
            difficulty: c.difficulty,
            moves: c.moves,
            moves_optimal: c.moves_optimal,
            layout: c.layout,
            level_json: c.level_json,
            solution: c.solution,
            metrics: c.metrics,
            level_hash: c.level_hash,
            canonical: c.canonical.unwrap_or_default(),
        }
    }
}

impl From<v1::Level> for Candidate {
    fn from(l: v1::Level) -> Self {
        Candidate {
            difficulty: l.difficulty,
            moves: l.moves,
            moves_optimal: l.moves_optimal,
            layout: l.layout,
            level_json: l.level_json,
            solution: l.solution,
            metrics: l.metrics,
            level_hash: l.level_hash,
            canonical: Some(l.canonical).filter(|c| !c.is_empty()),
        }
    }
}
