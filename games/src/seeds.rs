//! Seed-only releases (source 000's method): a tier's seed file lists the
//! seeds of its levels with the params that made them, and a game client that
//! links this crate regenerates every level bit for bit.
//!
//! A seed file (`release/seeds/tier-NN.txt` of a pack) is one JSON line, the
//! [`SeedHeader`], then one line per level, easiest first: the seed and the
//! SHA-256 of the level's JSON form (`level_hash`), separated by a space.
//! [`SeedFile::regenerate`] runs each seed and checks its hash.

use serde::{Deserialize, Serialize};

use crate::{Budget, Candidate, GameError, GameKind};

/// The first line of a seed file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeedHeader {
    /// The pack's name.
    pub pack: String,
    /// The game.
    pub game: String,
    /// The generator version that made the levels ([`crate::GENERATOR_VERSION`];
    /// for a game program, its name and version).
    pub generator: String,
    /// For a game program: its identity (`sha256:` of its files). A client
    /// regenerates through that program ([`SeedFile::regenerate_with`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
    /// The tier.
    pub tier: u32,
    /// Levels listed.
    pub levels: u64,
    /// The per-level node budget the levels were made under (generators
    /// that search depend on it).
    pub max_nodes: u64,
    /// The job's parameter sets: a seed belongs to the last stratum whose
    /// `first_seed` is at most the seed.
    pub strata: Vec<SeedStratum>,
}

/// One parameter set of a seed file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeedStratum {
    /// Its first seed.
    pub first_seed: u64,
    /// The game's params.
    pub params: serde_json::Value,
}

/// A parsed seed file.
#[derive(Debug, Clone, PartialEq)]
pub struct SeedFile {
    /// What made the levels.
    pub header: SeedHeader,
    /// (seed, level hash) per level, in the file's order.
    pub levels: Vec<(u64, String)>,
}

impl SeedFile {
    /// Parses a seed file.
    pub fn parse(text: &str) -> Result<SeedFile, GameError> {
        let parse = |line: usize, message: String| GameError::Parse {
            line,
            column: 1,
            message,
        };
        let mut lines = text.lines();
        let header: SeedHeader = serde_json::from_str(lines.next().unwrap_or_default())
            .map_err(|e| parse(1, format!("the header is not a seed file's: {e}")))?;
        let levels = lines
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, line)| {
                let (seed, hash) = line
                    .split_once(' ')
                    .ok_or_else(|| parse(i + 2, "expected `SEED LEVEL_HASH`".into()))?;
                let seed = seed
                    .parse()
                    .map_err(|e| parse(i + 2, format!("`{seed}` is not a seed: {e}")))?;
                Ok((seed, hash.trim().to_string()))
            })
            .collect::<Result<Vec<_>, GameError>>()?;
        if levels.len() as u64 != header.levels {
            return Err(parse(
                1,
                format!(
                    "the header says {} levels, the file lists {}",
                    header.levels,
                    levels.len()
                ),
            ));
        }
        Ok(SeedFile { header, levels })
    }

    /// Regenerates every level, in order, each checked against its listed
    /// hash. Refuses a file made by another generator version, whose levels
    /// this crate may not make, and one made by a game program.
    pub fn regenerate(&self) -> Result<Vec<Candidate>, GameError> {
        if let Some(identity) = &self.header.program {
            return Err(GameError::Regenerate(format!(
                "the file was made by the game program {} ({identity}): regenerate it \
                 through that program (`SeedFile::regenerate_with`)",
                self.header.generator
            )));
        }
        self.regenerate_with(&GameKind::from_name(&self.header.game)?)
    }

    /// [`SeedFile::regenerate`] by `game`: a built-in game, or a game
    /// program ([`GameKind::external`]) that must be the one that made the
    /// file (its name and version).
    pub fn regenerate_with(&self, game: &GameKind) -> Result<Vec<Candidate>, GameError> {
        let made = self.remake(game)?;
        for ((seed, hash), (level, matches)) in self.levels.iter().zip(&made) {
            if !matches {
                return Err(GameError::Regenerate(format!(
                    "seed {seed} gives the level {}, the file lists {hash}",
                    level.level_hash
                )));
            }
        }
        Ok(made.into_iter().map(|(level, _)| level).collect())
    }

    /// Every level made again by `game` (which must be the file's game, of
    /// the generator that made it), in order, with whether its hash is the
    /// listed one; a seed that makes no level is an error naming it.
    pub fn remake(&self, game: &GameKind) -> Result<Vec<(Candidate, bool)>, GameError> {
        let h = &self.header;
        let made_by = match game.description() {
            Some(d) => format!("{} {}", d.name, d.version),
            None => crate::GENERATOR_VERSION.to_string(),
        };
        if h.game != game.name() {
            return Err(GameError::Regenerate(format!(
                "the file holds {} levels, this game is {}",
                h.game,
                game.name()
            )));
        }
        if h.generator != made_by {
            return Err(GameError::Regenerate(format!(
                "the file was made by generator {}, this is {made_by}",
                h.generator
            )));
        }
        let strata = h
            .strata
            .iter()
            .map(|s| Ok((s.first_seed, game.prepare(&s.params)?)))
            .collect::<Result<Vec<_>, GameError>>()?;
        let budget = Budget::nodes(h.max_nodes);
        self.levels
            .iter()
            .map(|(seed, hash)| {
                let (_, prepared) = strata
                    .iter()
                    .rev()
                    .find(|(first, _)| first <= seed)
                    .ok_or_else(|| {
                        GameError::Regenerate(format!("seed {seed} is below every stratum"))
                    })?;
                let level = prepared.run(*seed, &budget).result.map_err(|r| {
                    GameError::Regenerate(format!("seed {seed} gives no level: {r}"))
                })?;
                let matches = level.level_hash == *hash;
                Ok((level, matches))
            })
            .collect()
    }
}
