#!/usr/bin/env python3
"""An HTTP/3 client on aioquic (aioquic.h3), the h3 peer of `quiclab server` in
tests/interop/h3.sh: GETs all URLs concurrently over one connection and saves each
body as OUTPUT/<basename>. Exit status 1 if any request fails or is not a 200."""

import argparse
import asyncio
import os
import ssl
import sys
from urllib.parse import urlparse

from aioquic.asyncio import QuicConnectionProtocol, connect
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import QuicEvent, StreamReset


class H3Client(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._h3 = H3Connection(self._quic)
        self._waiters: dict[int, asyncio.Future] = {}
        self._bodies: dict[int, bytearray] = {}
        self._status: dict[int, bytes] = {}

    async def get(self, authority: str, path: str) -> tuple[bytes, bytes]:
        sid = self._quic.get_next_available_stream_id()
        self._h3.send_headers(
            sid,
            [
                (b":method", b"GET"),
                (b":scheme", b"https"),
                (b":authority", authority.encode()),
                (b":path", path.encode()),
                (b"user-agent", b"aioquic-interop"),
            ],
            end_stream=True,
        )
        fut = asyncio.get_running_loop().create_future()
        self._waiters[sid] = fut
        self._bodies[sid] = bytearray()
        self.transmit()
        await fut
        return self._status.get(sid, b""), bytes(self._bodies[sid])

    def quic_event_received(self, event: QuicEvent) -> None:
        if isinstance(event, StreamReset) and event.stream_id in self._waiters:
            self._waiters.pop(event.stream_id).set_exception(
                RuntimeError(f"stream reset, code {event.error_code:#x}")
            )
        for ev in self._h3.handle_event(event):
            sid = ev.stream_id
            if isinstance(ev, HeadersReceived):
                self._status[sid] = dict(ev.headers).get(b":status", b"")
            elif isinstance(ev, DataReceived):
                self._bodies[sid] += ev.data
            if getattr(ev, "stream_ended", False) and sid in self._waiters:
                self._waiters.pop(sid).set_result(None)


async def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("urls", nargs="+")
    p.add_argument("--output", required=True)
    a = p.parse_args()
    os.makedirs(a.output, exist_ok=True)
    u0 = urlparse(a.urls[0])
    config = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN)
    config.verify_mode = ssl.CERT_NONE
    failures = 0
    async with connect(u0.hostname, u0.port or 443, configuration=config, create_protocol=H3Client) as c:
        results = await asyncio.gather(
            *(c.get(urlparse(u).netloc, urlparse(u).path) for u in a.urls), return_exceptions=True
        )
        for u, r in zip(a.urls, results):
            name = os.path.basename(urlparse(u).path)
            if isinstance(r, Exception) or r[0] != b"200":
                print(f"FAILED {u}: {r if isinstance(r, Exception) else r[0]}", flush=True)
                failures += 1
                continue
            with open(os.path.join(a.output, name), "wb") as f:
                f.write(r[1])
            print(f"{u}: {len(r[1])} bytes", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
