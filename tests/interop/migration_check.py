"""The evidence of the connectionmigration case (the server's preferred address, RFC
9000 §9.6), read from quiclab's qlog files (JSON-SEQ, as qlog_check.py reads them):

- client: the server's parameters_set carries preferred_address ADDR with a connection
  ID C; migration_state_updated reaches migration_complete toward ADDR; every 1-RTT
  packet the client sent from then on carries C as its Destination Connection ID (the
  new connection ID in use after the move, §9.5), and there are some;
- server (--server-dir): a tuple_assigned whose local address is ADDR, i.e. the
  server's packets come from the new address (the interop runner's check), and a
  probe from there that succeeded (§9.6.2: the server MUST probe from it).

Usage: migration_check.py CLIENT_DIR ADDR [--server-dir DIR]. Prints what it found;
exits 1 with the reason when a check fails.
"""

import argparse
import sys
from pathlib import Path

from qlog_check import records


def endpoint(info: dict) -> str:
    return f"{info.get('ip_v4') or info.get('ip_v6')}:{info.get('port_v4') or info.get('port_v6')}"


def check_client(path: Path, addr: str) -> str:
    cid, moved, after, wrong = None, False, 0, 0
    for r in records(path):
        name, data = r.get("name", ""), r.get("data", {})
        if name == "quic:parameters_set" and data.get("initiator") == "remote":
            pa = data.get("preferred_address")
            if pa:
                announced = endpoint(pa)
                if announced != addr:
                    raise SystemExit(f"{path}: preferred_address {announced}, expected {addr}")
                cid = pa["connection_id"]
        elif name == "quic:migration_state_updated" and data.get("new") == "migration_complete":
            if endpoint(data.get("tuple_remote", {})) == addr:
                moved = True
        elif moved and name == "quic:packet_sent":
            header = data.get("header", {})
            if header.get("packet_type") == "1RTT":
                after += 1
                wrong += header.get("dcid") != cid
    if cid is None:
        raise SystemExit(f"{path}: no preferred_address in the server's parameters")
    if not moved:
        raise SystemExit(f"{path}: no migration_complete toward {addr}")
    if after == 0 or wrong:
        raise SystemExit(f"{path}: {wrong} of {after} 1-RTT packets after the move not to {cid}")
    return f"client moved to {addr}; {after} 1-RTT packets after the move, all to {cid}"


def check_server(path: Path, addr: str) -> str:
    local, probed = False, False
    for r in records(path):
        name, data = r.get("name", ""), r.get("data", {})
        if name == "quic:tuple_assigned" and endpoint(data.get("tuple_local", {})) == addr:
            local = True
        if name == "quic:migration_state_updated" and data.get("new") == "probing_successful":
            probed = True
    if not (local and probed):
        raise SystemExit(f"{path}: server tuple from {addr}: {local}, its probe answered: {probed}")
    return f"server sends from {addr} after a successful probe from there"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("client_dir", type=Path)
    ap.add_argument("addr")
    ap.add_argument("--server-dir", type=Path)
    a = ap.parse_args()
    clients = sorted(a.client_dir.glob("*_client.sqlog"))
    if len(clients) != 1:
        sys.exit(f"{a.client_dir}: {len(clients)} client qlogs, expected 1")
    print(check_client(clients[0], a.addr))
    if a.server_dir:
        servers = sorted(a.server_dir.glob("*_server.sqlog"))
        if not servers:
            sys.exit(f"{a.server_dir}: no server qlog")
        print(check_server(servers[-1], a.addr))


if __name__ == "__main__":
    main()
