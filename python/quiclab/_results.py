"""``simulate()`` and its :class:`Results`: one scenario run in the simulator."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any, Mapping, Optional, Union

from . import _core

Scenario = Union[str, os.PathLike, Mapping[str, Any]]


def _source(scenario: Scenario) -> tuple[str, str, str]:
    """(kind, source, label) for the extension: a path, TOML text or a dict (as JSON)."""
    if isinstance(scenario, Mapping):
        return "json", json.dumps(scenario), "<dict>"
    if isinstance(scenario, os.PathLike):
        p = os.fspath(scenario)
        return "path", p, p
    if isinstance(scenario, str):
        # One line without '=' is a file name; anything else is TOML text.
        if "\n" not in scenario and "=" not in scenario:
            return "path", scenario, scenario
        return "toml", scenario, "<toml>"
    raise TypeError(
        f"scenario must be a path, TOML text or a dict, not {type(scenario).__name__}"
    )


def _override_text(value: Any) -> str:
    """A Python value in the ``[set]`` syntax: numbers as numbers, str as given (an
    expression such as ``"2*20"`` or quoted text such as ``"'cubic'"``)."""
    if isinstance(value, bool):
        raise TypeError("booleans are not scenario override values")
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return value
    raise TypeError(f"override values are numbers or str, not {type(value).__name__}")


def simulate(
    scenario: Scenario,
    seed: Optional[int] = None,
    overrides: Optional[Mapping[str, Any]] = None,
) -> "Results":
    """Runs one scenario in the simulator and returns its :class:`Results`.

    ``scenario``: a path (``str`` or ``pathlib.Path``) to a scenario file, TOML text, or
    a dict with the file's structure. ``seed`` replaces the scenario's seed.
    ``overrides``: ``{"topology.forward.delay_ms": 20, "client.congestion_control.algorithm": "'cubic'"}``,
    applied like ``quiclab sim run --set`` (str values are expressions or quoted text).
    Raises :class:`quiclab.QuiclabError` with quiclab's message on a bad scenario.
    """
    kind, source, label = _source(scenario)
    pairs = [(str(k), _override_text(v)) for k, v in (overrides or {}).items()]
    return Results(_core.simulate(kind, source, label, seed, pairs))


def _frame(csv_text: str):
    import pandas as pd

    return pd.read_csv(io.StringIO(csv_text), keep_default_na=False, na_values=[""])


class Results:
    """One simulation's results.

    - ``flows`` / ``links``: pandas DataFrames with the columns of the CLI's
      ``flows.csv`` / ``links.csv`` (the same text, parsed);
    - ``goodput``: each flow's goodput series (``flow, t_s, bps``, as ``goodput.csv``);
    - ``cwnd`` / ``rtt`` / ``queues``: the traces (empty unless the scenario's
      ``[measure]`` records them);
    - ``json`` (dict) and ``raw`` (str): ``results.json``;
    - ``summary``: the table ``quiclab sim run`` prints; ``save(dir)`` writes its files.
    """

    def __init__(self, core: "_core.SimResult"):
        self._core = core
        self.raw: str = core.json()
        self.json: dict = json.loads(self.raw)
        self.flows = _frame(core.flows_csv())
        self.links = _frame(core.links_csv())
        self.goodput = _frame(core.goodput_csv())

    @property
    def summary(self) -> str:
        return self._core.summary()

    @property
    def seed(self) -> int:
        return self.json["seed"]

    @property
    def end_s(self) -> float:
        return self.json["end_s"]

    def _trace(self, field: str, columns: list[str]):
        import pandas as pd

        rows = []
        for f in self.json["flows"]:
            for side in ("client", "server"):
                for point in f[side][field]:
                    rows.append([f["name"], side, *point])
        return pd.DataFrame(rows, columns=["flow", "side", *columns])

    @property
    def cwnd(self):
        """Congestion window trace: ``flow, side, t_s, cwnd_bytes``."""
        return self._trace("cwnd", ["t_s", "cwnd_bytes"])

    @property
    def rtt(self):
        """RTT trace: ``flow, side, t_s, srtt_ms, latest_ms``."""
        return self._trace("rtt", ["t_s", "srtt_ms", "latest_ms"])

    @property
    def queues(self):
        """Queue length at each change: ``link, t_s, queue_packets``."""
        import pandas as pd

        rows = [
            [link["name"], t, q] for link in self.json["links"] for t, q in link["queue_series"]
        ]
        return pd.DataFrame(rows, columns=["link", "t_s", "queue_packets"])

    def save(self, out: Union[str, os.PathLike]) -> Path:
        """Writes ``results.json``, the CSVs and traces as ``quiclab sim run --out``."""
        self._core.write(os.fspath(out))
        return Path(out)

    def __repr__(self) -> str:
        j = self.json
        return (
            f"<quiclab.Results {j['scenario']!r} seed={j['seed']}: {len(self.flows)} flow(s), "
            f"{len(self.links)} link(s), {j['end_s']:.3f} s simulated, {j['events']} events>"
        )

    def _repr_html_(self) -> str:
        head = (
            f"<p><b>quiclab results</b> {self.json['scenario']} (seed {self.seed}, "
            f"{self.end_s:.3f} s simulated, {self.json['events']} events)</p>"
        )
        return head + self.flows.to_html(max_rows=20) + self.links.to_html(max_rows=20)
