"""Checks that two pregen packs hold the same levels: the release files
(SHA256SUMS), campaigns.parquet byte for byte, and every deterministic column
of the levels and rejects tables, read with pyarrow. What a run may change
(attempt numbers, timings, worker names) is left out.
Usage: same_pack.py EXPECTED_PACK_DIR ACTUAL_PACK_DIR"""

import hashlib
import sys
from pathlib import Path

import pyarrow.dataset as ds

LEVEL_COLUMNS = ["tier", "seed", "difficulty", "moves", "layout", "level_json", "solution", "level_hash"]
REJECT_COLUMNS = ["seed", "status", "reason"]


def rows(path, columns):
    table = ds.dataset(path, format="parquet").to_table(columns=columns)
    return sorted(zip(*(table.column(c).to_pylist() for c in columns)), key=lambda r: (r[0], r[1]))


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    expected, actual = (Path(p) for p in sys.argv[1:])
    problems = []
    for pack in (expected, actual):
        if not (pack / "_SUCCESS").is_file():
            sys.exit(f"{pack}: not a complete pack (no _SUCCESS)")
    if (expected / "release/SHA256SUMS").read_text() != (actual / "release/SHA256SUMS").read_text():
        problems.append("release/SHA256SUMS differ")
    if sha256(expected / "campaigns/campaigns.parquet") != sha256(actual / "campaigns/campaigns.parquet"):
        problems.append("campaigns.parquet differs")
    levels = rows(expected / "levels", LEVEL_COLUMNS)
    if levels != rows(actual / "levels", LEVEL_COLUMNS):
        problems.append("level rows differ")
    rejects = rows(expected / "rejects", REJECT_COLUMNS)
    if rejects != rows(actual / "rejects", REJECT_COLUMNS):
        problems.append("reject rows differ")
    if problems:
        sys.exit(f"{actual} differs from {expected}: " + "; ".join(problems))
    release = len((expected / "release/SHA256SUMS").read_text().splitlines())
    print(f"same pack: {len(levels)} levels, {len(rejects)} rejects, {release} release files")


if __name__ == "__main__":
    main()
