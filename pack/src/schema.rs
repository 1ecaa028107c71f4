//! The pack's Parquet tables, column by column: names, types, meanings, and
//! the columns each file is sorted by. The writer builds its batches through
//! these lists, the reader looks columns up by these names, and
//! [`describe`] is the schema file (`docs/schema.json`) that the independent
//! Python reader checks packs against.

use std::sync::Arc;

use arrow_array::ArrayRef;
use arrow_array::builder::{Float64Builder, MapBuilder, StringBuilder};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::file::metadata::SortingColumn;
use pregen_games::{Code, GameKind};

/// A column's type, as the schema file names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    /// UTF-8 text.
    String,
    /// Unsigned 64-bit integer.
    UInt64,
    /// Unsigned 32-bit integer.
    UInt32,
    /// 64-bit float.
    Float64,
    /// Boolean.
    Bool,
    /// Map from text to 64-bit float.
    MetricsMap,
}

impl ColumnType {
    /// The name in the schema file.
    pub fn name(self) -> &'static str {
        match self {
            ColumnType::String => "string",
            ColumnType::UInt64 => "uint64",
            ColumnType::UInt32 => "uint32",
            ColumnType::Float64 => "float64",
            ColumnType::Bool => "bool",
            ColumnType::MetricsMap => "map<string,float64>",
        }
    }

    /// The Arrow type.
    pub fn arrow(self) -> DataType {
        match self {
            ColumnType::String => DataType::Utf8,
            ColumnType::UInt64 => DataType::UInt64,
            ColumnType::UInt32 => DataType::UInt32,
            ColumnType::Float64 => DataType::Float64,
            ColumnType::Bool => DataType::Boolean,
            ColumnType::MetricsMap => {
                arrow_array::Array::data_type(&metrics_builder().finish()).clone()
            }
        }
    }
}

/// One column of a table.
#[derive(Debug, Clone, Copy)]
pub struct Column {
    /// Its name.
    pub name: &'static str,
    /// Its type.
    pub kind: ColumnType,
    /// What it holds.
    pub doc: &'static str,
    /// Whether its values (almost) never repeat: stored plain, without a
    /// dictionary, which would be as large as the column and cost its
    /// building.
    pub never_repeats: bool,
}

const fn col(name: &'static str, kind: ColumnType, doc: &'static str) -> Column {
    Column {
        name,
        kind,
        doc,
        never_repeats: false,
    }
}

/// A column whose values (almost) never repeat: seeds, timings.
const fn distinct(name: &'static str, kind: ColumnType, doc: &'static str) -> Column {
    Column {
        never_repeats: true,
        ..col(name, kind, doc)
    }
}

/// A text column whose values never repeat.
const fn unique(name: &'static str, doc: &'static str) -> Column {
    distinct(name, ColumnType::String, doc)
}

/// One Parquet table of a pack.
#[derive(Debug, Clone, Copy)]
pub struct Table {
    /// Its name.
    pub name: &'static str,
    /// Its columns, in file order.
    pub columns: &'static [Column],
    /// The columns its rows are sorted by, in order.
    pub sorted_by: &'static [&'static str],
}

use ColumnType::{Bool, Float64, MetricsMap, String as Text, UInt32, UInt64};

/// The pack's name: in every table, so that rows of several packs read together
/// stay apart.
const PACK: Column = col("pack", Text, "the pack's name (the job's `pack`)");
/// The job's id: in every table.
const JOB_ID: Column = col(
    "job_id",
    Text,
    "the job's id: the first 16 hex digits of the SHA-256 of its canonical JSON (the manifest's `job_id`)",
);
/// The generator version: in every table.
const GENERATOR: Column = col(
    "generator",
    Text,
    "the generator version that made and judged the levels",
);

/// The Parquet key-value metadata keys every file carries, beside the columns
/// of the same facts.
pub const METADATA_KEYS: [&str; 5] = [
    "pregen.pack",
    "pregen.job_id",
    "pregen.generator",
    "pregen.game",
    "pregen.rating_model",
];

/// Accepted levels: `levels/tier=N/part-K.parquet`.
pub const LEVELS: Table = Table {
    name: "levels",
    columns: &[
        col("game", Text, "game name"),
        distinct(
            "seed",
            UInt64,
            "the seed; (game, params, seed) rebuilds the level",
        ),
        unique("level_id", "`<game>-<seed, 20 digits>`"),
        col("difficulty", Float64, "rating, higher is harder"),
        col("moves", UInt32, "move count of `solution`"),
        col(
            "moves_optimal",
            Bool,
            "`moves` is proven optimal (false: best found within the budget)",
        ),
        unique("layout", "text layout, rendered from the level"),
        unique("level_json", "JSON form (parses back into the level)"),
        unique("solution", "solution in the game's notation"),
        unique("level_hash", "SHA-256 of `level_json`, lower-case hex"),
        distinct(
            "generate_ms",
            Float64,
            "generation time (a fact of the run)",
        ),
        distinct("solve_ms", Float64, "verification time (a fact of the run)"),
        col("nodes", UInt64, "search nodes of the verifier"),
        col(
            "worker",
            Text,
            "the worker as the coordinator records it: NAME#ID, its name and the ID the coordinator issued (a fact of the run)",
        ),
        col(
            "attempt",
            UInt32,
            "1 unless the seed's range was re-issued (a fact of the run)",
        ),
        col(
            "metrics",
            MetricsMap,
            "the rating's inputs and search figures",
        ),
        col(
            "stratum",
            UInt32,
            "the job's parameter set (0 without strata)",
        ),
        PACK,
        JOB_ID,
        GENERATOR,
    ],
    sorted_by: &["difficulty", "seed"],
};

/// The Hive partition column of [`LEVELS`], from the folder name.
pub const TIER_PARTITION: &str = "tier";

/// Every seed tried that gave no level: `rejects/rejects.parquet`.
pub const REJECTS: Table = Table {
    name: "rejects",
    columns: &[
        distinct("seed", UInt64, "the seed"),
        col(
            "status",
            Text,
            "`unsolvable`, `timeout`, `rejected` or `error`",
        ),
        col(
            "reason",
            Text,
            "why, as a code without numbers (`too easy`, `budget exhausted`, `duplicate`...: the list below; empty for unsolvable and timeout)",
        ),
        col(
            "reason_detail",
            Text,
            "the reason's particulars (`3 moves < min_moves 4`; may be empty)",
        ),
        distinct("generate_ms", Float64, "generation time"),
        distinct("solve_ms", Float64, "verification time"),
        col(
            "nodes",
            UInt64,
            "search nodes spent: the whole budget when it ran out, the verifier's count when the level was refused after its search, else 0",
        ),
        col(
            "worker",
            Text,
            "the worker as the coordinator records it: NAME#ID",
        ),
        col("attempt", UInt32, "attempt"),
        PACK,
        JOB_ID,
        GENERATOR,
    ],
    sorted_by: &["seed"],
};

/// The campaigns: `campaigns/campaigns.parquet`.
pub const CAMPAIGNS: Table = Table {
    name: "campaigns",
    columns: &[
        col("campaign", UInt64, "campaign number, 1-based"),
        col(
            "position",
            UInt32,
            "position, 1-based: drawn from difficulty group `position`",
        ),
        distinct("seed", UInt64, "the level's seed"),
        col("tier", UInt32, "the level's tier"),
        col("difficulty", Float64, "the level's difficulty"),
        PACK,
        JOB_ID,
        GENERATOR,
    ],
    sorted_by: &["campaign", "position"],
};

/// Every table, in the schema file's order.
pub const TABLES: &[Table] = &[LEVELS, REJECTS, CAMPAIGNS];

impl Table {
    /// The Arrow schema (no column is nullable).
    pub fn schema(&self) -> SchemaRef {
        Arc::new(Schema::new(
            self.columns
                .iter()
                .map(|c| Field::new(c.name, c.kind.arrow(), false))
                .collect::<Vec<_>>(),
        ))
    }

    /// The index of the column `name`.
    pub fn index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }

    /// The declared sort order, as Parquet sorting columns.
    pub fn sorting_columns(&self) -> Vec<SortingColumn> {
        self.sorted_by
            .iter()
            .filter_map(|name| self.index(name))
            .map(|i| SortingColumn {
                column_idx: i as i32,
                descending: false,
                nulls_first: false,
            })
            .collect()
    }

    /// The arrays of a batch in column order, from `(name, array)` pairs;
    /// `None` when a column is missing or named twice.
    pub fn arrange(&self, mut named: Vec<(&'static str, ArrayRef)>) -> Option<Vec<ArrayRef>> {
        let columns: Option<Vec<ArrayRef>> = self
            .columns
            .iter()
            .map(|c| {
                let at = named.iter().position(|(n, _)| *n == c.name)?;
                Some(named.swap_remove(at).1)
            })
            .collect();
        columns.filter(|_| named.is_empty())
    }
}

/// The builder of a `metrics` column.
pub fn metrics_builder() -> MapBuilder<StringBuilder, Float64Builder> {
    MapBuilder::new(None, StringBuilder::new(), Float64Builder::new())
}

/// The schema file: every table's columns with type and meaning, the sort
/// columns, and the levels' partition column.
pub fn describe() -> serde_json::Value {
    let tables: serde_json::Map<String, serde_json::Value> = TABLES
        .iter()
        .map(|t| {
            let columns: Vec<serde_json::Value> = t
                .columns
                .iter()
                .map(|c| serde_json::json!({ "name": c.name, "type": c.kind.name(), "doc": c.doc }))
                .collect();
            let mut table = serde_json::json!({ "columns": columns, "sorted_by": t.sorted_by });
            if t.name == LEVELS.name {
                table["partitions"] =
                    serde_json::json!([{ "name": TIER_PARTITION, "type": "int32" }]);
            }
            (t.name.to_string(), table)
        })
        .collect();
    let mut schema = serde_json::Value::Object(tables);
    schema["metadata_keys"] = serde_json::json!(METADATA_KEYS);
    schema["reason_codes"] = Code::ALL
        .iter()
        .map(|c| serde_json::json!({ "code": c.as_str(), "status": c.status().as_str(), "doc": c.doc() }))
        .collect();
    schema["metrics"] = GameKind::all()
        .map(|game| {
            let keys: Vec<serde_json::Value> = game
                .metric_docs()
                .iter()
                .map(|m| serde_json::json!({ "name": m.name, "unit": m.unit, "doc": m.doc }))
                .collect();
            (game.name().to_string(), serde_json::Value::Array(keys))
        })
        .collect::<serde_json::Map<_, _>>()
        .into();
    schema
}

/// The data dictionary (`docs/schema.md`): every table's columns with type
/// and meaning, and every game's metric keys with unit and meaning, made from
/// the same lists the writer uses, so it cannot drift from the files.
pub fn dictionary() -> String {
    let mut md = String::from(
        "# The pack's data dictionary\n\n\
         Generated from the code (`pregen_pack::schema::dictionary`); a test keeps this \
         file current. `docs/schema.json` holds the same in JSON for programs.\n\n\
         Every Parquet file also carries its provenance in the footer's key-value \
         metadata: ",
    );
    let keys: Vec<String> = METADATA_KEYS.iter().map(|k| format!("`{k}`")).collect();
    md.push_str(&keys.join(", "));
    md.push_str(".\n");
    for t in TABLES {
        let path = match t.name {
            "levels" => "levels/tier=N/part-KKKKK.parquet",
            "rejects" => "rejects/rejects.parquet",
            _ => "campaigns/campaigns.parquet",
        };
        md.push_str(&format!(
            "\n## `{}` (`{path}`)\n\nSorted by {}.\n\n| column | type | meaning |\n|---|---|---|\n",
            t.name,
            t.sorted_by
                .iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        for c in t.columns {
            md.push_str(&format!(
                "| `{}` | {} | {} |\n",
                c.name,
                c.kind.name(),
                c.doc
            ));
        }
        if t.name == LEVELS.name {
            md.push_str(&format!(
                "| `{TIER_PARTITION}` | int32 (Hive partition) | the tier, 1 = easiest, from the folder name `tier=N` |\n"
            ));
        }
    }
    md.push_str(
        "\n## Reason codes\n\nThe words of the rejects table's `reason` column, each with \
         the status it goes with.\n\n| reason | status | meaning |\n|---|---|---|\n",
    );
    for c in Code::ALL {
        md.push_str(&format!(
            "| `{}` | {} | {} |\n",
            c.as_str(),
            c.status().as_str(),
            c.doc()
        ));
    }
    md.push_str(
        "\n## Metrics by game\n\nThe keys of the levels' `metrics` map, per game; \
         a key outside its game's list is a fault.\n",
    );
    for game in GameKind::all() {
        md.push_str(&format!(
            "\n### {}\n\n| key | unit | meaning |\n|---|---|---|\n",
            game.name()
        ));
        for m in game.metric_docs() {
            md.push_str(&format!("| `{}` | {} | {} |\n", m.name, m.unit, m.doc));
        }
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `docs/schema.json` is what [`describe`] says; `PREGEN_WRITE_SCHEMA=1`
    /// rewrites it after a schema change.
    #[test]
    fn the_schema_file_is_current() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/schema.json");
        let text = serde_json::to_string_pretty(&describe()).expect("serializes") + "\n";
        if std::env::var_os("PREGEN_WRITE_SCHEMA").is_some() {
            std::fs::write(&path, &text).expect("write docs/schema.json");
        }
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            on_disk == text,
            "docs/schema.json is stale: run `PREGEN_WRITE_SCHEMA=1 cargo test -p pregen-pack schema`"
        );
    }

    /// `docs/schema.md` is what [`dictionary`] says (`PREGEN_WRITE_SCHEMA=1`
    /// rewrites it).
    #[test]
    fn the_data_dictionary_is_current() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/schema.md");
        let text = dictionary();
        if std::env::var_os("PREGEN_WRITE_SCHEMA").is_some() {
            std::fs::write(&path, &text).expect("write docs/schema.md");
        }
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            on_disk == text,
            "docs/schema.md is stale: run `PREGEN_WRITE_SCHEMA=1 cargo test -p pregen-pack schema`"
        );
    }

    #[test]
    fn sort_columns_are_named_columns() {
        for table in TABLES {
            assert_eq!(
                table.sorting_columns().len(),
                table.sorted_by.len(),
                "{}",
                table.name
            );
        }
        assert_eq!(LEVELS.index("difficulty"), Some(3));
    }
}
