"""``python -m quiclab query [--dir DIR] [--csv] "SQL"``: SQL over the results store
(views ``runs``, ``metrics``, ``store``; see ``quiclab._store`` and docs/RESULTS.md).
``quiclab query`` in the CLI runs this through the project's venv."""

from __future__ import annotations

import sys
from pathlib import Path


def add_parser(sub) -> None:
    q = sub.add_parser("query", help="SQL over the results store (DuckDB)")
    q.add_argument("sql", help='e.g. "select plan, count(*) from runs group by plan"')
    q.add_argument("--dir", type=Path, default=Path("out"),
                   help="where to look for results/*.parquet, recursively (default out)")
    q.add_argument("--csv", action="store_true", help="print CSV instead of a table")


def run(args) -> int:
    try:
        import duckdb
    except ImportError:
        print("error: the duckdb module is missing: pip install duckdb "
              "(scripts/setup-tests.sh installs it into .venv)", file=sys.stderr)
        return 1
    from ._store import query

    try:
        frame = query(args.sql, args.dir)
    except FileNotFoundError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except duckdb.Error as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if args.csv:
        frame.to_csv(sys.stdout, index=False)
    else:
        print(frame.to_string(index=False))
    return 0
