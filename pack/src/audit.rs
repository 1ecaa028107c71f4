//! The level audit: what a stored level must pass to count, written once
//! for its three callers. The coordinator holds a worker's levels and the
//! commit log's to it ([`LevelAudit::audit`] on resume, its parts for a
//! live batch), `analysis verify` holds a pack's Parquet levels to it, and
//! `release verify` holds a release's lines to its checks and ratings.
//!
//! A level passes when:
//! 1. its seed is one of the job's, in the stratum its place in seed order
//!    gives it;
//! 2. its judge (the job's `[external] checker` when it names one, else the
//!    game with the stratum's params) checks it: its JSON form, hash,
//!    layout, well-formedness, fit to the params, and its solution replayed
//!    to a win in `moves` moves;
//! 3. for games that make levels cheaply again, it is the level its seed
//!    makes;
//! 4. its difficulty is the job's model's rating of its metrics and moves,
//!    to the bit.
//!
//! Every finding is typed ([`Finding`]); callers word it for their reader.

use std::sync::Arc;

use pregen_games::rating::{Model, RatingError};
use pregen_games::{Budget, Candidate, CheckError, PreparedGame};

use crate::{Job, PackError};

/// What is wrong with a stored level.
#[derive(Debug, thiserror::Error)]
pub enum Finding {
    /// The seed is not one of the job's.
    #[error("seed {seed} is not one of the job's")]
    NotTheJobs {
        /// The seed.
        seed: u64,
    },
    /// The level is said to be of another stratum than its seed's.
    #[error("seed {seed} is of stratum {is}, not {claimed}")]
    Stratum {
        /// The seed.
        seed: u64,
        /// The stratum the level is said to be of.
        claimed: u32,
        /// The stratum the seed is of.
        is: usize,
    },
    /// The level fails its judge's check, or is not the level its seed makes.
    #[error("{error}")]
    Check {
        /// The seed.
        seed: u64,
        /// What the check found.
        error: CheckError,
    },
    /// The model cannot rate the level's metrics.
    #[error("{error}")]
    Unrated {
        /// The seed.
        seed: u64,
        /// Why.
        error: RatingError,
    },
    /// The level's difficulty is not the model's rating of its metrics.
    #[error("difficulty {claimed} is not the rating of its metrics ({rated})")]
    Difficulty {
        /// The seed.
        seed: u64,
        /// The difficulty the level came with.
        claimed: f64,
        /// The model's rating.
        rated: f64,
    },
}

impl Finding {
    /// The seed whose level it is.
    pub fn seed(&self) -> u64 {
        match self {
            Finding::NotTheJobs { seed }
            | Finding::Stratum { seed, .. }
            | Finding::Check { seed, .. }
            | Finding::Unrated { seed, .. }
            | Finding::Difficulty { seed, .. } => *seed,
        }
    }

    /// Whether the judge could not answer (its program crashed, was killed,
    /// timed out): nothing is known of the level.
    pub fn is_broken(&self) -> bool {
        matches!(self, Finding::Check { error, .. } if error.is_broken())
    }
}

/// A job's games, judges and model, as the audit uses them.
#[derive(Debug)]
pub struct LevelAudit {
    /// Each stratum's first seed, in order.
    firsts: Vec<u64>,
    /// Per stratum, the game with its params (and the band its workers
    /// apply): runs seeds, and says whether a level is its seed's.
    games: Arc<Vec<PreparedGame>>,
    /// Per stratum, the job's `[external] checker`, which checks levels in
    /// the game's place when the job names one.
    checkers: Option<Vec<PreparedGame>>,
    /// The job's rating model.
    model: Model,
    /// The job's node budget, for making a level again.
    max_nodes: u64,
}

impl LevelAudit {
    /// The audit of `job`'s levels. Starts the job's game program (and its
    /// checker) when it names one.
    pub fn new(job: &Job) -> Result<LevelAudit, PackError> {
        let (firsts, games): (Vec<u64>, Vec<PreparedGame>) = job
            .prepared_strata()?
            .into_iter()
            .zip(job.run_bands())
            .map(|((first, game), band)| (first, game.with_band(band)))
            .unzip();
        let checkers = match job.checker_kind()? {
            Some(_) => Some(job.judging_strata()?.into_iter().map(|(_, g)| g).collect()),
            None => None,
        };
        Ok(LevelAudit {
            firsts,
            games: Arc::new(games),
            checkers,
            model: job.rating_model()?,
            max_nodes: job.budget.max_nodes,
        })
    }

    /// Per stratum, the game with its params.
    pub fn games(&self) -> &Arc<Vec<PreparedGame>> {
        &self.games
    }

    /// Per stratum, the game that judges its levels.
    pub fn judges(&self) -> &[PreparedGame] {
        self.checkers.as_deref().unwrap_or(&self.games)
    }

    /// Whether the job names a checker apart from its game.
    pub fn has_checker(&self) -> bool {
        self.checkers.is_some()
    }

    /// The job's rating model.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The stratum `seed` is of.
    pub fn stratum(&self, seed: u64) -> Result<usize, Finding> {
        self.firsts
            .iter()
            .rposition(|&first| first <= seed)
            .ok_or(Finding::NotTheJobs { seed })
    }

    /// `model`'s rating of a level's metrics and moves.
    pub fn rating(model: &Model, seed: u64, level: &Candidate) -> Result<f64, Finding> {
        model
            .rate(Model::features(&level.metrics, level.moves))
            .map_err(|error| Finding::Unrated { seed, error })
    }

    /// Whether the level's difficulty is `model`'s rating of it, to the bit.
    pub fn rated_by(model: &Model, seed: u64, level: &Candidate) -> Result<(), Finding> {
        let rated = Self::rating(model, seed, level)?;
        match rated.to_bits() == level.difficulty.to_bits() {
            true => Ok(()),
            false => Err(Finding::Difficulty {
                seed,
                claimed: level.difficulty,
                rated,
            }),
        }
    }

    /// Each level's judge's check, `(stratum, level)`: each stratum's levels
    /// in one call, so that a game program is sent them at once.
    pub fn check_many(&self, levels: &[(usize, &Candidate)]) -> Vec<Result<(), CheckError>> {
        let mut checks: Vec<Result<(), CheckError>> = levels.iter().map(|_| Ok(())).collect();
        for (index, judge) in self.judges().iter().enumerate() {
            let (at, asked): (Vec<usize>, Vec<&Candidate>) = levels
                .iter()
                .enumerate()
                .filter(|(_, (stratum, _))| *stratum == index)
                .map(|(i, (_, level))| (i, *level))
                .unzip();
            if asked.is_empty() {
                continue;
            }
            for (i, checked) in at.into_iter().zip(judge.check_many(&asked)) {
                checks[i] = checked;
            }
        }
        checks
    }

    /// Whether `seed` makes this level (for games that make levels cheaply
    /// again; the others pass).
    pub fn made_by(&self, stratum: usize, seed: u64, level: &Candidate) -> Result<(), Finding> {
        let budget = Budget::nodes(self.max_nodes);
        self.games
            .get(stratum)
            .ok_or(Finding::NotTheJobs { seed })?
            .made_by(seed, &level.level_json, &budget)
            .map_err(|error| Finding::Check { seed, error })
    }

    /// The whole audit of stored levels, `(seed, level)`: each level's
    /// stratum, its difficulty against the job's model, its judge's check
    /// (each stratum's levels at once) and its seed's making of it.
    pub fn audit(&self, levels: &[(u64, &Candidate)]) -> Vec<Result<(), Finding>> {
        let strata: Vec<Result<usize, Finding>> =
            levels.iter().map(|(seed, _)| self.stratum(*seed)).collect();
        let asked: Vec<(usize, &Candidate)> = levels
            .iter()
            .zip(&strata)
            .filter_map(|((_, level), stratum)| Some((*stratum.as_ref().ok()?, *level)))
            .collect();
        let mut checks = self.check_many(&asked).into_iter();
        levels
            .iter()
            .zip(strata)
            .map(|(&(seed, level), stratum)| {
                let stratum = stratum?;
                let checked = checks.next().unwrap_or(Ok(()));
                Self::rated_by(&self.model, seed, level)?;
                checked.map_err(|error| Finding::Check { seed, error })?;
                self.made_by(stratum, seed, level)
            })
            .collect()
    }
}
