"""The results store: two quick plans run into one directory; `python -m quiclab query`
answers SQL over their Parquet files, every row carries the git revision and the
resolved scenario's hash, and `quiclab.results(DIR)` is one DataFrame of every run."""

import subprocess
import sys
from pathlib import Path

import pytest

import quiclab

PLANS = ["experiments/handshake-latency.toml", "experiments/instant-ack/2-delay-sweep.toml"]


@pytest.fixture(scope="module")
def store(root, tmp_path_factory, require):
    """(directory holding both plans' outputs, {plan name: number of runs})."""
    require("duckdb")
    out = tmp_path_factory.mktemp("store")
    runs = {}
    for plan in PLANS:
        p = quiclab.Plan.load(root / plan, quick=True)
        p.run(out=out / Path(plan).stem, jobs=2)
        runs[p.name] = len(p.runs)
    return out, runs


def git_head(root: Path) -> str:
    return subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()


def test_query_command_counts_runs_per_plan(store, root):
    out, runs = store
    sql = "select plan, count(*) as n from runs group by plan order by plan"
    p = subprocess.run([sys.executable, "-m", "quiclab", "query", "--dir", str(out), "--csv", sql],
                       capture_output=True, text=True, cwd=root)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == "plan,n"
    assert lines[1:] == [f"{name},{n}" for name, n in sorted(runs.items())]


def test_cli_query_runs_the_same_through_python(store, cli, monkeypatch):
    """`quiclab query` hands the SQL to this Python (`QUICLAB_PYTHON`)."""
    out, runs = store
    monkeypatch.setenv("QUICLAB_PYTHON", sys.executable)
    sql = "select plan, count(*) as n from runs group by plan order by plan"
    p = cli("query", "--dir", str(out), "--csv", sql)
    assert p.stdout.splitlines()[1:] == [f"{name},{n}" for name, n in sorted(runs.items())]


def test_every_row_carries_revision_and_scenario_hash(store, root):
    out, _ = store
    rows = quiclab.query("select git_rev, scenario_hash, build, host, started_at from store", out)
    assert len(rows) > 0
    assert set(rows.git_rev) == {git_head(root)}
    assert rows.scenario_hash.str.fullmatch("[0-9a-f]{64}").all()
    assert rows.build.notna().all() and rows.host.notna().all() and rows.started_at.notna().all()


def test_results_is_one_frame_of_every_run(store):
    out, runs = store
    frame = quiclab.results(out)
    assert len(frame) == sum(runs.values())
    assert set(frame.plan) == set(runs)
    # Metrics become columns: each plan's metric has values in its own rows only.
    sweep = frame[frame.plan == "instant-ack-delay-sweep"]
    assert sweep.delay_ms.notna().all()
    assert frame[frame.plan == "handshake-latency"].delay_ms.isna().all()
    one = quiclab.results(out, plan="handshake-latency")
    assert len(one) == runs["handshake-latency"]


def test_no_results_is_an_error(tmp_path, require):
    require("duckdb")
    with pytest.raises(FileNotFoundError, match="no results files"):
        quiclab.results(tmp_path)
