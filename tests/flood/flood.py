#!/usr/bin/env python3
"""Flood benchmarks on loopback (issues 10 and 40): a flood at a `quiclab server` while a
`quiclab client` fetches 1 MB from it. Each flood runs against a fresh server; the
script prints the fetch time and the server's memory (VmRSS before and after, VmHWM
peak) and fails if the fetch is not byte-exact, takes 1 s or more (not with `--ci`), or
the server grew past the flood's bound.

Floods (`--flood`, repeatable; default `junk`):
- junk: N junk 1200-byte QUIC v1 Initials (random connection IDs and bodies, so they
  never decrypt). With `--valid N` (needs aioquic) N of them are genuine client
  Initials (each a new connection that never goes on), sent first. Bound: 20 MB.
- crypto-gap: one connection's valid Initials (protected with the keys of its
  DCID, RFC 9001 §5.2: no handshake needed), in 64 KB datagrams, carrying CRYPTO
  frames at offsets 1, 2, 3, ... that leave offset 0 empty, `--gap-mb` MB in all
  (default 80). A server that kept each shifted copy grew by about as much; the
  reassembly budget is 64 KiB a connection. Bound: 5 MB.
- fill-window: `--connections` new connections (default 1024, the server's
  admission.max_handshaking) that each fill their CRYPTO window once (one 64 KB
  Initial, offset 0 empty). Bound: connections x (64 KiB + 40 KiB of state).
- hellos: `--hellos` valid ClientHellos (needs aioquic; default 2000), each a new
  connection that never answers the server; the server takes up to 1024 at once.
  Bound: 40 MB (1024 connections mid-handshake, their TLS state and first flight).

`--ci` runs junk, crypto-gap and a 1,100-hello flood (the bounds, byte-exact fetches;
the 1 s goal is not asserted: wall time on a loaded CI machine says little).

Usage: tests/flood/flood.py [--quiclab target/release/quiclab] [--flood KIND]...
       [--count 50000] [--valid N] [--gap-mb 80] [--connections 1024] [--hellos 2000]
       [--server-config FILE] [--qlog-dir DIR] [--ci]"""

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

# Bounds on the server's RSS growth, MB (see the docstring).
JUNK_BOUND_MB = 20
GAP_BOUND_MB = 5
HELLOS_BOUND_MB = 40
WINDOW_KIB = 64
STATE_KIB = 40
LOOPBACK_MAX_DATAGRAM = 65507


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


def varint(v: int) -> bytes:
    """RFC 9000 §16."""
    if v < 1 << 6:
        return bytes([v])
    if v < 1 << 14:
        return (v | 0x4000).to_bytes(2, "big")
    if v < 1 << 30:
        return (v | 0x8000_0000).to_bytes(4, "big")
    return (v | 0xC000_0000_0000_0000).to_bytes(8, "big")


def crypto_frame(offset: int, data: bytes) -> bytes:
    """A CRYPTO frame (RFC 9000 §19.6)."""
    return b"\x06" + varint(offset) + varint(len(data)) + data


class InitialSender:
    """Builds a client's Initial packets to one DCID, protected with that DCID's client
    Initial keys (RFC 9001 §5.2), with increasing packet numbers."""

    def __init__(self, dcid: bytes):
        from aioquic.quic.crypto import CryptoPair

        self.dcid = dcid
        self.pair = CryptoPair()
        self.pair.setup_initial(dcid, is_client=True, version=1)
        self.pn = 0

    def packet(self, payload: bytes, size: int) -> bytes:
        """One Initial carrying `payload`, padded to a `size`-byte datagram."""
        scid = b"\x07" * 8
        head = b"\xc3" + (1).to_bytes(4, "big") + bytes([len(self.dcid)]) + self.dcid
        head += bytes([len(scid)]) + scid + b"\x00"  # no token
        # 4-byte Length (it may exceed 16383) and a 4-byte packet number.
        room = size - len(head) - 4 - 4 - 16
        payload = payload + bytes(max(0, room - len(payload)))  # PADDING
        head += varint_4(4 + len(payload) + 16) + self.pn.to_bytes(4, "big")
        out = self.pair.encrypt_packet(head, payload, self.pn)
        self.pn += 1
        return out


def varint_4(v: int) -> bytes:
    return (v | 0x8000_0000).to_bytes(4, "big")


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


def junk_flood(args, port: int):
    """The junk Initials, genuine ones first; yields datagrams."""
    valid = valid_initials(args.valid, port)
    pkts = [junk_initial() for _ in range(1000)]
    for i in range(args.count):
        if i < len(valid):
            yield valid[i]
        else:
            p = pkts[i % 1000]
            yield p[:6] + os.urandom(8) + p[14:]


def gap_flood(args, port: int):
    """One connection's CRYPTO frames at offsets 1, 2, 3, ... in 64 KB datagrams
    (each frame 1200 bytes; offsets wrap within the 64 KiB window)."""
    sender = InitialSender(os.urandom(8))
    frame_data = os.urandom(1200)
    frame_len = len(crypto_frame(65_535, frame_data))
    per_datagram = (LOOPBACK_MAX_DATAGRAM - 100) // frame_len
    last = (WINDOW_KIB << 10) - len(frame_data)
    offset = 1
    sent = 0
    while sent < args.gap_mb * 1_000_000:
        frames = []
        for _ in range(per_datagram):
            frames.append(crypto_frame(offset, frame_data))
            offset = offset + 1 if offset < last else 1
        d = sender.packet(b"".join(frames), LOOPBACK_MAX_DATAGRAM)
        sent += len(d)
        yield d


def window_flood(args, port: int):
    """`--connections` new connections, each one 64 KB Initial whose CRYPTO frame
    fills offsets 1 .. the window's end."""
    payload = crypto_frame(1, os.urandom(65_400))  # ends at 65,401 of 65,536
    for _ in range(args.connections):
        yield InitialSender(os.urandom(8)).packet(payload, LOOPBACK_MAX_DATAGRAM)


def hello_flood(args, port: int):
    yield from valid_initials(args.hellos, port)


# Each flood: its datagrams, its bound (MB), and its sending rate (bytes/s; None: as
# fast as Python sends). The paced ones leave the server time to read what they send
# (a 64 KB datagram each 1.6 ms; a ClientHello each 0.5 ms, a TLS handshake's work),
# so the figures measure what the server keeps rather than what the kernel drops.
FLOODS = {
    "junk": (junk_flood, lambda a: JUNK_BOUND_MB, None),
    "crypto-gap": (gap_flood, lambda a: GAP_BOUND_MB, 40e6),
    "fill-window": (
        window_flood,
        lambda a: a.connections * (WINDOW_KIB + STATE_KIB) / 1024,
        40e6,
    ),
    "hellos": (hello_flood, lambda a: HELLOS_BOUND_MB, 2000 * 1200),
}


def run(args, kind: str) -> bool:
    """One flood against a fresh server while the client fetches 1 MB; True if it
    passes."""
    make, bound, rate = FLOODS[kind]
    port = args.port
    datagrams = list(make(args, port))
    work = tempfile.mkdtemp(prefix="quiclab-flood.")
    www = os.path.join(work, "www")
    os.makedirs(www)
    body = os.urandom(1 << 20)
    with open(os.path.join(www, "1mb.bin"), "wb") as f:
        f.write(body)
    log = open(os.path.join(work, "server.log"), "w")
    cmd = [args.quiclab, "server", "--listen", f"127.0.0.1:{port}", "--root", www, "--seed", "1"]
    if args.server_config:
        cmd += ["--config", args.server_config]
    server = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(100):
            time.sleep(0.05)
            if "server on" in open(log.name).read():
                break
        else:
            print("server did not start", file=sys.stderr)
            return False
        before = rss_kb(server.pid, "VmRSS")
        sent = [0, 0]  # datagrams, bytes
        started = threading.Event()

        def flood() -> None:
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8 << 20)
            t0 = time.monotonic()
            for i, d in enumerate(datagrams):
                if rate is not None:
                    ahead = t0 + sent[1] / rate - time.monotonic()
                    if ahead > 0.001:
                        time.sleep(ahead)
                s.sendto(d, ("127.0.0.1", port))
                sent[0] += 1
                sent[1] += len(d)
                if i == len(datagrams) // 10:
                    started.set()
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
            client + [f"https://127.0.0.1:{port}/1mb.bin"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        fetch_s = time.monotonic() - t0
        sent_during_fetch = sent[0]
        t.join()
        time.sleep(0.5)
        drops = udp_drops(port)
        after = rss_kb(server.pid, "VmRSS")
        peak = rss_kb(server.pid, "VmHWM")
        got = os.path.join(out, "1mb.bin")
        ok_fetch = r.returncode == 0 and os.path.exists(got) and open(got, "rb").read() == body
        growth_mb = (after - before) / 1024
        limit_mb = bound(args)
        print(
            f"== {kind}: {sent[0]} datagrams, {sent[1] / 1e6:.1f} MB sent in {sent[2]:.2f} s "
            f"({sent_during_fetch} by the end of the fetch)\n"
            f"1 MB fetch: {'ok' if ok_fetch else 'FAILED'} in {fetch_s:.3f} s\n"
            f"server RSS: {before / 1024:.1f} MB before, {after / 1024:.1f} MB after "
            f"(growth {growth_mb:.1f} MB, bound {limit_mb:.1f} MB), peak {peak / 1024:.1f} MB\n"
            f"kernel drops on the server socket (full receive buffer): {drops}"
        )
        if not ok_fetch:
            print(r.stderr, file=sys.stderr)
        # The 1 s goal is a benchmark figure (docs/PERFORMANCE.md), not a CI assertion:
        # on a loaded CI machine wall time says little.
        good = ok_fetch and growth_mb < limit_mb and (args.ci or fetch_s < 1.0)
        print("PASS" if good else "FAIL")
        return good
    finally:
        server.kill()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quiclab", default="target/release/quiclab")
    p.add_argument("--flood", action="append", choices=sorted(FLOODS), help="default: junk")
    p.add_argument("--count", type=int, default=50_000, help="junk: Initials")
    p.add_argument("--port", type=int, default=24000 + os.getpid() % 10000)
    p.add_argument("--valid", type=int, default=0, help="junk: genuine client Initials among them")
    p.add_argument("--gap-mb", type=float, default=80, help="crypto-gap: MB to send")
    p.add_argument("--connections", type=int, default=1024, help="fill-window: connections")
    p.add_argument("--hellos", type=int, default=2000, help="hellos: ClientHellos")
    p.add_argument("--server-config", help="the server's transport config (TOML)")
    p.add_argument("--qlog-dir", help="write the legitimate client's qlog here")
    p.add_argument(
        "--ci",
        action="store_true",
        help="CI: junk, crypto-gap and 1,100 hellos; assert the memory bounds and "
        "byte-exact fetches, not the 1 s goal",
    )
    args = p.parse_args()
    kinds = args.flood or ["junk"]
    if args.ci:
        kinds = args.flood or ["junk", "crypto-gap", "hellos"]
        args.hellos = min(args.hellos, 1100)
    results = [run(args, kind) for kind in kinds]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
