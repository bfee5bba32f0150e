#!/usr/bin/env python3
"""Splits a callgrind profile of `quiclab sim run` into components (docs/PERFORMANCE.md,
"Simulator: what a datagram costs").

Usage: scripts/sim_cost_inventory.py CALLGRIND_OUT DATAGRAMS [COMPONENT]
(with COMPONENT: the functions whose cost it holds, largest first)

Attribution: every instruction is counted once, where it executes (callgrind's self
cost). With the `profiling` build (line tables), code inlined into a function carries the
source file it was written in (callgrind's `fi=`/`fe=`), so a stream-buffer loop inlined
into `build_transmit` counts for `streams/`. Each (file, function) is classified by the
first matching rule below, on the file, else the function's name, else the function's
home file. What no rule claims (standard library code not inlined, libc's copies, the
assembly inside ring) goes to its callers, in proportion to the inclusive cost of each
call, until a classified caller takes it: so `_aesni_ctr32_ghash_6x` counts for the
AEAD seal or open that called it, `BinaryHeap::pop` for the event queue or the endpoint.
"""

import re
import sys
from collections import defaultdict

# (component, regex on the source file, regex on the function name); first match wins.
# A rule with a file regex matches on the file only; one without, on the name only.
RULES = [
    ("allocation (malloc/free)", None, r"^(malloc|free|realloc|calloc|_int_\w+|malloc_consolidate|unlink_chunk.*|tcache\w*|__rustc::__r\w+|__rust_\w*alloc\w*|__rdl_\w+)$"),
    ("memcpy/memset", None, r"^__mem(cpy|move|set)\w*$"),
    # `packet_protection = "checksum"` (crypto/checksum_keys.rs): its keys' trait methods
    # would otherwise match the AEAD and header protection rules below.
    ("checksum protection", None, r"checksum_keys|checksum_hash"),
    ("header protection", None, r"HeaderProtection|new_mask|unprotect_header|protect_header|::hp::"),
    ("AEAD seal", None, r"^ring::aead::.*seal|encrypt_in_place|aes_gcm_seal"),
    ("AEAD open", None, r"^ring::aead::.*open|decrypt_in_place|aes_gcm_open"),
    ("TLS handshake, start-up", None, r"^rustls::(client|server|conn|quic::connection|msgs|tls13)|^quiclab_proto::crypto::(tls|provider|cert|choices)"),
    ("TLS handshake, start-up", r"quiclab-proto/src/crypto/(tls|provider|cert|choices)", None),
    ("header protection", r"quiclab-proto/src/crypto/", None),
    ("packet parse, receive path", None, r"^quiclab_proto::wire::\S*(decode|parse)|FrameIter"),
    ("packet parse, receive path", r"quiclab-proto/src/(wire/(frame_decode|header|ack_ranges)|connection/(recv|parsed))", None),
    ("packet build, framing", r"quiclab-proto/src/(wire/|connection/(send|transmit))", None),
    ("congestion control, pacing", r"quiclab-proto/src/(cc/|recovery/pacer)", None),
    ("recovery, ACK processing", r"quiclab-proto/src/(ack/|recovery/|path_recovery/|connection/(loss|spaces))", None),
    ("streams, flow control", r"quiclab-proto/src/(streams/|connection/api)", None),
    ("measurement, logging", r"quiclab-proto/src/(events|qlog)|connection/(event_log|stats)|quiclab-sim/src/output/", None),
    ("connection state (timers, keys, ECN)", r"quiclab-proto/src/connection/", None),
    ("endpoint (routing, scheduling)", r"quiclab-proto/src/endpoint", None),
    ("event queue", r"quiclab-link/src/events", None),
    ("links, queues", r"quiclab-link/src/", None),
    ("application (workload)", r"quiclab-sim/src/workload/", None),
    ("simulator (dispatch, routes, settle)", r"quiclab-sim/src/", None),
    ("range sets (stream and ACK ranges)", r"quiclab-proto/src/range_set", None),
    ("other quiclab-proto", r"quiclab-proto/src/", None),
    ("TLS handshake, start-up", r"rustls|ring-(?!.*/pregenerated/)|toml|serde|quiclab-cli|quiclab-lab", None),
]
RULES = [(c, f and re.compile(f), n and re.compile(n)) for c, f, n in RULES]


def module_path(fn):
    """`quiclab_proto::connection::send::<impl ..>::f` -> `quiclab-proto/src/connection/send`:
    without line tables (a release binary) the function's module stands for its file."""
    m = re.search(r"(quiclab_\w+)((?:::[a-z_][a-z0-9_]*)*)", fn)
    if not m:
        return None
    return m.group(1).replace("_", "-") + "/src" + m.group(2).replace("::", "/") + "/"


def classify(file, fn, home):
    for comp, fre, nre in RULES:
        if nre is not None and nre.search(fn):
            return comp
    for target in (file, home, module_path(fn)):
        for comp, fre, nre in RULES:
            if fre is not None and fre.search(target or ""):
                return comp
    return None


def parse(path):
    """Self cost per (file, fn), call edges (caller file, caller fn, callee fn, inclusive
    cost), each function's home file, and the total."""
    names = {"fl": {}, "fn": {}, "ob": {}}
    self_cost = defaultdict(int)
    calls = []
    home = {}
    total = 0
    fl = fi = fn = cfn = None
    pending_call = False

    def name(kind, value):
        m = re.match(r"\((\d+)\)(?: (.*))?$", value)
        if not m:
            return value
        key, text = m.group(1), m.group(2)
        table = names["fl" if kind in ("fl", "fi", "fe", "cfi", "cfl") else kind]
        if text is not None:
            table[key] = text
        return table.get(key, "?")

    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line[0] == "#":
                continue
            if line[0].isdigit() or line[0] in "+-*":
                parts = line.split()
                cost = int(parts[1]) if len(parts) > 1 else 0
                if pending_call:
                    calls.append((fi or fl, fn, cfn, cost))
                    pending_call = False
                else:
                    self_cost[(fi or fl, fn)] += cost
                continue
            if line.startswith(("summary:", "totals:")):
                total = int(line.split()[1])
                continue
            key, _, value = line.partition("=")
            if key == "fl":
                fl, fi = name("fl", value), None
            elif key in ("fi", "fe"):
                fi = name("fl", value)
            elif key == "fn":
                fn, fi = name("fn", value), None
                home.setdefault(fn, fl)
            elif key == "cfn":
                cfn = name("fn", value)
            elif key in ("cfi", "cfl"):
                name("fl", value)
            elif key in ("ob", "cob"):
                name("ob", value)
            elif key == "calls":
                pending_call = True
    return self_cost, calls, home, total


def attribute(self_cost, calls, home, detail=None):
    comp_cost = defaultdict(int)
    by_fn = defaultdict(float)  # (component, function where the cost ran) -> cost
    unclaimed = defaultdict(int)  # function -> self cost no rule claimed
    for (file, fn), cost in self_cost.items():
        comp = classify(file, fn, home.get(fn))
        if comp:
            comp_cost[comp] += cost
            by_fn[(comp, fn)] += cost
        else:
            unclaimed[fn] += cost
    callers = defaultdict(list)
    for file, caller, callee, cost in calls:
        if caller != callee:
            callers[callee].append((file, caller, cost))
    # Hand unclaimed cost up the call graph, in proportion to each call's inclusive cost.
    for _ in range(50):
        if not unclaimed:
            break
        nxt = defaultdict(int)
        for fn, cost in unclaimed.items():
            edges = callers.get(fn, [])
            weight = sum(c for _, _, c in edges)
            if weight == 0:
                comp_cost["other (unattributed)"] += cost
                continue
            for file, caller, c in edges:
                share = cost * c / weight
                comp = classify(file, caller, home.get(caller))
                if comp:
                    comp_cost[comp] += share
                    by_fn[(comp, f"{caller} <- {fn}")] += share
                else:
                    nxt[caller] += share
        unclaimed = nxt
    for cost in unclaimed.values():
        comp_cost["other (unattributed)"] += cost
    if detail:
        rows = sorted(((c, f) for (k, f), c in by_fn.items() if k == detail), reverse=True)
        for c, f in rows[:40]:
            print(f"{c / 1e6:8.2f} M  {f[:200]}")
    return comp_cost


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    self_cost, calls, home, total = parse(sys.argv[1])
    datagrams = int(sys.argv[2])
    detail = sys.argv[3] if len(sys.argv) == 4 else None
    comp_cost = attribute(self_cost, calls, home, detail)
    print(f"| component | M instructions | k per datagram | share |")
    print("|---|---|---|---|")
    for comp, cost in sorted(comp_cost.items(), key=lambda kv: -kv[1]):
        print(f"| {comp} | {cost / 1e6:.2f} | {cost / datagrams / 1e3:.2f} | {100 * cost / total:.1f}% |")
    print(f"| total | {total / 1e6:.2f} | {total / datagrams / 1e3:.2f} | 100% |")
    print(f"(sum of components {sum(comp_cost.values()) / 1e6:.2f} M)")


if __name__ == "__main__":
    main()
