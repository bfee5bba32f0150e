"""quiclab.transfer: one real transfer over loopback UDP, in-process (quiclab-net)."""

import json
import os

from . import _core


def transfer(size, scenario=None, seed=1):
    """Fetches ``size`` bytes from quiclab's server with quiclab's client, both on
    real UDP sockets on 127.0.0.1, in this process; with ``scenario`` (a file path or
    TOML text) through the real-time emulator running that scenario's links.

    Returns a dict: ``handshake_completed``, ``body_bytes`` (received and checked),
    ``failures`` (0 when the body arrived whole and correct), ``elapsed_s`` (wall
    clock), and the client's ``datagrams_sent``, ``datagrams_received`` and
    ``bytes_received``. Real time and real sockets: not deterministic.
    """
    label = "<toml>"
    if scenario is not None and os.path.exists(str(scenario)):
        label = str(scenario)
        with open(scenario, encoding="utf-8") as f:
            scenario = f.read()
    return json.loads(_core.transfer(int(size), int(seed), scenario, label))
