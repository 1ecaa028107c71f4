//! Each level of a release's level files checked by its stratum's judge:
//! its own facts (id, tier, ranks, moves and difficulty) against its seed's
//! level, its JSON form (given, else read from its text form, else the seed
//! file's) and hash against the seed file's, and its solution replayed when
//! the release ships it.

use std::collections::HashMap;

use pregen_games::{Candidate, sha256_hex};
use rayon::prelude::*;

use super::entries::Entry;
use super::{CHUNK, Games, Made, ReleaseReport, Sample, Seeds};
use crate::dir;
use crate::job::Job;

/// What every level of a release is checked against.
pub(super) struct Asked<'a> {
    /// The levels checked.
    pub(super) sample: Sample,
    pub(super) job: &'a Job,
    pub(super) games: &'a Games,
    pub(super) seeds: &'a Seeds,
    pub(super) solutions: &'a HashMap<String, String>,
}

/// What the reading of one level found: its failures, and the check it
/// asks of its stratum's game.
struct Judged {
    failures: Vec<(String, String)>,
    ask: Option<(usize, String, Candidate)>,
}

/// Checks `entries` on every thread: each level's own facts, then its
/// game's check, in chunks. Failures are reported in the entries' order.
pub(super) fn check_levels(asked_of: &Asked, entries: Vec<Entry>, report: &mut ReleaseReport) {
    let game_name = asked_of.job.game_name();
    let (chosen, skipped): (Vec<Entry>, Vec<Entry>) = entries
        .into_iter()
        .partition(|e| asked_of.sample.chooses(&dir::level_id(game_name, e.seed)));
    report.skipped += skipped.len() as u64;
    report.levels += chosen.len() as u64;
    let judged: Vec<Judged> = chosen
        .into_par_iter()
        .map(|entry| judge(asked_of, entry))
        .collect();
    let audit = &asked_of.games.1;
    let mut asked: Vec<(usize, String, Candidate)> = Vec::new();
    for judged in judged {
        report.failures.extend(judged.failures);
        asked.extend(judged.ask);
    }
    report.replayed += asked.len() as u64;
    let checked: Vec<Vec<(String, String)>> = asked
        .par_chunks(CHUNK)
        .map(|chunk| {
            let levels: Vec<(usize, &Candidate)> = chunk
                .iter()
                .map(|(index, _, level)| (*index, level))
                .collect();
            chunk
                .iter()
                .zip(audit.check_many(&levels))
                .filter_map(|((_, at, _), checked)| Some((at.clone(), checked.err()?.to_string())))
                .collect()
        })
        .collect();
    report.failures.extend(checked.into_iter().flatten());
}

/// One level's own facts checked (its id, tier, moves and difficulty
/// against its seed's level, its form and hash), and its game's check
/// made ready.
fn judge(asked_of: &Asked, entry: Entry) -> Judged {
    let mut failures = Vec::new();
    if let Some(why) = unlisted(asked_of, &entry) {
        failures.push((entry.at, why));
        return Judged {
            failures,
            ask: None,
        };
    }
    let said = |why: String| (entry.at.clone(), why);
    failures.extend(misplaced(asked_of.seeds, &entry).into_iter().map(said));
    let made = asked_of.seeds.made.get(&entry.seed);
    if let Some(made) = made {
        failures.extend(unlike_its_seeds(made, &entry).into_iter().map(said));
    }
    match asked(asked_of, entry, made) {
        Ok(ask) => Judged { failures, ask },
        Err(failure) => {
            failures.push(failure);
            Judged {
                failures,
                ask: None,
            }
        }
    }
}

/// Why the level is not one of the release's, if it is not: its id is not
/// its seed's, or no seed file lists the seed (when the release ships seed
/// files).
fn unlisted(asked_of: &Asked, entry: &Entry) -> Option<String> {
    let id = dir::level_id(asked_of.job.game_name(), entry.seed);
    if entry.id != id {
        return Some(format!("its id is not seed {}'s ({id})", entry.seed));
    }
    let tiers = &asked_of.seeds.tier_of;
    (!tiers.is_empty() && !tiers.contains_key(&entry.seed)).then(|| {
        format!(
            "seed {} is in no seed file: not a level of this release",
            entry.seed
        )
    })
}

/// The level's tier and ranks against the seed files'.
fn misplaced(seeds: &Seeds, entry: &Entry) -> Vec<String> {
    let mut failures = Vec::new();
    if let (Some(claimed), Some(tier)) = (entry.tier, seeds.tier_of.get(&entry.seed))
        && claimed != *tier
    {
        failures.push(format!(
            "it says tier {claimed}; its seed file puts it in tier {tier}"
        ));
    }
    if let Some(&(rank, overall)) = seeds.ranks.get(&entry.seed) {
        for (what, claimed, is) in [
            ("rank", entry.rank, rank),
            ("overall rank", entry.overall, overall),
        ] {
            if let Some(claimed) = claimed.filter(|c| *c != is) {
                failures.push(format!(
                    "it says {what} {claimed}; the seed files put it at {is}"
                ));
            }
        }
    }
    failures
}

/// The level's moves and difficulty against the level its seed makes and
/// the job's model's rating of it.
fn unlike_its_seeds(made: &Made, entry: &Entry) -> Vec<String> {
    let best = |optimal: bool| if optimal { "" } else { " (best found)" };
    let mut failures = Vec::new();
    if (made.moves, made.moves_optimal) != (entry.moves, entry.moves_optimal) {
        failures.push(format!(
            "it says {} moves{}; seed {} makes a level of {}{}",
            entry.moves,
            best(entry.moves_optimal),
            entry.seed,
            made.moves,
            best(made.moves_optimal),
        ));
    }
    if let (Some(claimed), Some(rated)) = (entry.difficulty, made.rated)
        && claimed.to_bits() != rated.to_bits()
    {
        failures.push(format!(
            "it says difficulty {claimed}; the job's model rates its level {rated}"
        ));
    }
    failures
}

/// The level as its stratum's judge is asked to check it: its JSON form
/// (given, else read from its text form, else the seed file's) and its
/// hash against the seed file's; `None` when the release ships no
/// solution to replay. `Err` is the failure that ends its check.
fn asked(
    asked_of: &Asked,
    entry: Entry,
    made: Option<&Made>,
) -> Result<Option<(usize, String, Candidate)>, (String, String)> {
    let (game, audit) = asked_of.games;
    let json = match (&entry.level_json, made) {
        (Some(json), _) => Ok(json.clone()),
        (None, _) if !game.is_external() => {
            game.text_to_json(&entry.layout).map_err(|e| e.to_string())
        }
        (
            None,
            Some(Made {
                level_json: Some(json),
                ..
            }),
        ) => Ok(json.clone()),
        (None, _) => {
            Err("a program's level in text, with no seed file to name its JSON form".into())
        }
    };
    let json = json.map_err(|e| (entry.at.clone(), format!("its text is not a level: {e}")))?;
    let hash = sha256_hex(json.as_bytes());
    if entry.level_hash.as_ref().is_some_and(|h| *h != hash) {
        return Err((entry.at, "level_hash is not the hash of level_json".into()));
    }
    if made.is_some_and(|m| m.level_hash != hash) {
        let why = format!(
            "it is not the level seed {} makes (its seed file's hash)",
            entry.seed
        );
        return Err((entry.at, why));
    }
    let id = dir::level_id(asked_of.job.game_name(), entry.seed);
    let Some(solution) = entry
        .solution
        .clone()
        .or_else(|| asked_of.solutions.get(&id).cloned())
    else {
        return Ok(None); // shipped without solutions: its form and hash are all there is
    };
    let index = audit
        .stratum(entry.seed)
        .map_err(|finding| (entry.at.clone(), finding.to_string()))?;
    let level = Candidate {
        difficulty: 0.0,
        moves: entry.moves,
        moves_optimal: entry.moves_optimal,
        layout: entry.layout,
        canonical: audit.judges()[index].canonical_hash(&json).ok().flatten(),
        level_json: json,
        solution,
        metrics: Default::default(),
        level_hash: hash,
    };
    Ok(Some((index, entry.at, level)))
}
