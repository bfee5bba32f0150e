"""Running a plan's missing runs on an executor: a ``dask.distributed.Client`` or any
``concurrent.futures.Executor``.

Each task is ``execute(run_json) -> cache entry bytes``, a pure function of the
resolved run (its scenario carries its seed) and the quiclab build; the client files
each entry in ``out/cache`` as it arrives, so the cache is the sweep's progress: an
interrupted sweep resumes with only the runs still missing. Workers need the same
quiclab build installed (a worker with another build is refused: its run key differs).
Workers need no shared file system: entries travel back to the client.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any, Optional


def execute(run_json: str) -> bytes:
    """The worker's task: one resolved run -> its cache entry's bytes."""
    from . import _core

    return _core.execute(run_json)


def execute_batch(runs_json: list) -> list:
    """A task of several runs (amortises the per-task cost of short runs)."""
    return [execute(j) for j in runs_json]


def _workers(executor: Any) -> int:
    """How many runs the executor runs at once (1 if it does not say)."""
    try:
        if _is_dask_client(executor):
            info = executor.scheduler_info()["workers"].values()
            return max(1, sum(w.get("nthreads", 1) for w in info))
        return max(1, int(getattr(executor, "_max_workers", 1)))
    except Exception:  # noqa: BLE001 - a guess only sizes the batches
        return 1


def batches(missing: list, workers: int, batch: Optional[int]) -> list:
    """The missing runs in tasks of ``batch`` runs (default: enough tasks for 8 per
    worker, at least one run each). Strided, so each task mixes points: runs of one
    point cost alike, and contiguous tasks would leave one worker the expensive ones."""
    size = batch or max(1, len(missing) // (8 * workers))
    count = -(-len(missing) // size)
    return [missing[i::count] for i in range(count)]


def _is_dask_client(executor: Any) -> bool:
    return type(executor).__module__.split(".")[0] == "distributed"


def run_missing(
    core: Any, executor: Any, out: Path, progress: bool = False, batch: Optional[int] = None
) -> int:
    """Executes the runs missing from ``out/cache`` on ``executor`` (in tasks of
    ``batch`` runs, see :func:`batches`), storing each result as its task completes;
    returns how many ran. Raises the first error after cancelling the rest (entries
    already stored stay)."""
    missing = core.missing(os.fspath(out))
    if not missing:
        return 0
    tasks = batches(missing, _workers(executor), batch)
    payloads = [[j for _, j in t] for t in tasks]
    if _is_dask_client(executor):
        from distributed import as_completed

        futures = executor.map(
            execute_batch,
            payloads,
            key=[f"quiclab-runs-{t[0][0]}-{len(t)}" for t in tasks],
            pure=False,
        )
        index = {f.key: i for i, f in enumerate(futures)}
        task_of = lambda f: index[f.key]  # noqa: E731
        completed = as_completed(futures)
    elif hasattr(executor, "submit"):
        from concurrent.futures import as_completed

        futures = {executor.submit(execute_batch, p): i for i, p in enumerate(payloads)}
        task_of = futures.__getitem__
        completed = as_completed(futures)
    else:
        raise TypeError(
            "executor must be a dask.distributed.Client or a concurrent.futures.Executor"
        )
    done, started = 0, time.monotonic()
    try:
        for fut in completed:
            for (key, _), entry in zip(tasks[task_of(fut)], fut.result()):
                core.store(os.fspath(out), key, entry)
                done += 1
            if progress:
                rate = done / max(time.monotonic() - started, 1e-9)
                print(f"\r{done}/{len(missing)} runs ({rate:.1f}/s)", end="", file=sys.stderr)
    except BaseException:
        for f in futures:
            f.cancel()
        raise
    finally:
        if progress:
            print(file=sys.stderr)
    return done
