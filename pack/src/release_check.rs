//! `pregen release verify`: a release checked with the shipped binary alone,
//! as its receiver would check it. A release is a pack folder, an unpacked
//! release archive (`<pack>/manifest.json` beside `<pack>/release/`), or the
//! `.tar.zst` archive itself (unpacked into a temporary folder first).
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
use pregen_games::{Candidate, GameKind, PreparedGame, sha256_hex};
use serde::Deserialize;

use crate::job::Job;
use crate::{PackError, dir};

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
    /// What failed: (file or level, what is wrong).
    pub failures: Vec<(String, String)>,
}

/// The parts of a (pack or release) manifest a check needs.
#[derive(Deserialize)]
struct Manifest {
    job: Job,
    #[serde(default)]
    files: BTreeMap<String, String>,
}

/// One level as a release file gives it.
struct Entry {
    /// Where: the file and the level's id.
    at: String,
    seed: u64,
    layout: String,
    level_json: Option<String>,
    level_hash: Option<String>,
    solution: Option<String>,
    moves: u32,
    moves_optimal: bool,
}

/// Checks the release at `path` (a pack folder, an unpacked archive or a
/// `.tar.zst` archive). `Err` only when it is not a release at all; every
/// other finding is in the report's failures.
pub fn verify_release(path: &Path) -> Result<ReleaseReport, PackError> {
    if path.is_file() {
        let unpacked =
            tempfile::tempdir().map_err(PackError::io("create a temporary folder", path))?;
        unpack(path, unpacked.path())?;
        let mut folders = std::fs::read_dir(unpacked.path())
            .map_err(PackError::io("read", unpacked.path()))?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_dir());
        let root = match (folders.next(), folders.next()) {
            (Some(root), None) => root,
            _ => {
                return Err(PackError::invalid(
                    path,
                    "is not a release archive: it does not hold one pack folder",
                ));
            }
        };
        return verify_folder(&root);
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
    verify_folder(&root)
}

/// Unpacks a release archive into `into`: entries that would land outside
/// it are refused by the tar reader.
fn unpack(archive: &Path, into: &Path) -> Result<(), PackError> {
    let file = std::fs::File::open(archive).map_err(PackError::io("open", archive))?;
    let zstd = zstd::Decoder::new(file).map_err(PackError::io("read", archive))?;
    tar::Archive::new(zstd).unpack(into).map_err(|e| {
        PackError::invalid(archive, format!("is not a release archive (.tar.zst): {e}"))
    })
}

fn verify_folder(root: &Path) -> Result<ReleaseReport, PackError> {
    let manifest_path = root.join(dir::MANIFEST);
    let text =
        std::fs::read_to_string(&manifest_path).map_err(PackError::io("read", &manifest_path))?;
    let manifest: Manifest = serde_json::from_str(&text).map_err(|source| PackError::Json {
        path: manifest_path.clone(),
        source,
    })?;
    let release = root.join(dir::RELEASE);
    let mut report = ReleaseReport::default();
    let listed = check_sums(&release, &manifest, &mut report)?;
    let job = &manifest.job;
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
    let seeds = regenerate(&release, &listed, games.0, &mut report);
    let solutions = solutions_apart(&release, &listed, &mut report);
    for name in listed.iter().filter(|n| is_level_file(n)) {
        let path = release.join(name);
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue; // its checksum already failed
        };
        let entries = match name.ends_with(".jsonl") {
            true => jsonl_entries(name, &text),
            false => text_entries(name, &text),
        };
        let entries = match entries {
            Ok(entries) => entries,
            Err(e) => {
                report.failures.push((name.clone(), e));
                continue;
            }
        };
        check_levels(job, &games, &seeds, &solutions, entries, &mut report);
    }
    Ok(report)
}

/// Every file `SHA256SUMS` lists has its checksum; no other file lies in
/// `release/`; `SHA256SUMS` is the manifest's. The names it lists.
fn check_sums(
    release: &Path,
    manifest: &Manifest,
    report: &mut ReleaseReport,
) -> Result<Vec<String>, PackError> {
    let sums_path = release.join(dir::SHA256SUMS);
    let sums = std::fs::read_to_string(&sums_path).map_err(PackError::io("read", &sums_path))?;
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
        match std::fs::read(release.join(name)) {
            Ok(bytes) if sha256_hex(&bytes) == sum => {}
            Ok(_) => report.failures.push((
                name.into(),
                "its SHA-256 is not the one SHA256SUMS lists".into(),
            )),
            Err(e) => report
                .failures
                .push((name.into(), format!("cannot be read: {e}"))),
        }
        listed.push(name.to_string());
    }
    let known: HashSet<&str> = listed.iter().map(String::as_str).collect();
    let mut strays = Vec::new();
    dir::walk_files(release, &mut |name| {
        if name != dir::SHA256SUMS && !known.contains(name.as_str()) {
            strays.push(name);
        }
        false
    })?;
    for name in strays {
        report
            .failures
            .push((name, "is not listed in SHA256SUMS".into()));
    }
    Ok(listed)
}

/// The job's game and each stratum's prepared game, with its first seed.
type Games = (GameKind, Vec<(u64, PreparedGame)>);

fn prepare(job: &Job) -> Result<Games, PackError> {
    Ok((job.game_kind()?, job.prepared_strata()?))
}

/// Whether a release file holds levels (a tier's or a campaign's).
fn is_level_file(name: &str) -> bool {
    let level_form = name.ends_with(".txt") || name.ends_with(".jsonl");
    level_form && (name.starts_with("tier-") || name.starts_with("campaigns/"))
}

/// Every seed file regenerated; the levels it makes, by seed.
fn regenerate(
    release: &Path,
    listed: &[String],
    game: GameKind,
    report: &mut ReleaseReport,
) -> HashMap<u64, Candidate> {
    let mut made = HashMap::new();
    for name in listed.iter().filter(|n| n.starts_with("seeds/")) {
        let Ok(text) = std::fs::read_to_string(release.join(name)) else {
            continue;
        };
        let regenerated = SeedFile::parse(&text).and_then(|file| {
            let levels = match file.header.program {
                Some(_) => file.regenerate_with(game),
                None => file.regenerate(),
            }?;
            Ok((file.levels, levels))
        });
        match regenerated {
            Ok((seeds, levels)) => {
                report.regenerated += levels.len() as u64;
                for ((seed, _), level) in seeds.into_iter().zip(levels) {
                    made.insert(seed, level);
                }
            }
            Err(e) => report.failures.push((name.clone(), e.to_string())),
        }
    }
    made
}

/// The solutions of the solutions files, by level id.
fn solutions_apart(
    release: &Path,
    listed: &[String],
    report: &mut ReleaseReport,
) -> HashMap<String, String> {
    let mut solutions = HashMap::new();
    for name in listed.iter().filter(|n| n.starts_with("solutions/")) {
        let Ok(text) = std::fs::read_to_string(release.join(name)) else {
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

/// The levels of a JSON Lines release file.
fn jsonl_entries(name: &str, text: &str) -> Result<Vec<Entry>, String> {
    #[derive(Deserialize)]
    struct Line {
        id: String,
        seed: u64,
        moves: u32,
        moves_optimal: bool,
        level_json: String,
        level_hash: String,
        text: String,
        solution: Option<String>,
    }
    text.lines()
        .enumerate()
        .map(|(i, line)| {
            let l: Line = serde_json::from_str(line).map_err(|e| format!("line {}: {e}", i + 1))?;
            Ok(Entry {
                at: format!("{name}: {}", l.id),
                seed: l.seed,
                layout: l.text,
                level_json: Some(l.level_json),
                level_hash: Some(l.level_hash),
                solution: l.solution,
                moves: l.moves,
                moves_optimal: l.moves_optimal,
            })
        })
        .collect()
}

/// The levels of a text release file: each a `; id ID seed S tier T
/// difficulty D moves M` line (with ` (best found)` when not proven
/// fewest), perhaps a `; solution` line, then its text form up to a blank
/// line.
fn text_entries(name: &str, text: &str) -> Result<Vec<Entry>, String> {
    let mut entries = Vec::new();
    for block in text.split("\n\n") {
        let mut header = None;
        let mut solution = None;
        let mut layout = String::new();
        for line in block.lines() {
            if layout.is_empty() && line.starts_with(';') {
                if let Some(rest) = line.strip_prefix("; id ") {
                    header = Some(rest);
                } else if let Some(rest) = line.strip_prefix("; solution ") {
                    solution = Some(rest.to_string());
                }
                continue;
            }
            layout.push_str(line);
            layout.push('\n');
        }
        let Some(header) = header else {
            continue;
        };
        let words: Vec<&str> = header.split_whitespace().collect();
        let field = |key: &str| {
            words
                .iter()
                .position(|w| *w == key)
                .and_then(|i| words.get(i + 1))
                .ok_or_else(|| format!("`; id {header}` has no {key}"))
        };
        let seed = field("seed")?
            .parse()
            .map_err(|e| format!("`; id {header}`: seed: {e}"))?;
        let moves = field("moves")?
            .parse()
            .map_err(|e| format!("`; id {header}`: moves: {e}"))?;
        entries.push(Entry {
            at: format!("{name}: {}", words.first().copied().unwrap_or_default()),
            seed,
            layout,
            level_json: None,
            level_hash: None,
            solution,
            moves,
            moves_optimal: !header.ends_with("(best found)"),
        });
    }
    Ok(entries)
}

/// Each level checked by its stratum's game: its JSON form (given, else
/// read from its text form, else the seed file's), its hash against the
/// seed file's, and its solution replayed, when the release ships it.
fn check_levels(
    job: &Job,
    games: &Games,
    seeds: &HashMap<u64, Candidate>,
    solutions: &HashMap<String, String>,
    entries: Vec<Entry>,
    report: &mut ReleaseReport,
) {
    let (game, strata) = games;
    let mut asked: Vec<Vec<(String, Candidate)>> = strata.iter().map(|_| Vec::new()).collect();
    for entry in entries {
        report.levels += 1;
        let id = dir::level_id(job.game_name(), entry.seed);
        let made = seeds.get(&entry.seed);
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
