//! The pack's Parquet tables, column by column: names, types, meanings, and
//! the columns each file is sorted by. The writer builds its batches through
//! these lists, the reader looks columns up by these names, and
//! [`describe`] is the schema file (`docs/schema.json`) that the independent
//! Python reader checks packs against.

use std::sync::Arc;

use arrow_array::ArrayRef;
use arrow_array::builder::{BooleanBuilder, Float64Builder, MapBuilder, StringBuilder};
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
    /// Signed 32-bit integer (what every reader takes as a plain integer).
    Int32,
    /// 64-bit float.
    Float64,
    /// Boolean.
    Bool,
    /// Map from text to 64-bit float.
    MetricsMap,
    /// Map from text to boolean.
    FlagsMap,
}

impl ColumnType {
    /// The name in the schema file.
    pub fn name(self) -> &'static str {
        match self {
            ColumnType::String => "string",
            ColumnType::UInt64 => "uint64",
            ColumnType::UInt32 => "uint32",
            ColumnType::Int32 => "int32",
            ColumnType::Float64 => "float64",
            ColumnType::Bool => "bool",
            ColumnType::MetricsMap => "map<string,float64>",
            ColumnType::FlagsMap => "map<string,bool>",
        }
    }

    /// The Arrow type.
    pub fn arrow(self) -> DataType {
        match self {
            ColumnType::String => DataType::Utf8,
            ColumnType::UInt64 => DataType::UInt64,
            ColumnType::UInt32 => DataType::UInt32,
            ColumnType::Int32 => DataType::Int32,
            ColumnType::Float64 => DataType::Float64,
            ColumnType::Bool => DataType::Boolean,
            ColumnType::MetricsMap => {
                arrow_array::Array::data_type(&metrics_builder().finish()).clone()
            }
            ColumnType::FlagsMap => {
                arrow_array::Array::data_type(&flags_builder().finish()).clone()
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
    /// Whether readers look a row up by its value (a level by its hash or
    /// id): the column gets a bloom filter per row group.
    pub looked_up: bool,
    /// Whether a row may have no value (SQL's NULL): the rejects' `reason`
    /// of a seed with no reason (unsolvable, timeout) alone.
    pub nullable: bool,
}

const fn col(name: &'static str, kind: ColumnType, doc: &'static str) -> Column {
    Column {
        name,
        kind,
        doc,
        never_repeats: false,
        looked_up: false,
        nullable: false,
    }
}

/// A column whose values (almost) never repeat: seeds, timings.
const fn distinct(name: &'static str, kind: ColumnType, doc: &'static str) -> Column {
    Column {
        never_repeats: true,
        ..col(name, kind, doc)
    }
}

/// A text column whose values never repeat, by which a reader looks a row
/// up.
const fn key(name: &'static str, doc: &'static str) -> Column {
    Column {
        looked_up: true,
        ..unique(name, doc)
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

use ColumnType::{Bool, FlagsMap, Float64, Int32, MetricsMap, String as Text, UInt32, UInt64};
use columns as c;

/// Every column's name: what readers and writers of the tables name a
/// column by, so that a misspelt name does not compile.
pub mod columns {
    /// `game`.
    pub const GAME: &str = "game";
    /// `seed`.
    pub const SEED: &str = "seed";
    /// `level_id`.
    pub const LEVEL_ID: &str = "level_id";
    /// `difficulty`.
    pub const DIFFICULTY: &str = "difficulty";
    /// `moves`.
    pub const MOVES: &str = "moves";
    /// `moves_optimal`.
    pub const MOVES_OPTIMAL: &str = "moves_optimal";
    /// `layout`.
    pub const LAYOUT: &str = "layout";
    /// `level_json`.
    pub const LEVEL_JSON: &str = "level_json";
    /// `solution`.
    pub const SOLUTION: &str = "solution";
    /// `level_hash`.
    pub const LEVEL_HASH: &str = "level_hash";
    /// `generate_ms`.
    pub const GENERATE_MS: &str = "generate_ms";
    /// `solve_ms`.
    pub const SOLVE_MS: &str = "solve_ms";
    /// `nodes`.
    pub const NODES: &str = "nodes";
    /// `worker`.
    pub const WORKER: &str = "worker";
    /// `attempt`.
    pub const ATTEMPT: &str = "attempt";
    /// `metrics`.
    pub const METRICS: &str = "metrics";
    /// `metric_flags` (not `flags`, which pandas' `DataFrame.flags` shadows).
    pub const FLAGS: &str = "metric_flags";
    /// `stratum`.
    pub const STRATUM: &str = "stratum";
    /// `stratum_name`.
    pub const STRATUM_NAME: &str = "stratum_name";
    /// `status`.
    pub const STATUS: &str = "status";
    /// `reason`.
    pub const REASON: &str = "reason";
    /// `reason_detail`.
    pub const REASON_DETAIL: &str = "reason_detail";
    /// `campaign`.
    pub const CAMPAIGN: &str = "campaign";
    /// `position`.
    pub const POSITION: &str = "position";
    /// `tier`.
    pub const TIER: &str = "tier";
    /// `pack`.
    pub const PACK: &str = "pack";
    /// `job_id`.
    pub const JOB_ID: &str = "job_id";
    /// `generator`.
    pub const GENERATOR: &str = "generator";
    /// `rating_model`.
    pub const RATING_MODEL: &str = "rating_model";
}

/// The pack's name: in every table, so that rows of several packs read together
/// stay apart.
const PACK: Column = col(c::PACK, Text, "the pack's name (the job's `pack`)");
/// The job's id: in every table.
const JOB_ID: Column = col(
    c::JOB_ID,
    Text,
    "the job's id: the first 16 hex digits of the SHA-256 of its canonical JSON (the manifest's `job_id`)",
);
/// The generator version: in every table.
const GENERATOR: Column = col(
    c::GENERATOR,
    Text,
    "the generator version that made and judged the levels",
);

/// The rating model: in every table, so that levels of packs rated by two
/// models read together stay apart.
const RATING_MODEL: Column = col(
    c::RATING_MODEL,
    Text,
    "the rating model that gave the levels their difficulty: `NAME vVERSION SHA256` (the manifest's `rating`, the footer's `pregen.rating_model`)",
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

/// The stratum's columns: in every table.
const STRATUM: Column = col(
    c::STRATUM,
    UInt32,
    "the job's parameter set, 0-based (0 without strata)",
);
/// The stratum's name.
const STRATUM_NAME: Column = col(
    c::STRATUM_NAME,
    Text,
    "the parameter set's name (its number when the job names none; empty without strata)",
);

/// Accepted levels: `levels/tier-NN-part-KKKKK.parquet`.
pub const LEVELS: Table = Table {
    name: "levels",
    columns: &[
        col(c::GAME, Text, "game name"),
        distinct(
            c::SEED,
            UInt64,
            "the seed; (game, params, seed) rebuilds the level",
        ),
        key(c::LEVEL_ID, "`<game>-<seed, 20 digits>`"),
        col(
            c::TIER,
            Int32,
            "the tier, 1 = easiest (also in the file's name: `tier-NN-part-KKKKK`)",
        ),
        col(c::DIFFICULTY, Float64, "rating, higher is harder"),
        col(c::MOVES, UInt32, "move count of `solution`"),
        col(
            c::MOVES_OPTIMAL,
            Bool,
            "`moves` is proven optimal (false: best found within the budget)",
        ),
        unique(c::LAYOUT, "text layout, rendered from the level"),
        unique(c::LEVEL_JSON, "JSON form (parses back into the level)"),
        unique(c::SOLUTION, "solution in the game's notation"),
        key(c::LEVEL_HASH, "SHA-256 of `level_json`, lower-case hex"),
        distinct(
            c::GENERATE_MS,
            Float64,
            "generation time (a fact of the run)",
        ),
        distinct(
            c::SOLVE_MS,
            Float64,
            "verification time (a fact of the run)",
        ),
        col(c::NODES, UInt64, "search nodes of the verifier"),
        col(
            c::WORKER,
            Text,
            "the worker as the coordinator records it: NAME#ID, its name and the ID the coordinator issued (a fact of the run)",
        ),
        col(
            c::ATTEMPT,
            UInt32,
            "1 unless the seed's range was re-issued (a fact of the run)",
        ),
        col(
            c::METRICS,
            MetricsMap,
            "the rating's inputs and search figures, every one a number (flags 0 or 1, so that a mean is a share)",
        ),
        col(
            c::FLAGS,
            FlagsMap,
            "the figures of `metrics` whose unit is `flag`, as booleans (not named `flags`, which pandas' `DataFrame.flags` shadows: `df.metric_flags` is the column)",
        ),
        STRATUM,
        STRATUM_NAME,
        PACK,
        JOB_ID,
        GENERATOR,
        RATING_MODEL,
    ],
    sorted_by: &[c::DIFFICULTY, c::SEED],
};

/// Every seed tried that gave no level: `rejects/rejects.parquet`.
pub const REJECTS: Table = Table {
    name: "rejects",
    columns: &[
        distinct(c::SEED, UInt64, "the seed"),
        col(
            c::STATUS,
            Text,
            "`unsolvable`, `timeout`, `rejected` or `error`",
        ),
        Column {
            nullable: true,
            ..col(
                c::REASON,
                Text,
                "why, as a code without numbers (`too easy`, `budget exhausted`, `duplicate`...: the list below); null for unsolvable and timeout, which have none",
            )
        },
        col(
            c::REASON_DETAIL,
            Text,
            "the reason's particulars (`3 moves < min_moves 4`; may be empty)",
        ),
        distinct(c::GENERATE_MS, Float64, "generation time"),
        distinct(c::SOLVE_MS, Float64, "verification time"),
        col(
            c::NODES,
            UInt64,
            "search nodes spent: the whole budget when it ran out, the verifier's count when the level was refused after its search, else 0",
        ),
        col(
            c::WORKER,
            Text,
            "the worker as the coordinator records it: NAME#ID",
        ),
        col(c::ATTEMPT, UInt32, "attempt"),
        STRATUM,
        STRATUM_NAME,
        PACK,
        JOB_ID,
        GENERATOR,
        RATING_MODEL,
    ],
    sorted_by: &[c::SEED],
};

/// The campaigns: `campaigns/campaigns.parquet`.
pub const CAMPAIGNS: Table = Table {
    name: "campaigns",
    columns: &[
        col(c::CAMPAIGN, UInt64, "campaign number, 1-based"),
        col(
            c::POSITION,
            UInt32,
            "position, 1-based: drawn from difficulty group `position`",
        ),
        distinct(c::SEED, UInt64, "the level's seed"),
        col(c::TIER, Int32, "the level's tier"),
        col(c::DIFFICULTY, Float64, "the level's difficulty"),
        STRATUM,
        STRATUM_NAME,
        PACK,
        JOB_ID,
        GENERATOR,
        RATING_MODEL,
    ],
    sorted_by: &[c::CAMPAIGN, c::POSITION],
};

/// Every field of `manifest.json` (`pack::manifest::Manifest`), by its
/// path (`counts.by_tier`), with what it holds: the data dictionary's
/// section on the manifest. A test holds it to a written manifest's keys.
pub const MANIFEST_FIELDS: &[(&str, &str)] = &[
    ("counts.accepted", "accepted levels in the pack"),
    (
        "counts.by_tier",
        "accepted levels per tier, keyed `NN` (`\"01\"`)",
    ),
    (
        "counts.by_status",
        "seeds per status (`accepted`, `error`, `rejected`, `timeout`, `unsolvable`; a status no seed has is left out), the seeds past the pack's last level computed included",
    ),
    ("counts.campaigns", "campaigns drawn"),
    ("counts.tiers", "tiers of the scheme"),
    (
        "cross_check.share",
        "the share of seeds sampled for a second run",
    ),
    (
        "cross_check.confirmed",
        "seeds of the pack whose result a second run confirmed",
    ),
    (
        "cross_check.disputes",
        "seeds of the pack on which two results disagreed (the coordinator's own run decided)",
    ),
    (
        "cross_check.refused",
        "workers refused for a result the cross-check disproved, each with the seed and what differed",
    ),
    (
        "files",
        "every file written before the manifest (path in the pack -> SHA-256)",
    ),
    (
        "job",
        "the job as run (its fields as the job file's, every default filled in)",
    ),
    (
        "job_id",
        "the job's id: the first 16 hex digits of the SHA-256 of its canonical JSON",
    ),
    (
        "left_out",
        "a release archive's only, when `pregen archive --without` left parts of `release/` \
         out: their names (`campaigns`, `seeds`, `solutions`)",
    ),
    (
        "machine_dependent",
        "whether a watchdog timeout made the pack depend on the machine",
    ),
    (
        "mismatches",
        "results that disagreed with an earlier result for the same seed",
    ),
    ("pack", "the pack's name"),
    (
        "program",
        "for a game program: its description (name, version, params' defaults, text format, rating model, metrics and its own reason codes, each with its meaning)",
    ),
    ("rating.name", "the rating model's name"),
    ("rating.version", "the rating model's version"),
    ("rating.sha256", "the SHA-256 of the rating model's text"),
    ("seeds.first", "the job's first seed"),
    ("seeds.last", "the last seed recorded"),
    (
        "seeds.tried",
        "seeds the pack holds (its levels and rejects)",
    ),
    (
        "seeds.computed",
        "seeds the job's runs computed, those past each stratum's last level included (a fact of the runs)",
    ),
    (
        "strata",
        "the strata, each with `name`, `first_seed`, `count`, merged `params`, `band` (if any), `seeds` (of the pack) and `computed`",
    ),
    ("timeouts", "seeds whose verdict was a watchdog timeout"),
    ("versions.generator", "the games' generator version"),
    ("versions.pregen", "pregen's version"),
    ("versions.protocol", "the wire protocol's version"),
];

/// Every table, in the schema file's order.
pub const TABLES: &[Table] = &[LEVELS, REJECTS, CAMPAIGNS];

impl Table {
    /// The Arrow schema (no column is nullable but a reason a seed may lack:
    /// [`Column::nullable`]), each field's meaning in
    /// its metadata under `description` (what pyarrow's `field.metadata`
    /// and Spark's column comments read).
    pub fn schema(&self) -> SchemaRef {
        Arc::new(Schema::new(
            self.columns
                .iter()
                .map(|c| {
                    Field::new(c.name, c.kind.arrow(), c.nullable).with_metadata(
                        std::collections::HashMap::from([(
                            "description".to_string(),
                            c.doc.to_string(),
                        )]),
                    )
                })
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

/// The builder of a `metric_flags` column.
pub fn flags_builder() -> MapBuilder<StringBuilder, BooleanBuilder> {
    MapBuilder::new(None, StringBuilder::new(), BooleanBuilder::new())
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
            let table = serde_json::json!({ "columns": columns, "sorted_by": t.sorted_by });
            (t.name.to_string(), table)
        })
        .collect();
    let mut schema = serde_json::Value::Object(tables);
    schema["metadata_keys"] = serde_json::json!(METADATA_KEYS);
    schema["manifest"] = MANIFEST_FIELDS
        .iter()
        .map(|(field, doc)| serde_json::json!({ "field": field, "doc": doc }))
        .collect();
    let code = |c: &Code, game: Option<&str>| {
        let mut entry = serde_json::json!({ "code": c.as_str(), "status": c.status().as_str(), "doc": c.doc() });
        if let Some(game) = game {
            entry["game"] = game.into();
        }
        entry
    };
    schema["reason_codes"] = Code::COMMON
        .iter()
        .map(|c| code(c, None))
        .chain(GameKind::all().flat_map(|g| {
            let name = g.name();
            g.reasons()
                .to_vec()
                .into_iter()
                .map(move |c| code(&c, Some(name)))
        }))
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

/// How the analysts' tools read a pack in an object store in place
/// (`analysis/python/read_bucket.py` runs these, against a test server).
const FROM_A_BUCKET: &str = r#"
## Reading from a bucket

A pack written to an object store (docs/storage.md) is read in place, here from
`s3://studio-packs/2026-12/demo`, credentials from the `AWS_*` variables.
Read `levels/*.parquet` (or `rejects/`, `campaigns/`), never the pack's root:
it holds three tables and the commit log.

```python
import pyarrow.dataset as ds, pyarrow.fs as fs
s3 = fs.S3FileSystem(region="eu-west-1")
files = s3.get_file_info(fs.FileSelector("studio-packs/2026-12/demo/levels"))
levels = ds.dataset([f.path for f in files], format="parquet", filesystem=s3)

import polars as pl
levels = pl.scan_parquet("s3://studio-packs/2026-12/demo/levels/*.parquet")

import duckdb
con = duckdb.connect()
con.execute("INSTALL httpfs; LOAD httpfs; CREATE SECRET (TYPE s3, PROVIDER credential_chain)")
con.sql("SELECT tier, count(*), avg(difficulty) FROM "
        "read_parquet('s3://studio-packs/2026-12/demo/levels/*.parquet') GROUP BY tier")
```

For another S3 server, give pyarrow `endpoint_override`, polars
`storage_options={"aws_endpoint_url": ...}` and DuckDB's secret `ENDPOINT` with
`URL_STYLE 'path'`. Without network access to DuckDB's extension repository,
`pip install duckdb-extension-httpfs==<DuckDB's version>` and `INSTALL` the
`.duckdb_extension` file it holds (`analysis/python/read_bucket.py` does).
"#;

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
    md.push_str(
        ". Every column carries its meaning (the table's words below) in its field \
         metadata under `description` (pyarrow's `field.metadata`), and the columns a \
         level is looked up by (",
    );
    let looked_up: Vec<String> = TABLES
        .iter()
        .flat_map(|t| t.columns.iter().filter(|c| c.looked_up))
        .map(|c| format!("`{}`", c.name))
        .collect();
    md.push_str(&looked_up.join(", "));
    md.push_str(
        ") have a bloom filter in each row group, so that a reader that uses them \
         (DuckDB, DataFusion, Spark) skips the row groups that cannot hold the value.\n",
    );
    for t in TABLES {
        let path = match t.name {
            "levels" => "levels/tier-NN-part-KKKKK.parquet",
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
    }
    md.push_str(
        "\n## The manifest (`manifest.json`)\n\nWhat the pack is and how it was made, \
         written last but `_SUCCESS`. A release archive's manifest holds the same but the \
         facts of one run (`cross_check`, `mismatches`, `seeds.computed`, `strata[].computed`) \
         and lists the archive's files.\n\n| field | meaning |\n|---|---|\n",
    );
    for (field, doc) in MANIFEST_FIELDS {
        md.push_str(&format!("| `{field}` | {doc} |\n"));
    }
    md.push_str(FROM_A_BUCKET);
    md.push_str(
        "\n## Reason codes\n\nThe words of the rejects table's `reason` column, each with \
         the status it goes with: the common ones here, each game's own beside its metrics.\n\n\
         | reason | status | meaning |\n|---|---|---|\n",
    );
    for c in Code::COMMON {
        md.push_str(&format!(
            "| `{}` | {} | {} |\n",
            c.as_str(),
            c.status().as_str(),
            c.doc()
        ));
    }
    md.push_str(
        "\n## Metrics and reasons by game\n\nThe keys of the levels' `metrics` map, per game \
         (a key outside its game's list is a fault), and the reason codes the game gives beside \
         the common ones.\n",
    );
    for game in GameKind::all() {
        md.push_str(&format!(
            "\n### {}\n\n| key | unit | meaning |\n|---|---|---|\n",
            game.name()
        ));
        for m in game.metric_docs() {
            md.push_str(&format!("| `{}` | {} | {} |\n", m.name, m.unit, m.doc));
        }
        if !game.reasons().is_empty() {
            md.push_str("\n| its reason | status | meaning |\n|---|---|---|\n");
            for c in game.reasons() {
                md.push_str(&format!(
                    "| `{}` | {} | {} |\n",
                    c.as_str(),
                    c.status().as_str(),
                    c.doc()
                ));
            }
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
        assert_eq!(LEVELS.index(c::DIFFICULTY), Some(4));
    }
}
