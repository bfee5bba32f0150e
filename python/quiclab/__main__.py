"""``python -m quiclab lab run PLAN [--scheduler ADDRESS | --local-cluster N]``: the
CLI's ``quiclab lab run``, with the runs optionally on a Dask cluster. Same files,
same report; the same exit status (1 when a check fails, is inconclusive or has no
data, unless --keep-going; claims never change it).
``python -m quiclab query [--dir DIR] "SQL"``: SQL over the results store (``_query``)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from . import Plan, QuiclabError, _query
from ._core import checks_gate
from ._plan import default_out


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m quiclab")
    sub = p.add_subparsers(dest="group", required=True)
    lab = sub.add_parser("lab", help="lab plans").add_subparsers(dest="cmd", required=True)
    run = lab.add_parser("run", help="run a plan (like `quiclab lab run`)")
    run.add_argument("plan", type=Path, help="the plan file (TOML)")
    run.add_argument("--out", type=Path, help="output directory (default out/lab/<stem>)")
    run.add_argument("--quick", action="store_true", help="the plan's [quick] overrides")
    run.add_argument("--jobs", type=int, default=0, help="local threads (0 = all cores)")
    where = run.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="ADDRESS", help="a Dask scheduler (tcp://host:8786)")
    where.add_argument(
        "--local-cluster", type=int, metavar="N", help="a Dask LocalCluster of N worker processes"
    )
    run.add_argument("--keep-going", action="store_true", help="exit 0 when a check does not hold")
    _query.add_parser(sub)
    return p


def _executor(args):
    """(client, cluster) for the arguments, or (None, None) to run locally."""
    if args.scheduler is None and args.local_cluster is None:
        return None, None
    from distributed import Client, LocalCluster

    if args.scheduler is not None:
        return Client(args.scheduler), None
    cluster = LocalCluster(
        n_workers=args.local_cluster, threads_per_worker=1, processes=True,
        dashboard_address=None,
    )
    return Client(cluster), cluster


def lab_run(args) -> int:
    out = args.out or default_out(args.plan)
    started = time.monotonic()
    plan = Plan.load(args.plan, quick=args.quick)
    client, cluster = _executor(args)
    try:
        result = plan.run(executor=client, out=out, jobs=args.jobs, progress=client is not None)
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
    print(f"done in {time.monotonic() - started:.1f} s ({result.ran} ran, {result.reused} cached)",
          file=sys.stderr)
    print(f"report: {result.report}")
    counts, failing, any_statements = checks_gate([str(out)])
    if not any_statements:
        return 0
    print(counts)
    for line in failing:
        print(f"  {line}", file=sys.stderr)
    if failing and not args.keep_going:
        print(f"error: {len(failing)} check(s) fail, are inconclusive or have no data "
              "(--keep-going to exit 0 anyway)", file=sys.stderr)
        return 1
    return 0


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if args.group == "query":
        return _query.run(args)
    try:
        return lab_run(args)
    except QuiclabError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
