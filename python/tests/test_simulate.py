"""quiclab.simulate: a path, TOML text or a dict give the CLI's results; errors are
QuiclabError with quiclab's message."""

import tomllib

import pytest

import quiclab

SCENARIO = "scenarios/examples/handshake_flight_loss.toml"


@pytest.fixture(scope="module")
def cli_run(cli, root, tmp_path_factory):
    """`quiclab sim run` of SCENARIO with a seed and an override: its output directory."""
    out = tmp_path_factory.mktemp("cli-sim")
    cli("sim", "run", SCENARIO, "--out", str(out), "--seed", "7",
        "--set", "topology.forward.delay_ms=2*15")
    return out


def test_path_text_and_dict_agree(root):
    path = root / SCENARIO
    a = quiclab.simulate(path)
    b = quiclab.simulate(path.read_text())
    c = quiclab.simulate(tomllib.loads(path.read_text()))
    assert a.raw == b.raw == c.raw
    assert list(a.flows.columns)[:4] == ["name", "workload", "start_s", "handshake_done_s"]
    assert list(a.links.columns)[0] == "name" and "queue_drops" in a.links.columns
    assert len(a.flows) >= 1 and len(a.links) >= 2
    assert a.json["flows"][0]["name"] == a.flows["name"][0]
    assert "handshake" in repr(a) and "<table" in a._repr_html_()


def test_matches_cli_files(root, cli_run, tmp_path):
    r = quiclab.simulate(str(root / SCENARIO), seed=7,
                         overrides={"topology.forward.delay_ms": "2*15"})
    assert r.seed == 7
    assert r._core.flows_csv() == (cli_run / "flows.csv").read_text()
    assert r._core.links_csv() == (cli_run / "links.csv").read_text()
    assert r.raw + "\n" == (cli_run / "results.json").read_text()
    # The frames are those files parsed: same columns, same numbers.
    import pandas as pd

    cli_flows = pd.read_csv(cli_run / "flows.csv")
    assert list(r.flows.columns) == list(cli_flows.columns)
    assert r.flows["goodput_bytes"].tolist() == cli_flows["goodput_bytes"].tolist()
    r.save(tmp_path)
    assert (tmp_path / "flows.csv").read_text() == (cli_run / "flows.csv").read_text()


def test_overrides_and_seed_change_the_run(root):
    base = quiclab.simulate(root / SCENARIO)
    slow = quiclab.simulate(root / SCENARIO, overrides={"topology.forward.delay_ms": 100})
    assert slow.flows["ttfb_s"][0] > base.flows["ttfb_s"][0]
    assert quiclab.simulate(root / SCENARIO, seed=99).seed == 99


def test_time_series(root):
    # CUBIC through a 50 Mbit/s, 40 ms RTT drop-tail bottleneck of 170 packets, with
    # traces, for 3 s: every series has rows, and their values fit the path.
    r = quiclab.simulate(root / "scenarios/examples/cubic_bulk.toml",
                         overrides={"stop.time_s": 3})
    assert list(r.goodput.columns) == ["flow", "t_s", "bps"]
    assert len(r.goodput) > 0 and set(r.goodput["flow"]) == {"bulk"}
    # In-order delivery after a recovered loss can put more than the link rate into one
    # bin, never on average.
    assert (r.goodput["bps"] >= 0).all() and r.goodput["bps"].mean() <= 50e6
    assert r.goodput["bps"].max() > 25e6, r.goodput
    for frame, cols in ((r.cwnd, ["flow", "side", "t_s", "cwnd_bytes"]),
                        (r.rtt, ["flow", "side", "t_s", "srtt_ms", "latest_ms"]),
                        (r.queues, ["link", "t_s", "queue_packets"])):
        assert list(frame.columns) == cols
        assert len(frame) > 0, cols
        assert (frame["t_s"] >= 0).all() and (frame["t_s"] <= 3).all()
    assert (r.cwnd["cwnd_bytes"] > 0).all() and set(r.cwnd["flow"]) == {"bulk"}
    # No sample below the path's 40 ms base RTT; the queue builds up to its limit.
    assert r.rtt["latest_ms"].min() >= 40.0, r.rtt["latest_ms"].min()
    assert 0 < r.queues["queue_packets"].max() <= 170


def test_errors_are_quiclab_errors(root, tmp_path):
    scenario = tomllib.loads((root / SCENARIO).read_text())
    scenario["topology"]["bogus_key"] = 1
    with pytest.raises(quiclab.QuiclabError, match="bogus_key"):
        quiclab.simulate(scenario)
    with pytest.raises(quiclab.QuiclabError, match="no_such_file.toml"):
        quiclab.simulate(str(tmp_path / "no_such_file.toml"))
    with pytest.raises(quiclab.QuiclabError, match="write text as 'cubic'"):
        quiclab.simulate(root / SCENARIO,
                         overrides={"client.congestion_control.algorithm": "cubic"})
    # The message names where (line and column of the text) and what was wrong.
    with pytest.raises(quiclab.QuiclabError,
                       match=r"(?s)line 3, column 8.*unknown variant `nonsense`"):
        quiclab.simulate("name = 'x'\n[topology]\nkind = 'nonsense'\n")
    with pytest.raises(TypeError):
        quiclab.simulate(42)


def test_hostile_input_is_a_bounded_error(root):
    """Regression (issue 40): 10,000 nested parentheses overflowed the parser's stack and
    killed the interpreter; a type error inside a 100 MB string raised a 300 MB message."""
    deep = "(" * 10_000 + "10" + ")" * 10_000
    with pytest.raises(quiclab.QuiclabError, match="topology.forward.delay_ms") as e:
        quiclab.simulate(root / SCENARIO, overrides={"topology.forward.delay_ms": deep})
    assert "nested deeper than 64 levels" in str(e.value) and len(str(e.value)) < 1000
    text = (root / SCENARIO).read_text().replace("seed = ", 'seed = "' + "x" * 100_000_000 + '"\n#', 1)
    with pytest.raises(quiclab.QuiclabError, match="invalid type: string") as e:
        quiclab.simulate(text)
    assert len(str(e.value)) < 1000
