//! Reading a pack's Parquet files back, by column name (never by position).

use std::fs::File;
use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, UInt32Type, UInt64Type};
use arrow_array::{Array, RecordBatch, StringArray};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::PackError;

/// Every record batch of a Parquet file.
pub fn read_batches(path: &Path) -> Result<Vec<RecordBatch>, PackError> {
    let parquet = |source| PackError::Parquet {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(PackError::io("open", path))?;
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(parquet)?
        .build()
        .map_err(parquet)?;
    reader
        .collect::<Result<Vec<_>, _>>()
        .map_err(|source| PackError::Arrow {
            path: path.to_path_buf(),
            source,
        })
}

/// A text column of a batch read from `path`.
pub fn text_column(batch: &RecordBatch, name: &str, path: &Path) -> Result<StringArray, PackError> {
    batch
        .column_by_name(name)
        .and_then(|c| c.as_string_opt::<i32>().cloned())
        .ok_or_else(|| PackError::invalid(path, format!("no text column `{name}`")))
}

/// A numeric column of a batch read from `path`, as floats.
pub fn f64_column(batch: &RecordBatch, name: &str, path: &Path) -> Result<Vec<f64>, PackError> {
    let col = batch
        .column_by_name(name)
        .ok_or_else(|| PackError::invalid(path, format!("no column `{name}`")))?;
    if let Some(a) = col.as_primitive_opt::<Float64Type>() {
        Ok(a.values().to_vec())
    } else if let Some(a) = col.as_primitive_opt::<UInt32Type>() {
        Ok(a.values().iter().map(|&v| f64::from(v)).collect())
    } else if let Some(a) = col.as_primitive_opt::<UInt64Type>() {
        Ok(a.values().iter().map(|&v| v as f64).collect())
    } else {
        Err(PackError::invalid(
            path,
            format!("column `{name}` is {}", col.data_type()),
        ))
    }
}

/// A `u64` column of a batch read from `path`.
pub fn u64_column(batch: &RecordBatch, name: &str, path: &Path) -> Result<Vec<u64>, PackError> {
    batch
        .column_by_name(name)
        .and_then(|c| c.as_primitive_opt::<UInt64Type>())
        .map(|a| a.values().to_vec())
        .ok_or_else(|| PackError::invalid(path, format!("no u64 column `{name}`")))
}

/// A `u32` column of a batch read from `path`.
pub fn u32_column(batch: &RecordBatch, name: &str, path: &Path) -> Result<Vec<u32>, PackError> {
    batch
        .column_by_name(name)
        .and_then(|c| c.as_primitive_opt::<UInt32Type>())
        .map(|a| a.values().to_vec())
        .ok_or_else(|| PackError::invalid(path, format!("no u32 column `{name}`")))
}

/// A boolean column of a batch read from `path`.
pub fn bool_column(batch: &RecordBatch, name: &str, path: &Path) -> Result<Vec<bool>, PackError> {
    batch
        .column_by_name(name)
        .and_then(|c| c.as_boolean_opt())
        .map(|a| a.iter().map(|v| v.unwrap_or(false)).collect())
        .ok_or_else(|| PackError::invalid(path, format!("no bool column `{name}`")))
}

/// The `metrics` map column, as a function from row to (name, value) pairs.
pub fn metrics_column(batch: &RecordBatch) -> Option<impl Fn(usize) -> Vec<(String, f64)>> {
    let map = batch.column_by_name("metrics")?.as_map_opt()?.clone();
    let keys = map.keys().as_string_opt::<i32>()?.clone();
    let values = map.values().as_primitive_opt::<Float64Type>()?.clone();
    Some(move |row: usize| {
        let offsets = map.value_offsets();
        (offsets[row] as usize..offsets[row + 1] as usize)
            .map(|j| (keys.value(j).to_string(), values.value(j)))
            .collect()
    })
}
