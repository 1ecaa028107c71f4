//! Reads pregen packs from their Parquet files (never from coordinator state).
//!
//! Main items: [`summarize`] builds a [`Summary`] (counts by tier and status,
//! percentiles of difficulty, moves and times); its `Display` is the text
//! `pregen analysis summary PACK` prints. [`report`] builds the HTML report
//! (charts drawn by [`svg`]); [`verify`] replays every level; [`print_levels`]
//! writes them out as one collection file.

use std::collections::BTreeMap;
use std::fmt;
use std::fs::File;
use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, UInt32Type};
use arrow_array::{Array, RecordBatch, StringArray};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

mod report;
pub mod svg;

pub use report::report;

/// Errors reading a pack.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AnalysisError {
    /// The folder is not a complete pack.
    #[error("{0} is not a complete pack (no _SUCCESS; is the job still running?)")]
    NotAPack(PathBuf),
    /// A file could not be read.
    #[error("cannot read {path}: {message}")]
    Read {
        /// The file.
        path: PathBuf,
        /// What failed.
        message: String,
    },
}

/// Percentiles of one column.
#[derive(Debug, Clone, Default, PartialEq)]
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
    /// Nearest-rank percentiles of `values`.
    pub fn of(mut values: Vec<f64>) -> Self {
        if values.is_empty() {
            return Self::default();
        }
        values.sort_by(f64::total_cmp);
        let at =
            |q: f64| values[((q * values.len() as f64).ceil() as usize).clamp(1, values.len()) - 1];
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

/// A pack's statistics.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    /// Accepted levels per tier.
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
    /// Per tier: (min, max) difficulty.
    pub tier_ranges: BTreeMap<u32, (f64, f64)>,
}

fn read_batches(path: &Path) -> Result<Vec<RecordBatch>, AnalysisError> {
    let err = |m: String| AnalysisError::Read {
        path: path.to_path_buf(),
        message: m,
    };
    let file = File::open(path).map_err(|e| err(e.to_string()))?;
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(|e| err(e.to_string()))?
        .build()
        .map_err(|e| err(e.to_string()))?;
    reader
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| err(e.to_string()))
}

/// A text column of a batch read from `path`.
fn text_column(batch: &RecordBatch, name: &str, path: &Path) -> Result<StringArray, AnalysisError> {
    batch
        .column_by_name(name)
        .and_then(|c| c.as_string_opt::<i32>().cloned())
        .ok_or_else(|| AnalysisError::Read {
            path: path.to_path_buf(),
            message: format!("no text column `{name}`"),
        })
}

fn f64_column(batch: &RecordBatch, name: &str, path: &Path) -> Result<Vec<f64>, AnalysisError> {
    let col = batch
        .column_by_name(name)
        .ok_or_else(|| AnalysisError::Read {
            path: path.to_path_buf(),
            message: format!("no column `{name}`"),
        })?;
    if let Some(a) = col.as_primitive_opt::<Float64Type>() {
        Ok(a.values().to_vec())
    } else if let Some(a) = col.as_primitive_opt::<UInt32Type>() {
        Ok(a.values().iter().map(|&v| f64::from(v)).collect())
    } else {
        Err(AnalysisError::Read {
            path: path.to_path_buf(),
            message: format!("column `{name}` is {}", col.data_type()),
        })
    }
}

/// The levels' Parquet files of a pack, with their tier, in tier order.
fn level_parts(dir: &Path) -> Result<Vec<(u32, PathBuf)>, AnalysisError> {
    let read_dir = |path: &Path| {
        std::fs::read_dir(path).map_err(|e| AnalysisError::Read {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
    };
    let mut tier_dirs: Vec<(u32, PathBuf)> = read_dir(&dir.join("levels"))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let tier = e
                .file_name()
                .to_str()?
                .strip_prefix("tier=")?
                .parse()
                .ok()?;
            Some((tier, e.path()))
        })
        .collect();
    tier_dirs.sort();
    let mut all = Vec::new();
    for (tier, tier_dir) in tier_dirs {
        let mut parts: Vec<PathBuf> = read_dir(&tier_dir)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
            .collect();
        parts.sort();
        all.extend(parts.into_iter().map(|p| (tier, p)));
    }
    Ok(all)
}

/// What [`verify`] found.
#[derive(Debug, Default)]
pub struct Verified {
    /// Levels read.
    pub levels: u64,
    /// Levels that failed: (level id, what is wrong).
    pub failures: Vec<(String, String)>,
}

/// Replays every level of the pack in `dir` under its game's rules (read from
/// the Parquet files, independently of the run that wrote them) and checks
/// that each level's hash is the SHA-256 of its JSON form.
pub fn verify(dir: &Path) -> Result<Verified, AnalysisError> {
    use sha2::{Digest, Sha256};
    if !dir.join("_SUCCESS").exists() {
        return Err(AnalysisError::NotAPack(dir.to_path_buf()));
    }
    let mut verified = Verified::default();
    for (_, part) in level_parts(dir)? {
        for batch in read_batches(&part)? {
            let column = |name: &str| text_column(&batch, name, &part);
            let (game, id, json, solution, hash) = (
                column("game")?,
                column("level_id")?,
                column("level_json")?,
                column("solution")?,
                column("level_hash")?,
            );
            for i in 0..batch.num_rows() {
                verified.levels += 1;
                let digest: String = Sha256::digest(json.value(i).as_bytes())
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect();
                let outcome = pregen_games::GameKind::from_name(game.value(i))
                    .map_err(|e| e.to_string())
                    .and_then(|g| {
                        g.replay_json(json.value(i), solution.value(i))
                            .map_err(|e| e.to_string())
                    })
                    .and_then(|()| {
                        (digest == hash.value(i))
                            .then_some(())
                            .ok_or_else(|| "level_hash is not the SHA-256 of level_json".into())
                    });
                if let Err(e) = outcome {
                    verified.failures.push((id.value(i).to_string(), e));
                }
            }
        }
    }
    Ok(verified)
}

/// The levels of the pack in `dir` (of one tier, or all), in tier and then
/// difficulty order, as a collection file in the game's text form: each level
/// headed by a `;` line with its id, seed, tier and difficulty. For sokoban
/// this is an XSB collection.
pub fn print_levels(dir: &Path, tier: Option<u32>) -> Result<String, AnalysisError> {
    use std::fmt::Write;
    if !dir.join("_SUCCESS").exists() {
        return Err(AnalysisError::NotAPack(dir.to_path_buf()));
    }
    let mut out = String::new();
    for (t, part) in level_parts(dir)? {
        if tier.is_some_and(|wanted| wanted != t) {
            continue;
        }
        for batch in read_batches(&part)? {
            let text = |name: &str| text_column(&batch, name, &part);
            let (id, layout) = (text("level_id")?, text("layout")?);
            let difficulty = f64_column(&batch, "difficulty", &part)?;
            for (i, d) in difficulty.iter().enumerate() {
                if !out.is_empty() {
                    out.push('\n');
                }
                let _ = writeln!(out, "; {} tier {t} difficulty {d}", id.value(i));
                out.push_str(layout.value(i));
                if !layout.value(i).ends_with('\n') {
                    out.push('\n');
                }
            }
        }
    }
    Ok(out)
}

/// How a seed that was not accepted is counted: its status and the head of
/// its reason (the text before any `:`), e.g. `rejected: too easy`.
fn reason_key(status: &str, reason: &str) -> String {
    let head = reason.split(':').next().unwrap_or("").trim();
    if head.is_empty() {
        status.to_string()
    } else {
        format!("{status}: {head}")
    }
}

/// Reads the pack in `dir` (the folder holding `_SUCCESS`).
pub fn summarize(dir: &Path) -> Result<Summary, AnalysisError> {
    if !dir.join("_SUCCESS").exists() {
        return Err(AnalysisError::NotAPack(dir.to_path_buf()));
    }
    let mut summary = Summary::default();
    let (mut difficulty, mut moves, mut generate, mut solve) = (vec![], vec![], vec![], vec![]);
    for (tier, part) in level_parts(dir)? {
        for batch in read_batches(&part)? {
            *summary.tiers.entry(tier).or_default() += batch.num_rows() as u64;
            *summary.statuses.entry("accepted".into()).or_default() += batch.num_rows() as u64;
            let d = f64_column(&batch, "difficulty", &part)?;
            if let (Some(lo), Some(hi)) = (
                d.iter().copied().reduce(f64::min),
                d.iter().copied().reduce(f64::max),
            ) {
                let range = summary.tier_ranges.entry(tier).or_insert((lo, hi));
                *range = (range.0.min(lo), range.1.max(hi));
            }
            difficulty.extend(d);
            moves.extend(f64_column(&batch, "moves", &part)?);
            generate.extend(f64_column(&batch, "generate_ms", &part)?);
            solve.extend(f64_column(&batch, "solve_ms", &part)?);
        }
    }
    let rejects = dir.join("rejects/rejects.parquet");
    for batch in read_batches(&rejects)? {
        let column = |name: &str| text_column(&batch, name, &rejects);
        let (status, reason) = (column("status")?, column("reason")?);
        for i in 0..status.len() {
            *summary
                .statuses
                .entry(status.value(i).to_string())
                .or_default() += 1;
            *summary
                .reasons
                .entry(reason_key(status.value(i), reason.value(i)))
                .or_default() += 1;
        }
    }
    summary.difficulty = Percentiles::of(difficulty);
    summary.moves = Percentiles::of(moves);
    summary.generate_ms = Percentiles::of(generate);
    summary.solve_ms = Percentiles::of(solve);
    Ok(summary)
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let total: u64 = self.statuses.values().sum();
        writeln!(f, "seeds tried: {total}")?;
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
            for (r, n) in &self.reasons {
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
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let p = Percentiles::of((1..=100).map(f64::from).collect());
        assert_eq!(
            (p.min, p.p50, p.p90, p.p99, p.max),
            (1.0, 50.0, 90.0, 99.0, 100.0)
        );
        assert_eq!(p.mean, 50.5);
        assert_eq!(Percentiles::of(vec![]).count, 0);
    }

    #[test]
    fn a_folder_without_success_is_not_a_pack() {
        let err = summarize(Path::new("/nonexistent-pack")).expect_err("no pack");
        assert!(err.to_string().contains("not a complete pack"));
    }
}
