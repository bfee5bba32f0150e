#!/usr/bin/env python3
"""An hq-interop client on aioquic, the peer of `quiclab server` in the interop tests:
fetches URLs (one connection, one stream each) and writes each body to
OUTPUT/<basename>. Certificates are not verified. Exits 1 if any fetch fails.
With --qlog-dir, aioquic writes the connection's qlog there (<odcid>.qlog, JSON): the
lab's real-stack runs (crates/quiclab-lab/src/run/real/) read the client's times from it."""

import argparse
import asyncio
import os
import ssl
import sys
import time
from urllib.parse import urlparse

from aioquic.asyncio import QuicConnectionProtocol, connect
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import (
    ConnectionTerminated,
    QuicEvent,
    StreamDataReceived,
    StreamReset,
)


class HqClient(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._bodies: dict[int, bytearray] = {}
        self._waiters: dict[int, asyncio.Future] = {}
        # keyupdate test case: update the 1-RTT keys once this much data arrived.
        self.key_update_after: int | None = None
        self._received = 0

    async def get(self, path: str) -> bytes:
        sid = self._quic.get_next_available_stream_id()
        self._bodies[sid] = bytearray()
        waiter = self._loop.create_future()
        self._waiters[sid] = waiter
        self._quic.send_stream_data(sid, f"GET {path}\r\n".encode(), end_stream=True)
        self.transmit()
        return await waiter

    def quic_event_received(self, event: QuicEvent) -> None:
        if isinstance(event, StreamDataReceived) and event.stream_id in self._waiters:
            self._bodies[event.stream_id] += event.data
            self._received += len(event.data)
            if self.key_update_after is not None and self._received >= self.key_update_after:
                self.key_update_after = None
                self._quic.request_key_update()
            if event.end_stream:
                waiter = self._waiters.pop(event.stream_id)
                if not waiter.done():
                    waiter.set_result(bytes(self._bodies.pop(event.stream_id)))
        elif isinstance(event, StreamReset) and event.stream_id in self._waiters:
            waiter = self._waiters.pop(event.stream_id)
            if not waiter.done():
                waiter.set_exception(RuntimeError(f"stream reset, code {event.error_code}"))
        elif isinstance(event, ConnectionTerminated):
            for waiter in self._waiters.values():
                if not waiter.done():
                    waiter.set_exception(
                        RuntimeError(f"connection closed: {event.error_code} {event.reason_phrase}")
                    )
            self._waiters.clear()


def apply_testcase(config: QuicConfiguration, testcase: str) -> None:
    """The interop runner's client side: chacha20 offers only ChaCha20-Poly1305; v2
    starts in QUIC v1 offering v2, so the server upgrades the connection by compatible
    version negotiation (RFC 9368 §2.3); keyupdate is done in HqClient."""
    from aioquic.quic.packet import QuicProtocolVersion
    from aioquic.tls import CipherSuite

    if testcase == "chacha20":
        config.cipher_suites = [CipherSuite.CHACHA20_POLY1305_SHA256]
    elif testcase == "v2":
        config.original_version = QuicProtocolVersion.VERSION_1
        config.supported_versions = [QuicProtocolVersion.VERSION_2, QuicProtocolVersion.VERSION_1]


async def fetch_all(
    urls: list[str], output: str, testcase: str = "transfer", qlog_dir: str | None = None
) -> int:
    parsed = [urlparse(u) for u in urls]
    authorities = {(p.hostname, p.port or 443) for p in parsed}
    if len(authorities) != 1 or any(p.scheme != "https" for p in parsed):
        print("all URLs must be https:// on one host:port", file=sys.stderr)
        return 1
    host, port = authorities.pop()
    config = QuicConfiguration(alpn_protocols=["hq-interop"], is_client=True)
    config.verify_mode = ssl.CERT_NONE
    apply_testcase(config, testcase)
    config.server_name = host
    if qlog_dir:
        from aioquic.quic.logger import QuicFileLogger

        os.makedirs(qlog_dir, exist_ok=True)
        config.quic_logger = QuicFileLogger(qlog_dir)
    keylog = os.environ.get("SSLKEYLOGFILE")
    if keylog:
        config.secrets_log_file = open(keylog, "a")
    if testcase in ("resumption", "zerortt"):
        return await fetch_resuming(parsed, output, config, host, port, testcase == "zerortt")
    if testcase == "multiconnect":
        return await fetch_one_per_connection(parsed, output, config, host, port)
    failures = 0
    async with connect(host, port, configuration=config, create_protocol=HqClient) as client:
        if testcase == "keyupdate":
            client.key_update_after = 100_000

        async def one(p) -> int:
            path = p.path or "/"
            start = time.monotonic()
            try:
                body = await client.get(path)
            except RuntimeError as e:
                print(f"FAILED {path}: {e}", file=sys.stderr)
                return 1
            secs = time.monotonic() - start
            name = os.path.basename(path) or "index.html"
            with open(os.path.join(output, name), "wb") as f:
                f.write(body)
            mbps = len(body) * 8 / max(secs, 1e-9) / 1e6
            print(f"{path}: {len(body)} bytes in {secs:.3f} s ({mbps:.2f} Mbit/s)", file=sys.stderr)
            return 0

        failures = sum(await asyncio.gather(*(one(p) for p in parsed)))
        client.close()
    return failures


async def fetch_on(client, parsed, output: str) -> int:
    """Fetches every URL on one connection; returns the failures."""

    async def one(p) -> int:
        path = p.path or "/"
        try:
            body = await client.get(path)
        except RuntimeError as e:
            print(f"FAILED {path}: {e}", file=sys.stderr)
            return 1
        with open(os.path.join(output, os.path.basename(path) or "index.html"), "wb") as f:
            f.write(body)
        return 0

    return sum(await asyncio.gather(*(one(p) for p in parsed)))


async def fetch_one_per_connection(parsed, output, config, host, port) -> int:
    """The interop runner's multiconnect (handshakeloss, handshakecorruption): each URL
    on its own connection, one after the other."""
    failures = 0
    for p in parsed:
        try:
            async with connect(host, port, configuration=config, create_protocol=HqClient) as client:
                failures += await fetch_on(client, [p], output)
                client.close()
                await client.wait_closed()
        except (ConnectionError, OSError, asyncio.TimeoutError) as e:
            print(f"FAILED {p.path}: {e!r}", file=sys.stderr)
            failures += 1
    return failures


async def fetch_resuming(parsed, output, config, host, port, zero_rtt: bool) -> int:
    """The interop runner's resumption / zerortt: the first URL on one connection, the
    rest on a second one resuming its session ticket (zerortt: requests in 0-RTT)."""
    tickets = []
    async with connect(
        host, port, configuration=config, create_protocol=HqClient,
        session_ticket_handler=tickets.append,
    ) as client:
        failures = await fetch_on(client, parsed[:1], output)
        client.close()
        await client.wait_closed()
    if not tickets:
        print("FAILED: no session ticket received", file=sys.stderr)
        return 1
    config.session_ticket = tickets[-1]
    async with connect(
        host, port, configuration=config, create_protocol=HqClient,
        wait_connected=not zero_rtt,
    ) as client:
        failures += await fetch_on(client, parsed[1:], output)
        client.close()
    return failures


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("urls", nargs="+")
    p.add_argument("--output", required=True)
    p.add_argument("--testcase", default="transfer", help="interop-runner test case")
    p.add_argument("--qlog-dir", help="write the connection's qlog here")
    args = p.parse_args()
    os.makedirs(args.output, exist_ok=True)
    failures = asyncio.run(fetch_all(args.urls, args.output, args.testcase, args.qlog_dir))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
