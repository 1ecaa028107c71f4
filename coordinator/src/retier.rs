//! Retuning without regenerating: a finished pack rated again by another
//! model, from its commit log, without running one seed.
//!
//! The pack's job gets the new `[rating]` model and its new name (so a new
//! job id); its commit
//! log is replayed as a resume would (the same selection of seeds: the first
//! `count` accepted in seed order, duplicates decided by seed), each selected
//! record's difficulty is the new model's rating of its metrics and moves,
//! and the pack is written anew into another folder: tiers, campaigns,
//! Parquet, release files and manifest. The result is byte for byte the pack a
//! run of the job with that model from the start would write (its run facts,
//! such as the cross-check's counts, are the original run's).

use std::path::Path;
use std::time::{Duration, Instant};

use pregen_pack::job::{ProgramSource, RatingSpec};
use pregen_pack::write::{PackWriter, RunFacts, WriteOptions};
use pregen_pack::{Job, Manifest, PackDir};

use crate::commit_log::CommitLog;
use crate::commit_log::key::LogKey;
use crate::scheduler::{Scheduler, SchedulerConfig};
use crate::server::write_from_log;
use crate::trust::rate;
use crate::{CoordinatorError, ResumeError};

/// What a retier did.
#[derive(Debug, Clone)]
pub struct Retiered {
    /// The new pack's job (the old one with the new model).
    pub job: Job,
    /// Levels rated again.
    pub levels: u64,
    /// Wall-clock time.
    pub elapsed: Duration,
}

/// What `retier` of a game program's pack asks for when no program is named.
pub const RETIER_NAMES_A_PROGRAM: &str = "a game program's pack is rated again by a program you \
    name, never by the command its manifest names: --job FILE (the job that made it; its id \
    must be the pack's), or --program-dir DIR (your copy of the program)";

/// The manifest of the finished pack in `old_dir` (`pack` names it), refused
/// unless the pack is complete and holds its commit log.
fn finished_manifest(old_dir: &PackDir, pack: &Path) -> Result<Manifest, CoordinatorError> {
    if !old_dir.is_complete() {
        return Err(ResumeError::NotFinished {
            pack: pack.to_path_buf(),
        }
        .into());
    }
    if !old_dir.commit().join("job.json").is_file() {
        return Err(ResumeError::NoCommitLog {
            pack: pack.to_path_buf(),
        }
        .into());
    }
    Ok(old_dir.read_manifest()?)
}

/// The new pack's job: the manifest's, named `name`, rated by the model of
/// `model_text`, its game a program's only as `judge` names it.
fn rerated_job(
    manifest: &Manifest,
    (model_text, name): (&str, &str),
    judge: ProgramSource<'_>,
) -> Result<Job, CoordinatorError> {
    if manifest.job.is_external() && matches!(judge, ProgramSource::Unnamed) {
        return Err(pregen_pack::PackError::Job(RETIER_NAMES_A_PROGRAM.into()).into());
    }
    let mut job = manifest
        .job
        .judge_for_verify(&manifest.job_id, judge, None)?;
    job.pack = name.to_string();
    job.rating = RatingSpec {
        model: String::new(),
        model_text: model_text.to_string(),
    };
    job.validate()?;
    Ok(job)
}

/// Rates the finished pack in `pack` again with the model whose TOML text is
/// `model_text` and writes the new pack, named `name` (its job's `pack`), to
/// `out` (a folder that must not hold anything yet).
///
/// A game program's pack is rated by the program `judge` names (the job
/// that made it, or your copy of the program), never by the command its
/// manifest names; without one it is refused.
pub fn retier(
    pack: &Path,
    (model_text, name): (&str, &str),
    out: &Path,
    options: WriteOptions,
    judge: ProgramSource<'_>,
) -> Result<Retiered, CoordinatorError> {
    let started = Instant::now();
    let old_dir = PackDir::new(pack);
    let manifest = finished_manifest(&old_dir, pack)?;
    let old_job = manifest.job.clone();
    let job = rerated_job(&manifest, (model_text, name), judge)?;
    // A game program's game, held while the pack is rated and written: the
    // program starts once.
    let _program = job.game_kind()?;
    let model = job.rating_model()?;
    if out.exists() && std::fs::read_dir(out).is_ok_and(|mut d| d.next().is_some()) {
        return Err(ResumeError::NotEmpty {
            out: out.to_path_buf(),
        }
        .into());
    }
    let key = LogKey::read(&old_dir.commit())?.ok_or_else(|| ResumeError::MissingKey {
        commit: old_dir.commit(),
        file: crate::commit_log::key::KEY_FILE,
    })?;
    // The selection as the run made it. No new samples or audits: the pack
    // was complete, its checks settled in the log.
    let mut scheduler = Scheduler::start(SchedulerConfig {
        strata: old_job
            .plan()
            .iter()
            .map(|p| (p.first_seed, p.count))
            .collect(),
        seeds_per_lease: old_job.seeds_per_lease,
        lease_ttl: Duration::from_secs(1),
        max_seeds: None,
        progress_limit: Duration::from_secs(1),
        cross_check: 0.0,
        check_key: key.bytes(),
        audit_duplicate_levels: false,
        bands: old_job.plan().iter().map(|p| p.band).collect(),
    });
    let mut log = CommitLog::open(&old_dir.commit(), &old_job, key, |e| scheduler.replay(e))?;
    scheduler.end_replay();
    let selection = scheduler
        .take_selection()
        .ok_or_else(|| ResumeError::Incomplete {
            commit: old_dir.commit(),
        })?;
    let dir = PackDir::new(out);
    let writer = PackWriter::new(&dir, &job, options)?;
    let facts = RunFacts {
        mismatches: manifest.mismatches,
        protocol: manifest.versions.protocol,
        cross_check: manifest.cross_check,
        computed: manifest.strata.iter().map(|s| s.computed).collect(),
    };
    let mut failed = None;
    write_from_log(
        &mut log,
        writer,
        &dir,
        &old_job,
        selection,
        &facts,
        |record| {
            if let Err(e) = rate(&model, record) {
                failed.get_or_insert(e);
            }
        },
    )?;
    if let Some(e) = failed {
        return Err(ResumeError::Unrated(e).into());
    }
    Ok(Retiered {
        levels: job.count,
        job,
        elapsed: started.elapsed(),
    })
}
