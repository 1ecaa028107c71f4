//! Writing a complete pack: tiers, campaigns, the Parquet dataset, release
//! files, the manifest with checksums, and `_SUCCESS` last.
//!
//! Everything here is a function of the pack's records and the job, sorted with
//! ties broken by seed, so two runs of one job write the same levels, tiers,
//! campaigns and release files whatever the number of workers.

use std::collections::BTreeMap;
use std::fs;
use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, RecordBatch, StringArray, UInt32Array, UInt64Array,
};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;
use pregen_games::sha256_hex;
use rayon::prelude::*;

use crate::PackError;
use crate::dir::{self, PackDir};
use crate::durable::{sync_filesystem, write_durably, write_files};
use crate::job::{Job, TierScheme};
use crate::manifest::{Counts, CrossCheck, Manifest, Seeds, StratumEntry, Versions};
use crate::record::{SeedRecord, Status};
use crate::schema::{self, Table};
use crate::tiers::{CampaignSlot, TieredLevel, assign_tiers, draw_campaigns};

/// Facts for the manifest that only the run knows.
#[derive(Debug, Clone, Default)]
pub struct RunFacts {
    /// Results that disagreed with an earlier result for the same seed.
    pub mismatches: u64,
    /// The wire protocol's version the run spoke.
    pub protocol: u32,
    /// What the cross-check did.
    pub cross_check: CrossCheck,
}

/// Writes the pack into its folder (which holds `commit/`): replaces earlier outputs,
/// writes `_SUCCESS` last. Returns the manifest.
pub fn write_pack(
    pack: &PackDir,
    job: &Job,
    records: &[SeedRecord],
    facts: &RunFacts,
) -> Result<Manifest, PackError> {
    let root = pack.root();
    for stale in dir::OUTPUTS {
        let p = root.join(stale);
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
            Part::Rejects => {
                let path = dir::REJECTS_FILE.to_string();
                let bytes = parquet_bytes(&schema::REJECTS, rejects_columns(&rejects), &path)?;
                Ok(vec![(path, bytes)])
            }
            Part::Campaigns => {
                let path = dir::CAMPAIGNS_FILE.to_string();
                let bytes =
                    parquet_bytes(&schema::CAMPAIGNS, campaigns_columns(&campaigns), &path)?;
                Ok(vec![(path, bytes)])
            }
            Part::Tier(tier, levels) => {
                let path = dir::tier_part(tier, 0);
                let bytes = parquet_bytes(&schema::LEVELS, levels_columns(job, levels)?, &path)?;
                Ok(vec![(path, bytes)])
            }
        })
        .collect::<Result<Vec<_>, PackError>>()?
        .into_iter()
        .flatten()
        .collect();
    let encoded = started.elapsed();
    let files = write_files(root, outputs)?;
    let written = started.elapsed();
    sync_filesystem(root, files.keys())?;
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
    let manifest = Manifest {
        pack: job.pack.clone(),
        job_id: job.id(),
        job: job.clone(),
        versions: Versions {
            pregen: env!("CARGO_PKG_VERSION").to_string(),
            generator: pregen_games::GENERATOR_VERSION.to_string(),
            protocol: facts.protocol,
        },
        strata: job
            .plan()
            .into_iter()
            .map(|p| StratumEntry {
                name: p.name,
                first_seed: p.first_seed,
                count: p.count,
                params: p.params,
            })
            .collect(),
        seeds: Seeds {
            first: job.first_seed,
            last: records.last().map(|r| r.seed),
            tried: records.len() as u64,
        },
        counts: Counts {
            accepted: tiered.len() as u64,
            tiers: tier_count,
            by_tier: by_tier
                .iter()
                .map(|(t, l)| (format!("{t:02}"), l.len() as u64))
                .collect(),
            by_status: by_status
                .into_iter()
                .map(|(s, n)| (s.to_string(), n))
                .collect(),
            campaigns: job.campaign_count(),
        },
        machine_dependent: !timeouts.is_empty(),
        timeouts,
        mismatches: facts.mismatches,
        cross_check: facts.cross_check.clone(),
        files,
    };
    write_durably(root, dir::MANIFEST, manifest.to_json()?.as_bytes())?;
    write_durably(root, dir::SUCCESS, b"")?;
    Ok(manifest)
}

/// One piece of the pack's encoding work: a file, or the release folder.
enum Part<'r, 'l> {
    Release,
    Rejects,
    Campaigns,
    Tier(u32, &'r [&'r TieredLevel<'l>]),
}

/// The Parquet file of `table` from its columns by name: zstd, page
/// statistics, the sort columns declared, text that never repeats stored plain.
fn parquet_bytes(
    table: &Table,
    columns: Vec<(&'static str, ArrayRef)>,
    path: &str,
) -> Result<Vec<u8>, PackError> {
    let parquet = |source| PackError::Parquet {
        path: path.into(),
        source,
    };
    let arrays = table
        .arrange(columns)
        .ok_or_else(|| PackError::invalid(path, "the columns do not match the schema"))?;
    let batch =
        RecordBatch::try_new(table.schema(), arrays).map_err(|source| PackError::Arrow {
            path: path.into(),
            source,
        })?;
    let mut props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(3).map_err(parquet)?))
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_sorting_columns(Some(table.sorting_columns()))
        .set_created_by(format!("pregen {}", env!("CARGO_PKG_VERSION")));
    // A dictionary of values that never repeat is built only to be dropped.
    for column in table.columns.iter().filter(|c| c.unique_text) {
        props = props.set_column_dictionary_enabled(ColumnPath::from(column.name), false);
    }
    let mut writer =
        ArrowWriter::try_new(Vec::new(), batch.schema(), Some(props.build())).map_err(parquet)?;
    writer.write(&batch).map_err(parquet)?;
    writer.into_inner().map_err(parquet)
}

fn u64s(it: impl Iterator<Item = u64>) -> ArrayRef {
    Arc::new(UInt64Array::from_iter_values(it))
}

fn u32s(it: impl Iterator<Item = u32>) -> ArrayRef {
    Arc::new(UInt32Array::from_iter_values(it))
}

fn f64s(it: impl Iterator<Item = f64>) -> ArrayRef {
    Arc::new(Float64Array::from_iter_values(it))
}

fn strings<'a>(it: impl Iterator<Item = &'a str>) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(it))
}

/// The levels table of one tier (the tier itself is the Hive folder name).
/// Columns, in order: see the README's schema section.
fn levels_columns(
    job: &Job,
    levels: &[&TieredLevel<'_>],
) -> Result<Vec<(&'static str, ArrayRef)>, PackError> {
    let game = job.game.as_str();
    let mut metrics = schema::metrics_builder();
    for l in levels {
        for (k, v) in &l.level.metrics {
            metrics.keys().append_value(k);
            metrics.values().append_value(*v);
        }
        metrics.append(true).map_err(|source| PackError::Arrow {
            path: dir::LEVELS.into(),
            source,
        })?;
    }
    let ids: Vec<String> = levels
        .iter()
        .map(|l| format!("{game}-{:020}", l.record.seed))
        .collect();
    Ok(vec![
        ("game", strings(levels.iter().map(|_| game))),
        ("seed", u64s(levels.iter().map(|l| l.record.seed))),
        ("level_id", strings(ids.iter().map(String::as_str))),
        (
            "difficulty",
            f64s(levels.iter().map(|l| l.level.difficulty)),
        ),
        ("moves", u32s(levels.iter().map(|l| l.level.moves))),
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
            f64s(levels.iter().map(|l| l.record.generate_ms)),
        ),
        ("solve_ms", f64s(levels.iter().map(|l| l.record.solve_ms))),
        ("nodes", u64s(levels.iter().map(|l| l.record.nodes))),
        (
            "worker",
            strings(levels.iter().map(|l| l.record.worker.as_str())),
        ),
        ("attempt", u32s(levels.iter().map(|l| l.record.attempt))),
        ("metrics", Arc::new(metrics.finish())),
        (
            "stratum",
            u32s(levels.iter().map(|l| job.stratum_of(l.record.seed) as u32)),
        ),
    ])
}

fn campaigns_columns(slots: &[CampaignSlot]) -> Vec<(&'static str, ArrayRef)> {
    vec![
        ("campaign", u64s(slots.iter().map(|s| s.campaign))),
        ("position", u32s(slots.iter().map(|s| s.position))),
        ("seed", u64s(slots.iter().map(|s| s.seed))),
        ("tier", u32s(slots.iter().map(|s| s.tier))),
        ("difficulty", f64s(slots.iter().map(|s| s.difficulty))),
    ]
}

fn rejects_columns(rejects: &[&SeedRecord]) -> Vec<(&'static str, ArrayRef)> {
    vec![
        ("seed", u64s(rejects.iter().map(|r| r.seed))),
        ("status", strings(rejects.iter().map(|r| r.status.as_str()))),
        ("reason", strings(rejects.iter().map(|r| r.reason.as_str()))),
        ("generate_ms", f64s(rejects.iter().map(|r| r.generate_ms))),
        ("solve_ms", f64s(rejects.iter().map(|r| r.solve_ms))),
        ("nodes", u64s(rejects.iter().map(|r| r.nodes))),
        ("worker", strings(rejects.iter().map(|r| r.worker.as_str()))),
        ("attempt", u32s(rejects.iter().map(|r| r.attempt))),
    ]
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
        files.push((dir::release_tier(*tier), text));
    }
    let by_seed: BTreeMap<u64, &TieredLevel<'_>> =
        tiered.iter().map(|l| (l.record.seed, l)).collect();
    let mut current: Option<(u64, String)> = None;
    for slot in campaigns {
        if current.as_ref().is_some_and(|(c, _)| *c != slot.campaign) {
            let (c, text) = current.take().unwrap_or_default();
            files.push((dir::release_campaign(c), text));
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
        files.push((dir::release_campaign(c), text));
    }
    let mut sums = String::new();
    for (name, text) in &files {
        sums.push_str(&format!("{}  {name}\n", sha256_hex(text.as_bytes())));
    }
    files.push((dir::SHA256SUMS.into(), sums));
    files
        .into_iter()
        .map(|(name, text)| (format!("{}/{name}", dir::RELEASE), text.into_bytes()))
        .collect()
}
