"""Scaling of a plan over Dask workers (docs/PERFORMANCE.md, "Python and Dask").

For a plan: the per-run costs (each distinct run executed once in this process, wall
and CPU time), then the whole plan through ``Plan.run`` on a LocalCluster of each
worker count (fresh output directory each time, so nothing is cached), and the local
runner (rayon) for comparison. Prints one Markdown table row per configuration.

    python python/bench/scaling.py experiments/inet-validation/c_flow_control.toml --quick
"""

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time

import quiclab
from quiclab import _core


def per_run_costs(plan):
    walls, cpus = [], []
    seen = set()
    for run in plan.runs:
        if run["key"] in seen:
            continue
        seen.add(run["key"])
        w, c = time.perf_counter(), time.thread_time()
        _core.execute(json.dumps(run))
        cpus.append(time.thread_time() - c)
        walls.append(time.perf_counter() - w)
    return walls, cpus


def timed_run(plan, executor=None, jobs=None):
    out = tempfile.mkdtemp(prefix="quiclab-scaling-")
    try:
        t = time.perf_counter()
        r = plan.run(executor=executor, out=out, jobs=jobs)
        assert r.ran == plan.unique_runs
        return time.perf_counter() - t, open(os.path.join(out, "summary.csv"), "rb").read()
    finally:
        shutil.rmtree(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("plan")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--workers", default="1,2")
    args = ap.parse_args()
    from distributed import Client, LocalCluster

    plan = quiclab.Plan.load(args.plan, quick=args.quick)
    walls, cpus = per_run_costs(plan)
    n = len(walls)
    print(f"plan {plan.name}{' (quick)' if args.quick else ''}: {n} distinct runs; per run "
          f"wall mean {statistics.mean(walls):.3f} s, max {max(walls):.3f} s, sum {sum(walls):.1f} s; "
          f"CPU mean {statistics.mean(cpus):.3f} s, max {max(cpus):.3f} s, sum {sum(cpus):.1f} s; "
          f"load average {os.getloadavg()[0]:.1f}")
    print("| executor | wall s | speed-up vs 1 | efficiency |")
    print("| --- | ---: | ---: | ---: |")
    summaries, base = set(), None
    for w in [int(x) for x in args.workers.split(",")]:
        with LocalCluster(n_workers=w, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster, Client(cluster) as client:
            client.run(lambda: __import__("quiclab"))  # workers import the extension first
            wall, summary = timed_run(plan, executor=client)
        summaries.add(summary)
        base = base or wall * w if w == 1 else base
        sp = (base / wall) if base else float("nan")
        print(f"| Dask LocalCluster, {w} worker(s) | {wall:.1f} | {sp:.2f} | {sp / w:.0%} | "
              f"(load {os.getloadavg()[0]:.1f})")
    for jobs in (1, 2):
        wall, summary = timed_run(plan, jobs=jobs)
        summaries.add(summary)
        print(f"| local runner, --jobs {jobs} | {wall:.1f} | | | (load {os.getloadavg()[0]:.1f})")
    # The serial part: expansion, then result files, figures and report from a full cache.
    out = tempfile.mkdtemp(prefix="quiclab-scaling-")
    try:
        plan.run(out=out)
        t = time.perf_counter()
        quiclab.Plan.load(args.plan, quick=args.quick).run(out=out)
        print(f"serial part (load + expand + files, figures, report; all cached): "
              f"{time.perf_counter() - t:.2f} s")
    finally:
        shutil.rmtree(out)
    print("summary.csv identical across executors:", len(summaries) == 1)


if __name__ == "__main__":
    main()
