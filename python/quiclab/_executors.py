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
from typing import Any


def execute(run_json: str) -> bytes:
    """The worker's task: one resolved run -> its cache entry's bytes."""
    from . import _core

    return _core.execute(run_json)


def _is_dask_client(executor: Any) -> bool:
    return type(executor).__module__.split(".")[0] == "distributed"


def run_missing(core: Any, executor: Any, out: Path, progress: bool = False) -> int:
    """Executes the runs missing from ``out/cache`` on ``executor``, storing each
    result as it completes; returns how many ran. Raises the first run's error after
    cancelling the rest (entries already stored stay)."""
    missing = core.missing(os.fspath(out))
    if not missing:
        return 0
    if _is_dask_client(executor):
        from distributed import as_completed

        futures = executor.map(
            execute,
            [j for _, j in missing],
            key=[f"quiclab-run-{k}" for k, _ in missing],
            pure=False,
        )
        keys = {f.key: k for f, (k, _) in zip(futures, missing)}
        key_of = lambda f: keys[f.key]  # noqa: E731
        completed = as_completed(futures)
    elif hasattr(executor, "submit"):
        from concurrent.futures import as_completed

        futures = {executor.submit(execute, j): k for k, j in missing}
        key_of = futures.__getitem__
        completed = as_completed(futures)
    else:
        raise TypeError(
            "executor must be a dask.distributed.Client or a concurrent.futures.Executor"
        )
    done, started = 0, time.monotonic()
    try:
        for fut in completed:
            core.store(os.fspath(out), key_of(fut), fut.result())
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
