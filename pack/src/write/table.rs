//! The Parquet tables: a file of one table written a batch at a time, the
//! provenance stamped in every row and footer, and each table's columns.

use std::path::Path;
use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, Int32Array, RecordBatch, StringArray, UInt32Array,
    UInt64Array,
};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;

use crate::PackError;
use crate::dir;
use crate::job::Job;
use crate::manifest::RatingFacts;
use crate::record::{LevelRecord, SeedRecord};
use crate::schema::columns as c;
use crate::schema::{self, Table};
use crate::tiers::CampaignSlot;

use super::WriteOptions;
use super::files::HashingFile;

/// What every table's rows and every Parquet file's key-value metadata say
/// of where they come from.
#[derive(Debug, Clone)]
pub(super) struct Stamp {
    pub(super) pack: String,
    pub(super) job_id: String,
    pub(super) generator: String,
    pub(super) game: String,
    pub(super) rating: RatingFacts,
    pub(super) rating_label: String,
    /// The game's metrics that are flags (the levels' `metric_flags`),
    /// asked of the game once: a game program's game is not held between
    /// batches.
    pub(super) flag_keys: Vec<&'static str>,
}

impl Stamp {
    pub(super) fn of(job: &Job) -> Result<Stamp, PackError> {
        let rating = RatingFacts::of(&job.rating_model()?);
        let flag_keys = job
            .game_kind()?
            .metric_docs()
            .iter()
            .filter(|m| m.is_flag())
            .map(|m| m.name)
            .collect();
        Ok(Stamp {
            flag_keys,
            pack: job.pack.clone(),
            job_id: job.id(),
            generator: pregen_games::GENERATOR_VERSION.to_string(),
            game: job.game_name().to_string(),
            rating_label: rating.label(),
            rating,
        })
    }

    /// The key-value metadata, in [`schema::METADATA_KEYS`]' order.
    pub(super) fn metadata(&self) -> Vec<KeyValue> {
        let values = [
            &self.pack,
            &self.job_id,
            &self.generator,
            &self.game,
            &self.rating_label,
        ];
        schema::METADATA_KEYS
            .iter()
            .zip(values)
            .map(|(key, value)| KeyValue::new(key.to_string(), value.clone()))
            .collect()
    }

    /// The provenance columns of a batch of `rows` rows.
    pub(super) fn columns(&self, rows: usize) -> [(&'static str, ArrayRef); 4] {
        let repeat = |v: &str| -> ArrayRef { Arc::new(StringArray::from(vec![v; rows])) };
        [
            (c::PACK, repeat(&self.pack)),
            (c::JOB_ID, repeat(&self.job_id)),
            (c::GENERATOR, repeat(&self.generator)),
            (c::RATING_MODEL, repeat(&self.rating_label)),
        ]
    }
}

/// A Parquet file of one table, written a batch at a time: zstd, page
/// statistics, the sort columns declared, values that never repeat stored plain,
/// the [`Stamp`] in every row and in the footer.
pub(super) struct TableFile {
    pub(super) writer: ArrowWriter<HashingFile>,
    pub(super) table: &'static Table,
    pub(super) stamp: Stamp,
    pub(super) path: String,
    pub(super) rows: u64,
}

impl TableFile {
    pub(super) fn create(
        root: &Path,
        path: &str,
        table: &'static Table,
        options: &WriteOptions,
        stamp: &Stamp,
    ) -> Result<Self, PackError> {
        let parquet = |source| PackError::Parquet {
            path: path.into(),
            source,
        };
        // Level 1: every column chunk gets a zstd context of its own, whose
        // tables are fresh pages to zero; level 3's are several times larger,
        // for files only 0.5% smaller (a 10,000-level tilt pack).
        let mut props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::try_new(1).map_err(parquet)?))
            .set_statistics_enabled(EnabledStatistics::Page)
            .set_sorting_columns(Some(table.sorting_columns()))
            .set_max_row_group_row_count(Some(options.rows_per_group.max(1)))
            .set_created_by(format!("pregen {}", env!("CARGO_PKG_VERSION")))
            .set_key_value_metadata(Some(stamp.metadata()));
        // Why these go without a dictionary: `Column::never_repeats`.
        for column in table.columns.iter().filter(|c| c.never_repeats) {
            props = props.set_column_dictionary_enabled(ColumnPath::from(column.name), false);
        }
        // A level looked up by its hash or id reads the row groups whose
        // bloom filter may hold it, not every one (sized for a full row
        // group at 1% false positives).
        for column in table.columns.iter().filter(|c| c.looked_up) {
            let path = ColumnPath::from(column.name);
            props = props
                .set_column_bloom_filter_enabled(path.clone(), true)
                .set_column_bloom_filter_fpp(path.clone(), 0.01)
                .set_column_bloom_filter_max_ndv(path, options.rows_per_group.max(1) as u64);
        }
        let file =
            HashingFile::create_parquet(root, path)?.delivered(options.delivery.as_ref(), path);
        let writer =
            ArrowWriter::try_new(file, table.schema(), Some(props.build())).map_err(parquet)?;
        Ok(TableFile {
            writer,
            table,
            stamp: stamp.clone(),
            path: path.to_string(),
            rows: 0,
        })
    }

    /// Writes a batch of the table's own columns (the stamp's are added).
    pub(super) fn write(
        &mut self,
        mut columns: Vec<(&'static str, ArrayRef)>,
    ) -> Result<(), PackError> {
        let rows = columns.first().map_or(0, |(_, a)| a.len());
        columns.extend(self.stamp.columns(rows));
        let arrays = self
            .table
            .arrange(columns)
            .ok_or_else(|| PackError::invalid(&self.path, "the columns do not match the schema"))?;
        let batch = RecordBatch::try_new(self.table.schema(), arrays).map_err(|source| {
            PackError::Arrow {
                path: self.path.clone().into(),
                source,
            }
        })?;
        self.rows += batch.num_rows() as u64;
        self.writer
            .write(&batch)
            .map_err(|source| PackError::Parquet {
                path: self.path.clone().into(),
                source,
            })
    }

    pub(super) fn close(self) -> Result<String, PackError> {
        let path = self.path;
        let file = self
            .writer
            .into_inner()
            .map_err(|source| PackError::Parquet {
                path: path.into(),
                source,
            })?;
        file.close()
    }
}

pub(super) fn u64s(it: impl Iterator<Item = u64>) -> ArrayRef {
    Arc::new(UInt64Array::from_iter_values(it))
}

pub(super) fn u32s(it: impl Iterator<Item = u32>) -> ArrayRef {
    Arc::new(UInt32Array::from_iter_values(it))
}

/// A tier (or any count below 2^31) as the `int32` every reader takes.
pub(super) fn i32s(it: impl Iterator<Item = u32>) -> ArrayRef {
    Arc::new(Int32Array::from_iter_values(
        it.map(|v| i32::try_from(v).unwrap_or(i32::MAX)),
    ))
}

/// The stratum of each seed.
fn stratum(job: &Job, seeds: impl Iterator<Item = u64>) -> ArrayRef {
    u32s(seeds.map(|seed| job.stratum_of(seed) as u32))
}

/// The stratum's name of each seed.
fn stratum_names(job: &Job, seeds: impl Iterator<Item = u64>) -> ArrayRef {
    let names: Vec<String> = (0..job.strata.len().max(1))
        .map(|i| job.stratum_name(i))
        .collect();
    strings(seeds.map(|seed| names.get(job.stratum_of(seed)).map_or("", String::as_str)))
}

pub(super) fn f64s(it: impl Iterator<Item = f64>) -> ArrayRef {
    Arc::new(Float64Array::from_iter_values(it))
}

pub(super) fn strings<'a>(it: impl Iterator<Item = &'a str>) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(it))
}

/// The levels table of a batch of one tier's levels.
pub(super) fn levels_columns(
    (game, flag_keys): (&str, &[&str]),
    job: &Job,
    tier: u32,
    records: &[SeedRecord],
) -> Result<Vec<(&'static str, ArrayRef)>, PackError> {
    let levels: Vec<(&SeedRecord, &LevelRecord)> = records
        .iter()
        .filter_map(|r| Some((r, r.accepted()?)))
        .collect();
    let arrow = |source| PackError::Arrow {
        path: dir::LEVELS.into(),
        source,
    };
    let mut metrics = schema::metrics_builder();
    let mut flags = schema::flags_builder();
    for (_, l) in &levels {
        for (k, v) in &l.metrics {
            metrics.keys().append_value(k);
            metrics.values().append_value(*v);
            if flag_keys.contains(&k.as_str()) {
                flags.keys().append_value(k);
                flags.values().append_value(*v != 0.0);
            }
        }
        metrics.append(true).map_err(arrow)?;
        flags.append(true).map_err(arrow)?;
    }
    let ids: Vec<String> = levels
        .iter()
        .map(|(r, _)| dir::level_id(game, r.seed))
        .collect();
    Ok(vec![
        (c::GAME, strings(levels.iter().map(|_| game))),
        (c::SEED, u64s(levels.iter().map(|(r, _)| r.seed))),
        (c::LEVEL_ID, strings(ids.iter().map(String::as_str))),
        (c::TIER, i32s(levels.iter().map(|_| tier))),
        (
            c::DIFFICULTY,
            f64s(levels.iter().map(|(_, l)| l.difficulty)),
        ),
        (c::MOVES, u32s(levels.iter().map(|(_, l)| l.moves))),
        (
            c::MOVES_OPTIMAL,
            Arc::new(BooleanArray::from(
                levels
                    .iter()
                    .map(|(_, l)| l.moves_optimal)
                    .collect::<Vec<_>>(),
            )),
        ),
        (
            c::LAYOUT,
            strings(levels.iter().map(|(_, l)| l.layout.as_str())),
        ),
        (
            c::LEVEL_JSON,
            strings(levels.iter().map(|(_, l)| l.level_json.as_str())),
        ),
        (
            c::SOLUTION,
            strings(levels.iter().map(|(_, l)| l.solution.as_str())),
        ),
        (
            c::LEVEL_HASH,
            strings(levels.iter().map(|(_, l)| l.level_hash.as_str())),
        ),
        (
            c::GENERATE_MS,
            f64s(levels.iter().map(|(r, _)| r.generate_ms)),
        ),
        (c::SOLVE_MS, f64s(levels.iter().map(|(r, _)| r.solve_ms))),
        (c::NODES, u64s(levels.iter().map(|(r, _)| r.nodes))),
        (
            c::WORKER,
            strings(levels.iter().map(|(r, _)| r.worker.as_str())),
        ),
        (c::ATTEMPT, u32s(levels.iter().map(|(r, _)| r.attempt))),
        (c::METRICS, Arc::new(metrics.finish())),
        (c::FLAGS, Arc::new(flags.finish())),
        (c::STRATUM, stratum(job, levels.iter().map(|(r, _)| r.seed))),
        (
            c::STRATUM_NAME,
            stratum_names(job, levels.iter().map(|(r, _)| r.seed)),
        ),
    ])
}

pub(super) fn campaigns_columns(
    job: &Job,
    slots: &[CampaignSlot],
) -> Vec<(&'static str, ArrayRef)> {
    vec![
        (c::CAMPAIGN, u64s(slots.iter().map(|s| s.campaign))),
        (c::POSITION, u32s(slots.iter().map(|s| s.position))),
        (c::SEED, u64s(slots.iter().map(|s| s.seed))),
        (c::TIER, i32s(slots.iter().map(|s| s.tier))),
        (c::DIFFICULTY, f64s(slots.iter().map(|s| s.difficulty))),
        (c::STRATUM, stratum(job, slots.iter().map(|s| s.seed))),
        (
            c::STRATUM_NAME,
            stratum_names(job, slots.iter().map(|s| s.seed)),
        ),
    ]
}

pub(super) fn rejects_columns(job: &Job, rejects: &[SeedRecord]) -> Vec<(&'static str, ArrayRef)> {
    vec![
        (c::SEED, u64s(rejects.iter().map(|r| r.seed))),
        (
            c::STATUS,
            strings(rejects.iter().map(|r| r.status.as_str())),
        ),
        (
            c::REASON,
            Arc::new(StringArray::from_iter(
                rejects
                    .iter()
                    .map(|r| r.reason.as_ref().map(|r| r.code.as_str())),
            )) as ArrayRef,
        ),
        (
            c::REASON_DETAIL,
            strings(
                rejects
                    .iter()
                    .map(|r| r.reason.as_ref().map_or("", |r| r.detail.as_str())),
            ),
        ),
        (c::GENERATE_MS, f64s(rejects.iter().map(|r| r.generate_ms))),
        (c::SOLVE_MS, f64s(rejects.iter().map(|r| r.solve_ms))),
        (c::NODES, u64s(rejects.iter().map(|r| r.nodes))),
        (
            c::WORKER,
            strings(rejects.iter().map(|r| r.worker.as_str())),
        ),
        (c::ATTEMPT, u32s(rejects.iter().map(|r| r.attempt))),
        (c::STRATUM, stratum(job, rejects.iter().map(|r| r.seed))),
        (
            c::STRATUM_NAME,
            stratum_names(job, rejects.iter().map(|r| r.seed)),
        ),
    ]
}
