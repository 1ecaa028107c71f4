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

use pregen_games::rating::Model;
use pregen_games::seeds::SeedFile;
use pregen_games::{Candidate, GameKind, PreparedGame, sha256_hex};
use serde::Deserialize;

use crate::job::Job;
use crate::{PackError, dir};

mod account;
mod archive;
mod entries;

use account::{account, account_campaigns};
use archive::Source;
use entries::{Entry, campaign_of_file, is_level_file, jsonl_entries, text_entries, tier_of_file};

/// What [`verify_release`] found.
#[derive(Debug, Default)]
pub struct ReleaseReport {
    /// Files checked against `SHA256SUMS`.
    pub files: u64,
    /// Levels checked in level files.
    pub levels: u64,
    /// Levels regenerated from seed files.
    pub regenerated: u64,
    /// Whether the game is a program, whose own `check` judged the levels.
    pub by_program: bool,
    /// Whether the job's `[external] checker` judged them instead.
    pub by_checker: bool,
    /// Whether the program (and checker) that judged them are the ones the
    /// release carries (`[release] program = true`).
    pub carried_program: bool,
    /// What failed: (file or level, what is wrong).
    pub failures: Vec<(String, String)>,
}

/// The parts of a (pack or release) manifest a check needs.
#[derive(Deserialize)]
struct Manifest {
    job: Job,
    #[serde(default)]
    files: BTreeMap<String, String>,
    counts: Option<Counts>,
}

/// The manifest's counts a check needs.
#[derive(Deserialize)]
struct Counts {
    /// Accepted levels per tier, keyed `NN`.
    by_tier: BTreeMap<String, u64>,
}

/// What the seed files say: each listed seed's tier and level, and each
/// tier's seeds in order.
#[derive(Default)]
struct Seeds {
    made: HashMap<u64, Candidate>,
    tier_of: HashMap<u64, u32>,
    by_tier: BTreeMap<u32, Vec<u64>>,
}

/// Checks the release at `path` (a pack folder, an unpacked archive or a
/// `.tar.zst` archive). `Err` only when it is not a release at all; every
/// other finding is in the report's failures.
pub fn verify_release(path: &Path) -> Result<ReleaseReport, PackError> {
    verify_release_with(path, None)
}

/// [`verify_release`], a game program's release judged by the program in
/// `program_dir` (held to the release's identity: [`Job::with_program_dir`])
/// instead of the folder it ran from.
pub fn verify_release_with(
    path: &Path,
    program_dir: Option<&Path>,
) -> Result<ReleaseReport, PackError> {
    if path.is_file() {
        return verify_source(path, &Source::archive(path)?, program_dir);
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
    verify_source(&root, &Source::Folder(root.clone()), program_dir)
}

/// Checks the release whose files `source` reads (`path` names it in errors).
fn verify_source(
    path: &Path,
    source: &Source,
    program_dir: Option<&Path>,
) -> Result<ReleaseReport, PackError> {
    let manifest_path = path.join(dir::MANIFEST);
    let text = source
        .read(dir::MANIFEST)
        .map_err(|e| PackError::invalid(&manifest_path, format!("cannot be read: {e}")))?;
    let manifest: Manifest = serde_json::from_str(&text).map_err(|source| PackError::Json {
        path: manifest_path.clone(),
        source,
    })?;
    let mut report = ReleaseReport::default();
    let listed = check_sums(path, source, &manifest, &mut report)?;
    // A game program's release judged by the program given, else by the
    // one it carries, else by the one at the folder it ran from.
    let unpacked = tempfile::tempdir().map_err(PackError::io("create", std::env::temp_dir()))?;
    let carried = match (program_dir, manifest.job.is_external()) {
        (None, true) => source.program_dir(unpacked.path())?,
        _ => None,
    };
    let moved;
    let job = match (program_dir, carried.as_deref()) {
        (Some(dir), _) => {
            moved = manifest.job.with_program_dir(dir)?;
            &moved
        }
        (None, Some(dir)) => match manifest.job.with_program_dir(dir) {
            Ok(job) => {
                moved = job;
                &moved
            }
            Err(e) => {
                let said = e.to_string();
                let why = said
                    .strip_prefix("invalid job: --program-dir: ")
                    .unwrap_or(&said);
                report.failures.push((
                    format!("{}/{}/", dir::RELEASE, crate::job::PROGRAM_FOLDER),
                    format!("the program the release carries cannot judge: {why}"),
                ));
                return Ok(report);
            }
        },
        (None, None) => &manifest.job,
    };
    report.carried_program = carried.is_some();
    let games = match prepare(job) {
        Ok(games) => games,
        Err(e) => {
            report.failures.push((
                "manifest.json".into(),
                format!("its game cannot be run: {e}"),
            ));
            return Ok(report);
        }
    };
    report.by_program = games.0.is_external();
    report.by_checker = job.external.as_ref().is_some_and(|e| !e.checker.is_empty());
    let seeds = regenerate(source, &listed, games.0, &mut report);
    let solutions = solutions_apart(source, &listed, &mut report);
    let model = job.rating_model().ok();
    let level_files: Vec<&String> = listed.iter().filter(|n| is_level_file(n)).collect();
    // Each file's (seed, difficulty) listing, by name: the files come in any
    // order, their listings are put together in name order.
    let mut listings: BTreeMap<String, Vec<(u64, f64)>> = BTreeMap::new();
    let asked = Asked {
        job,
        games: &games,
        seeds: &seeds,
        solutions: &solutions,
        model: model.as_ref(),
    };
    source.each_release_text(&level_files, &mut |name, text| {
        let entries = match name.ends_with(".jsonl") {
            true => jsonl_entries(name, &text),
            false => text_entries(name, &text),
        };
        match entries {
            Ok(entries) => {
                listings.insert(
                    name.to_string(),
                    entries
                        .iter()
                        .map(|e| (e.seed, e.difficulty.unwrap_or(f64::NAN)))
                        .collect(),
                );
                check_levels(&asked, entries, &mut report);
            }
            Err(e) => report.failures.push((name.to_string(), e)),
        }
    })?;
    let mut tier_files: BTreeMap<u32, Vec<(u64, f64)>> = BTreeMap::new();
    let mut campaign_files: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for (name, listing) in listings {
        if let Some(campaign) = campaign_of_file(&name) {
            campaign_files
                .entry(campaign)
                .or_default()
                .extend(listing.iter().map(|&(seed, _)| seed));
        }
        if let Some(tier) = tier_of_file(&name) {
            tier_files.entry(tier).or_default().extend(listing);
        }
    }
    if !seeds.by_tier.is_empty() {
        account(&manifest, &seeds, &tier_files, &mut report);
        account_campaigns(job, &seeds, &campaign_files, &mut report);
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
        match source.sha256(&format!("{}/{name}", dir::RELEASE)) {
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

/// The job's game and each stratum's judge (its `[external] checker`, else
/// its game), with its first seed.
type Games = (GameKind, Vec<(u64, PreparedGame)>);

fn prepare(job: &Job) -> Result<Games, PackError> {
    Ok((job.game_kind()?, job.judging_strata()?))
}

/// Every seed file regenerated: the levels it makes, by seed, and the
/// tiers the files give.
fn regenerate(
    source: &Source,
    listed: &[String],
    game: GameKind,
    report: &mut ReleaseReport,
) -> Seeds {
    let mut seeds = Seeds::default();
    for name in listed.iter().filter(|n| n.starts_with("seeds/")) {
        let Ok(text) = source.read(&format!("{}/{name}", dir::RELEASE)) else {
            continue;
        };
        let regenerated = SeedFile::parse(&text).and_then(|file| {
            let levels = match file.header.program {
                Some(_) => file.regenerate_with(game),
                None => file.regenerate(),
            }?;
            Ok((file.header.tier, file.header.levels, file.levels, levels))
        });
        match regenerated {
            Ok((tier, count, listed_seeds, levels)) => {
                report.regenerated += levels.len() as u64;
                if count != listed_seeds.len() as u64 {
                    report.failures.push((
                        name.clone(),
                        format!(
                            "its header counts {count} levels, it lists {}",
                            listed_seeds.len()
                        ),
                    ));
                }
                let order = seeds.by_tier.entry(tier).or_default();
                for ((seed, _), level) in listed_seeds.into_iter().zip(levels) {
                    order.push(seed);
                    if seeds.tier_of.insert(seed, tier).is_some() {
                        report
                            .failures
                            .push((name.clone(), format!("seed {seed} is listed twice")));
                    }
                    seeds.made.insert(seed, level);
                }
            }
            Err(e) => report.failures.push((name.clone(), e.to_string())),
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

/// Each level checked by its stratum's game: its JSON form (given, else
/// read from its text form, else the seed file's), its hash against the
/// seed file's, and its solution replayed, when the release ships it.
/// What every level of a release is checked against.
struct Asked<'a> {
    job: &'a Job,
    games: &'a Games,
    seeds: &'a Seeds,
    solutions: &'a HashMap<String, String>,
    /// The job's rating model (a level's difficulty is its rating).
    model: Option<&'a Model>,
}

fn check_levels(asked_of: &Asked, entries: Vec<Entry>, report: &mut ReleaseReport) {
    let Asked {
        job,
        games,
        seeds,
        solutions,
        model,
    } = asked_of;
    let (game, strata) = games;
    let mut asked: Vec<Vec<(String, Candidate)>> = strata.iter().map(|_| Vec::new()).collect();
    for entry in entries {
        report.levels += 1;
        let id = dir::level_id(job.game_name(), entry.seed);
        if entry.id != id {
            report.failures.push((
                entry.at,
                format!("its id is not seed {}'s ({id})", entry.seed),
            ));
            continue;
        }
        if !seeds.tier_of.is_empty() && !seeds.tier_of.contains_key(&entry.seed) {
            report.failures.push((
                entry.at,
                format!(
                    "seed {} is in no seed file: not a level of this release",
                    entry.seed
                ),
            ));
            continue;
        }
        if let (Some(claimed), Some(tier)) = (entry.tier, seeds.tier_of.get(&entry.seed))
            && claimed != *tier
        {
            report.failures.push((
                entry.at.clone(),
                format!("it says tier {claimed}; its seed file puts it in tier {tier}"),
            ));
        }
        let made = seeds.made.get(&entry.seed);
        if let Some(made) = made {
            if (made.moves, made.moves_optimal) != (entry.moves, entry.moves_optimal) {
                report.failures.push((
                    entry.at.clone(),
                    format!(
                        "it says {} moves{}; seed {} makes a level of {}{}",
                        entry.moves,
                        if entry.moves_optimal {
                            ""
                        } else {
                            " (best found)"
                        },
                        entry.seed,
                        made.moves,
                        if made.moves_optimal {
                            ""
                        } else {
                            " (best found)"
                        },
                    ),
                ));
            }
            let rated = model.and_then(|m| m.rate(Model::features(&made.metrics, made.moves)).ok());
            if let (Some(claimed), Some(rated)) = (entry.difficulty, rated)
                && claimed.to_bits() != rated.to_bits()
            {
                report.failures.push((
                    entry.at.clone(),
                    format!(
                        "it says difficulty {claimed}; the job's model rates its level {rated}"
                    ),
                ));
            }
        }
        let json = match (&entry.level_json, made) {
            (Some(json), _) => Ok(json.clone()),
            (None, _) if !game.is_external() => {
                game.text_to_json(&entry.layout).map_err(|e| e.to_string())
            }
            (None, Some(made)) => Ok(made.level_json.clone()),
            (None, None) => {
                Err("a program's level in text, with no seed file to name its JSON form".into())
            }
        };
        let json = match json {
            Ok(json) => json,
            Err(e) => {
                report
                    .failures
                    .push((entry.at, format!("its text is not a level: {e}")));
                continue;
            }
        };
        let hash = sha256_hex(json.as_bytes());
        if entry.level_hash.as_ref().is_some_and(|h| *h != hash) {
            report
                .failures
                .push((entry.at, "level_hash is not the hash of level_json".into()));
            continue;
        }
        if made.is_some_and(|m| m.level_hash != hash) {
            report.failures.push((
                entry.at,
                format!(
                    "it is not the level seed {} makes (its seed file's hash)",
                    entry.seed
                ),
            ));
            continue;
        }
        let Some(solution) = entry
            .solution
            .clone()
            .or_else(|| solutions.get(&id).cloned())
        else {
            continue; // shipped without solutions: its form and hash are all there is
        };
        let Some(index) = crate::job::stratum_at(strata, entry.seed) else {
            report.failures.push((
                entry.at,
                format!("seed {} is not one of the job's", entry.seed),
            ));
            continue;
        };
        let level = Candidate {
            difficulty: 0.0,
            moves: entry.moves,
            moves_optimal: entry.moves_optimal,
            layout: entry.layout,
            canonical: strata[index].1.canonical_hash(&json).ok().flatten(),
            level_json: json,
            solution,
            metrics: Default::default(),
            level_hash: hash,
        };
        asked[index].push((entry.at, level));
    }
    for ((_, game), asked) in strata.iter().zip(asked) {
        let levels: Vec<&Candidate> = asked.iter().map(|(_, level)| level).collect();
        for ((at, _), checked) in asked.iter().zip(game.check_many(&levels)) {
            if let Err(e) = checked {
                report.failures.push((at.clone(), e.to_string()));
            }
        }
    }
}
