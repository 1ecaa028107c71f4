//! Reads pregen packs from their Parquet files (never from coordinator state).
//!
//! Main items: [`summarize`] builds a [`Summary`] (counts by tier and status,
//! percentiles of difficulty, moves and times); its `Display` is the text
//! `pregen analysis summary PACK` prints. [`report`] builds the HTML report
//! (charts drawn by [`svg`]); [`verify`] replays every level; [`print_levels`]
//! writes them out as one collection file; [`diff`] compares two packs.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use pregen_games::Candidate;
use pregen_pack::durable::sha256_file;
use pregen_pack::read::{
    bool_column, f64_column, metrics_column, read_batches, text_column, u32_column, u64_column,
};
use pregen_pack::schema::columns as c;
use pregen_pack::{PackDir, PackError, refusal_key};

pub mod calibrate;
pub mod diff;
pub mod picture;
mod report;
pub mod svg;

pub use diff::{PackDiff, diff};
pub use report::{report, report_judged, report_with};

/// Errors reading a pack: the pack crate's own.
pub use pregen_pack::PackError as AnalysisError;

/// Percentiles of one column, interpolated linearly between the two nearest
/// ranks: what DuckDB's `quantile_cont` and `median`, polars' `median` and
/// `quantile(q, "linear")`, pandas' and numpy's defaults compute.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Percentiles {
    /// Values seen.
    pub count: usize,
    /// Smallest.
    pub min: f64,
    /// 50th percentile.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Largest.
    pub max: f64,
    /// Mean.
    pub mean: f64,
}

impl Percentiles {
    /// The percentiles of `values`.
    pub fn of(mut values: Vec<f64>) -> Self {
        if values.is_empty() {
            return Self::default();
        }
        values.sort_by(f64::total_cmp);
        let at = |q: f64| quantile(&values, q);
        Percentiles {
            count: values.len(),
            min: values[0],
            p50: at(0.5),
            p90: at(0.9),
            p99: at(0.99),
            max: values[values.len() - 1],
            mean: values.iter().sum::<f64>() / values.len() as f64,
        }
    }
}

/// The `q` quantile (0 to 1) of `sorted` (ascending, not empty), between
/// its two nearest ranks.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    let rank = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (rank.floor() as usize, rank.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo as f64)
}

/// A pack's statistics (`analysis summary`, and as JSON with `--json`).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Summary {
    /// Seeds the pack holds: its levels and rejects.
    pub seeds_in_pack: u64,
    /// Seeds the job's runs computed, those past each stratum's last level
    /// included (the manifest's; 0 for a pack written before it was kept).
    pub seeds_computed: u64,
    /// Per stratum, in the job's order (one, unnamed, without strata).
    pub strata: Vec<StratumSummary>,
    /// Accepted levels per tier (in JSON keyed `NN`, as the manifest keys
    /// them).
    #[serde(serialize_with = "by_tier_key")]
    pub tiers: BTreeMap<u32, u64>,
    /// Seeds per status (accepted included).
    pub statuses: BTreeMap<String, u64>,
    /// Non-accepted seeds per reason.
    pub reasons: BTreeMap<String, u64>,
    /// Difficulty of accepted levels.
    pub difficulty: Percentiles,
    /// Moves of accepted levels.
    pub moves: Percentiles,
    /// Generation ms of accepted levels.
    pub generate_ms: Percentiles,
    /// Verification ms of accepted levels.
    pub solve_ms: Percentiles,
    /// Per tier: (min, max) difficulty; `[min, max]` in JSON, keyed `NN`.
    #[serde(serialize_with = "by_tier_key")]
    pub tier_ranges: BTreeMap<u32, (f64, f64)>,
}

/// A map by tier written as a JSON object keyed `NN` (`"01"`), as the
/// manifest's counts key tiers, in the tiers' order.
pub(crate) fn by_tier_key<V: serde::Serialize, S: serde::Serializer>(
    map: &BTreeMap<u32, V>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut out = serializer.serialize_map(Some(map.len()))?;
    for (tier, value) in map {
        out.serialize_entry(&pregen_pack::manifest::TierKey(*tier), value)?;
    }
    out.end()
}

/// One stratum's part of a [`Summary`].
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct StratumSummary {
    /// Its name (its number when the job names none).
    pub name: String,
    /// Levels wanted.
    pub count: u64,
    /// The band of difficulty it asks for (`[min, max)`), if any.
    pub band: Option<pregen_pack::job::Band>,
    /// CPU seconds its seeds in the pack took (generate and verify), per
    /// level: what a level of it costs, rejects included.
    pub seconds_per_level: f64,
    /// Seeds of it the pack holds.
    pub seeds_in_pack: u64,
    /// Seeds of it the runs computed.
    pub seeds_computed: u64,
    /// Seeds per status.
    pub statuses: BTreeMap<String, u64>,
    /// Non-accepted seeds per reason.
    pub reasons: BTreeMap<String, u64>,
    /// Difficulty of its levels.
    pub difficulty: Percentiles,
    /// Moves of its levels.
    pub moves: Percentiles,
}

/// What [`verify`] found.
#[derive(Debug, Default)]
pub struct Verified {
    /// Levels read.
    pub levels: u64,
    /// Whether the levels' game is a program: then its own `check` judged
    /// them (their rules are the program's), not rules pregen replays.
    pub by_program: bool,
    /// Whether an independent checker program judged them instead.
    pub by_checker: bool,
    /// Levels that failed: (level id, what is wrong).
    pub failures: Vec<(String, String)>,
}

/// The pack's job as its game may run here: a built-in game's own; a game
/// program's only as `judge` names it ([`ProgramSource`]: the job that made
/// the pack, or your copy of the program), never the command its manifest
/// names, `None` when `judge` names none.
///
/// [`ProgramSource`]: pregen_pack::job::ProgramSource
pub fn runnable_job(
    manifest: &pregen_pack::manifest::Manifest,
    judge: pregen_pack::job::ProgramSource<'_>,
) -> Result<Option<pregen_pack::Job>, AnalysisError> {
    use pregen_pack::job::ProgramSource;
    match judge {
        ProgramSource::Unnamed if manifest.job.is_external() => Ok(None),
        judge => Ok(Some(manifest.job.judge_for_verify(
            &manifest.job_id,
            judge,
            None,
        )?)),
    }
}

/// What is wrong with the pack's manifest, as (what, why): its job against
/// the id it states, and every file against the checksum it gives.
fn manifest_failures(
    pack: &PackDir,
    manifest: &pregen_pack::manifest::Manifest,
) -> Vec<(String, String)> {
    let mut failures = Vec::new();
    if let Some(why) = manifest.job.id_differs(&manifest.job_id) {
        failures.push(("manifest.json".into(), why));
    }
    for (name, sum) in &manifest.files {
        match sha256_file(&pack.root().join(name)) {
            Ok(actual) if &actual == sum => {}
            Ok(_) => failures.push((name.clone(), "its SHA-256 is not the manifest's".into())),
            Err(e) => failures.push((name.clone(), e.to_string())),
        }
    }
    failures
}

/// Checks everything about the pack in `dir` that can be derived again,
/// independently of the run that wrote it: the manifest's job is the one its
/// id names and every file has the checksum the manifest gives; every level
/// passes the level audit the coordinator held it to ([`LevelAudit`]: its
/// seed in its stratum, its judge's check with its stratum's params (JSON
/// form, hash, layout, well-formedness, params fit, a replay to a win in
/// `moves` moves), its seed's making of it where the game makes levels
/// again, its difficulty the job's model's rating of its metrics); and the
/// tiers are sorted by difficulty, each tier's levels no easier than the
/// tier before.
///
/// [`LevelAudit`]: pregen_pack::audit::LevelAudit
pub fn verify(dir: &Path) -> Result<Verified, AnalysisError> {
    verify_with(dir, pregen_pack::job::ProgramSource::Unnamed)
}

/// [`verify`], a game program's pack judged by the program `judge` names
/// ([`ProgramSource`]: the receiver's job or copy of the program, never the
/// command the manifest names).
///
/// [`ProgramSource`]: pregen_pack::job::ProgramSource
pub fn verify_with(
    dir: &Path,
    judge: pregen_pack::job::ProgramSource<'_>,
) -> Result<Verified, AnalysisError> {
    let pack = PackDir::new(dir);
    pack.require_complete()?;
    let manifest = pack.read_manifest()?;
    let mut verified = Verified {
        by_program: manifest.job.is_external(),
        by_checker: manifest
            .job
            .external
            .as_ref()
            .is_some_and(|e| !e.checker.is_empty()),
        ..Verified::default()
    };
    verified.failures = manifest_failures(&pack, &manifest);
    // The levels' judge: the job's `[external] checker`, else its game.
    let judging = manifest
        .job
        .judge_for_verify(&manifest.job_id, judge, None)?;
    let audit = pregen_pack::audit::LevelAudit::new(&judging)?;
    let mut easiest_allowed = f64::NEG_INFINITY;
    for (tier, part) in pack.level_parts()? {
        let mut hardest = f64::NEG_INFINITY;
        for batch in read_batches(&part)? {
            let levels = stored_levels(&batch, &part)?;
            verified.levels += levels.len() as u64;
            for level in &levels {
                if level.level.difficulty < hardest.max(easiest_allowed) {
                    verified.failures.push((
                        level.id.clone(),
                        format!("out of difficulty order in tier {tier}"),
                    ));
                }
                hardest = hardest.max(level.level.difficulty);
            }
            verified.failures.extend(audit_levels(&audit, &levels));
        }
        easiest_allowed = hardest;
    }
    Ok(verified)
}

/// A level as a pack's Parquet file stores it.
struct StoredLevel {
    id: String,
    seed: u64,
    stratum: u32,
    level: Candidate,
}

/// The levels of one record batch of a levels file (`part` names it).
fn stored_levels(
    batch: &arrow_array::RecordBatch,
    part: &Path,
) -> Result<Vec<StoredLevel>, AnalysisError> {
    let column = |name: &str| text_column(batch, name, part);
    let (id, layout, json, solution, hash) = (
        column(c::LEVEL_ID)?,
        column(c::LAYOUT)?,
        column(c::LEVEL_JSON)?,
        column(c::SOLUTION)?,
        column(c::LEVEL_HASH)?,
    );
    let difficulty = f64_column(batch, c::DIFFICULTY, part)?;
    let moves = u32_column(batch, c::MOVES, part)?;
    let optimal = bool_column(batch, c::MOVES_OPTIMAL, part)?;
    let strata = u32_column(batch, c::STRATUM, part)?;
    let seeds = u64_column(batch, c::SEED, part)?;
    let metrics =
        metrics_column(batch).ok_or_else(|| PackError::invalid(part, "no `metrics` map column"))?;
    Ok((0..batch.num_rows())
        .map(|i| StoredLevel {
            id: id.value(i).to_string(),
            seed: seeds[i],
            stratum: strata[i],
            level: Candidate {
                difficulty: difficulty[i],
                moves: moves[i],
                moves_optimal: optimal[i],
                layout: layout.value(i).to_string(),
                level_json: json.value(i).to_string(),
                solution: solution.value(i).to_string(),
                metrics: metrics(i).into_iter().collect(),
                level_hash: hash.value(i).to_string(),
                canonical: None,
            },
        })
        .collect())
}

/// Levels audited together by one thread (a game program is sent them at
/// once).
const AUDIT_CHUNK: usize = 256;

/// The level audit of stored levels, on every thread, as (level id, what is
/// wrong) in the levels' order: each level's stratum against its seed's, and
/// the audit of the level with its canonical form.
fn audit_levels(
    audit: &pregen_pack::audit::LevelAudit,
    levels: &[StoredLevel],
) -> Vec<(String, String)> {
    use pregen_pack::audit::Finding;
    use rayon::prelude::*;
    levels
        .par_chunks(AUDIT_CHUNK)
        .flat_map_iter(|chunk| {
            let mut failures = Vec::new();
            let mut asked = Vec::new();
            for stored in chunk {
                let seed = stored.seed;
                let stratum = match audit.stratum(seed) {
                    Ok(is) if is == stored.stratum as usize => is,
                    Ok(is) => {
                        let claimed = stored.stratum;
                        let finding = Finding::Stratum { seed, claimed, is };
                        failures.push((stored.id.clone(), finding.to_string()));
                        continue;
                    }
                    Err(finding) => {
                        failures.push((stored.id.clone(), finding.to_string()));
                        continue;
                    }
                };
                match audit.judges()[stratum].canonical_hash(&stored.level.level_json) {
                    Ok(canonical) => {
                        let level = Candidate {
                            canonical,
                            ..stored.level.clone()
                        };
                        asked.push((stored.id.clone(), seed, level));
                    }
                    Err(e) => failures.push((stored.id.clone(), e.to_string())),
                }
            }
            let levels: Vec<(u64, &Candidate)> = asked
                .iter()
                .map(|(_, seed, level)| (*seed, level))
                .collect();
            for ((id, _, _), audited) in asked.iter().zip(audit.audit(&levels)) {
                if let Err(finding) = audited {
                    failures.push((id.clone(), finding.to_string()));
                }
            }
            failures
        })
        .collect()
}

/// The levels of the pack in `dir` (of one tier, or all), in tier and then
/// difficulty order, as a collection file in the game's text form: each level
/// headed by the `; id` line a release's level files give it (id, seed,
/// tier, rank in the tier and in the pack, difficulty, moves). For sokoban
/// this is an XSB collection.
pub fn print_levels(dir: &Path, tier: Option<u32>) -> Result<String, AnalysisError> {
    use std::fmt::Write;
    let pack = PackDir::new(dir);
    pack.require_complete()?;
    let parts = pack.level_parts()?;
    if let Some(wanted) = tier
        && !parts.iter().any(|(t, _)| *t == wanted)
    {
        let first = parts.iter().map(|(t, _)| *t).min().unwrap_or(0);
        let last = parts.iter().map(|(t, _)| *t).max().unwrap_or(0);
        return Err(AnalysisError::invalid(
            dir,
            format!("the pack has no tier {wanted} (its tiers: {first} to {last})"),
        ));
    }
    // Ranks run on across the tiers: a tier printed alone starts after the
    // levels of the tiers before it, as the manifest counts them.
    let by_tier = pack.read_manifest()?.counts.by_tier;
    let mut overall: u64 = match tier {
        Some(wanted) => by_tier
            .iter()
            .filter(|(k, _)| k.0 < wanted)
            .map(|(_, n)| n)
            .sum(),
        None => 0,
    };
    let mut out = String::new();
    let mut rank = (0, 0);
    for (t, part) in parts {
        if tier.is_some_and(|wanted| wanted != t) {
            continue;
        }
        for batch in read_batches(&part)? {
            let text = |name: &str| text_column(&batch, name, &part);
            let (id, layout) = (text(c::LEVEL_ID)?, text(c::LAYOUT)?);
            let difficulty = f64_column(&batch, c::DIFFICULTY, &part)?;
            let (seed, moves) = (
                u64_column(&batch, c::SEED, &part)?,
                f64_column(&batch, c::MOVES, &part)?,
            );
            let optimal = bool_column(&batch, c::MOVES_OPTIMAL, &part)?;
            for (i, d) in difficulty.iter().enumerate() {
                if !out.is_empty() {
                    out.push('\n');
                }
                rank = match rank {
                    (tier_of, r) if tier_of == t => (t, r + 1),
                    _ => (t, 1),
                };
                overall += 1;
                let best = match !optimal[i] {
                    true => " (best found)",
                    false => "",
                };
                let _ = writeln!(
                    out,
                    "; id {} seed {} tier {t} rank {} overall {overall} difficulty {d} moves {}{best}",
                    id.value(i),
                    seed[i],
                    rank.1,
                    moves[i],
                );
                out.push_str(layout.value(i));
                if !layout.value(i).ends_with('\n') {
                    out.push('\n');
                }
            }
        }
    }
    Ok(out)
}

/// The rejects file's seeds counted into `summary` (by status and reason,
/// overall and per stratum), their milliseconds into each stratum's `spent`.
fn count_rejects(
    dir: &Path,
    summary: &mut Summary,
    spent: &mut [f64],
) -> Result<(), AnalysisError> {
    let rejects = dir.join(pregen_pack::dir::REJECTS_FILE);
    for batch in read_batches(&rejects)? {
        let column = |name: &str| text_column(&batch, name, &rejects);
        let (status, reason) = (column(c::STATUS)?, column(c::REASON)?);
        let strata = u32_column(&batch, c::STRATUM, &rejects)?;
        let (g, s) = (
            f64_column(&batch, c::GENERATE_MS, &rejects)?,
            f64_column(&batch, c::SOLVE_MS, &rejects)?,
        );
        for (i, stratum) in strata.into_iter().enumerate() {
            if let Some(ms) = spent.get_mut(stratum as usize) {
                *ms += g[i] + s[i];
            }
            let key = refusal_key(status.value(i), reason.value(i));
            *summary
                .statuses
                .entry(status.value(i).to_string())
                .or_default() += 1;
            if let Some(st) = summary.strata.get_mut(stratum as usize) {
                st.seeds_in_pack += 1;
                *st.statuses.entry(status.value(i).to_string()).or_default() += 1;
                *st.reasons.entry(key.clone()).or_default() += 1;
            }
            *summary.reasons.entry(key).or_default() += 1;
        }
    }
    Ok(())
}

/// Reads the pack in `dir` (the folder holding `_SUCCESS`).
pub fn summarize(dir: &Path) -> Result<Summary, AnalysisError> {
    let pack = PackDir::new(dir);
    pack.require_complete()?;
    let manifest = pack.read_manifest()?;
    let mut summary = Summary {
        seeds_computed: manifest.seeds.computed,
        strata: manifest
            .strata
            .iter()
            .enumerate()
            .map(|(i, s)| StratumSummary {
                name: if s.name.is_empty() && manifest.strata.len() > 1 {
                    i.to_string()
                } else {
                    s.name.clone()
                },
                count: s.count,
                band: s.band,
                seeds_computed: s.computed,
                ..StratumSummary::default()
            })
            .collect(),
        ..Summary::default()
    };
    let (mut difficulty, mut moves, mut generate, mut solve) = (vec![], vec![], vec![], vec![]);
    let mut by_stratum = vec![(Vec::new(), Vec::new()); summary.strata.len()];
    // Per stratum, the milliseconds its seeds in the pack took.
    let mut spent = vec![0.0f64; summary.strata.len()];
    for (tier, part) in pack.level_parts()? {
        for batch in read_batches(&part)? {
            *summary.tiers.entry(tier).or_default() += batch.num_rows() as u64;
            *summary.statuses.entry("accepted".into()).or_default() += batch.num_rows() as u64;
            let d = f64_column(&batch, c::DIFFICULTY, &part)?;
            if let (Some(lo), Some(hi)) = (
                d.iter().copied().reduce(f64::min),
                d.iter().copied().reduce(f64::max),
            ) {
                let range = summary.tier_ranges.entry(tier).or_insert((lo, hi));
                *range = (range.0.min(lo), range.1.max(hi));
            }
            let m = f64_column(&batch, c::MOVES, &part)?;
            let (g, s) = (
                f64_column(&batch, c::GENERATE_MS, &part)?,
                f64_column(&batch, c::SOLVE_MS, &part)?,
            );
            for (i, stratum) in u32_column(&batch, c::STRATUM, &part)?
                .into_iter()
                .enumerate()
            {
                if let Some((ds, ms)) = by_stratum.get_mut(stratum as usize) {
                    ds.push(d[i]);
                    ms.push(m[i]);
                    spent[stratum as usize] += g[i] + s[i];
                }
                if let Some(st) = summary.strata.get_mut(stratum as usize) {
                    st.seeds_in_pack += 1;
                    *st.statuses.entry("accepted".into()).or_default() += 1;
                }
            }
            difficulty.extend(d);
            moves.extend(m);
            generate.extend(g);
            solve.extend(s);
        }
    }
    count_rejects(dir, &mut summary, &mut spent)?;
    for ((st, (ds, ms)), spent) in summary.strata.iter_mut().zip(by_stratum).zip(spent) {
        st.seconds_per_level = spent / 1000.0 / ds.len().max(1) as f64;
        st.difficulty = Percentiles::of(ds);
        st.moves = Percentiles::of(ms);
    }
    summary.seeds_in_pack = summary.statuses.values().sum();
    summary.difficulty = Percentiles::of(difficulty);
    summary.moves = Percentiles::of(moves);
    summary.generate_ms = Percentiles::of(generate);
    summary.solve_ms = Percentiles::of(solve);
    Ok(summary)
}

/// Reasons with their counts, the most frequent first (ties by name).
pub fn by_count(reasons: &BTreeMap<String, u64>) -> Vec<(&str, u64)> {
    let mut rows: Vec<(&str, u64)> = reasons.iter().map(|(r, n)| (r.as_str(), *n)).collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    rows
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let total = self.seeds_in_pack;
        writeln!(f, "seeds in the pack: {total} (its levels and rejects)")?;
        if self.seeds_computed > 0 {
            writeln!(
                f,
                "seeds computed: {} ({} past the pack's last levels)",
                self.seeds_computed,
                self.seeds_computed.saturating_sub(total)
            )?;
        }
        writeln!(f, "\nstatus            seeds    share")?;
        for (s, n) in &self.statuses {
            writeln!(
                f,
                "{s:<14} {n:>8}  {:>6.2}%",
                100.0 * *n as f64 / total.max(1) as f64
            )?;
        }
        if !self.reasons.is_empty() {
            writeln!(f, "\nnot accepted, by reason")?;
            for (r, n) in by_count(&self.reasons) {
                writeln!(f, "  {n:>8}  {r}")?;
            }
        }
        writeln!(f, "\ntier   levels   difficulty range")?;
        for (t, n) in &self.tiers {
            let (lo, hi) = self.tier_ranges.get(t).copied().unwrap_or_default();
            writeln!(f, "{t:>4} {n:>8}   {lo:.3} .. {hi:.3}")?;
        }
        writeln!(
            f,
            "\naccepted levels     count        min        p50        p90        p99        max       mean"
        )?;
        // Percentiles interpolated, as DuckDB's quantile_cont.
        for (name, p) in [
            ("difficulty", &self.difficulty),
            ("moves", &self.moves),
            ("generate_ms", &self.generate_ms),
            ("solve_ms", &self.solve_ms),
        ] {
            writeln!(
                f,
                "{name:<16} {:>8} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>10.3}",
                p.count, p.min, p.p50, p.p90, p.p99, p.max, p.mean
            )?;
        }
        writeln!(
            f,
            "(percentiles interpolated linearly, as DuckDB's quantile_cont)"
        )?;
        if self.strata.len() > 1 || self.strata.iter().any(|st| st.band.is_some()) {
            self.fmt_strata(f)?;
        }
        Ok(())
    }
}

impl Summary {
    /// The per-stratum table and each stratum's reasons.
    fn fmt_strata(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = |st: &StratumSummary| {
            if st.name.is_empty() {
                "-".to_string()
            } else {
                st.name.clone()
            }
        };
        let band = |st: &StratumSummary| st.band.map_or_else(|| "-".to_string(), |b| b.to_string());
        // Columns as wide as their longest entry, so a long name keeps the
        // table aligned.
        let widest = |min: usize, cell: &dyn Fn(&StratumSummary) -> String| {
            self.strata
                .iter()
                .map(|st| cell(st).chars().count())
                .fold(min, usize::max)
        };
        let (nw, bw) = (widest(16, &name), widest(18, &band));
        writeln!(
            f,
            "\n{:<nw$} {:<bw$} {:>8} {:>8} {:>8} {:>9} {:>8} {:>8} {:>15} {:>11}",
            "stratum",
            "band",
            "wanted",
            "levels",
            "in pack",
            "computed",
            "fill",
            "s/level",
            "difficulty p50",
            "moves p50"
        )?;
        for st in &self.strata {
            let levels = st.statuses.get("accepted").copied().unwrap_or(0);
            writeln!(
                f,
                "{:<nw$} {:<bw$} {:>8} {:>8} {:>8} {:>9} {:>7.1}% {:>8.3} {:>15.3} {:>11.1}",
                name(st),
                band(st),
                st.count,
                levels,
                st.seeds_in_pack,
                st.seeds_computed,
                100.0 * levels as f64 / st.seeds_in_pack.max(1) as f64,
                st.seconds_per_level,
                st.difficulty.p50,
                st.moves.p50
            )?;
        }
        writeln!(
            f,
            "(fill: the share of the stratum's seeds in the pack that gave one of its levels; \
             s/level: CPU seconds of those seeds per level)"
        )?;
        for st in self.strata.iter().filter(|st| !st.reasons.is_empty()) {
            writeln!(f, "\nnot accepted in {}, by reason", st.name)?;
            for (r, n) in by_count(&st.reasons) {
                writeln!(f, "  {n:>8}  {r}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The summary lists reasons the most frequent first, overall and per
    /// stratum, ties by name.
    #[test]
    fn reasons_read_most_frequent_first() {
        let reasons: BTreeMap<String, u64> = [("a rare", 1), ("b common", 50), ("c tied", 1)]
            .into_iter()
            .map(|(r, n)| (r.to_string(), n))
            .collect();
        let summary = Summary {
            reasons: reasons.clone(),
            strata: vec![
                StratumSummary {
                    name: "x".into(),
                    reasons: reasons.clone(),
                    ..StratumSummary::default()
                },
                StratumSummary {
                    name: "y".into(),
                    ..StratumSummary::default()
                },
            ],
            ..Summary::default()
        };
        let text = summary.to_string();
        for section in ["not accepted, by reason", "not accepted in x, by reason"] {
            let at = text.find(section).expect(section);
            let rest = &text[at..];
            let order: Vec<usize> = ["b common", "a rare", "c tied"]
                .iter()
                .map(|r| rest.find(r).expect("listed"))
                .collect();
            assert!(order.windows(2).all(|w| w[0] < w[1]), "{section}: {rest}");
        }
    }

    #[test]
    fn percentiles_interpolate_as_duckdb_does() {
        // DuckDB: quantile_cont(x, [0.5, 0.9, 0.99]) over 1..=100.
        let p = Percentiles::of((1..=100).map(f64::from).collect());
        assert_eq!((p.min, p.p50, p.max), (1.0, 50.5, 100.0));
        assert!(
            (p.p90 - 90.1).abs() < 1e-9 && (p.p99 - 99.01).abs() < 1e-9,
            "{p:?}"
        );
        let two = Percentiles::of(vec![3.0, 1.0]);
        assert_eq!((two.p50, two.p90), (2.0, 2.8));
        assert_eq!(Percentiles::of(vec![7.0]).p99, 7.0);
        assert_eq!(p.mean, 50.5);
        assert_eq!(Percentiles::of(vec![]).count, 0);
    }

    #[test]
    fn a_folder_without_success_is_not_a_pack() {
        let err = summarize(Path::new("/nonexistent-pack")).expect_err("no pack");
        assert!(
            err.to_string().contains("/nonexistent-pack does not exist"),
            "{err}"
        );
    }
}
