//! The coordinator's trust policy, apart from the gRPC adapter: what an
//! accepted level must pass to count, whether it comes from a worker's
//! batch ([`Trust::admit_batch`]), from the commit log on resume
//! ([`Trust::admit_stored`]) or from the coordinator's own run
//! ([`Trust::rate`]). Everything here is blocking: callers on the async
//! threads run it with `spawn_blocking`.
//!
//! The checks, in order:
//! 1. the seed is one of the job's, in the stratum its lease (or its place
//!    in seed order) says;
//! 2. the level passes its judge's check (the job's `[external] checker`
//!    when it names one, else the game itself) and, for games that make
//!    levels cheaply again, is the level its seed makes;
//! 3. its difficulty is a rating of its metrics. A worker sends the game's
//!    built-in model's rating (the one its band check used, for its band is
//!    the built-in model's): a worker whose difficulty is not that rating
//!    runs another build or lies. The coordinator then rates the level by
//!    the job's model, which is what the commit log stores, and what a
//!    stored level is held to on resume.

use std::sync::Arc;
use std::time::Duration;

use pregen_games::rating::{Model, RatingError};
use pregen_games::{Budget, Candidate, CheckError, PreparedGame};
use pregen_pack::{Job, PackError, SeedRecord};

/// Why a level does not count: its worker is refused (live), or the commit
/// log is refused (on resume).
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    /// The seed is not one of the job's.
    #[error("seed {seed} is not one of the job's")]
    NotTheJobs {
        /// The seed.
        seed: u64,
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
    /// `out of band` from a stratum whose workers are given no band: a
    /// verdict the job cannot give.
    #[error("seed {seed}: `out of band` from a stratum with no difficulty band its workers apply")]
    NoBand {
        /// The seed.
        seed: u64,
    },
    /// The seed's reason is of a code its game does not give (another
    /// game's own).
    #[error("seed {seed}: reason `{code}` is not one {game} gives")]
    ForeignReason {
        /// The seed.
        seed: u64,
        /// The code.
        code: pregen_pack::Code,
        /// The stratum's game.
        game: pregen_games::GameKind,
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

impl Refused {
    /// The seed whose level is refused.
    pub fn seed(&self) -> u64 {
        match self {
            Refused::NotTheJobs { seed }
            | Refused::Check { seed, .. }
            | Refused::Unrated { seed, .. }
            | Refused::ForeignReason { seed, .. }
            | Refused::NoBand { seed }
            | Refused::Difficulty { seed, .. } => *seed,
        }
    }
}

/// What the check made of a worker's batch.
#[derive(Debug)]
pub enum Batch {
    /// Every result taken, each accepted level rated by the job's model.
    Taken(Vec<(u64, SeedRecord)>),
    /// A result no honest worker sends: its worker is refused.
    Forged(Refused),
    /// The coordinator's own game program could not check: nothing is
    /// known against the worker, and the batch runs again.
    Broken(String),
    /// The job's program contradicts itself: the run ends.
    ProgramFault(String),
}

/// The job's games and models, as the checks use them.
#[derive(Debug)]
pub struct Trust {
    /// Each stratum's first seed, in order.
    firsts: Vec<u64>,
    /// Per stratum, the game with its params (and band): runs seeds, and
    /// says whether a level is the one its seed makes.
    games: Arc<Vec<PreparedGame>>,
    /// Per stratum, whether its workers refuse a level outside its band
    /// themselves (`out of band`): no worker of another stratum gives it.
    banded: Vec<bool>,
    /// Per stratum, the job's `[external] checker`, which checks levels in
    /// the game's place when the job names one.
    checkers: Option<Vec<PreparedGame>>,
    /// The job's node budget.
    max_nodes: u64,
    /// The job's watchdog per seed.
    watchdog: Duration,
    /// The job's rating model.
    model: Model,
    /// The game's built-in model, which workers rate with.
    built_in: Model,
    /// Whether the two models are one: the job's rating is then the
    /// worker's, already checked.
    same_models: bool,
}

impl Trust {
    /// The trust policy for `job`'s levels. Starts the job's game program (and
    /// its checker) when it names one.
    pub fn new(job: &Job) -> Result<Trust, PackError> {
        let bands = job.run_bands();
        let banded = bands.iter().map(Option::is_some).collect();
        let (firsts, games): (Vec<u64>, Vec<PreparedGame>) = job
            .prepared_strata()?
            .into_iter()
            .zip(bands)
            .map(|((first, game), band)| (first, game.with_band(band)))
            .unzip();
        let checkers = match job.checker_kind()? {
            Some(_) => Some(job.judging_strata()?.into_iter().map(|(_, g)| g).collect()),
            None => None,
        };
        let model = job.rating_model()?;
        let built_in = job
            .game_kind()?
            .default_model()
            .map_err(|e| PackError::Job(e.to_string()))?;
        Ok(Trust {
            firsts,
            games: Arc::new(games),
            banded,
            checkers,
            max_nodes: job.budget.max_nodes,
            watchdog: Duration::from_millis(job.budget.watchdog_ms),
            same_models: model.sha256() == built_in.sha256(),
            model,
            built_in,
        })
    }

    /// Per stratum, the game with its params.
    pub fn games(&self) -> &Arc<Vec<PreparedGame>> {
        &self.games
    }

    /// Per stratum, the game that judges its levels.
    fn judges(&self) -> &[PreparedGame] {
        self.checkers.as_deref().unwrap_or(&self.games)
    }

    /// Whether the job's game makes levels again from their seeds.
    pub fn regenerates(&self) -> bool {
        self.games.iter().all(PreparedGame::regenerates)
    }

    /// A seed's budget as a worker runs it: the job's nodes and watchdog,
    /// made on the thread that runs the seed.
    pub fn budget(&self) -> impl Fn() -> Budget + Sync + Send + 'static {
        let (max_nodes, watchdog) = (self.max_nodes, self.watchdog);
        move || Budget::watched(max_nodes, watchdog)
    }

    /// Sets an accepted record's difficulty to the job's model's rating.
    pub fn rate(&self, record: &mut SeedRecord) -> Result<(), Refused> {
        rate(&self.model, record)
    }

    /// Checks a worker's batch, `strata` giving each record's stratum (from
    /// its lease). One forged result refuses the batch. A level the job's
    /// model cannot rate becomes that seed's `error`: the seed's fault, not
    /// the worker's.
    pub fn admit_batch(&self, mut records: Vec<(u64, SeedRecord)>, strata: &[u32]) -> Batch {
        let budget = Budget::nodes(self.max_nodes);
        let checks = check_levels(self.judges(), &records, strata);
        let mut failed = checks.iter().filter_map(|c| c.as_ref().err());
        if let Some(broken) = failed.find(|e| e.is_broken()) {
            // The coordinator's own program failed (a crash, a kill, no
            // answer in time, a stray line): nothing is known against the
            // worker; the program's process was started anew.
            return Batch::Broken(broken.to_string());
        }
        for (((_, record), &stratum), check) in records.iter_mut().zip(strata).zip(checks) {
            let seed = record.seed;
            if let Err(refused) = self.own_reason(stratum as usize, record) {
                return Batch::Forged(refused);
            }
            let (Some(level), Some(game)) = (&record.level, self.games.get(stratum as usize))
            else {
                continue;
            };
            if let Err(e) = &check
                && let Some(fault) = self.contradicts_itself(game, seed, level, e)
            {
                return Batch::ProgramFault(fault);
            }
            if let Err(e) = &check
                && self.checkers.is_some()
                && self.generator_makes(game, seed, level)
            {
                // The job's checker refuses the level the generator itself
                // makes for the seed: the seed's verdict, no worker's fault.
                checker_refuses(record, e);
                continue;
            }
            if let Err(error) = check.and_then(|()| game.made_by(seed, &level.level_json, &budget))
            {
                return Batch::Forged(Refused::Check { seed, error });
            }
            let rated = match rating(&self.built_in, seed, level) {
                Ok(rated) => rated,
                Err(refused) => return Batch::Forged(refused),
            };
            if rated.to_bits() != level.difficulty.to_bits() {
                return Batch::Forged(Refused::Difficulty {
                    seed,
                    claimed: level.difficulty,
                    rated,
                });
            }
            if self.same_models {
                continue;
            }
            if let Err(refused) = self.rate(record) {
                // The job's model cannot rate the level (its metrics overflow
                // the model): the seed's error, not the worker's.
                record.level = None;
                record.status = pregen_pack::Status::Error;
                record.reason = Some(pregen_pack::Reason::new(
                    pregen_pack::Code::Rating,
                    format!("seed {seed}: {refused}"),
                ));
            }
        }
        Batch::Taken(records)
    }

    /// Refuses a record whose reason is of a code its stratum's game does
    /// not give.
    fn own_reason(&self, stratum: usize, record: &SeedRecord) -> Result<(), Refused> {
        let (Some(reason), Some(game)) = (&record.reason, self.games.get(stratum)) else {
            return Ok(());
        };
        if reason.code == pregen_pack::Code::OutOfBand
            && !self.banded.get(stratum).copied().unwrap_or(false)
        {
            return Err(Refused::NoBand { seed: record.seed });
        }
        let game = game.kind();
        match game.gives(reason.code) {
            true => Ok(()),
            false => Err(Refused::ForeignReason {
                seed: record.seed,
                code: reason.code,
                game: game.clone(),
            }),
        }
    }

    /// A program that judges itself, whose own run of the seed makes this
    /// very level and solution, contradicts its generate when its check
    /// refuses the level: the program's fault, not the worker's.
    fn contradicts_itself(
        &self,
        game: &PreparedGame,
        seed: u64,
        level: &Candidate,
        error: &CheckError,
    ) -> Option<String> {
        if self.checkers.is_some() || !game.kind().is_external() {
            return None;
        }
        self.generator_makes(game, seed, level).then(|| {
            format!(
                "the game program's check refuses the level its own generate makes for seed \
                 {seed} ({error}): the program contradicts itself; fix its check or its generate"
            )
        })
    }

    /// The coordinator's own run of a seed, judged as a worker's would be:
    /// an accepted level the job's checker refuses is the seed's `error`
    /// ([`checker_refuses`]), so that its run and a worker's agree.
    pub fn judge_own(&self, stratum: u32, record: &mut SeedRecord) -> Result<(), String> {
        let (Some(checkers), Some(level)) = (&self.checkers, &record.level) else {
            return Ok(());
        };
        let Some(checker) = checkers.get(stratum as usize) else {
            return Ok(());
        };
        match checker.check(level) {
            Ok(()) => Ok(()),
            Err(e) if e.is_broken() => Err(e.to_string()),
            Err(e) => {
                checker_refuses(record, &e);
                Ok(())
            }
        }
    }

    /// Whether the coordinator's own run of `seed` makes this very level
    /// and solution: then a judge's refusal of it is the game's, never the
    /// worker's.
    fn generator_makes(&self, game: &PreparedGame, seed: u64, level: &Candidate) -> bool {
        let own = game.run(seed, &(self.budget())());
        own.result.as_ref().is_ok_and(|c| {
            (c.level_hash.as_str(), c.solution.as_str(), c.moves)
                == (
                    level.level_hash.as_str(),
                    level.solution.as_str(),
                    level.moves,
                )
        })
    }

    /// Checks a record of the commit log as it was checked when it came
    /// in: a log edited with its checksums made anew, or written for other
    /// params, is refused rather than merged. Its difficulty is the job's
    /// model's rating (the log stores that one).
    pub fn admit_stored(&self, record: &SeedRecord) -> Result<(), Refused> {
        let seed = record.seed;
        let stratum = self
            .firsts
            .iter()
            .rposition(|&first| first <= seed)
            .ok_or(Refused::NotTheJobs { seed })?;
        self.own_reason(stratum, record)?;
        let Some(level) = &record.level else {
            return Ok(());
        };
        let rated = rating(&self.model, seed, level)?;
        if rated.to_bits() != level.difficulty.to_bits() {
            return Err(Refused::Difficulty {
                seed,
                claimed: level.difficulty,
                rated,
            });
        }
        let budget = Budget::nodes(self.max_nodes);
        self.judges()[stratum]
            .check(level)
            .and_then(|()| self.games[stratum].made_by(seed, &level.level_json, &budget))
            .map_err(|error| Refused::Check { seed, error })
    }
}

/// `model`'s rating of an accepted level.
fn rating(
    model: &Model,
    seed: u64,
    level: &pregen_pack::record::LevelRecord,
) -> Result<f64, Refused> {
    model
        .rate(Model::features(&level.metrics, level.moves))
        .map_err(|error| Refused::Unrated { seed, error })
}

/// Sets an accepted record's difficulty to `model`'s rating of it.
pub fn rate(model: &Model, record: &mut SeedRecord) -> Result<(), Refused> {
    let seed = record.seed;
    if let Some(level) = record.level.as_mut() {
        level.difficulty = rating(model, seed, level)?;
    }
    Ok(())
}

/// [`PreparedGame::check`] of every record's level (`Ok` for a record
/// without one), each stratum's levels checked in one call, so that a game
/// program is sent them at once.
/// `record`'s level, which the job's checker refuses (`why`), made the
/// seed's `error`: the level the generator makes for it, judged by the job.
fn checker_refuses(record: &mut SeedRecord, why: &CheckError) {
    let detail = format!(
        "seed {}: the job's checker refuses the level its generator makes: {why}",
        record.seed
    );
    record.level = None;
    record.status = pregen_pack::Status::Error;
    record.reason = Some(pregen_pack::Reason::new(
        pregen_pack::Code::Internal,
        detail,
    ));
}

fn check_levels(
    games: &[PreparedGame],
    records: &[(u64, SeedRecord)],
    strata: &[u32],
) -> Vec<Result<(), CheckError>> {
    let mut checks: Vec<Result<(), CheckError>> = records.iter().map(|_| Ok(())).collect();
    for (index, game) in games.iter().enumerate() {
        let (at, levels): (Vec<usize>, Vec<&Candidate>) = records
            .iter()
            .zip(strata)
            .enumerate()
            .filter(|(_, (_, stratum))| **stratum as usize == index)
            .filter_map(|(i, ((_, record), _))| Some((i, record.level.as_ref()?)))
            .unzip();
        if levels.is_empty() {
            continue;
        }
        for (i, check) in at.into_iter().zip(game.check_many(&levels)) {
            checks[i] = check;
        }
    }
    checks
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tilt job of two strata, and an accepted record of its first.
    fn job_and_record() -> (Job, SeedRecord) {
        let job = Job::parse(
            "pack = \"t\"\ngame = \"tilt\"\n[[strata]]\nname = \"a\"\ncount = 5\n\
             [[strata]]\nname = \"b\"\ncount = 5\n",
        )
        .expect("job");
        let game = job.game_kind().expect("tilt");
        let prepared = game.prepare(&job.params_json()).expect("params");
        let (seed, outcome) = (0..100)
            .map(|seed| {
                (
                    seed,
                    prepared.run(seed, &Budget::nodes(job.budget.max_nodes)),
                )
            })
            .find(|(_, o)| o.result.is_ok())
            .expect("an accepted seed");
        (job, SeedRecord::from_outcome(seed, outcome, "w".into(), 0))
    }

    #[test]
    fn an_honest_record_is_admitted_live_and_on_resume() {
        let (job, record) = job_and_record();
        let trust = Trust::new(&job).expect("trust");
        trust.admit_stored(&record).expect("stored");
        match trust.admit_batch(vec![(1, record)], &[0]) {
            Batch::Taken(records) => assert_eq!(records.len(), 1),
            other => panic!("{other:?}"),
        }
    }

    /// A tilt seed refused with another game's own code is no honest
    /// worker's: refused live and on resume.
    #[test]
    fn another_games_reason_is_refused_everywhere() {
        let (job, record) = job_and_record();
        let trust = Trust::new(&job).expect("trust");
        let mut foreign = record.clone();
        foreign.level = None;
        foreign.status = pregen_pack::Status::Rejected;
        foreign.reason = Some(pregen_pack::Reason::new(
            pregen_games::cube::reasons::NOT_PROVEN_SHORTEST,
            "",
        ));
        let says = "reason `not proven shortest` is not one tilt gives";
        let stored = trust.admit_stored(&foreign).expect_err("refused");
        assert!(stored.to_string().contains(says), "{stored}");
        match trust.admit_batch(vec![(1, foreign.clone())], &[0]) {
            Batch::Forged(refused @ Refused::ForeignReason { .. }) => {
                assert!(refused.to_string().contains(says), "{refused}")
            }
            other => panic!("{other:?}"),
        }
        foreign.reason = Some(pregen_pack::Reason::new(
            pregen_games::tilt::reasons::NOT_AT_REST,
            "",
        ));
        trust.admit_stored(&foreign).expect("tilt's own code");
        // A verdict the job cannot give: `out of band` with no band.
        foreign.reason = Some(pregen_pack::Reason::new(
            pregen_pack::Code::OutOfBand,
            "difficulty 3, band 5..10",
        ));
        let says = "`out of band` from a stratum with no difficulty band";
        let stored = trust.admit_stored(&foreign).expect_err("refused");
        assert!(stored.to_string().contains(says), "{stored}");
        match trust.admit_batch(vec![(1, foreign)], &[0]) {
            Batch::Forged(refused @ Refused::NoBand { .. }) => {
                assert!(refused.to_string().contains(says), "{refused}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_changed_difficulty_or_level_is_refused_everywhere() {
        let (job, record) = job_and_record();
        let trust = Trust::new(&job).expect("trust");
        let mut harder = record.clone();
        harder.level.as_mut().expect("level").difficulty += 1.0;
        assert!(matches!(
            trust.admit_stored(&harder),
            Err(Refused::Difficulty { .. })
        ));
        assert!(matches!(
            trust.admit_batch(vec![(1, harder)], &[0]),
            Batch::Forged(Refused::Difficulty { .. })
        ));
        let mut moved = record.clone();
        moved.seed += 1;
        assert!(matches!(
            trust.admit_stored(&moved),
            Err(Refused::Check { .. })
        ));
        assert!(matches!(
            trust.admit_batch(vec![(1, moved)], &[0]),
            Batch::Forged(Refused::Check { .. })
        ));
    }
}
