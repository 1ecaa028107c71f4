"""Reads a pregen pack with Apache Spark (pyspark, on a local JVM), as an
analyst's cluster would, and checks it against the documented schema and the
manifest. Usage: check_spark.py PACK_DIR

Spark reads Parquet's unsigned integers as wider signed types: uint64 columns
(`seed`, `nodes`, `campaign`) as decimal(20,0), uint32 as bigint. `tier`, an
int32 column of the files, is an integer with no options."""

import json
import sys
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "schema.json").read_text())
TYPES = {
    "string": T.StringType(),
    "uint64": T.DecimalType(20, 0),
    "uint32": T.LongType(),
    "int32": T.IntegerType(),
    "float64": T.DoubleType(),
    "bool": T.BooleanType(),
    "map<string,float64>": T.MapType(T.StringType(), T.DoubleType()),
    "map<string,bool>": T.MapType(T.StringType(), T.BooleanType()),
}


def check_schema(name, frame):
    spec = SCHEMA[name]
    columns = spec["columns"]
    got = [(f.name, f.dataType) for f in frame.schema.fields]
    want = [(c["name"], TYPES[c["type"]]) for c in columns]
    assert [n for n, _ in got] == [n for n, _ in want], f"Spark {name}: columns {[n for n, _ in got]}"
    for (column, typ), (_, expected) in zip(got, want):
        if isinstance(expected, T.MapType):
            ok = isinstance(typ, T.MapType) and (typ.keyType, typ.valueType) == (expected.keyType, expected.valueType)
        else:
            ok = typ == expected
        assert ok, f"Spark {name}.{column}: {typ}, not {expected}"


def main(pack):
    pack = Path(pack).resolve()
    manifest = json.loads((pack / "manifest.json").read_text())
    spark = (
        SparkSession.builder.master("local[1]")
        .appName("pregen-check")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        levels = spark.read.parquet(str(pack / "levels"))
        campaigns = spark.read.parquet(str(pack / "campaigns" / "campaigns.parquet"))
        rejects = spark.read.parquet(str(pack / "rejects" / "rejects.parquet"))
        check_schema("levels", levels)
        check_schema("campaigns", campaigns)
        check_schema("rejects", rejects)

        tiers = levels.groupBy("tier").agg(
            F.count("*").alias("n"),
            F.min("difficulty").alias("low"),
            F.max("difficulty").alias("high"),
        ).orderBy("tier").collect()
        by_tier = {f"{r['tier']:02}": r["n"] for r in tiers}
        assert by_tier == manifest["counts"]["by_tier"], f"Spark counts by tier {by_tier}"
        for lower, upper in zip(tiers, tiers[1:]):
            assert lower["high"] <= upper["low"], f"Spark: tier {lower['tier']} overlaps tier {upper['tier']}"
        accepted = manifest["counts"]["accepted"]
        assert levels.select("seed").distinct().count() == accepted, "Spark sees a seed twice"
        top = manifest["counts"]["tiers"]
        between = levels.where(F.col("tier").between(2, top)).count()
        assert between == accepted - manifest["counts"]["by_tier"].get("01", 0), between

        # Every campaign slot is a level of the pack, in the tier it says.
        joined = campaigns.join(levels, on="seed", how="left").where(
            levels["tier"].isNull() | (levels["tier"] != campaigns["tier"])
        )
        assert joined.count() == 0, "Spark: a campaign slot is not its level"
        slots = manifest["counts"]["campaigns"] * manifest["job"]["campaigns"]["length"]
        assert campaigns.count() == slots, f"Spark reads {campaigns.count()} campaign slots, not {slots}"
        assert rejects.join(levels, on="seed", how="inner").count() == 0, "Spark: a seed both accepted and rejected"

        keys = {k for (k,) in levels.select(F.explode(F.map_keys("metrics"))).distinct().collect()}
        documented = {m["name"] for m in SCHEMA["metrics"][manifest["job"]["game"]]}
        assert keys and keys <= documented, f"Spark: metric keys {sorted(keys)}"
        want = {
            "pack": manifest["pack"],
            "job_id": manifest["job_id"],
            "generator": manifest["versions"]["generator"],
        }
        for name, frame in (("levels", levels), ("campaigns", campaigns), ("rejects", rejects)):
            for column, value in want.items():
                values = {v for (v,) in frame.select(column).distinct().collect()}
                assert values <= {value}, f"Spark {name}.{column}: {values} != {value}"
        print(f"ok: Spark reads {accepted} levels in {len(tiers)} tiers, {slots} campaign slots, {rejects.count()} rejects")
    finally:
        spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
