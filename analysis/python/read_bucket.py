"""Reads a pack's levels in place from an S3 bucket with pyarrow, polars and
DuckDB (httpfs), as docs/schema.md shows, and checks that the three agree with
the pack's manifest: the number of levels and the sum of their moves.
Usage: read_bucket.py s3://BUCKET/PREFIX/PACK
The S3 server and credentials come from AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY and AWS_REGION."""

import json
import os
import sys
from urllib.parse import urlparse

import duckdb
import polars as pl
import pyarrow.dataset as ds
import pyarrow.fs as pafs

url = sys.argv[1].rstrip("/")
endpoint = urlparse(os.environ["AWS_ENDPOINT_URL"])
key, secret = os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"]
region = os.environ.get("AWS_REGION", "us-east-1")

# pyarrow
s3 = pafs.S3FileSystem(
    endpoint_override=endpoint.netloc, scheme=endpoint.scheme,
    access_key=key, secret_key=secret, region=region,
)
# The files listed first: a server that keeps objects as files (s3s-fs)
# answers 500 to the HEAD of a "folder" that pyarrow sends otherwise.
files = s3.get_file_info(pafs.FileSelector(url.removeprefix("s3://") + "/levels"))
levels = ds.dataset([f.path for f in files if f.path.endswith(".parquet")], filesystem=s3, format="parquet")
table = levels.to_table(columns=["moves"])
by_pyarrow = (table.num_rows, sum(table.column("moves").to_pylist()))

# polars
frame = pl.scan_parquet(
    url + "/levels/*.parquet",
    storage_options={
        "aws_endpoint_url": os.environ["AWS_ENDPOINT_URL"], "aws_access_key_id": key,
        "aws_secret_access_key": secret, "aws_region": region, "aws_allow_http": "true",
    },
).select(pl.len(), pl.col("moves").cast(pl.Int64).sum()).collect()
by_polars = tuple(frame.row(0))

# DuckDB, with the httpfs extension from PyPI's duckdb-extension-httpfs
import duckdb_extension_httpfs  # noqa: E402

con = duckdb.connect()
extension = os.path.join(
    os.path.dirname(duckdb_extension_httpfs.__file__), "extensions",
    "v" + duckdb.__version__, "httpfs.duckdb_extension",
)
con.execute(f"INSTALL '{extension}'")
con.execute("LOAD httpfs")
con.execute(
    "CREATE SECRET (TYPE s3, KEY_ID ?, SECRET ?, REGION ?, ENDPOINT ?, URL_STYLE 'path', USE_SSL ?)",
    [key, secret, region, endpoint.netloc, endpoint.scheme == "https"],
)
by_duckdb = con.execute(
    f"SELECT count(*), sum(moves)::BIGINT FROM read_parquet('{url}/levels/*.parquet')"
).fetchone()

manifest = json.loads(s3.open_input_stream(url.removeprefix("s3://") + "/manifest.json").read())
wanted = manifest["job"]["count"]
print(f"pyarrow {by_pyarrow}, polars {by_polars}, duckdb {tuple(by_duckdb)}; manifest: {wanted} levels")
assert by_pyarrow == by_polars == tuple(by_duckdb), "the readers disagree"
assert by_pyarrow[0] == wanted, "not the manifest's count"
