"""What the QUIC interop runner checks of a test case, read from quiclab's qlog files
(JSON-SEQ, one `<odcid>_<side>.sqlog` per connection) instead of a pcap:

- the number of connections, each with exactly one completed handshake (the runner
  counts handshakes; 1 for most cases, 2 for resumption and zerortt);
- `--streams N`: N request streams (client-initiated bidirectional) carried data, one
  per file;
- `--parallel`: at some moment more than one of them was open (its first STREAM frame
  seen, its last not yet), i.e. the requests were multiplexed, not made one by one;
- `--no-retry`: no Retry on the connection (the runner's handshake case).

Usage: qlog_check.py DIR SIDE --connections N [--streams N] [--parallel] [--no-retry]
(SIDE: client or server, the quiclab side whose qlog DIR holds). Prints what it found;
exits 1 with the reason when a check fails.
"""

import argparse
import json
import sys
from pathlib import Path


def records(path: Path):
    for rec in path.read_text().split("\x1e"):
        rec = rec.strip()
        if rec:
            yield json.loads(rec)


def connection(path: Path) -> dict:
    """Handshakes completed, Retry seen, and each stream's first and last STREAM frame
    time (ms) on one connection."""
    handshakes, retry, streams = 0, False, {}
    for r in records(path):
        name, data = r.get("name", ""), r.get("data", {})
        if name == "quic:connection_state_updated" and data.get("new") == "handshake_complete":
            handshakes += 1
        if name in ("quic:packet_sent", "quic:packet_received"):
            if data.get("header", {}).get("packet_type") == "retry":
                retry = True
            for f in data.get("frames", []):
                if f.get("frame_type") == "stream":
                    t = r["time"]
                    first, last = streams.get(f["stream_id"], (t, t))
                    streams[f["stream_id"]] = (min(first, t), max(last, t))
        if name == "quic:parameters_set" and "retry_source_connection_id" in data:
            retry = True
    return {"handshakes": handshakes, "retry": retry, "streams": streams}


def most_open_at_once(intervals) -> int:
    """The most intervals [first, last] open at one moment (one that ends at the instant
    another starts does not overlap it)."""
    events = sorted([(a, 1) for a, _ in intervals] + [(b, -1) for _, b in intervals],
                    key=lambda e: (e[0], e[1]))
    most = now = 0
    for _, step in events:
        now += step
        most = max(most, now)
    return most


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("dir", type=Path)
    p.add_argument("side", choices=["client", "server"])
    p.add_argument("--connections", type=int, required=True)
    p.add_argument("--streams", type=int)
    p.add_argument("--parallel", action="store_true")
    p.add_argument("--no-retry", action="store_true")
    a = p.parse_args()
    files = sorted(a.dir.glob(f"*_{a.side}.sqlog"))
    conns = [connection(f) for f in files]
    fail = []
    if len(conns) != a.connections:
        fail.append(f"{len(conns)} connections, expected {a.connections}")
    bad = [f.name for f, c in zip(files, conns) if c["handshakes"] != 1]
    if bad:
        fail.append(f"not exactly one completed handshake in {bad}")
    if a.no_retry and any(c["retry"] for c in conns):
        fail.append("a Retry, expected none")
    # Client-initiated bidirectional streams (RFC 9000 §2.1): the requests.
    requests = [iv for c in conns for s, iv in c["streams"].items() if s % 4 == 0]
    if a.streams is not None and len(requests) != a.streams:
        fail.append(f"{len(requests)} request streams, expected {a.streams}")
    most = max((most_open_at_once(
        [iv for s, iv in c["streams"].items() if s % 4 == 0]) for c in conns), default=0)
    if a.parallel and most < 2:
        fail.append(f"at most {most} request stream open at once: not multiplexed")
    print(f"{a.dir.name}: {len(conns)} connection(s), handshakes "
          f"{[c['handshakes'] for c in conns]}, {len(requests)} request streams, "
          f"at most {most} open at once")
    if fail:
        print("; ".join(fail))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
