"""Reads a Chromium NetLog (--log-net-log) for chromium_client.sh: prints the QUIC client's TTFB
(the first STREAM frame with data received on a client bidirectional stream, ms after
its first sent packet) and when it first sent an Initial packet as a PTO retransmission
(transmission_type PTO_RETRANSMISSION; none = its PTO never fired). NetLog times are whole milliseconds. A log cut off
at exit (no closing brackets) is completed before parsing. With `--times FILE` it also writes the
lab's times.json (run/real/times.rs)."""

import json
import sys


def load(path):
    text = open(path, encoding="utf-8").read().rstrip().rstrip(",")
    for tail in ("", "]}", "\n]}"):
        try:
            return json.loads(text + tail)
        except json.JSONDecodeError:
            continue
    raise SystemExit(f"{path}: not a NetLog")


def main(path, times=None):
    log = load(path)
    names = {v: k for k, v in log["constants"]["logEventTypes"].items()}
    t0 = ttfb = pto = hs = last = None
    body = 0
    for e in log["events"]:
        name = names.get(e.get("type"), "")
        t = float(e["time"])
        p = e.get("params", {})
        if name == "QUIC_SESSION_PACKET_SENT":
            if t0 is None:
                t0 = t
            initial = p.get("encryption_level") == "ENCRYPTION_INITIAL"
            if initial and p.get("transmission_type") == "PTO_RETRANSMISSION" and pto is None:
                pto = t - t0
        elif name == "QUIC_SESSION_STREAM_FRAME_RECEIVED" and ttfb is None and t0 is not None:
            sid = int(p.get("stream_id", -1))
            if sid % 4 == 0 and int(p.get("length", 0)) > 0:
                ttfb = t - t0
        elif name == "QUIC_SESSION_HANDSHAKE_DONE_FRAME_RECEIVED" and hs is None and t0 is not None:
            hs = t - t0
        if name == "QUIC_SESSION_STREAM_FRAME_RECEIVED" and t0 is not None:
            sid = int(p.get("stream_id", -1))
            if sid % 4 == 0 and int(p.get("length", 0)) > 0:
                last = t - t0
                body += int(p.get("length", 0))
    if t0 is None:
        raise SystemExit(f"{path}: no QUIC packet sent (did Chromium use QUIC?)")
    print(f"ttfb_ms={ttfb} first_initial_pto_ms={pto}")
    if times is not None:
        if last is None:
            raise SystemExit(f"{path}: no response data received")
        # Seconds from the first sent packet; bytes are the request stream's (HTTP/3
        # framing included).
        out = {"ttfb_s": ttfb / 1e3, "ttlb_s": last / 1e3, "response_bytes": body}
        if hs is not None:
            out["handshake_done_s"] = hs / 1e3
        with open(times, "w", encoding="utf-8") as f:
            json.dump(out, f)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[2] == "--times":
        main(sys.argv[1], sys.argv[3])
    else:
        main(sys.argv[1])
