"""Reads a pregen pack with pyarrow (an independent Parquet reader) and checks it
against the documented schema and the manifest, then runs every query of
analysis/sql/ with DuckDB and checks their figures against the manifest, and
reads it again with polars and DataFusion (check_spark.py does Spark).
Usage: check_pack.py PACK_DIR

What it refuses, each a fault an analyst met: a column missing or of another
type; min/max statistics pyarrow cannot use (floats included); a tier that is
not an integer in DuckDB; rows or files without the pack, job id and generator
version; a metric key the schema does not document for the pack's game; a
rejection reason with numbers in its code; a seed that ran out of nodes
reported with fewer nodes than its budget; a file whose checksum differs."""

import hashlib
import json
import re
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

# Column names and types come from the schema file the pack crate writes
# (docs/schema.json); the reading below is pyarrow's own.
SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "schema.json").read_text())
TYPES = {
    "string": pa.string(),
    "uint64": pa.uint64(),
    "uint32": pa.uint32(),
    "int32": pa.int32(),
    "float64": pa.float64(),
    "bool": pa.bool_(),
    "map<string,float64>": pa.map_(pa.string(), pa.float64()),
    "map<string,bool>": pa.map_(pa.string(), pa.bool_()),
}


def expected(table):
    spec = SCHEMA[table]
    return {c["name"]: TYPES[c["type"]] for c in spec["columns"]}


LEVELS = expected("levels")
CAMPAIGNS = expected("campaigns")
REJECTS = expected("rejects")


def check_schema(name, schema, expected):
    # Every column says what it holds, in its field metadata (docs/schema.json's
    # words), as pyarrow reads the files.
    docs = {c["name"]: c["doc"] for c in SCHEMA[name]["columns"]} if name in SCHEMA else {}
    for f in schema if docs else []:
        said = (f.metadata or {}).get(b"description", b"").decode()
        assert said == docs[f.name], f"{name}.{f.name}: description {said!r} != {docs[f.name]!r}"
    got = {f.name: f.type for f in schema}
    assert list(got) == list(expected), f"{name}: columns {list(got)} != {list(expected)}"
    for col, typ in expected.items():
        # Map types compare by key/item types (field names may differ by writer).
        if isinstance(typ, pa.MapType):
            assert isinstance(got[col], pa.MapType), f"{name}.{col}: {got[col]}"
            assert got[col].key_type == typ.key_type and got[col].item_type == typ.item_type, f"{name}.{col}: {got[col]}"
        else:
            assert got[col] == typ, f"{name}.{col}: {got[col]} != {typ}"


def main(pack):
    pack = Path(pack)
    manifest = json.loads((pack / "manifest.json").read_text())
    levels = ds.dataset(pack / "levels", format="parquet")
    for f in levels.files:
        # Side by side, the tier in the name: no Hive folder for pandas to merge.
        p = Path(f)
        assert p.parent == pack / "levels" and re.fullmatch(r"tier-\d{2,}-part-\d{5}\.parquet", p.name), \
            f"level file outside the layout: {f}"
    check_schema("levels", levels.schema, LEVELS)
    table = levels.to_table()
    assert table.num_rows == manifest["counts"]["accepted"], (table.num_rows, manifest["counts"])
    tiers = sorted(set(table.column("tier").to_pylist()))
    assert tiers == list(range(1, manifest["counts"]["tiers"] + 1)), tiers
    seeds = table.column("seed").to_pylist()
    assert len(seeds) == len(set(seeds)), "a seed appears twice"
    for t in tiers:
        part = levels.to_table(filter=ds.field("tier") == t)
        diffs = part.column("difficulty").to_pylist()
        assert diffs == sorted(diffs), f"tier {t} not sorted by difficulty"
        assert manifest["counts"]["by_tier"][f"{t:02}"] == part.num_rows
    # Every game publishes metrics, each documented for its game.
    keys = {k for row in table.column("metrics").to_pylist() for k, _ in row}
    assert keys, "no level carries a metric"
    documented = {m["name"] for m in SCHEMA["metrics"][manifest["job"]["game"]]}
    assert keys <= documented, f"metric keys not in docs/schema.json: {sorted(keys - documented)}"
    # Every flag of `metrics` is in `metric_flags`, as a boolean of the same value.
    flag_keys = {m["name"] for m in SCHEMA["metrics"][manifest["job"]["game"]] if m["unit"] == "flag"}
    for metrics, flags in zip(table.column("metrics").to_pylist(), table.column("metric_flags").to_pylist()):
        want = {k: v != 0.0 for k, v in metrics if k in flag_keys}
        assert dict(flags) == want, f"flags {flags} are not the metrics' flags {want}"

    campaigns = pq.read_table(pack / "campaigns" / "campaigns.parquet")
    check_schema("campaigns", campaigns.schema, CAMPAIGNS)
    assert set(campaigns.column("seed").to_pylist()) <= set(seeds)
    rejects = pq.read_table(pack / "rejects" / "rejects.parquet")
    check_schema("rejects", rejects.schema, REJECTS)
    assert not set(rejects.column("seed").to_pylist()) & set(seeds)
    check_reasons(rejects, manifest)
    check_strata(manifest, table, rejects, campaigns)

    for name, rows in (("levels", table), ("campaigns", campaigns), ("rejects", rejects)):
        check_provenance(name, rows, manifest)
    for path in sorted(pack.glob("*/**/*.parquet")):
        check_statistics(path)
        check_metadata(path, manifest)
    for path in sorted((pack / "levels").glob("*.parquet")):
        check_lookups(path, table)

    assert (pack / "_SUCCESS").exists()
    check_sql(pack, manifest, rejects.num_rows)
    check_polars(pack, manifest)
    check_pandas(pack, manifest, table.num_rows)
    check_datafusion(pack, manifest, seeds, rejects.num_rows)
    for rel, digest in manifest["files"].items():
        actual = hashlib.sha256((pack / rel).read_bytes()).hexdigest()
        assert actual == digest, f"checksum of {rel}"
    print(f"ok: {table.num_rows} levels in {len(tiers)} tiers, {campaigns.num_rows} campaign slots, {rejects.num_rows} rejects")


def check_provenance(name, rows, manifest):
    """Every row names its pack, job, generator and rating model, as the manifest does."""
    rating = manifest["rating"]
    want = {
        "pack": manifest["pack"],
        "job_id": manifest["job_id"],
        "generator": manifest["versions"]["generator"],
        "rating_model": f"{rating['name']} v{rating['version']} {rating['sha256']}",
    }
    for column, value in want.items():
        values = set(rows.column(column).to_pylist())
        assert values <= {value}, f"{name}.{column}: {values} != {value}"


def check_lookups(path, levels):
    """A level looked up by its hash or id: each row group of a levels file
    has a bloom filter on `level_hash` and `level_id` (DuckDB reads the
    footer), and a lookup by hash finds the level."""
    import duckdb

    rows = duckdb.sql(
        f"SELECT path_in_schema, bloom_filter_offset, bloom_filter_length FROM parquet_metadata('{path}') "
        "WHERE path_in_schema IN ('level_hash', 'level_id')"
    ).fetchall()
    assert rows and all(offset is not None and length for _, offset, length in rows), f"{path.name}: {rows}"
    some = levels.column("level_hash")[0].as_py()
    found = duckdb.sql(
        f"SELECT count(*) FROM read_parquet('{path.parent}/*.parquet') WHERE level_hash = '{some}'"
    ).fetchall()[0][0]
    assert found == 1, f"{some}: {found} levels"


def check_metadata(path, manifest):
    """The footer's key-value metadata names the pack, job, generator, game and rating model."""
    meta = {k.decode(): v.decode() for k, v in (pq.ParquetFile(path).metadata.metadata or {}).items()}
    want = {
        "pregen.pack": manifest["pack"],
        "pregen.job_id": manifest["job_id"],
        "pregen.generator": manifest["versions"]["generator"],
        "pregen.game": manifest["job"]["game"],
        "pregen.rating_model": "{name} v{version} {sha256}".format(**manifest["rating"]),
    }
    assert set(want) == set(SCHEMA["metadata_keys"]), SCHEMA["metadata_keys"]
    for key, value in want.items():
        assert meta.get(key) == value, f"{path}: metadata {key} = {meta.get(key)!r}, not {value!r}"


def check_reasons(rejects, manifest):
    """Reason codes carry no numbers (they are counted by) and are the data
    dictionary's, each with its status; a seed whose search ran out of nodes
    reports its whole budget."""
    budget = manifest["job"]["budget"]["max_nodes"]
    codes = {c["code"]: c["status"] for c in SCHEMA["reason_codes"]}
    for status, reason, nodes in zip(
        rejects.column("status").to_pylist(),
        rejects.column("reason").to_pylist(),
        rejects.column("nodes").to_pylist(),
    ):
        if status in ("unsolvable", "timeout"):
            assert reason is None, (status, reason)
            continue
        assert not re.search(r"[0-9]", reason), f"reason code with a number: {reason!r}"
        assert ":" not in reason, f"reason code with its detail: {reason!r}"
        assert codes.get(reason) == status, f"reason {reason!r} with status {status!r}"
        if reason == "budget exhausted":
            assert nodes >= budget, f"budget exhausted after {nodes} of {budget} nodes"


def check_statistics(path):
    """Every column chunk carries min/max statistics that pyarrow uses (floats
    included: `difficulty` is what tier files are sorted by), and they bound
    the values read."""
    f = pq.ParquetFile(path)
    if f.metadata.num_row_groups == 0:
        assert f.metadata.num_rows == 0, path
        return
    assert f.metadata.row_group(0).column(0).compression == "ZSTD", path
    for g in range(f.metadata.num_row_groups):
        group = f.metadata.row_group(g)
        if group.num_rows == 0:
            continue
        data = f.read_row_group(g)
        for c in range(group.num_columns):
            column = group.column(c)
            stats = column.statistics
            assert stats is not None and stats.has_min_max, f"{path}: {column.path_in_schema} has no usable min/max"
            if column.path_in_schema in ("seed", "difficulty", "moves", "generate_ms", "solve_ms", "nodes"):
                values = data.column(column.path_in_schema).to_pylist()
                assert stats.min == min(values) and stats.max == max(values), (path, column.path_in_schema)


def check_strata(manifest, levels, rejects, campaigns):
    """Every table names each row's stratum by index and by name, as the
    manifest lists them; `tier` has one type in every table, so tables join
    on it."""
    names = {i: s["name"] for i, s in enumerate(manifest["strata"])}
    for name, rows in (("levels", levels), ("rejects", rejects), ("campaigns", campaigns)):
        for index, label in zip(rows.column("stratum").to_pylist(), rows.column("stratum_name").to_pylist()):
            assert names.get(index) == label, f"{name}: stratum {index} named {label!r}, not {names.get(index)!r}"
    assert levels.schema.field("tier").type == campaigns.schema.field("tier").type == pa.int32()
    joined = campaigns.join(levels.select(["seed", "tier"]), keys=["seed", "tier"])
    assert joined.num_rows == campaigns.num_rows, "a campaign slot's (seed, tier) is not a level's"


def check_pandas(pack, manifest, accepted):
    """pandas reads the pack as it is: `tier` a plain integer that orders
    and compares as numbers, `moves_optimal` a boolean, one row per level."""
    import pandas as pd

    df = pd.read_parquet(pack / "levels")
    assert len(df) == accepted, len(df)
    assert pd.api.types.is_integer_dtype(df["tier"]), f"pandas reads tier as {df['tier'].dtype}"
    assert pd.api.types.is_bool_dtype(df["moves_optimal"]), f"pandas reads moves_optimal as {df['moves_optimal'].dtype}"
    for row in df.metric_flags:
        assert all(isinstance(v, bool) for _, v in row), f"pandas reads a flag as not a bool: {row}"
    top = manifest["counts"]["tiers"]
    assert sorted(df["tier"].unique()) == list(range(1, top + 1))
    above_one = int((df["tier"] > 1).sum())
    assert above_one == accepted - manifest["counts"]["by_tier"].get("01", 0), above_one
    campaigns = pd.read_parquet(pack / "campaigns" / "campaigns.parquet")
    assert campaigns["tier"].dtype == df["tier"].dtype, (campaigns["tier"].dtype, df["tier"].dtype)
    merged = campaigns.merge(df[["seed", "tier"]], on=["seed", "tier"])
    assert len(merged) == len(campaigns), "pandas cannot join campaigns to levels on (seed, tier)"


def check_polars(pack, manifest):
    """polars, a third reader, sees the same levels with `tier` an integer and
    the documented provenance, with no options."""
    import polars as pl

    levels = pl.scan_parquet(f"{pack}/levels/*.parquet")
    schema = levels.collect_schema()
    assert schema["tier"].is_integer(), f"polars reads tier as {schema['tier']}"
    assert schema["difficulty"] == pl.Float64, schema["difficulty"]
    counts = levels.group_by("tier").len().collect()
    by_tier = {f"{t:02}": n for t, n in counts.iter_rows()}
    assert by_tier == manifest["counts"]["by_tier"], by_tier
    top = manifest["counts"]["tiers"]
    between = levels.filter(pl.col("tier").is_between(2, top)).select(pl.len()).collect().item()
    assert between == manifest["counts"]["accepted"] - manifest["counts"]["by_tier"].get("01", 0), between
    ids = levels.select(pl.col("job_id").unique()).collect().to_series().to_list()
    assert ids == [manifest["job_id"]], ids


def check_datafusion(pack, manifest, seeds, rejects):
    """DataFusion, a fourth reader, sees the same levels, campaigns and
    rejects with the documented types, and its filters skip files by their
    statistics, with no options."""
    from datafusion import SessionContext

    ctx = SessionContext()
    ctx.register_parquet("levels", f"{pack}/levels/")
    ctx.register_parquet("campaigns", f"{pack}/campaigns/campaigns.parquet")
    ctx.register_parquet("rejects", f"{pack}/rejects/rejects.parquet")
    for name, expected in (("levels", LEVELS), ("campaigns", CAMPAIGNS), ("rejects", REJECTS)):
        # DataFusion reads strings as views of the same type.
        fields = [
            pa.field(f.name, pa.string()) if pa.types.is_string_view(f.type) else f
            for f in ctx.table(name).schema()
        ]
        check_schema(f"DataFusion {name}", fields, expected)

    rows = ctx.sql("SELECT tier, count(*) AS n, count(DISTINCT seed) AS seeds FROM levels GROUP BY tier").to_pydict()
    by_tier = {f"{t:02}": n for t, n in zip(rows["tier"], rows["n"])}
    assert by_tier == manifest["counts"]["by_tier"], f"DataFusion counts by tier {by_tier}"
    assert sum(rows["seeds"]) == len(seeds), "DataFusion sees a seed twice"
    [n] = ctx.sql("SELECT count(*) AS n FROM rejects").to_pydict()["n"]
    assert n == rejects, f"DataFusion reads {n} rejects, not {rejects}"
    [n] = ctx.sql("SELECT count(*) AS n FROM campaigns").to_pydict()["n"]
    slots = manifest["counts"]["campaigns"] * manifest["job"]["campaigns"]["length"]
    assert n == slots, f"DataFusion reads {n} campaign slots, not {slots}"

    # Levels at the pack's hardest difficulty: every tier file whose maximum
    # is below it is skipped by its statistics, not read.
    [top] = ctx.sql("SELECT max(difficulty) AS top FROM levels").to_pydict()["top"]
    [below] = ctx.sql(f"SELECT count(DISTINCT tier) AS n FROM levels WHERE tier NOT IN "
                      f"(SELECT tier FROM levels WHERE difficulty >= {top!r})").to_pydict()["n"]
    plan = "\n".join(ctx.sql(f"EXPLAIN ANALYZE SELECT count(*) FROM levels WHERE difficulty >= {top!r}")
                      .to_pydict()["plan"])
    # Pruned whole (a file's statistics) or row group by row group.
    skipped = 0
    for unit in ("files_ranges", "row_groups"):
        pruned = re.search(unit + r"_pruned_statistics=(\d+) total \u2192 (\d+) matched", plan)
        assert pruned, f"DataFusion's plan names no {unit} pruning:\n{plan}"
        total, matched = map(int, pruned.groups())
        skipped += total - matched
    assert skipped >= below, f"DataFusion skipped {skipped} files or row groups, not {below}:\n{plan}"


def check_sql(pack, manifest, rejects):
    """Every query of analysis/sql/ runs, and the ones with counts agree with the manifest."""
    import query

    con = query.connect(pack)
    # `tier` is an integer in DuckDB out of the box (a column of the files).
    [(kind,)] = con.sql(f"SELECT DISTINCT typeof(tier) FROM read_parquet('{pack}/levels/*.parquet')").fetchall()
    assert kind == "INTEGER", kind
    top = manifest["counts"]["tiers"]
    [(between,)] = con.sql(f"SELECT count(*) FROM read_parquet('{pack}/levels/*.parquet') WHERE tier BETWEEN 2 AND {top}").fetchall()
    assert between == manifest["counts"]["accepted"] - manifest["counts"]["by_tier"].get("01", 0), between
    for path in sorted(query.SQL.glob("*.sql")):
        if path.name != "views.sql":
            con.sql(path.read_text()).fetchall()
    tiers = con.sql((query.SQL / "tiers.sql").read_text()).fetchall()
    assert {f"{t:02}": n for t, n, *_ in tiers} == manifest["counts"]["by_tier"], tiers
    reasons = con.sql((query.SQL / "reasons.sql").read_text()).fetchall()
    assert sum(r[2] for r in reasons) == rejects, reasons
    ramp = con.sql((query.SQL / "campaign_ramp.sql").read_text()).fetchall()
    assert [r[0] for r in ramp] == list(range(1, manifest["job"]["campaigns"]["length"] + 1)), ramp
    assert all(r[1] == manifest["counts"]["campaigns"] for r in ramp), ramp
    metrics = con.sql((query.SQL / "metrics.sql").read_text()).fetchall()
    assert metrics, "metrics.sql finds no metric"


if __name__ == "__main__":
    main(sys.argv[1])
