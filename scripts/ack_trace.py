#!/usr/bin/env python3
"""Follows one received ACK through quiclab-proto, line by line, and says which source
file handles each step (Python 3 stdlib and gdb).

It builds `crates/quiclab-proto/examples/ack_trace.rs` (dev profile: no inlining, so each
source line runs where it is written), runs it under gdb, stops at the example's
`deliver` (one ACK-only 1-RTT datagram handed to the client's endpoint; logging off) and
single-steps until `deliver` returns. Every stop in a file of `crates/quiclab-proto/src`
is kept; stops in the standard library and other crates are dropped.

It prints:
- the path as runs of consecutive steps in one file (file, first function, steps);
- file-to-file moves, distinct files, and moves back into a file already left;
- the calls, read from the call stack, that cross from the rest of the core into
  recovery (path_recovery/, recovery/ or cc/), and the calls back out while inside;
- the layer path (top-level module: connection, path_recovery, cc, recovery, wire, ...),
  with every step and with leaf calls folded.

Usage: scripts/ack_trace.py [--no-build] [--runs] [--max-recovery-calls N]
  --runs                  list every run of steps
  --max-recovery-calls N  exit 1 if the ACK makes more than N calls into recovery or
                          more than one call back out (the regression check CI runs)
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = "crates/quiclab-proto/src/"
BINARY = ROOT / "target/debug/examples/ack_trace"
RECOVERY_LAYERS = {"path_recovery", "recovery", "cc"}
# `SpaceId` is an identifier every layer names, not recovery state: steps into it (an
# `eq`, an index) are not counted as entering recovery.
NOT_RECOVERY = {"recovery/space.rs"}
# Value types every layer uses; a call into them from recovery is not a call back out.
UTILITY_LAYERS = {"ids", "time", "range_set", "wire", "rng"}

GDB_SCRIPT = r"""
import gdb, json
gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("break ack_trace::deliver")
gdb.execute("run", to_string=True)
steps = []
while True:
    frame = gdb.selected_frame()
    name = frame.name() or "?"
    if name.startswith("ack_trace::main"):
        break
    sal = frame.find_sal()
    path = sal.symtab.fullname() if sal.symtab else ""
    depth, f = 0, frame
    while f is not None:
        depth, f = depth + 1, f.older()
    steps.append([path, sal.line, name, depth])
    try:
        gdb.execute("step", to_string=True)
    except gdb.error:
        break
with open(OUT, "w") as f:
    json.dump(steps, f)
gdb.execute("kill")
"""


def build():
    subprocess.run(
        ["cargo", "build", "-q", "-p", "quiclab-proto", "--example", "ack_trace",
         "--features", "testing"],
        cwd=ROOT, check=True)


def trace():
    """The raw steps (absolute path, line, function) from gdb."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "steps.json")
        script = os.path.join(tmp, "trace.py")
        Path(script).write_text(f"OUT = {out!r}\n" + GDB_SCRIPT)
        subprocess.run(["gdb", "-batch", "-nx", "-x", script, str(BINARY)],
                       cwd=ROOT, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        return json.loads(Path(out).read_text())


def runs_of(steps):
    """Consecutive steps in one project file, as (file, first function, count)."""
    runs = []
    for path, _line, func, _depth in steps:
        i = path.find(SRC)
        if i < 0:
            continue
        rel = path[i + len(SRC):]
        if runs and runs[-1][0] == rel:
            runs[-1][2] += 1
        else:
            runs.append([rel, func, 1])
    return runs


def layer(rel):
    """The top-level module of a file: `connection/recv.rs` -> `connection`."""
    if rel in NOT_RECOVERY:
        return "ids"
    head = rel.split("/")[0]
    return head[:-3] if head.endswith(".rs") else head


def fold_leaf_calls(files):
    """The file path with leaf calls folded: in A > B > A, where the run in B called no
    other project file (an accessor, a varint read, an `eq`), B is dropped and the two
    runs of A become one. What remains are the moves that do work in more than one file."""
    out = []
    i = 0
    while i < len(files):
        if out and i + 1 < len(files) and files[i + 1] == out[-1]:
            i += 2  # files[i] was a leaf call from out[-1], which continues at i + 1
            continue
        out.append(files[i])
        i += 1
    return out


def moves(files):
    """(file-to-file moves, distinct files, moves back into a file already left)."""
    seen, back = set(), 0
    for prev, cur in zip(files, files[1:]):
        seen.add(prev)
        if cur in seen:
            back += 1
    return len(files) - 1, len(set(files)), back


def layer_path(files):
    layers = []
    for rel in files:
        name = layer(rel)
        if not layers or layers[-1] != name:
            layers.append(name)
    return layers


def short_fn(func):
    """`quiclab_proto::connection::loss::<impl ..>::on_ack_received` -> `on_ack_received`."""
    if not func:
        return "?"
    depth, plain = 0, []
    for c in func:  # drop generic arguments, which contain `::` of their own
        depth += c == "<"
        if depth == 0:
            plain.append(c)
        depth -= c == ">"
    return "".join(plain).split("::")[-1]


def calls_into_recovery(steps):
    """The calls that cross into recovery, by the call stack: a step one frame deeper
    than the last project step, in a recovery file, called from a project file outside
    recovery. Returns (the called functions, callbacks out of recovery into the rest)."""
    calls, callbacks = [], []
    last = None  # (layer, depth) of the previous step in a project file
    for path, _line, func, depth in steps:
        i = path.find(SRC)
        if i < 0:
            continue
        name = layer(path[i + len(SRC):])
        inside = name in RECOVERY_LAYERS
        if last is not None and depth > last[1]:
            was_inside = last[0] in RECOVERY_LAYERS
            if inside and not was_inside:
                calls.append(short_fn(func))
            elif was_inside and not inside and name not in UTILITY_LAYERS:
                callbacks.append(short_fn(func))
        last = (name, depth)
    return calls, callbacks


def main():
    argv = sys.argv[1:]
    args = set(argv)
    limit = None
    if "--max-recovery-calls" in argv:
        limit = int(argv[argv.index("--max-recovery-calls") + 1])
    if "--no-build" not in args:
        build()
    steps = trace()
    runs = runs_of(steps)
    if not runs:
        sys.exit("no step landed in quiclab-proto: was the example built with debug info?")
    files = [r[0] for r in runs]
    print(f"one ACK datagram: {sum(r[2] for r in runs)} steps in quiclab-proto")
    calls, callbacks = calls_into_recovery(steps)
    print(f"calls from the connection into recovery (path_recovery/, recovery/, cc/): "
          f"{len(calls)}: {', '.join(calls) or '-'}")
    print(f"calls back out of recovery while inside it: {len(callbacks)}: "
          f"{', '.join(callbacks) or '-'}")
    for title, path in (("every step", files), ("leaf calls folded", fold_leaf_calls(files))):
        n, distinct, back = moves(path)
        print(f"{title}: {n} file-to-file moves over {distinct} files, "
              f"{back} of them back into a file already left")
    print("layers, leaf calls folded: " + " > ".join(layer_path(fold_leaf_calls(files))))
    if limit is not None and (len(calls) > limit or len(callbacks) > 1):
        sys.exit(f"FAILED: the ACK crosses into recovery {len(calls)} times (at most {limit}) "
                 f"and calls back out {len(callbacks)} times (at most 1)")
    if "--runs" in args:
        for rel, func, count in runs:
            print(f"  {rel:40} {short_fn(func):40} {count}")


if __name__ == "__main__":
    main()
