"""quiclab.transfer: quiclab's server and client in-process over loopback UDP
(quiclab-net), directly and through the emulator."""

import pytest

import quiclab

# 20 ms each way: one round trip through the emulator is at least 40 ms.
SCENARIO = """
name = "py-transfer"
seed = 1
[stop]
time_s = 5.0
[topology]
kind = "point_to_point"
[topology.forward]
rate_mbps = 50.0
delay_ms = 20.0
[topology.return]
rate_mbps = 50.0
delay_ms = 20.0
"""


def test_loopback_transfer_delivers_the_checked_body():
    r = quiclab.transfer(200_000)
    assert r["handshake_completed"], r
    assert r["failures"] == 0, r
    assert r["body_bytes"] == 200_000
    assert r["bytes_received"] > 200_000


def test_transfer_through_the_emulator_takes_its_round_trips():
    r = quiclab.transfer(50_000, scenario=SCENARIO)
    assert r["failures"] == 0 and r["body_bytes"] == 50_000, r
    # Handshake and request/response: at least two 40 ms round trips.
    assert r["elapsed_s"] >= 0.08, r


def test_a_bad_scenario_is_a_quiclab_error():
    with pytest.raises(quiclab.QuiclabError):
        quiclab.transfer(1000, scenario="this is not = = toml")
