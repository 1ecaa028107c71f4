//! `pregen release verify`: a release checked with the shipped binary alone,
//! as its receiver would check it. A release is a pack folder, an unpacked
//! release archive (`<pack>/manifest.json` beside `<pack>/release/`), or the
//! `.tar.zst` archive itself (read as a stream, never unpacked: [`archive`]).
//!
//! What is checked, each failure named by file (and level):
//! - every file `release/SHA256SUMS` lists has its checksum, and no other
//!   file lies in `release/`; `SHA256SUMS` is the manifest's;
//! - every seed file regenerates, level by level, to the hashes it lists
//!   (through the game program for a program's pack);
//! - every level of every level file (text or JSON Lines, tiers and
//!   campaigns) passes its game's check with its stratum's params: its form,
//!   its hash (the seed file's, when shipped), and its solution (inline, or
//!   from the solutions file beside it) replayed to a win in its moves.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use pregen_games::seeds::SeedFile;
use pregen_games::{Candidate, GameKind, sha256_hex};
use rayon::prelude::*;
use serde::Deserialize;
use sha2::Digest;

use crate::audit::LevelAudit;
use crate::job::{Job, ProgramSource};
use crate::{PackError, dir};

mod account;
mod archive;
mod entries;
mod levels;

use account::{account, account_campaigns};
use archive::Source;
use entries::{Entry, campaign_of_file, is_level_file, tier_of_file};
use levels::{Asked, check_levels};

/// How much of a release a check looks at.
#[derive(Debug, Clone, Copy, Default)]
pub struct VerifyOptions<'a> {
    /// Checksums only: every file against `SHA256SUMS`, no seed
    /// regenerated, no level checked.
    pub sums_only: bool,
    /// Whose program judges a game program's release.
    pub judge: ProgramSource<'a>,
    /// About this many levels checked, and their seeds regenerated, chosen
    /// by the SHA-256 of their ids: the same sample on every run and
    /// machine (`None`: every level).
    pub sample: Option<u64>,
}

/// Which levels a sampled check looks at: those whose id's SHA-256, read
/// as a number, falls below a share of its range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// The share of levels chosen, 0 to 1.
    pub share: f64,
}

impl Sample {
    /// The sample of about `wanted` of `total` levels.
    fn of(wanted: u64, total: u64) -> Sample {
        Sample {
            share: match total {
                0 => 1.0,
                _ => (wanted as f64 / total as f64).min(1.0),
            },
        }
    }

    /// Whether the level of id `id` is in the sample.
    pub fn chooses(&self, id: &str) -> bool {
        if self.share >= 1.0 {
            return true;
        }
        let digest = sha2::Sha256::digest(id.as_bytes());
        let head = u64::from_be_bytes(digest[..8].try_into().unwrap_or_default());
        (head as f64) < self.share * 18_446_744_073_709_551_616.0
    }
}

/// What [`verify_release`] found.
#[derive(Debug, Default)]
pub struct ReleaseReport {
    /// Files checked against `SHA256SUMS`.
    pub files: u64,
    /// Levels checked in level files.
    pub levels: u64,
    /// Levels regenerated from seed files.
    pub regenerated: u64,
    /// Of the levels checked, those whose solution the release ships and
    /// their judge replayed (or, for a game program, its check accepted);
    /// the others were checked for their form and hash alone.
    pub replayed: u64,
    /// Whether the game is a program, whose own `check` judged the levels.
    pub by_program: bool,
    /// Whether the job's `[external] checker` judged them instead.
    pub by_checker: bool,
    /// Whether the program (and checker) that judged them are the ones the
    /// release carries (`[release] program = true`).
    pub carried_program: bool,
    /// The sample checked, when not every level was.
    pub sample: Option<Sample>,
    /// Levels of level files left out of the sample (or of a checksums-only
    /// check): read and accounted for, not checked.
    pub skipped: u64,
    /// The parts of `release/` the archive leaves out, as its manifest
    /// says (`campaigns`, `seeds`, `solutions`): not accounted for.
    pub left_out: Vec<String>,
    /// Whether only the checksums were checked.
    pub sums_only: bool,
    /// What failed: (file or level, what is wrong).
    pub failures: Vec<(String, String)>,
}

/// The parts of a (pack or release) manifest a check needs.
#[derive(Deserialize)]
struct Manifest {
    job: Job,
    /// The job's id as the manifest states it (checked against the job).
    #[serde(default)]
    job_id: String,
    #[serde(default)]
    files: BTreeMap<String, String>,
    counts: Option<Counts>,
    /// The parts of `release/` the archive leaves out.
    #[serde(default)]
    left_out: Vec<String>,
}

/// The manifest's counts a check needs.
#[derive(Deserialize)]
struct Counts {
    /// Accepted levels per tier, keyed `NN`.
    by_tier: BTreeMap<String, u64>,
}

/// What a check needs of a level its seed makes, kept small: a release's
/// worth of them is held for the whole check.
struct Made {
    moves: u32,
    moves_optimal: bool,
    level_hash: String,
    /// The job's model's rating of it (`None`: the model cannot rate it).
    rated: Option<f64>,
    /// Its JSON form, kept for a game program's levels only (their text
    /// form is the program's own, so a text file's level is named by it).
    level_json: Option<String>,
}

/// What the seed files say: each listed seed's tier and level, and each
/// tier's seeds in order.
#[derive(Default)]
struct Seeds {
    made: HashMap<u64, Made>,
    /// Each listed seed's rank in its tier and in the whole release, from
    /// 1, as the seed files' order gives them.
    ranks: HashMap<u64, (u64, u64)>,
    tier_of: HashMap<u64, u32>,
    by_tier: BTreeMap<u32, Vec<u64>>,
}

/// Checks the release at `path` (a pack folder, an unpacked archive or a
/// `.tar.zst` archive). `Err` only when it is not a release at all; every
/// other finding is in the report's failures.
pub fn verify_release(path: &Path) -> Result<ReleaseReport, PackError> {
    verify_release_with(path, VerifyOptions::default())
}

/// [`verify_release`] with `options`, a game program's release judged by
/// the program `options.judge` names ([`ProgramSource`]). The work runs on
/// the current rayon pool (its threads are the check's).
pub fn verify_release_with(
    path: &Path,
    options: VerifyOptions<'_>,
) -> Result<ReleaseReport, PackError> {
    if path.is_file() {
        return verify_source(path, &Source::archive(path)?, options);
    }
    let root = if path.join(dir::MANIFEST).is_file() {
        path.to_path_buf()
    } else if path.ends_with(dir::RELEASE)
        && path
            .parent()
            .is_some_and(|p| p.join(dir::MANIFEST).is_file())
    {
        path.parent().map(Path::to_path_buf).unwrap_or_default()
    } else {
        return Err(PackError::invalid(
            path,
            "is not a release: give a pack folder, an unpacked release archive or a .tar.zst archive",
        ));
    };
    verify_source(&root, &Source::Folder(root.clone()), options)
}

/// The release's manifest (`path` names it in errors).
fn read_manifest(path: &Path, source: &Source) -> Result<Manifest, PackError> {
    let manifest_path = path.join(dir::MANIFEST);
    let text = source
        .read(dir::MANIFEST)
        .map_err(|e| PackError::invalid(&manifest_path, format!("cannot be read: {e}")))?;
    serde_json::from_str(&text).map_err(|source| PackError::Json {
        path: manifest_path,
        source,
    })
}

/// The release's job checked against its id, and the job and games that
/// judge its levels: a game program's the one the receiver names
/// (crate::job::ProgramSource), never the command its manifest names, a
/// carried copy unpacked into `unpacked`. `None` when nothing can judge,
/// the failures saying why.
fn judged_by(
    source: &Source,
    manifest: &Manifest,
    judge: ProgramSource<'_>,
    unpacked: &tempfile::TempDir,
    report: &mut ReleaseReport,
) -> Result<Option<(Job, Games)>, PackError> {
    if let Some(why) = manifest.job.id_differs(&manifest.job_id) {
        report.failures.push(("manifest.json".into(), why));
    }
    let carried = match (judge, manifest.job.is_external()) {
        (ProgramSource::Carried, true) => source.program_dir(unpacked.path())?,
        _ => None,
    };
    let job = match judge_job(manifest, judge, carried.as_deref()) {
        Ok(job) => job,
        Err(failure) => {
            report.failures.push(failure);
            return Ok(None);
        }
    };
    report.carried_program = carried.is_some();
    match prepare(&job) {
        Ok(games) => Ok(Some((job, games))),
        Err(e) => {
            report.failures.push((
                "manifest.json".into(),
                format!("its game cannot be run: {e}"),
            ));
            Ok(None)
        }
    }
}

/// The job whose game judges the release's levels ([`Job::judge_for_verify`]),
/// or the failure that says why there is none, as (what, why).
fn judge_job(
    manifest: &Manifest,
    judge: ProgramSource<'_>,
    carried: Option<&Path>,
) -> Result<Job, (String, String)> {
    manifest
        .job
        .judge_for_verify(&manifest.job_id, judge, carried)
        .map_err(|e| {
            let said = e.to_string();
            let why = said.strip_prefix("invalid job: ").unwrap_or(&said);
            match (judge, carried) {
                (ProgramSource::Carried, Some(_)) => (
                    format!("{}/{}/", dir::RELEASE, crate::job::PROGRAM_FOLDER),
                    format!("the program the release carries cannot judge: {why}"),
                ),
                (ProgramSource::Carried, None) => (
                    "manifest.json".into(),
                    format!("the program the release carries cannot judge: {why}"),
                ),
                _ => ("manifest.json".into(), why.to_string()),
            }
        })
}

/// Checks the release whose files `source` reads (`path` names it in errors).
fn verify_source(
    path: &Path,
    source: &Source,
    options: VerifyOptions<'_>,
) -> Result<ReleaseReport, PackError> {
    let manifest = read_manifest(path, source)?;
    let mut report = ReleaseReport {
        left_out: manifest.left_out.clone(),
        ..ReleaseReport::default()
    };
    let listed = check_sums(path, source, &manifest, &mut report)?;
    if options.sums_only {
        report.sums_only = true;
        return Ok(report);
    }
    let total: u64 = manifest
        .counts
        .as_ref()
        .map_or(0, |c| c.by_tier.values().sum());
    let sample = options.sample.map(|wanted| Sample::of(wanted, total));
    report.sample = sample;
    let sample = sample.unwrap_or(Sample { share: 1.0 });
    // Unpacked here a carried program lives while the check runs.
    let unpacked = tempfile::tempdir().map_err(PackError::io("create", std::env::temp_dir()))?;
    let Some((job, games)) = judged_by(source, &manifest, options.judge, &unpacked, &mut report)?
    else {
        return Ok(report);
    };
    let job = &job;
    report.by_program = games.0.is_external();
    report.by_checker = job.external.as_ref().is_some_and(|e| !e.checker.is_empty());
    let seeds = regenerate(
        source,
        &listed,
        (&games.0, job.game_name(), &games.1),
        sample,
        &mut report,
    );
    let solutions = solutions_apart(source, &listed, &mut report);
    let level_files: Vec<&String> = listed.iter().filter(|n| is_level_file(n)).collect();
    // Each file's (seed, difficulty) listing, by name: the files come in any
    // order, their listings are put together in name order.
    let mut listings: BTreeMap<String, Vec<(u64, f64)>> = BTreeMap::new();
    let asked = Asked {
        job,
        games: &games,
        seeds: &seeds,
        solutions: &solutions,
        sample,
    };
    // Each campaign's seeds in order: from the campaigns' file (each level
    // names its campaign), or from a campaign's own file (older releases).
    let mut in_campaigns: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    // Levels wait here until enough are read to share among the threads,
    // and are checked together.
    let mut waiting: Vec<Entry> = Vec::new();
    source.each_release_text(&level_files, &mut |name, text| {
        let form = crate::job::ReleaseFormat::of_file(name).unwrap_or_default();
        match form.read_entries(name, &text).map_err(|e| e.to_string()) {
            Ok(entries) => {
                let by_file = campaign_of_file(name);
                for e in &entries {
                    if let Some(campaign) = e.campaign.or(by_file) {
                        in_campaigns.entry(campaign).or_default().push(e.seed);
                    }
                }
                listings.insert(
                    name.to_string(),
                    entries
                        .iter()
                        .map(|e| (e.seed, e.difficulty.unwrap_or(f64::NAN)))
                        .collect(),
                );
                waiting.extend(entries);
                if waiting.len() >= CHECK_BATCH {
                    check_levels(&asked, std::mem::take(&mut waiting), &mut report);
                }
            }
            Err(e) => report.failures.push((name.to_string(), e)),
        }
    })?;
    check_levels(&asked, waiting, &mut report);
    let mut tier_files: BTreeMap<u32, Vec<(u64, f64)>> = BTreeMap::new();
    let campaign_files = in_campaigns;
    for (name, listing) in listings {
        if let Some(tier) = tier_of_file(&name) {
            tier_files.entry(tier).or_default().extend(listing);
        }
    }
    if !seeds.by_tier.is_empty() {
        account(&manifest, &seeds, &tier_files, &mut report);
        if !manifest.left_out.iter().any(|part| part == "campaigns") {
            account_campaigns(job, &seeds, &campaign_files, &mut report);
        }
    }
    Ok(report)
}

/// Every file `SHA256SUMS` lists has its checksum; no other file lies in
/// `release/`; `SHA256SUMS` is the manifest's. The names it lists.
fn check_sums(
    path: &Path,
    source: &Source,
    manifest: &Manifest,
    report: &mut ReleaseReport,
) -> Result<Vec<String>, PackError> {
    let sums_name = format!("{}/{}", dir::RELEASE, dir::SHA256SUMS);
    let sums = source
        .read(&sums_name)
        .map_err(|e| PackError::invalid(path.join(&sums_name), format!("cannot be read: {e}")))?;
    let listed_sum = manifest
        .files
        .get(&format!("{}/{}", dir::RELEASE, dir::SHA256SUMS));
    if listed_sum.is_some_and(|sum| *sum != sha256_hex(sums.as_bytes())) {
        report.failures.push((
            dir::SHA256SUMS.into(),
            "its SHA-256 is not the manifest's".into(),
        ));
    }
    // The checksums, on every thread, before the lines are gone through in
    // order.
    let names: Vec<&str> = sums
        .lines()
        .filter_map(|line| Some(line.split_once("  ")?.1))
        .collect();
    let actual: HashMap<&str, Result<Option<String>, archive::Unread>> = names
        .par_iter()
        .filter(|name| {
            !name.split('/').any(|part| part == ".." || part.is_empty()) && !name.starts_with('/')
        })
        .map(|&name| (name, source.sha256(&format!("{}/{name}", dir::RELEASE))))
        .collect();
    let mut listed = Vec::new();
    for (i, line) in sums.lines().enumerate() {
        let Some((sum, name)) = line.split_once("  ") else {
            report.failures.push((
                dir::SHA256SUMS.into(),
                format!("line {} is not `SHA256  NAME`", i + 1),
            ));
            continue;
        };
        if name.split('/').any(|part| part == ".." || part.is_empty()) || name.starts_with('/') {
            report.failures.push((
                dir::SHA256SUMS.into(),
                format!("line {} names a file outside the release: {name}", i + 1),
            ));
            continue;
        }
        report.files += 1;
        let found = match actual.get(name) {
            Some(Ok(sum)) => Ok(sum.clone()),
            Some(Err(e)) => Err(e.to_string()),
            None => Err("not read".to_string()),
        };
        match found {
            Ok(Some(actual)) if actual == sum => {}
            Ok(Some(_)) => report.failures.push((
                name.into(),
                "its SHA-256 is not the one SHA256SUMS lists".into(),
            )),
            Ok(None) => report.failures.push((
                name.into(),
                "is not a regular file (a link, a folder or a device): not read".into(),
            )),
            Err(e) => report
                .failures
                .push((name.into(), format!("cannot be read: {e}"))),
        }
        listed.push(name.to_string());
    }
    let known: HashSet<&str> = listed.iter().map(String::as_str).collect();
    let strays = source
        .release_files()?
        .into_iter()
        .filter(|name| name != dir::SHA256SUMS && !known.contains(name.as_str()));
    for name in strays {
        report
            .failures
            .push((name, "is not listed in SHA256SUMS".into()));
    }
    Ok(listed)
}

/// The job's game, and the level audit that holds its levels to their
/// judges' checks and its model's ratings.
type Games = (GameKind, LevelAudit);

fn prepare(job: &Job) -> Result<Games, PackError> {
    Ok((job.game_kind()?, LevelAudit::new(job)?))
}

/// Levels checked together, shared among the threads.
const CHECK_BATCH: usize = 4096;

/// Seeds regenerated by one task, and levels sent to a game's check at once.
const CHUNK: usize = 64;

/// Every seed file regenerated (its seeds in `sample`, on every thread):
/// the levels it makes, by seed, and the tiers the files give.
fn regenerate(
    source: &Source,
    listed: &[String],
    (game, game_name, audit): (&GameKind, &str, &LevelAudit),
    sample: Sample,
    report: &mut ReleaseReport,
) -> Seeds {
    let mut seeds = Seeds::default();
    for name in listed.iter().filter(|n| n.starts_with("seeds/")) {
        let Ok(text) = source.read(&format!("{}/{name}", dir::RELEASE)) else {
            continue;
        };
        let file = match SeedFile::parse(&text) {
            Ok(file) => file,
            Err(e) => {
                report.failures.push((name.clone(), e.to_string()));
                continue;
            }
        };
        let (tier, count) = (file.header.tier, file.header.levels);
        if count != file.levels.len() as u64 {
            report.failures.push((
                name.clone(),
                format!(
                    "its header counts {count} levels, it lists {}",
                    file.levels.len()
                ),
            ));
        }
        let order = seeds.by_tier.entry(tier).or_default();
        for &(seed, _) in &file.levels {
            order.push(seed);
            if seeds.tier_of.insert(seed, tier).is_some() {
                report
                    .failures
                    .push((name.clone(), format!("seed {seed} is listed twice")));
            }
        }
        let chosen: Vec<(u64, String)> = file
            .levels
            .iter()
            .filter(|(seed, _)| sample.chooses(&dir::level_id(game_name, *seed)))
            .cloned()
            .collect();
        let made = chosen
            .par_chunks(CHUNK)
            .map(|part| {
                let part = SeedFile {
                    header: file.header.clone(),
                    levels: part.to_vec(),
                };
                match part.header.program {
                    Some(_) => part.regenerate_with(game),
                    None => part.regenerate(),
                }
            })
            .collect::<Result<Vec<Vec<Candidate>>, _>>();
        match made {
            Ok(made) => {
                let made: Vec<Candidate> = made.into_iter().flatten().collect();
                report.regenerated += made.len() as u64;
                for ((seed, _), level) in chosen.into_iter().zip(made) {
                    let rated = LevelAudit::rating(audit.model(), seed, &level).ok();
                    let made = Made {
                        moves: level.moves,
                        moves_optimal: level.moves_optimal,
                        level_hash: level.level_hash,
                        rated,
                        level_json: game.is_external().then_some(level.level_json),
                    };
                    seeds.made.insert(seed, made);
                }
            }
            Err(e) => report.failures.push((name.clone(), e.to_string())),
        }
    }
    let mut overall = 0;
    for listed in seeds.by_tier.values() {
        for (i, &seed) in listed.iter().enumerate() {
            overall += 1;
            seeds.ranks.insert(seed, (i as u64 + 1, overall));
        }
    }
    seeds
}

/// The solutions of the solutions files, by level id.
fn solutions_apart(
    source: &Source,
    listed: &[String],
    report: &mut ReleaseReport,
) -> HashMap<String, String> {
    let mut solutions = HashMap::new();
    for name in listed.iter().filter(|n| n.starts_with("solutions/")) {
        let Ok(text) = source.read(&format!("{}/{name}", dir::RELEASE)) else {
            continue;
        };
        for (i, line) in text.lines().enumerate() {
            match line.split_once(' ') {
                Some((id, solution)) => {
                    solutions.insert(id.to_string(), solution.to_string());
                }
                None => report.failures.push((
                    name.clone(),
                    format!("line {} is not `LEVEL_ID SOLUTION`", i + 1),
                )),
            }
        }
    }
    solutions
}
