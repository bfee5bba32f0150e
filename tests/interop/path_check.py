"""The server-side evidence of the rebind-port and rebind-addr cases (issue 32), read
from the quiclab server's qlog (JSON-SEQ, as qlog_check.py reads it):

- the server moved to each new client address it saw (quic:migration_state_updated
  migration_started, RFC 9000 §9.3) and validated it (migration_complete toward that
  address, which quiclab logs only when a PATH_RESPONSE carries the data of the
  challenge it sent on the new path, §8.2.3): between the two, a PATH_CHALLENGE sent
  and a PATH_RESPONSE received with the same data;
- for each such move away from a validated path it challenged the previous path too
  (§9.3.3: probing_started toward the old address, and a second PATH_CHALLENGE, with
  other data, sent after it). Its answer is not required: after a NAT rebinding the
  old address may be gone (the emulator closes its old socket), so probing_abandoned
  is a correct end too.

The last migration may be unfinished when the connection closed first (a rebind just
before the transfer's end: the PATH_RESPONSE had no time to come back); one whose
validation failed (migration_abandoned) or any earlier unfinished one fails the check.

qlog's packet events carry no addresses, so which challenge went on which path is read
from the order of events: quiclab logs probing_started (old path) and migration_started
(new path) when it creates both challenges, before sending either.

Usage: path_check.py DIR [--min-migrations N]. Prints what it found; exits 1 with the
reason when a check fails.
"""

import argparse
import sys
from pathlib import Path

from qlog_check import records


def endpoint(info: dict) -> str:
    return f"{info.get('ip_v4') or info.get('ip_v6')}:{info.get('port_v4') or info.get('port_v6')}"


def frames(data: dict, kind: str):
    for f in data.get("frames", []):
        if f.get("frame_type") == kind:
            yield f.get("data")


class Move:
    """One migration: the new address, the old one challenged, what was exchanged."""

    def __init__(self, new: str, old: str | None):
        self.new, self.old = new, old
        self.challenges: list[str] = []
        self.responses: set[str] = set()
        self.complete = False
        self.abandoned = False


def moves(path: Path) -> list[Move]:
    found: list[Move] = []
    old_probe = None
    for r in records(path):
        name, data = r.get("name", ""), r.get("data", {})
        if name == "quic:migration_state_updated":
            new, remote = data.get("new"), endpoint(data.get("tuple_remote", {}))
            if new == "probing_started":
                old_probe = remote
            elif new == "migration_started":
                found.append(Move(remote, old_probe))
                old_probe = None
            elif new == "migration_complete" and found and found[-1].new == remote:
                found[-1].complete = True
            elif new == "migration_abandoned" and found and found[-1].new == remote:
                found[-1].abandoned = True
        elif found and not found[-1].complete:
            if name == "quic:packet_sent":
                found[-1].challenges += frames(data, "path_challenge")
            elif name == "quic:packet_received":
                found[-1].responses.update(frames(data, "path_response"))
    return found


def check(path: Path, min_migrations: int) -> str:
    found, tail = moves(path), ""
    if len(found) < min_migrations:
        raise SystemExit(f"{path}: {len(found)} migrations, expected at least {min_migrations}")
    for i, m in enumerate(found, 1):
        where = f"{path}: migration {i} to {m.new}"
        if len(set(m.challenges)) < 2:
            raise SystemExit(f"{where}: {len(set(m.challenges))} PATH_CHALLENGE(s), expected one per path")
        if m.old is None:
            raise SystemExit(f"{where}: the previous path was not challenged (§9.3.3)")
        if m.abandoned:
            raise SystemExit(f"{where}: its validation failed (migration_abandoned)")
        if not m.complete:
            if i < len(found):
                raise SystemExit(f"{where}: never validated (no migration_complete)")
            # A rebind just before the client's last packets: the connection closed
            # before the PATH_RESPONSE could come back; nothing failed.
            tail = f"; the last, to {m.new}, was cut short by the connection's close"
            found = found[:-1]
            break
        if not m.responses.intersection(m.challenges):
            raise SystemExit(f"{where}: no PATH_RESPONSE echoing a PATH_CHALLENGE sent")
    news = ", ".join(m.new for m in found)
    return (f"{len(found)} migrations ({news}), each validated by a PATH_CHALLENGE and its "
            f"PATH_RESPONSE, each previous path challenged{tail}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dir", type=Path)
    ap.add_argument("--min-migrations", type=int, default=1)
    a = ap.parse_args()
    servers = sorted(a.dir.glob("*_server.sqlog"))
    if len(servers) != 1:
        sys.exit(f"{a.dir}: {len(servers)} server qlogs, expected 1")
    print(check(servers[0], a.min_migrations))


if __name__ == "__main__":
    main()
