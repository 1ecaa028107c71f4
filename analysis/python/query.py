"""Runs SQL over a pregen pack with DuckDB (`pip install duckdb`).

Usage: query.py PACK_DIR [QUERY.sql | 'SELECT ...' ...]

The views `levels`, `rejects` and `campaigns` (analysis/sql/views.sql) are made
first; each argument is then a file of analysis/sql/ (or any .sql file) or an
SQL text; every statement of it is run and each result printed, in order.
With no query, every file of analysis/sql/ is run."""

import sys
from pathlib import Path

import duckdb

SQL = Path(__file__).resolve().parent.parent / "sql"


def connect(pack):
    con = duckdb.connect()
    con.execute("SET VARIABLE pack = ?", [str(Path(pack).resolve())])
    con.execute((SQL / "views.sql").read_text())
    return con


def main(pack, queries):
    if not (Path(pack) / "_SUCCESS").exists():
        sys.exit(f"{pack} is not a complete pack (no _SUCCESS)")
    con = connect(pack)
    if not queries:
        queries = sorted(str(p) for p in SQL.glob("*.sql") if p.name != "views.sql")
    for query in queries:
        path = Path(query) if query.endswith(".sql") else None
        if path is not None and not path.exists():
            path = SQL / query
        text = path.read_text() if path is not None else query
        print(f"-- {path.name if path is not None else 'query'}")
        for statement in duckdb.extract_statements(text):
            result = con.sql(statement.query)
            if result is not None:
                result.show(max_rows=100, max_width=200)
            print()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
