"""quiclab.Plan: expansion, the local runner and the Dask executor write the files
`quiclab lab run` writes; summary.csv byte for byte (runs.csv too but for the cache-key
column, which names the build: the CLI binary or the Python extension)."""

import json
import shutil
from pathlib import Path

import pytest

import quiclab

# Quick plans that run in well under a second each.
PLANS = ["experiments/handshake-latency.toml", "experiments/instant-ack/2-delay-sweep.toml"]


def without_key(runs_csv: Path) -> list[str]:
    return [line.rsplit(",", 1)[0] for line in runs_csv.read_text().splitlines()]


@pytest.fixture(scope="module")
def cli_out(cli, root, tmp_path_factory):
    """Each plan run by `quiclab lab run --quick`: plan -> its output directory."""
    outs = {}
    for plan in PLANS:
        out = tmp_path_factory.mktemp("cli-lab")
        cli("lab", "run", plan, "--quick", "--jobs", "2", "--out", str(out), "--keep-going")
        outs[plan] = out
    return outs


@pytest.fixture(scope="module")
def dask_client(require):
    distributed = require("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            yield client


def assert_same_results(ours: Path, theirs: Path):
    assert (ours / "summary.csv").read_bytes() == (theirs / "summary.csv").read_bytes()
    assert without_key(ours / "runs.csv") == without_key(theirs / "runs.csv")
    for name in ("report.md", "plan.toml", "plan.resolved.json"):
        assert (ours / name).read_bytes() == (theirs / name).read_bytes(), name
    figures = sorted(p.name for p in (theirs / "figures").iterdir())
    assert figures and figures == sorted(p.name for p in (ours / "figures").iterdir())


def test_load_and_points(root):
    plan = quiclab.Plan.load(root / PLANS[1], quick=True)
    assert plan.axes == ["delay_ms", "iack"]
    assert list(plan.points.columns) == ["point", "delay_ms", "iack"]
    assert len(plan.runs) == len(plan.points) * plan.spec["repetitions"]
    # A run's seed follows from its repetition and its point's values on the axes that
    # do not share random numbers (`common_random_numbers`): runs that agree on those
    # share a seed, any others differ, and the seed is the one the scenario runs with.
    shared = set(plan.spec.get("common_random_numbers") or [])
    seeds = {}
    for r in plan.runs:
        own = tuple(sorted((k, str(v)) for k, v in r["params"].items() if k not in shared))
        seeds.setdefault((own, r["rep"]), set()).add(r["seed"])
        assert f"seed = {r['seed']}\n" in r["scenario_toml"], r["scenario_toml"]
    assert all(len(s) == 1 for s in seeds.values()), seeds
    assert len({s for group in seeds.values() for s in group}) == len(seeds), seeds
    assert len(seeds) > 1, seeds
    full = quiclab.Plan.load(root / PLANS[1])
    assert len(full.runs) > len(plan.runs)
    assert "instant-ack-delay-sweep" in repr(plan) and "<table" in plan._repr_html_()


def test_plan_errors(tmp_path, root):
    bad = tmp_path / "bad.toml"
    text = (root / PLANS[0]).read_text().replace("repetitions", "repetitionz", 1)
    bad.write_text(text.replace('base = "', f'base = "{root / "experiments"}/', 1))
    with pytest.raises(quiclab.QuiclabError, match=r"bad\.toml:\d+.*repetitionz"):
        quiclab.Plan.load(bad)


@pytest.mark.parametrize("plan", PLANS)
def test_local_runner_matches_cli(root, cli_out, plan, tmp_path):
    result = quiclab.Plan.load(root / plan, quick=True).run(out=tmp_path, jobs=2)
    assert result.ran > 0 and result.reused == 0
    assert result.report == tmp_path / "report.md"
    assert_same_results(tmp_path, cli_out[plan])
    assert len(result.summary) == len(quiclab.Plan.load(root / plan, quick=True).points)


@pytest.mark.parametrize("plan", PLANS)
def test_dask_matches_cli_and_resumes(root, cli_out, dask_client, plan, tmp_path):
    p = quiclab.Plan.load(root / plan, quick=True)
    first = p.run(executor=dask_client, out=tmp_path)
    assert (first.ran, first.reused) == (p.unique_runs, 0)
    assert_same_results(tmp_path, cli_out[plan])
    # An interrupted sweep: some cache entries lost; a rerun does only those.
    entries = sorted((tmp_path / "cache").glob("*.json"))
    for e in entries[::2]:
        e.unlink()
    (tmp_path / "summary.csv").unlink()
    assert len(p.missing(tmp_path)) == len(entries[::2])
    again = p.run(executor=dask_client, out=tmp_path)
    assert (again.ran, again.reused) == (len(entries[::2]), p.unique_runs - len(entries[::2]))
    assert_same_results(tmp_path, cli_out[plan])


def test_futures_executor_matches(root, cli_out, tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:
        quiclab.Plan.load(root / PLANS[0], quick=True).run(executor=pool, out=tmp_path, batch=2)
    assert_same_results(tmp_path, cli_out[PLANS[0]])


def test_worker_refuses_another_build(root, tmp_path):
    from quiclab import _core

    run = quiclab.Plan.load(root / PLANS[0], quick=True).runs[0]
    run["key"] = "0" * 64
    with pytest.raises(quiclab.QuiclabError, match="another quiclab build"):
        _core.execute(json.dumps(run))
    # A cache entry for another key is never filed.
    good = dict(run, key=quiclab.Plan.load(root / PLANS[0], quick=True).runs[0]["key"])
    entry = _core.execute(json.dumps(good))
    plan = quiclab.Plan.load(root / PLANS[0], quick=True)
    with pytest.raises(quiclab.QuiclabError, match="another run key"):
        plan._core.store(str(tmp_path), "f" * 64, entry)


def test_python_m_quiclab(root, cli_out, tmp_path):
    import subprocess
    import sys

    out = tmp_path / "out"
    p = subprocess.run([sys.executable, "-m", "quiclab", "lab", "run", PLANS[0], "--quick",
                        "--local-cluster", "2", "--out", str(out), "--keep-going"],
                       cwd=root, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert f"report: {out / 'report.md'}" in p.stdout
    assert_same_results(out, cli_out[PLANS[0]])
    shutil.rmtree(out / "cache")


def test_batches_cover_every_run_once():
    from quiclab._executors import batches

    runs = [(str(i), "{}") for i in range(23)]
    for workers, batch in ((1, None), (2, None), (4, 3), (64, None), (2, 100)):
        tasks = batches(runs, workers, batch)
        flat = sorted(k for t in tasks for k, _ in t)
        assert flat == sorted(r[0] for r in runs)
        if batch:
            assert max(len(t) for t in tasks) <= batch
    assert len(batches(runs, 1, None)) == 12  # 23 // 8 = 2 runs per task


def test_worker_errors_reach_the_client(dask_client):
    import pickle

    from quiclab._executors import execute

    e = pickle.loads(pickle.dumps(quiclab.QuiclabError("text")))
    assert isinstance(e, quiclab.QuiclabError) and str(e) == "text"
    with pytest.raises(quiclab.QuiclabError, match="line 1 column"):
        dask_client.submit(execute, "{not json", pure=False).result()


def test_deep_expected_is_a_bounded_error(root, tmp_path):
    """Regression (issue 40): 20,000 nested parentheses in [expected] overflowed the stack."""
    bad = tmp_path / "deep.toml"
    text = (root / PLANS[0]).read_text().replace('base = "', f'base = "{root / "experiments"}/', 1)
    deep = "(" * 20_000 + "1" + ")" * 20_000
    bad.write_text(text.replace('handshake_s = "rtt_ms / 1000"', f'handshake_s = "{deep}"', 1))
    with pytest.raises(quiclab.QuiclabError, match=r"deep\.toml:\d+: expected\.handshake_s") as e:
        quiclab.Plan.load(bad)
    assert "nested deeper than 64 levels" in str(e.value) and len(str(e.value)) < 1000
