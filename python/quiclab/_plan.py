"""Lab plans: load and expand (:class:`Plan`), run locally or on an executor
(Dask), and the results of a run (:class:`PlanRun`)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Union

from . import _core

PathLike = Union[str, os.PathLike]


def default_out(plan_path: PathLike) -> Path:
    """``out/lab/<plan file stem>``, as ``quiclab lab run``."""
    return Path("out/lab") / Path(plan_path).stem


class Plan:
    """A lab plan (TOML under ``experiments/``), loaded and expanded into its runs.

    ``points``: one row per point (its axis values); ``runs``: one per run (point,
    repetition, seed, cache key, and the resolved scenario as TOML in
    ``scenario_toml``). ``run()`` executes it.
    """

    def __init__(self, core: "_core._Plan", path: Path, quick: bool):
        self._core = core
        self.path = path
        self.quick = quick
        self.spec: dict = json.loads(core.plan_json())
        self.runs: list[dict[str, Any]] = json.loads(core.runs_json())

    @classmethod
    def load(cls, path: PathLike, quick: bool = False) -> "Plan":
        """Loads and expands a plan (``quick``: with its ``[quick]`` overrides, as
        ``--quick``). Raises :class:`quiclab.QuiclabError` naming the file, line and key."""
        return cls(_core._Plan.load(os.fspath(path), quick), Path(path), quick)

    @property
    def name(self) -> str:
        return self.spec["name"]

    @property
    def title(self) -> str:
        return self.spec.get("title", "")

    @property
    def axes(self) -> list[str]:
        return [a["name"] for a in self.spec["axes"]]

    @property
    def points(self):
        """A DataFrame: ``point`` and each axis, one row per point."""
        import pandas as pd

        seen, rows = set(), []
        for r in self.runs:
            if r["point"] not in seen:
                seen.add(r["point"])
                rows.append({"point": r["point"], **r["params"]})
        return pd.DataFrame(rows, columns=["point", *self.axes])

    @property
    def unique_runs(self) -> int:
        """Distinct simulations (runs with equal resolved scenarios are one)."""
        return self._core.unique()

    def missing(self, out: PathLike) -> list[dict[str, Any]]:
        """The distinct runs not yet in ``out/cache`` (what ``run`` would execute)."""
        return [json.loads(j) for _, j in self._core.missing(os.fspath(out))]

    def run(
        self,
        executor: Any = None,
        out: Optional[PathLike] = None,
        jobs: Optional[int] = None,
        progress: bool = False,
        batch: Optional[int] = None,
    ) -> "PlanRun":
        """Runs the plan into ``out`` (default ``out/lab/<plan stem>``) and writes
        ``runs.csv``, ``runs.jsonl``, ``summary.csv``, ``plan.toml``,
        ``plan.resolved.json``, ``figures/`` and ``report.md``/``.html``, byte for byte
        what ``quiclab lab run`` writes. Runs already in ``out/cache`` are reused.

        ``executor``: ``None`` runs here on ``jobs`` threads (default all cores); a
        ``dask.distributed.Client`` or a ``concurrent.futures.Executor`` runs each
        missing run on a worker (``jobs`` is then ignored). Every finished run is cached
        as it arrives, so an interrupted sweep resumes. ``batch``: runs per task
        (default: about 8 tasks per worker; short runs cost less per run in batches).
        """
        out = Path(out) if out is not None else default_out(self.path)
        out.mkdir(parents=True, exist_ok=True)
        if executor is None:
            report, ran, reused = self._core.run_local(os.fspath(out), jobs or 0)
        else:
            from ._executors import run_missing

            ran = run_missing(self._core, executor, out, progress=progress, batch=batch)
            report, ran, reused = self._core.finish(os.fspath(out), ran)
        return PlanRun(out=out, report=Path(report), ran=ran, reused=reused)

    def __repr__(self) -> str:
        quick = " quick" if self.quick else ""
        return (
            f"<quiclab.Plan {self.name!r}{quick}: {len(self.points)} point(s) over "
            f"{self.axes}, {len(self.runs)} run(s), {self.unique_runs} distinct>"
        )

    def _repr_html_(self) -> str:
        return (
            f"<p><b>quiclab plan</b> {self.name}: {self.title}<br>{len(self.runs)} runs "
            f"({self.unique_runs} distinct){' quick' if self.quick else ''}</p>"
            + self.points.to_html(max_rows=30)
        )


@dataclass
class PlanRun:
    """What ``Plan.run`` wrote: the results directory, its report, and how many runs
    were executed now and reused from the cache."""

    out: Path
    report: Path
    ran: int
    reused: int

    @property
    def summary(self):
        """``summary.csv`` as a DataFrame (one row per point)."""
        import pandas as pd

        return pd.read_csv(self.out / "summary.csv")

    @property
    def table(self):
        """``runs.csv`` as a DataFrame (one row per run)."""
        import pandas as pd

        return pd.read_csv(self.out / "runs.csv")

    def checks(self) -> tuple[str, list[str]]:
        """The claims' counts per source and the checks' counts, and the checks that fail
        the run (fail, are inconclusive or have no data), as ``quiclab lab run`` prints."""
        counts, failing, _ = _core.checks_gate([os.fspath(self.out)])
        return counts, failing

    def _repr_html_(self) -> str:
        return (
            f"<p><b>quiclab run</b> {self.out} ({self.ran} ran, {self.reused} cached), "
            f"report {self.report}</p>" + self.summary.to_html(max_rows=30)
        )
