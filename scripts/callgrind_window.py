#!/usr/bin/env python3
"""Instructions per datagram of a run's steady state, function by function, from two
callgrind profiles of the same deterministic run stopped at two times (docs/PERFORMANCE.md,
"Simulator"; performance-history.md 2026-11-29 (6)).

Usage: scripts/callgrind_window.py [--match REGEX] [--top N] EARLY DG_EARLY LATE DG_LATE [EARLY DG LATE DG ...]

Each (EARLY, LATE) pair is two `valgrind --tool=callgrind` outputs of `quiclab sim run
SCENARIO --set stop.time_s=T` with T1 < T2, and DG_* their datagram counts (the
`forward` + `return` rows of links.csv). The run is deterministic, so its first T1
seconds are the same in both: LATE - EARLY is the cost of the window (T1, T2] alone,
without the start-up (handshakes) and with the same end-of-run output on both sides.
Self costs per function come from `callgrind_annotate`; one column per pair, sorted by
the last one. `--match` keeps the functions whose name matches REGEX.
"""

import re
import subprocess
import sys


def self_costs(path):
    """Self instructions per function name (all files summed)."""
    out = subprocess.run(
        ["callgrind_annotate", "--threshold=100", path], capture_output=True, text=True, check=True
    ).stdout
    lines = out.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("Ir") and "file:function" in l) + 2
    costs = {}
    for line in lines[start:]:
        if not line.strip():
            break
        m = re.match(r"\s*([\d,]+) \([^)]*\)\s+(.*?)(?: \[.*\])?$", line)
        if not m:
            continue
        fn = m.group(2).split(":", 1)[-1]
        fn = re.sub(r" \([\d,]+x\)$", "", fn)
        costs[fn] = costs.get(fn, 0) + int(m.group(1).replace(",", ""))
    return costs


def window(early, dg_early, late, dg_late):
    a, b = self_costs(early), self_costs(late)
    dg = dg_late - dg_early
    if dg <= 0:
        sys.exit("the later run must have more datagrams")
    return {k: (b.get(k, 0) - a.get(k, 0)) / dg for k in set(a) | set(b)}


def main():
    args = sys.argv[1:]
    pattern, top = None, 40
    while args and args[0].startswith("--"):
        flag, value, args = args[0], args[1], args[2:]
        if flag == "--match":
            pattern = re.compile(value)
        elif flag == "--top":
            top = int(value)
        else:
            sys.exit(__doc__)
    if not args or len(args) % 4:
        sys.exit(__doc__)
    windows = [
        window(args[i], int(args[i + 1]), args[i + 2], int(args[i + 3]))
        for i in range(0, len(args), 4)
    ]
    names = {k for w in windows for k in w if pattern is None or pattern.search(k)}
    for k in sorted(names, key=lambda k: -windows[-1].get(k, 0))[:top]:
        print(" ".join(f"{w.get(k, 0):8.1f}" for w in windows), " ", k[:140])
    print(" ".join(f"{sum(w.values()):8.1f}" for w in windows), "   total per datagram")


if __name__ == "__main__":
    main()
