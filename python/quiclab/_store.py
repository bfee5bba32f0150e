"""The results store from Python: every ``results/*.parquet`` file under a directory
(one per plan invocation, written by the lab; docs/RESULTS.md) as DuckDB views.

- ``store``: the files as written, long: one row per (run, axis / metric / expectation)
  with ``kind``, ``key``, ``value`` (``text`` for a text axis) and each run's and
  invocation's columns (``plan``, ``invocation``, ``run``, ``seed``,
  ``scenario_hash``, ``git_rev``, ``build``, ``started_at``, ...).
- ``metrics``: the ``store`` rows of metrics (long).
- ``runs``: one row per run of each invocation: the run's and invocation's columns,
  then each axis, metric and ``expected_<metric>`` as a column (the union over the
  plans; a plan's runs have nulls in the columns of metrics it does not have).

DuckDB runs in the ``duckdb`` wheel (tests/requirements.txt installs it into .venv).
"""

from __future__ import annotations

from pathlib import Path

# Columns every store row has that are the same on all rows of one run.
RUN_COLUMNS = [
    "plan", "plan_file", "invocation", "quick", "run", "point", "rep", "seed", "run_key",
    "scenario_hash", "stack", "run_wall_s", "run_cpu_s", "git_rev", "git_dirty", "build",
    "quiclab_version", "host", "started_at", "wall_s", "cpu_s",
]


def files(directory) -> list[Path]:
    """Every results file under ``directory`` (``**/results/*.parquet``), sorted."""
    root = Path(directory)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: no such directory")
    return sorted(p for p in root.rglob("*.parquet") if p.parent.name == "results")


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _runs_sql(con) -> str:
    """The ``runs`` view's query: store rows pivoted by (kind, key) into columns."""
    keys = con.sql(
        "select kind, key, bool_or(text is not null) as is_text from store "
        "group by kind, key order by kind = 'expected', kind = 'metric', key"
    ).fetchall()
    taken = set(RUN_COLUMNS)
    select = [f"any_value({_ident(c)}) as {_ident(c)}" for c in RUN_COLUMNS
              if c not in ("invocation", "run")]
    for kind, key, is_text in keys:
        name = f"expected_{key}" if kind == "expected" else key
        if name in taken:
            name = f"{kind}_{key}"
        taken.add(name)
        cell = "coalesce(text, cast(value as varchar))" if is_text else "value"
        where = f"kind = {_literal(kind)} and key = {_literal(key)}"
        select.append(f"any_value({cell}) filter (where {where}) as {_ident(name)}")
    return (
        f"select invocation, run, {', '.join(select)} from store "
        "group by invocation, run order by any_value(started_at), invocation, run"
    )


def connect(directory="out"):
    """A DuckDB connection with the views ``store``, ``metrics`` and ``runs`` over the
    results files under ``directory``; FileNotFoundError when there are none."""
    import duckdb

    found = files(directory)
    if not found:
        raise FileNotFoundError(
            f"{directory}: no results files (results/*.parquet); run a plan first "
            "(quiclab lab run PLAN, or quiclab reproduce NAME)"
        )
    con = duckdb.connect()
    listed = ", ".join(_literal(str(p)) for p in found)
    con.execute(f"create view store as select * from read_parquet([{listed}], union_by_name = true)")
    con.execute("create view metrics as select * exclude (text) from store where kind = 'metric'")
    con.execute(f"create view runs as {_runs_sql(con)}")
    return con


def query(sql: str, directory="out"):
    """The answer to ``sql`` over the views of :func:`connect`, as a pandas DataFrame."""
    return connect(directory).sql(sql).df()


def results(directory="out", plan: str | None = None):
    """Every run under ``directory`` (all plans, or the plan named ``plan``) as one
    pandas DataFrame: the ``runs`` view."""
    sql = "select * from runs"
    if plan is not None:
        sql += f" where plan = {_literal(plan)}"
    return query(sql, directory)
