#!/usr/bin/env python3
"""The endpoints' own time inside a real handshake, from a lab run's qlogs (Python 3
stdlib only): for each real run directory (`OUT/real/*/`) of a plan such as
experiments/emulator-fidelity/1-handshake.toml,

- server first flight: the server's first `quic:packet_received` to its first
  `quic:packet_sent` (the Initial in, the Initial/Handshake flight out);
- client flight -> 1-RTT: the client's first `quic:packet_received` to its first
  1-RTT `quic:packet_sent` (the server's flight in, the client's Finished out; the
  client's `handshake_done_s` is that send minus its first send).

Events are JSON-seq lines with `time` in ms. Prints one line per OUT directory: the
runs found, the median and range of both (ms), and the `ours` column of the plan's
checks.csv for the handshake checks.

Usage: scripts/handshake_flights.py OUT [OUT ...]
"""
import csv
import glob
import json
import os
import statistics
import sys


def events(path):
    """The qlog's events (the header record skipped)."""
    with open(path) as f:
        for line in f:
            line = line.strip().lstrip("\x1e")
            if line.startswith('{"time"'):
                yield json.loads(line)


def first(evs, name, packet_type=None):
    for e in evs:
        if e["name"] != name:
            continue
        if packet_type and e["data"]["header"]["packet_type"] != packet_type:
            continue
        return e["time"]
    return None


def flight(qlog_dir, packet_type):
    files = glob.glob(os.path.join(qlog_dir, "*.sqlog"))
    if len(files) != 1:
        return None
    evs = list(events(files[0]))
    rx = first(evs, "quic:packet_received")
    tx = next(
        (e["time"] for e in evs
         if e["name"] == "quic:packet_sent" and rx is not None and e["time"] >= rx
         and (packet_type is None or e["data"]["header"]["packet_type"] == packet_type)),
        None,
    )
    return None if rx is None or tx is None else tx - rx


def summary(xs):
    if not xs:
        return "-"
    return f"{statistics.median(xs):.3f} [{min(xs):.3f}..{max(xs):.3f}]"


def main(outs):
    for out in outs:
        server, client = [], []
        for run in sorted(glob.glob(os.path.join(out, "real", "*"))):
            s = flight(os.path.join(run, "qlog-server"), None)
            c = flight(os.path.join(run, "qlog-client"), "1RTT")
            if s is not None:
                server.append(s)
            if c is not None:
                client.append(c)
        checks = {}
        path = os.path.join(out, "checks.csv")
        if os.path.exists(path):
            with open(path) as f:
                for row in csv.DictReader(f):
                    checks[row["name"]] = row["ours"]
        print(
            f"{out}: runs {len(server)}; server first flight ms {summary(server)}; "
            f"client flight->1RTT ms {summary(client)}; "
            f"hs100 {checks.get('handshake_agrees_100ms', '-')}; "
            f"hs200 {checks.get('handshake_agrees_200ms', '-')}"
        )


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
