//! The coordinator's trust policy, apart from the gRPC adapter: what an
//! accepted level must pass to count, whether it comes from a worker's
//! batch ([`Trust::admit_batch`]), from the commit log on resume
//! ([`Trust::admit_stored`]) or from the coordinator's own run
//! ([`Trust::rate`]). Everything here is blocking: callers on the async
//! threads run it with `spawn_blocking`.
//!
//! A level is held to the level audit ([`LevelAudit`], shared with both
//! verifies): its seed one of the job's, its judge's check, its seed's
//! making of it, its difficulty a rating of its metrics. On top of it, a
//! seed's reason must be one its game gives. A worker sends the game's
//! built-in model's rating (the one its band check used, for its band is
//! the built-in model's): a worker whose difficulty is not that rating runs
//! another build or lies. The coordinator then rates the level by the
//! job's model, which is what the commit log stores, and what a stored
//! level is held to on resume.

use std::sync::Arc;
use std::time::Duration;

use pregen_games::rating::Model;
use pregen_games::{Budget, Candidate, CheckError, PreparedGame};
use pregen_pack::audit::{Finding, LevelAudit};
use pregen_pack::{Job, PackError, SeedRecord};

/// Why a level does not count: its worker is refused (live), or the commit
/// log is refused (on resume).
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    /// The level fails the level audit.
    #[error("{0}")]
    Level(#[from] Finding),
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
}

impl Refused {
    /// The seed whose level is refused.
    pub fn seed(&self) -> u64 {
        match self {
            Refused::Level(finding) => finding.seed(),
            Refused::ForeignReason { seed, .. } | Refused::NoBand { seed } => *seed,
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
    /// The job's level audit: its games, judges and model.
    audit: LevelAudit,
    /// Per stratum, whether its workers refuse a level outside its band
    /// themselves (`out of band`): no worker of another stratum gives it.
    banded: Vec<bool>,
    /// The job's node budget.
    max_nodes: u64,
    /// The job's watchdog per seed.
    watchdog: Duration,
    /// The game's built-in model, which workers rate with.
    built_in: Model,
    /// Whether the job's model is the built-in one: the job's rating is
    /// then the worker's, already checked.
    same_models: bool,
}

impl Trust {
    /// The trust policy for `job`'s levels. Starts the job's game program (and
    /// its checker) when it names one.
    pub fn new(job: &Job) -> Result<Trust, PackError> {
        let audit = LevelAudit::new(job)?;
        let built_in = job
            .game_kind()?
            .default_model()
            .map_err(|e| PackError::Job(e.to_string()))?;
        Ok(Trust {
            banded: job.run_bands().iter().map(Option::is_some).collect(),
            max_nodes: job.budget.max_nodes,
            watchdog: Duration::from_millis(job.budget.watchdog_ms),
            same_models: audit.model().sha256() == built_in.sha256(),
            audit,
            built_in,
        })
    }

    /// Per stratum, the game with its params.
    pub fn games(&self) -> &Arc<Vec<PreparedGame>> {
        self.audit.games()
    }

    /// Whether the job's game makes levels again from their seeds.
    pub fn regenerates(&self) -> bool {
        self.games().iter().all(PreparedGame::regenerates)
    }

    /// A seed's budget as a worker runs it: the job's nodes and watchdog,
    /// made on the thread that runs the seed.
    pub fn budget(&self) -> impl Fn() -> Budget + Sync + Send + 'static {
        let (max_nodes, watchdog) = (self.max_nodes, self.watchdog);
        move || Budget::watched(max_nodes, watchdog)
    }

    /// Sets an accepted record's difficulty to the job's model's rating.
    pub fn rate(&self, record: &mut SeedRecord) -> Result<(), Refused> {
        rate(self.audit.model(), record)
    }

    /// Checks a worker's batch, `strata` giving each record's stratum (from
    /// its lease). One forged result refuses the batch. A level the job's
    /// model cannot rate becomes that seed's `error`: the seed's fault, not
    /// the worker's.
    pub fn admit_batch(&self, mut records: Vec<(u64, SeedRecord)>, strata: &[u32]) -> Batch {
        let asked: Vec<(usize, &Candidate)> = records
            .iter()
            .zip(strata)
            .filter_map(|((_, record), &stratum)| Some((stratum as usize, record.level.as_ref()?)))
            .collect();
        let mut checked = self.audit.check_many(&asked).into_iter();
        let checks: Vec<Result<(), CheckError>> = records
            .iter()
            .map(|(_, record)| match record.level {
                Some(_) => checked.next().unwrap_or(Ok(())),
                None => Ok(()),
            })
            .collect();
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
            let (Some(level), Some(game)) = (&record.level, self.games().get(stratum as usize))
            else {
                continue;
            };
            if let Err(e) = &check
                && let Some(fault) = self.contradicts_itself(game, seed, level, e)
            {
                return Batch::ProgramFault(fault);
            }
            if let Err(e) = &check
                && self.audit.has_checker()
                && self.generator_makes(game, seed, level)
            {
                // The job's checker refuses the level the generator itself
                // makes for the seed: the seed's verdict, no worker's fault.
                checker_refuses(record, e);
                continue;
            }
            if let Err(finding) = check
                .map_err(|error| Finding::Check { seed, error })
                .and_then(|()| self.audit.made_by(stratum as usize, seed, level))
                .and_then(|()| LevelAudit::rated_by(&self.built_in, seed, level))
            {
                return Batch::Forged(finding.into());
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
        let (Some(reason), Some(game)) = (&record.reason, self.games().get(stratum)) else {
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
        if self.audit.has_checker() || !game.kind().is_external() {
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
    pub fn judge_own(
        &self,
        stratum: u32,
        record: &mut SeedRecord,
    ) -> Result<(), pregen_games::CheckError> {
        let Some(level) = record.level.as_ref().filter(|_| self.audit.has_checker()) else {
            return Ok(());
        };
        let Some(checker) = self.audit.judges().get(stratum as usize) else {
            return Ok(());
        };
        match checker.check(level) {
            Ok(()) => Ok(()),
            Err(e) if e.is_broken() => Err(e),
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
        let stratum = self.audit.stratum(record.seed)?;
        self.own_reason(stratum, record)?;
        let Some(level) = &record.level else {
            return Ok(());
        };
        let audited = self.audit.audit(&[(record.seed, level)]);
        Ok(audited.into_iter().next().unwrap_or(Ok(()))?)
    }
}

/// Sets an accepted record's difficulty to `model`'s rating of it.
pub fn rate(model: &Model, record: &mut SeedRecord) -> Result<(), Refused> {
    let seed = record.seed;
    if let Some(level) = record.level.as_mut() {
        level.difficulty = LevelAudit::rating(model, seed, level)?;
    }
    Ok(())
}

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
            Err(Refused::Level(Finding::Difficulty { .. }))
        ));
        assert!(matches!(
            trust.admit_batch(vec![(1, harder)], &[0]),
            Batch::Forged(Refused::Level(Finding::Difficulty { .. }))
        ));
        let mut moved = record.clone();
        moved.seed += 1;
        assert!(matches!(
            trust.admit_stored(&moved),
            Err(Refused::Level(Finding::Check { .. }))
        ));
        assert!(matches!(
            trust.admit_batch(vec![(1, moved)], &[0]),
            Batch::Forged(Refused::Level(Finding::Check { .. }))
        ));
    }
}
