"""quiclab from Python: run simulator scenarios and lab plans, get pandas frames.

- ``quiclab.simulate(scenario, seed=None, overrides=None)`` runs one scenario (a file
  path, TOML text or a dict) and returns a :class:`Results`.
- ``quiclab.Plan.load(path, quick=False)`` loads and expands a lab plan;
  ``plan.run(executor=None, out=DIR, jobs=None)`` runs it locally (as ``quiclab lab
  run``) or on a Dask cluster (``executor=dask.distributed.Client(...)``), writing the
  same result files, figures and report.
- ``quiclab.transfer(size, scenario=None)`` fetches ``size`` bytes over real UDP on
  loopback with quiclab's own server and client in-process (through the real-time
  emulator with a scenario's links, if given) and returns what the client measured.
- ``quiclab.results(DIR, plan=None)`` returns every run in the results store under DIR
  (each plan invocation's ``results/*.parquet``) as one DataFrame;
  ``quiclab.query(SQL, DIR)`` answers SQL over it (DuckDB; docs/RESULTS.md).
- Errors are :class:`QuiclabError` with the Rust error's text.

Every number comes from the same Rust code as the ``quiclab`` CLI (the extension
module ``quiclab._core``). See docs/PYTHON.md.
"""

from . import _core
from ._core import QuiclabError
from ._plan import Plan, PlanRun
from ._results import Results, simulate
from ._transfer import transfer
from ._store import query, results

# Run keys name the quiclab build; in Python the build is this extension's file.
CODE_ID = _core._set_code_id(_core.__file__)

__all__ = [
    "simulate",
    "transfer",
    "Results",
    "Plan",
    "PlanRun",
    "QuiclabError",
    "CODE_ID",
    "query",
    "results",
]
