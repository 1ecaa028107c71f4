//! Writing a complete pack: tiers, campaigns, the Parquet dataset, release
//! files, the manifest with checksums, and `_SUCCESS` last.
//!
//! Everything here is a function of the pack's records and the job, sorted with
//! ties broken by seed, so two runs of one job write the same levels, tiers,
//! campaigns and release files whatever the number of workers.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{Float64Builder, MapBuilder, StringBuilder};
use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, RecordBatch, StringArray, UInt32Array, UInt64Array,
};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::SortingColumn;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;
use pregen_games::rng::Rng;
use rayon::prelude::*;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::CoordinatorError;
use crate::job::{Job, TierScheme};
use crate::record::{LevelRecord, SeedRecord, Status};

/// An accepted level placed in its tier.
#[derive(Debug, Clone)]
pub struct TieredLevel<'a> {
    /// The record (status accepted, level present).
    pub record: &'a SeedRecord,
    /// The level.
    pub level: &'a LevelRecord,
    /// Tier, 1-based.
    pub tier: u32,
}

/// One campaign slot.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CampaignSlot {
    /// Campaign number, 1-based.
    pub campaign: u64,
    /// Position in the campaign, 1-based (position i from difficulty group i).
    pub position: u32,
    /// The level's seed.
    pub seed: u64,
    /// Its tier.
    pub tier: u32,
    /// Its difficulty.
    pub difficulty: f64,
}

/// `k` groups of sizes differing by at most one over `n` sorted items.
pub fn equal_groups(n: usize, k: usize) -> Vec<std::ops::Range<usize>> {
    (0..k).map(|i| i * n / k..(i + 1) * n / k).collect()
}

/// Sorts accepted levels by (difficulty, seed) and assigns tiers.
pub fn assign_tiers<'a>(records: &'a [SeedRecord], scheme: &TierScheme) -> Vec<TieredLevel<'a>> {
    let mut levels: Vec<(&SeedRecord, &LevelRecord)> = records
        .iter()
        .filter_map(|r| {
            Some((
                r,
                r.level.as_ref().filter(|_| r.status == Status::Accepted)?,
            ))
        })
        .collect();
    levels.sort_by(|a, b| {
        a.1.difficulty
            .total_cmp(&b.1.difficulty)
            .then(a.0.seed.cmp(&b.0.seed))
    });
    let mut tiers = vec![0u32; levels.len()];
    match scheme {
        TierScheme::Equal { count } => {
            for (t, group) in equal_groups(levels.len(), *count as usize)
                .into_iter()
                .enumerate()
            {
                for i in group {
                    tiers[i] = t as u32 + 1;
                }
            }
        }
        TierScheme::Thresholds { thresholds } => {
            for (i, (_, l)) in levels.iter().enumerate() {
                tiers[i] = 1 + thresholds.iter().filter(|&&t| t <= l.difficulty).count() as u32;
            }
        }
    }
    levels
        .into_iter()
        .zip(tiers)
        .map(|((record, level), tier)| TieredLevel {
            record,
            level,
            tier,
        })
        .collect()
}

/// Seed 000's campaign rule: `length` equal difficulty groups; campaign k takes
/// one level from each group, drawn without replacement by a PRNG seeded from
/// the job, so the draw is deterministic.
pub fn draw_campaigns(
    sorted: &[TieredLevel<'_>],
    length: u32,
    campaigns: u64,
    first_seed: u64,
) -> Vec<CampaignSlot> {
    let mut rng = Rng::new(first_seed ^ 0x6361_6d70_6169_676e);
    let groups: Vec<Vec<usize>> = equal_groups(sorted.len(), length as usize)
        .into_iter()
        .map(|g| {
            let mut idx: Vec<usize> = g.collect();
            rng.shuffle(&mut idx);
            idx
        })
        .collect();
    let mut slots = Vec::new();
    for k in 0..campaigns as usize {
        for (i, group) in groups.iter().enumerate() {
            let Some(&at) = group.get(k) else { continue };
            let l = &sorted[at];
            slots.push(CampaignSlot {
                campaign: k as u64 + 1,
                position: i as u32 + 1,
                seed: l.record.seed,
                tier: l.tier,
                difficulty: l.level.difficulty,
            });
        }
    }
    slots
}

/// Facts for the manifest that only the run knows.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RunFacts {
    /// Results that disagreed with an earlier result for the same seed.
    pub mismatches: u64,
}

/// Writes the pack into `dir` (which holds `commit/`): replaces earlier outputs,
/// writes `_SUCCESS` last. Returns the manifest.
pub fn write_pack(
    dir: &Path,
    job: &Job,
    records: &[SeedRecord],
    facts: &RunFacts,
) -> Result<serde_json::Value, CoordinatorError> {
    for stale in [
        "_SUCCESS",
        "manifest.json",
        "levels",
        "campaigns",
        "rejects",
        "release",
    ] {
        let p = dir.join(stale);
        let _ = if p.is_dir() {
            fs::remove_dir_all(&p)
        } else {
            fs::remove_file(&p)
        };
    }
    let started = std::time::Instant::now();
    let tiered = assign_tiers(records, &job.tiers);
    let tier_count = match &job.tiers {
        TierScheme::Equal { count } => *count,
        TierScheme::Thresholds { thresholds } => thresholds.len() as u32 + 1,
    };
    let mut by_tier: BTreeMap<u32, Vec<&TieredLevel<'_>>> = BTreeMap::new();
    for l in &tiered {
        by_tier.entry(l.tier).or_default().push(l);
    }
    let campaigns = draw_campaigns(
        &tiered,
        job.campaigns.length,
        job.campaign_count(),
        job.first_seed,
    );
    let rejects: Vec<&SeedRecord> = records
        .iter()
        .filter(|r| r.status != Status::Accepted)
        .collect();
    // Every file is made in memory first, on all cores, then written in
    // parallel. The largest parts come first so that the cores finish together.
    let mut parts = vec![Part::Release, Part::Rejects, Part::Campaigns];
    parts.extend(
        by_tier
            .iter()
            .map(|(&tier, levels)| Part::Tier(tier, levels)),
    );
    let outputs = parts
        .into_par_iter()
        .map(|part| match part {
            Part::Release => Ok(release_files(job, &by_tier, &tiered, &campaigns)),
            Part::Rejects => Ok(vec![(
                "rejects/rejects.parquet".into(),
                parquet_bytes(rejects_batch(&rejects)?, Some(&[0]))?,
            )]),
            Part::Campaigns => Ok(vec![(
                "campaigns/campaigns.parquet".into(),
                parquet_bytes(campaigns_batch(&campaigns)?, Some(&[0, 1]))?,
            )]),
            Part::Tier(tier, levels) => Ok(vec![(
                format!("levels/tier={tier:02}/part-0.parquet"),
                parquet_bytes(levels_batch(job, levels)?, Some(&[3, 1]))?,
            )]),
        })
        .collect::<Result<Vec<_>, CoordinatorError>>()?
        .into_iter()
        .flatten()
        .collect();
    let encoded = started.elapsed();
    let files = write_files(dir, outputs)?;
    let written = started.elapsed();
    sync_filesystem(dir, files.keys())?;
    tracing::debug!(
        files = files.len(),
        ?encoded,
        ?written,
        synced = ?started.elapsed(),
        "pack files written"
    );

    let mut by_status: BTreeMap<&str, u64> = BTreeMap::new();
    for r in records {
        *by_status.entry(r.status.as_str()).or_default() += 1;
    }
    let timeouts: Vec<u64> = records
        .iter()
        .filter(|r| r.status == Status::Timeout)
        .map(|r| r.seed)
        .collect();
    let manifest = serde_json::json!({
        "pack": job.pack,
        "job_id": job.id(),
        "job": job,
        "versions": {
            "pregen": env!("CARGO_PKG_VERSION"),
            "generator": pregen_games::GENERATOR_VERSION,
            "protocol": pregen_proto::PROTOCOL_VERSION,
        },
        "strata": job.plan().iter().map(|p| serde_json::json!({
            "name": p.name,
            "first_seed": p.first_seed,
            "count": p.count,
            "params": p.params,
        })).collect::<Vec<_>>(),
        "seeds": {
            "first": job.first_seed,
            "last": records.last().map(|r| r.seed),
            "tried": records.len(),
        },
        "counts": {
            "accepted": tiered.len(),
            "tiers": tier_count,
            "by_tier": by_tier.iter().map(|(t, l)| (format!("{t:02}"), l.len())).collect::<BTreeMap<_, _>>(),
            "by_status": by_status,
            "campaigns": job.campaign_count(),
        },
        "timeouts": timeouts,
        "machine_dependent": !timeouts.is_empty(),
        "mismatches": facts.mismatches,
        "files": files,
    });
    let text =
        serde_json::to_string_pretty(&manifest).map_err(|e| CoordinatorError::Io(e.to_string()))?;
    crate::commit_log::write_durably(dir, "manifest.json", text.as_bytes())?;
    crate::commit_log::write_durably(dir, "_SUCCESS", b"")?;
    Ok(manifest)
}

/// One piece of the pack's encoding work: a file, or the release folder.
enum Part<'r, 'l> {
    Release,
    Rejects,
    Campaigns,
    Tier(u32, &'r [&'r TieredLevel<'l>]),
}

/// Text columns whose values differ on every row: stored plain, not dictionary-encoded.
const UNIQUE_TEXT: &[&str] = &["level_id", "layout", "level_json", "solution", "level_hash"];

/// The Parquet file of `batch`: zstd, page statistics, sorting columns declared.
fn parquet_bytes(
    batch: RecordBatch,
    sorted_by: Option<&[usize]>,
) -> Result<Vec<u8>, CoordinatorError> {
    let err =
        |e: &dyn std::fmt::Display| CoordinatorError::Io(format!("cannot encode Parquet: {e}"));
    let sorting = sorted_by.map(|cols| {
        cols.iter()
            .map(|&c| SortingColumn {
                column_idx: c as i32,
                descending: false,
                nulls_first: false,
            })
            .collect()
    });
    let mut props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(
            ZstdLevel::try_new(3).map_err(|e| err(&e))?,
        ))
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_sorting_columns(sorting)
        .set_created_by(format!("pregen {}", env!("CARGO_PKG_VERSION")));
    // A dictionary of values that never repeat is built only to be dropped.
    for column in UNIQUE_TEXT {
        props = props.set_column_dictionary_enabled(ColumnPath::from(*column), false);
    }
    let props = props.build();
    let mut writer =
        ArrowWriter::try_new(Vec::new(), batch.schema(), Some(props)).map_err(|e| err(&e))?;
    writer.write(&batch).map_err(|e| err(&e))?;
    writer.into_inner().map_err(|e| err(&e))
}

/// Writes `(path relative to dir, bytes)` pairs on a few threads (creating many
/// small files is latency-bound) and returns each file's SHA-256.
fn write_files(
    dir: &Path,
    outputs: Vec<(String, Vec<u8>)>,
) -> Result<BTreeMap<String, String>, CoordinatorError> {
    let io = |path: &Path, e: std::io::Error| {
        CoordinatorError::Io(format!("cannot write {}: {e}", path.display()))
    };
    let parents: std::collections::BTreeSet<PathBuf> = outputs
        .iter()
        .filter_map(|(rel, _)| dir.join(rel).parent().map(Path::to_path_buf))
        .collect();
    for parent in parents {
        fs::create_dir_all(&parent).map_err(|e| io(&parent, e))?;
    }
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 4);
    let chunk = outputs.len().div_ceil(threads).max(1);
    let hashed = std::thread::scope(|scope| {
        let handles: Vec<_> = outputs
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .map(|(rel, bytes)| {
                            let path = dir.join(rel);
                            fs::write(&path, bytes).map_err(|e| io(&path, e))?;
                            Ok((rel.clone(), hex(&Sha256::digest(bytes))))
                        })
                        .collect::<Result<Vec<_>, CoordinatorError>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(CoordinatorError::Io("a file writer panicked".into())))
            })
            .collect::<Result<Vec<_>, _>>()
    })?;
    Ok(hashed.into_iter().flatten().collect())
}

/// Makes the written files durable before the manifest and `_SUCCESS` name them:
/// one `syncfs` on Linux, a sync per file elsewhere.
fn sync_filesystem<'a>(
    dir: &Path,
    files: impl Iterator<Item = &'a String>,
) -> Result<(), CoordinatorError> {
    let io =
        |e: std::io::Error| CoordinatorError::Io(format!("cannot sync {}: {e}", dir.display()));
    #[cfg(target_os = "linux")]
    {
        let _ = files;
        let handle = fs::File::open(dir).map_err(io)?;
        rustix::fs::syncfs(&handle).map_err(|e| io(e.into()))
    }
    #[cfg(not(target_os = "linux"))]
    {
        for rel in files {
            fs::File::open(dir.join(rel))
                .and_then(|f| f.sync_all())
                .map_err(io)?;
        }
        Ok(())
    }
}

fn batch(columns: Vec<(&str, ArrayRef)>) -> Result<RecordBatch, CoordinatorError> {
    RecordBatch::try_from_iter_with_nullable(columns.into_iter().map(|(n, a)| (n, a, false)))
        .map_err(|e| CoordinatorError::Io(format!("cannot build a record batch: {e}")))
}

fn strings<'a>(it: impl Iterator<Item = &'a str>) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(it))
}

/// The levels table of one tier (the tier itself is the Hive folder name).
/// Columns, in order: see the README's schema section.
fn levels_batch(job: &Job, levels: &[&TieredLevel<'_>]) -> Result<RecordBatch, CoordinatorError> {
    let game = job.game.as_str();
    let mut metrics = MapBuilder::new(None, StringBuilder::new(), Float64Builder::new());
    for l in levels {
        for (k, v) in &l.level.metrics {
            metrics.keys().append_value(k);
            metrics.values().append_value(*v);
        }
        metrics
            .append(true)
            .map_err(|e| CoordinatorError::Io(e.to_string()))?;
    }
    let ids: Vec<String> = levels
        .iter()
        .map(|l| format!("{game}-{:020}", l.record.seed))
        .collect();
    batch(vec![
        ("game", strings(levels.iter().map(|_| game))),
        (
            "seed",
            Arc::new(UInt64Array::from_iter_values(
                levels.iter().map(|l| l.record.seed),
            )),
        ),
        ("level_id", strings(ids.iter().map(String::as_str))),
        (
            "difficulty",
            Arc::new(Float64Array::from_iter_values(
                levels.iter().map(|l| l.level.difficulty),
            )),
        ),
        (
            "moves",
            Arc::new(UInt32Array::from_iter_values(
                levels.iter().map(|l| l.level.moves),
            )),
        ),
        (
            "moves_optimal",
            Arc::new(BooleanArray::from(
                levels
                    .iter()
                    .map(|l| l.level.moves_optimal)
                    .collect::<Vec<_>>(),
            )),
        ),
        (
            "layout",
            strings(levels.iter().map(|l| l.level.layout.as_str())),
        ),
        (
            "level_json",
            strings(levels.iter().map(|l| l.level.level_json.as_str())),
        ),
        (
            "solution",
            strings(levels.iter().map(|l| l.level.solution.as_str())),
        ),
        (
            "level_hash",
            strings(levels.iter().map(|l| l.level.level_hash.as_str())),
        ),
        (
            "generate_ms",
            Arc::new(Float64Array::from_iter_values(
                levels.iter().map(|l| l.record.generate_ms),
            )),
        ),
        (
            "solve_ms",
            Arc::new(Float64Array::from_iter_values(
                levels.iter().map(|l| l.record.solve_ms),
            )),
        ),
        (
            "nodes",
            Arc::new(UInt64Array::from_iter_values(
                levels.iter().map(|l| l.record.nodes),
            )),
        ),
        (
            "worker",
            strings(levels.iter().map(|l| l.record.worker.as_str())),
        ),
        (
            "attempt",
            Arc::new(UInt32Array::from_iter_values(
                levels.iter().map(|l| l.record.attempt),
            )),
        ),
        ("metrics", Arc::new(metrics.finish())),
        (
            "stratum",
            Arc::new(UInt32Array::from_iter_values(
                levels.iter().map(|l| job.stratum_of(l.record.seed) as u32),
            )),
        ),
    ])
}

fn campaigns_batch(slots: &[CampaignSlot]) -> Result<RecordBatch, CoordinatorError> {
    batch(vec![
        (
            "campaign",
            Arc::new(UInt64Array::from_iter_values(
                slots.iter().map(|s| s.campaign),
            )),
        ),
        (
            "position",
            Arc::new(UInt32Array::from_iter_values(
                slots.iter().map(|s| s.position),
            )),
        ),
        (
            "seed",
            Arc::new(UInt64Array::from_iter_values(slots.iter().map(|s| s.seed))),
        ),
        (
            "tier",
            Arc::new(UInt32Array::from_iter_values(slots.iter().map(|s| s.tier))),
        ),
        (
            "difficulty",
            Arc::new(Float64Array::from_iter_values(
                slots.iter().map(|s| s.difficulty),
            )),
        ),
    ])
}

fn rejects_batch(rejects: &[&SeedRecord]) -> Result<RecordBatch, CoordinatorError> {
    batch(vec![
        (
            "seed",
            Arc::new(UInt64Array::from_iter_values(
                rejects.iter().map(|r| r.seed),
            )),
        ),
        ("status", strings(rejects.iter().map(|r| r.status.as_str()))),
        ("reason", strings(rejects.iter().map(|r| r.reason.as_str()))),
        (
            "generate_ms",
            Arc::new(Float64Array::from_iter_values(
                rejects.iter().map(|r| r.generate_ms),
            )),
        ),
        (
            "solve_ms",
            Arc::new(Float64Array::from_iter_values(
                rejects.iter().map(|r| r.solve_ms),
            )),
        ),
        (
            "nodes",
            Arc::new(UInt64Array::from_iter_values(
                rejects.iter().map(|r| r.nodes),
            )),
        ),
        ("worker", strings(rejects.iter().map(|r| r.worker.as_str()))),
        (
            "attempt",
            Arc::new(UInt32Array::from_iter_values(
                rejects.iter().map(|r| r.attempt),
            )),
        ),
    ])
}

/// Release files: one text file per tier and per campaign, each level as a
/// comment header and its layout, plus `SHA256SUMS`. Deterministic bytes.
fn release_files(
    job: &Job,
    by_tier: &BTreeMap<u32, Vec<&TieredLevel<'_>>>,
    tiered: &[TieredLevel<'_>],
    campaigns: &[CampaignSlot],
) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, String)> = Vec::new();
    let entry = |l: &TieredLevel<'_>, title: String| {
        format!(
            "; {title}\n; id {}-{:020} seed {} tier {} difficulty {} moves {}{}\n; solution {}\n{}\n",
            job.game,
            l.record.seed,
            l.record.seed,
            l.tier,
            l.level.difficulty,
            l.level.moves,
            if l.level.moves_optimal {
                ""
            } else {
                " (best found)"
            },
            l.level.solution,
            l.level.layout.trim_end(),
        )
    };
    for (tier, levels) in by_tier {
        let mut text = format!(
            "; pack {} game {} tier {tier:02}: {} levels, easiest first\n\n",
            job.pack,
            job.game,
            levels.len()
        );
        for (i, l) in levels.iter().enumerate() {
            text.push_str(&entry(l, format!("level {}", i + 1)));
            text.push('\n');
        }
        files.push((format!("tier-{tier:02}.txt"), text));
    }
    let by_seed: BTreeMap<u64, &TieredLevel<'_>> =
        tiered.iter().map(|l| (l.record.seed, l)).collect();
    let mut current: Option<(u64, String)> = None;
    for slot in campaigns {
        if current.as_ref().is_some_and(|(c, _)| *c != slot.campaign) {
            let (c, text) = current.take().unwrap_or_default();
            files.push((format!("campaigns/campaign-{c:05}.txt"), text));
        }
        let (_, text) = current.get_or_insert_with(|| {
            (
                slot.campaign,
                format!(
                    "; pack {} game {} campaign {}\n\n",
                    job.pack, job.game, slot.campaign
                ),
            )
        });
        if let Some(l) = by_seed.get(&slot.seed) {
            text.push_str(&entry(l, format!("position {}", slot.position)));
            text.push('\n');
        }
    }
    if let Some((c, text)) = current {
        files.push((format!("campaigns/campaign-{c:05}.txt"), text));
    }
    let mut sums = String::new();
    for (name, text) in &files {
        sums.push_str(&format!(
            "{}  {name}\n",
            hex(&Sha256::digest(text.as_bytes()))
        ));
    }
    files.push(("SHA256SUMS".into(), sums));
    files
        .into_iter()
        .map(|(name, text)| (format!("release/{name}"), text.into_bytes()))
        .collect()
}

/// Lower-case hexadecimal.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// SHA-256 of a file, lower-case hex.
pub fn sha256_file(path: &Path) -> Result<String, CoordinatorError> {
    let bytes = fs::read(path)
        .map_err(|e| CoordinatorError::Io(format!("cannot read {}: {e}", path.display())))?;
    Ok(hex(&Sha256::digest(&bytes)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(seed: u64, difficulty: f64) -> SeedRecord {
        SeedRecord {
            seed,
            status: Status::Accepted,
            reason: String::new(),
            level: Some(LevelRecord {
                difficulty,
                moves: 3,
                moves_optimal: true,
                layout: "#####\n#1.1#\n#####\n".into(),
                level_json: "{}".into(),
                solution: "R".into(),
                metrics: BTreeMap::from([("states".to_string(), 4.0)]),
                level_hash: format!("{seed}"),
                canonical: None,
            }),
            generate_ms: 0.1,
            solve_ms: 0.2,
            nodes: 4,
            worker: "w".into(),
            attempt: 1,
        }
    }

    #[test]
    fn equal_tiers_sort_by_difficulty_then_seed() {
        let records: Vec<SeedRecord> = (0..10)
            .map(|s| level(s, f64::from((s % 4) as u32)))
            .collect();
        let t = assign_tiers(&records, &TierScheme::Equal { count: 3 });
        let order: Vec<(u64, u32)> = t.iter().map(|l| (l.record.seed, l.tier)).collect();
        assert_eq!(
            order,
            vec![
                (0, 1),
                (4, 1),
                (8, 1),
                (1, 2),
                (5, 2),
                (9, 2),
                (2, 3),
                (6, 3),
                (3, 3),
                (7, 3)
            ]
        );
    }

    #[test]
    fn threshold_tiers() {
        let records: Vec<SeedRecord> = [0.5, 1.0, 2.5, 9.0]
            .iter()
            .enumerate()
            .map(|(s, &d)| level(s as u64, d))
            .collect();
        let t = assign_tiers(
            &records,
            &TierScheme::Thresholds {
                thresholds: vec![1.0, 3.0],
            },
        );
        assert_eq!(
            t.iter().map(|l| l.tier).collect::<Vec<_>>(),
            vec![1, 2, 2, 3]
        );
    }

    #[test]
    fn campaign_position_i_comes_from_group_i_without_replacement() {
        let records: Vec<SeedRecord> = (0..40).map(|s| level(s, s as f64)).collect();
        let t = assign_tiers(&records, &TierScheme::Equal { count: 4 });
        let slots = draw_campaigns(&t, 4, 10, 7);
        assert_eq!(slots.len(), 40);
        for s in &slots {
            let group = (s.position - 1) as u64;
            assert!((group * 10..group * 10 + 10).contains(&s.seed), "{s:?}");
        }
        let mut seeds: Vec<u64> = slots.iter().map(|s| s.seed).collect();
        seeds.sort_unstable();
        seeds.dedup();
        assert_eq!(seeds.len(), 40, "no level used twice");
        assert_eq!(slots, draw_campaigns(&t, 4, 10, 7), "deterministic");
    }
}
