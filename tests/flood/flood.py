#!/usr/bin/env python3
"""Initial-flood benchmark on loopback (issue 10): sends N junk 1200-byte QUIC v1
Initials (random connection IDs and bodies, so they never decrypt) at a `quiclab
server` while a `quiclab client` fetches 1 MB from it. Prints the fetch time and the
server's memory (VmRSS before and after, VmHWM peak) and fails if the fetch is not
byte-exact, takes 1 s or more (not with `--ci`), or the server grew by 20 MB or more.

With `--valid N` (needs aioquic), N of the Initials are genuine client Initials (each a
new connection that never goes on), sent first: they decrypt, so each makes a
connection mid-handshake until the server's cap, unless the server answers with Retry
(`--server-config` with `[admission] retry = "auto"`; RFC 9000 §8.1.2).

Usage: tests/flood/flood.py [--quiclab target/release/quiclab] [--count 50000]
       [--valid N] [--server-config FILE] [--qlog-dir DIR] [--ci]"""

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time


def rss_kb(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/{pid}/status")


def udp_drops(port: int) -> int:
    """Datagrams the kernel dropped on the server's socket (full receive buffer), from
    /proc/net/udp's `drops` column; -1 if the socket is not listed."""
    with open("/proc/net/udp") as f:
        for line in f.readlines()[1:]:
            cols = line.split()
            if cols[1].endswith(f":{port:04X}"):
                return int(cols[-1])
    return -1


def junk_initial() -> bytes:
    d = bytearray(os.urandom(1200))
    d[0] = 0xC3  # long header, fixed bit, Initial, 4-byte packet number
    d[1:5] = (1).to_bytes(4, "big")
    d[5] = 8  # DCID length
    d[14] = 8  # SCID length
    d[23] = 0  # token length
    d[24:26] = (0x4000 | 1150).to_bytes(2, "big")
    return bytes(d)


def valid_initials(n: int, port: int) -> list:
    """The first datagram of N aioquic client connections (distinct connection IDs)."""
    if n == 0:
        return []  # aioquic is needed only for genuine Initials
    from aioquic.quic.configuration import QuicConfiguration
    from aioquic.quic.connection import QuicConnection

    config = QuicConfiguration(is_client=True, alpn_protocols=["hq-interop"])
    out = []
    for _ in range(n):
        c = QuicConnection(configuration=config)
        c.connect(("127.0.0.1", port), now=0.0)
        out.append(c.datagrams_to_send(now=0.0)[0][0])
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--quiclab", default="target/release/quiclab")
    p.add_argument("--count", type=int, default=50_000)
    p.add_argument("--port", type=int, default=24000 + os.getpid() % 10000)
    p.add_argument("--valid", type=int, default=0, help="genuine client Initials among them")
    p.add_argument("--server-config", help="the server's transport config (TOML)")
    p.add_argument("--qlog-dir", help="write the legitimate client's qlog here")
    p.add_argument(
        "--ci",
        action="store_true",
        help="CI: assert the memory bound and a byte-exact fetch, not the 1 s goal",
    )
    args = p.parse_args()
    valid = valid_initials(args.valid, args.port)
    work = tempfile.mkdtemp(prefix="quiclab-flood.")
    www = os.path.join(work, "www")
    os.makedirs(www)
    body = os.urandom(1 << 20)
    with open(os.path.join(www, "1mb.bin"), "wb") as f:
        f.write(body)
    log = open(os.path.join(work, "server.log"), "w")
    cmd = [args.quiclab, "server", "--listen", f"127.0.0.1:{args.port}", "--root", www, "--seed", "1"]
    if args.server_config:
        cmd += ["--config", args.server_config]
    server = subprocess.Popen(
        cmd,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        for _ in range(100):
            time.sleep(0.05)
            if "server on" in open(log.name).read():
                break
        else:
            print("server did not start", file=sys.stderr)
            return 1
        before = rss_kb(server.pid, "VmRSS")
        sent = [0]
        started = threading.Event()

        def flood() -> None:
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            pkts = [junk_initial() for _ in range(1000)]
            t0 = time.monotonic()
            for i in range(args.count):
                if i < len(valid):
                    s.sendto(valid[i], ("127.0.0.1", args.port))
                else:
                    s.sendto(pkts[i % 1000][:6] + os.urandom(8) + pkts[i % 1000][14:], ("127.0.0.1", args.port))
                sent[0] += 1
                if i == args.count // 10:
                    started.set()
            sent.append(time.monotonic() - t0)

        t = threading.Thread(target=flood)
        t.start()
        started.wait()
        out = os.path.join(work, "out")
        t0 = time.monotonic()
        client = [args.quiclab, "client", "--insecure", "--output", out]
        if args.qlog_dir:
            client += ["--qlog-dir", args.qlog_dir]
        r = subprocess.run(
            client + [f"https://127.0.0.1:{args.port}/1mb.bin"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        fetch_s = time.monotonic() - t0
        sent_during_fetch = sent[0]
        t.join()
        time.sleep(0.5)
        drops = udp_drops(args.port)
        after = rss_kb(server.pid, "VmRSS")
        peak = rss_kb(server.pid, "VmHWM")
        got = os.path.join(out, "1mb.bin")
        ok_fetch = r.returncode == 0 and os.path.exists(got) and open(got, "rb").read() == body
        growth_mb = (after - before) / 1024
        print(
            f"Initials: {args.count} ({len(valid)} genuine) sent in {sent[-1]:.2f} s "
            f"({sent_during_fetch} by the end of the fetch)\n"
            f"1 MB fetch: {'ok' if ok_fetch else 'FAILED'} in {fetch_s:.3f} s\n"
            f"server RSS: {before / 1024:.1f} MB before, {after / 1024:.1f} MB after "
            f"(growth {growth_mb:.1f} MB), peak {peak / 1024:.1f} MB\n"
            f"kernel drops on the server socket (full receive buffer): {drops}"
        )
        if not ok_fetch:
            print(r.stderr, file=sys.stderr)
        # The 1 s goal is a benchmark figure (docs/PERFORMANCE.md), not a CI assertion:
        # on a loaded CI machine wall time says little.
        good = ok_fetch and growth_mb < 20 and (args.ci or fetch_s < 1.0)
        print("PASS" if good else "FAIL")
        return 0 if good else 1
    finally:
        server.kill()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
