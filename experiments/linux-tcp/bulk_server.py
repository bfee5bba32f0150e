"""A bulk HTTP/1.1 server for experiments/linux-tcp: GET /N answers N bytes of zeros
over Linux TCP with the congestion controller named by --cc (CUBIC by default, set per
socket with TCP_CONGESTION whatever the host's net.ipv4.tcp_congestion_control), one
connection at a time. It writes the host's TCP sysctls to --sysctls before it listens
(the sender's side: congestion control, wmem, qdisc, pacing) and says "listening" on
stderr once bound, which is what the lab waits for."""

import argparse
import socket
import subprocess
import sys

CHUNK = bytes(1 << 16)


def serve(conn):
    """Reads one request head and answers it; a bad request gets a 400."""
    # No Nagle: the response's last, partial segment leaves at once, as the
    # simulator's does.
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    head = b""
    while b"\r\n\r\n" not in head:
        got = conn.recv(4096)
        if not got:
            return
        head += got
    parts = head.split(b" ", 2)
    try:
        size = int(parts[1].lstrip(b"/"))
    except (IndexError, ValueError):
        conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
        return
    # What this connection actually runs, for the run's record (server.err).
    cc = conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\0").decode()
    print(f"GET /{size}: congestion control {cc}", file=sys.stderr, flush=True)
    # The head goes out with the first bytes of the body, not as a segment of its own.
    head = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % size
    n = min(size, len(CHUNK))
    conn.sendall(head + CHUNK[:n])
    left = size - n
    while left > 0:
        n = min(left, len(CHUNK))
        conn.sendall(CHUNK[:n])
        left -= n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--cc", default="cubic")
    ap.add_argument("--sysctls", required=True)
    ap.add_argument(
        "--sndbuf",
        type=int,
        default=0,
        help="SO_SNDBUFFORCE in bytes (root; the kernel doubles it and stops auto-tuning "
        "it); 0 (default) leaves Linux's auto-tuning up to tcp_wmem's maximum",
    )
    a = ap.parse_args()
    with open(a.sysctls, "w") as f:
        subprocess.run(["sh", sys.path[0] + "/sysctls.sh"], stdout=f, check=True)
    # Linux caches ssthresh and RTTs per destination (tcp_no_metrics_save = 0) and
    # starts the next connection to it from them: each run starts afresh. Only the
    # shells' range (198.18.0.0/15) is flushed.
    subprocess.run(["ip", "tcp_metrics", "flush", "198.18.0.0/15"], check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # On the listening socket, so every accepted connection starts with it. Set on
    # the accepted socket instead, a connection would start with the host's default
    # (BBR on the development machine), which asks for pacing, and would stay paced
    # after the switch to CUBIC (Linux does not clear sk_pacing_status).
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, a.cc.encode())
    if a.sndbuf > 0:
        # Inherited by accepted connections; above net.core.wmem_max needs FORCE.
        s.setsockopt(socket.SOL_SOCKET, 32, a.sndbuf)  # SO_SNDBUFFORCE
    s.bind(("0.0.0.0", a.port))
    s.listen(4)
    print(f"listening on 0.0.0.0:{a.port} ({a.cc})", file=sys.stderr, flush=True)
    while True:
        conn, _ = s.accept()
        with conn:
            try:
                serve(conn)
            except OSError as e:
                print(f"connection: {e}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
