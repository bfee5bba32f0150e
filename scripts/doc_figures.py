#!/usr/bin/env python3
"""Regenerates the figures that the user guide (docs/book/) and docs/PERFORMANCE.md quote, from runs, so
the documents cannot drift from the code (Python 3 stdlib only).

- validation: runs the INET validation tests (`cargo test --release --workspace --test
  validation` and `--test validation_tcp`, `-- --nocapture`), reads their `FIGURE case key value` lines and rewrites the
  guide's validation table (docs/book/src/guide/validation.md) (between `<!-- doc_figures:validation -->` markers). The
  figures are deterministic, so `--check` compares instead of writing and fails when the
  page is stale (scripts/test.sh runs that).
- timing: times reproductions from an empty output directory with the release binary and
  rewrites the wall-time table of docs/PERFORMANCE.md (between
  `<!-- doc_figures:timing -->` markers), with the machine's core count. Wall times vary:
  this part only writes. `--with-ack-ratio` adds the full ack-ratio sweeps (~80 min).
- reproduction: reads `experiments/last-full-run.csv` (written by `quiclab reproduce all
  --record`, a full run) and rewrites the guide's per-seed table
  (docs/book/src/guide/reproductions.md) of claims by status,
  with the checks' counts and the run's date and revision (between
  `<!-- doc_figures:reproduction -->` markers). It only reads a file, so `--check`
  (scripts/test.sh) is cheap.

Usage: scripts/doc_figures.py [--check] [--only validation|timing|reproduction]
                              [--with-ack-ratio]
"""

import argparse
import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VALIDATION_PAGE = ROOT / "docs" / "book" / "src" / "guide" / "validation.md"
REPRODUCTION_PAGE = ROOT / "docs" / "book" / "src" / "guide" / "reproductions.md"
PERFORMANCE = ROOT / "docs" / "PERFORMANCE.md"
LAST_FULL_RUN = ROOT / "experiments" / "last-full-run.csv"

# The seeds as crates/quiclab-lab/src/present/sources.rs names them.
SEEDS = {
    "000": "Instant ACK in QUIC handshakes (IMC '24)",
    "001": "QUIC's ACK policy and satellite",
    "002": "QUIC in the INET simulation suite",
    "003": "The QUIC Transport Protocol: Design and Internet-Scale Deployment (SIGCOMM '17)",
    "004": "Getting up to Speed with Neqo and Careful Resume",
}
CLAIM_STATUSES = ["reproduced", "direction only", "not reproduced", "inconclusive", "not run"]
CHECK_VERDICTS = ["holds", "fails", "inconclusive", "no data", "not run"]


def replace_block(text, name, body):
    """`text` with the lines between the `name` markers replaced by `body`."""
    start, end = f"<!-- doc_figures:{name} -->", f"<!-- /doc_figures:{name} -->"
    pattern = re.compile(re.escape(start) + r"\n.*?" + re.escape(end), re.S)
    if not pattern.search(text):
        sys.exit(f"doc_figures: no {start} ... {end} block")
    return pattern.sub(lambda _: f"{start}\n{body}{end}", text)


def run_figures(test):
    """{case: [(key, value)]} from a validation test's `FIGURE case key value` lines."""
    out = subprocess.run(
        # --workspace, not -p quiclab-sim: the workspace's feature set, so the test binary
        # is the one `cargo test --workspace --release` built (scripts/test.sh runs this
        # after it) and nothing is compiled again.
        ["cargo", "test", "--release", "-q", "--workspace", "--test", test,
         "--", "--nocapture", "--test-threads", "2"],
        cwd=ROOT, capture_output=True, text=True,
    )
    if out.returncode != 0:
        sys.stderr.write(out.stdout + out.stderr)
        sys.exit(f"doc_figures: the {test} test failed")
    figures = defaultdict(list)
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[0] == "FIGURE":
            figures[parts[1]].append((parts[2], float(parts[3])))
    return figures


def validation_figures():
    """QUIC's cases A-D (validation.rs) and TCP's A-C (validation_tcp.rs)."""
    figures = run_figures("validation")
    figures.update(run_figures("validation_tcp"))
    for case in ["A", "B", "C", "D", "A-TCP", "B-TCP", "C-TCP"]:
        if not figures[case]:
            sys.exit(f"doc_figures: no figures for case {case}")
    return figures


def pct(x, digits=2):
    return f"{x * 100:+.{digits}f}%"


def b_text(points):
    """Case B's mean deviation per loss rate and the spread over RTTs."""
    by_p = defaultdict(list)
    for key, v in points:
        by_p[float(key.split(",")[0].split("=")[1])].append(v)
    ps = sorted(by_p, reverse=True)
    means = " / ".join(pct(sum(by_p[p]) / len(by_p[p])) for p in ps)
    spread = max(max(by_p[p]) - min(by_p[p]) for p in ps)
    return (f"{means} (each the same at every RTT within {spread * 100:.2f} points; "
            f"asserted: below by at most 5% / 2% / 1.5%)")


def c_text(points):
    c = max(abs(v) for _, v in points)
    rtts = sorted({float(k.split("rtt_ms=")[1]) for k, _ in points})
    at = ", ".join(f"{r:g}" for r in rtts)
    return (f"exact at RTT {at} ms (every point within 1e-9)" if c < 1e-9
            else f"within {abs(c) * 100:.4f}% at RTT {at} ms")


def validation_table(f):
    a = max(abs(v) for _, v in f["A"])
    a_tcp = max(abs(v) for _, v in f["A-TCP"])
    d = min(v for _, v in f["D"])
    return (
        "| INET validation case (seed 002, §IV) | analytic result | quiclab-sim |\n"
        "|---|---|---|\n"
        f"| A: link bandwidth, 100 Mbit/s, MTU 1280-9000 | (MTU-28)/MTU x BW | "
        f"within {a * 100:.3f}% (asserted: 0.01%) |\n"
        f"| B: periodic loss 0.1%/0.02%/0.005%, RTT 2-100 ms | Mathis: MSS/RTT x sqrt(3/2p) | "
        f"{b_text(f['B'])} |\n"
        f"| C: flow-control limited, no CC, 65-140 kB, RTT 2-100 ms | initialMaxData / RTT | "
        f"{c_text(f['C'])} |\n"
        f"| D: three senders + UDP cross traffic over 10 Mbit/s | fair shares 1, 1/2, 1/3 | "
        f"Jain index >= {d:.3f} in every phase with two or three senders (asserted: 0.99) |\n"
        f"| A over TCP (`validation_tcp.rs`) | (MTU-20)/MTU x BW | "
        f"within {a_tcp * 100:.3f}% (asserted: 0.01%) |\n"
        f"| B over TCP, NewReno with SACK | Mathis, MSS = 1228 data bytes | "
        f"{b_text(f['B-TCP'])} |\n"
        f"| C over TCP, no CC, 65-140 kB receive buffer | receive window / RTT | "
        f"{c_text(f['C-TCP'])} |\n"
    )


def reproduction_table():
    """The guide's per-seed counts of claims by status in the last full run."""
    if not LAST_FULL_RUN.exists():
        return ("No full run is recorded yet: `quiclab reproduce all --record` (without "
                "`--quick`) writes `experiments/last-full-run.csv`, and "
                "`scripts/doc_figures.py --only reproduction` this table from it.\n")
    with LAST_FULL_RUN.open(newline="") as f:
        rows = list(csv.DictReader(f))
    claims = defaultdict(lambda: defaultdict(int))
    checks = defaultdict(int)
    for r in rows:
        if r["kind"] == "claim":
            claims[r["source"].strip()][r["status"]] += 1
        else:
            checks[r["status"]] += 1
    order = sorted(claims, key=lambda s: (s not in SEEDS, s))
    lines = ["| source | " + " | ".join(CLAIM_STATUSES) + " | claims |",
             "|---|" + "---|" * (len(CLAIM_STATUSES) + 1)]
    for s in order:
        name = f"seed {s}: {SEEDS[s]}" if s in SEEDS else s
        counts = [claims[s][st] for st in CLAIM_STATUSES]
        lines.append(f"| {name} | " + " | ".join(map(str, counts)) + f" | {sum(counts)} |")
    dates = sorted({r["date"] for r in rows})
    revisions = sorted({r["revision"] for r in rows})
    when = dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}"
    check_text = ", ".join(f"{checks[v]} {v}" for v in CHECK_VERDICTS)
    return ("\n".join(lines) + "\n\n"
            f"Last full run: {when}, revision {', '.join(revisions)} "
            f"(`experiments/last-full-run.csv`). The project's own checks, counted apart: "
            f"{check_text}.\n")


def update_block(path, name, body, check):
    """Writes (or, with `check`, compares) the `name` block of `path`."""
    text = path.read_text()
    new = replace_block(text, name, body)
    if check:
        if new != text:
            sys.exit(f"doc_figures: {path.name}'s {name} block is stale; "
                     f"run scripts/doc_figures.py --only {name}")
        print(f"doc_figures: {path.name}'s {name} block is up to date")
    elif new != text:
        path.write_text(new)
        print(f"doc_figures: {path.name} updated ({name})")


def timing_table(with_ack_ratio):
    """Times each reproduction with the release binary into a fresh directory."""
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "quiclab-cli"], cwd=ROOT, check=True)
    binary = ROOT / "target" / "release" / "quiclab"
    jobs = [
        ("`quiclab reproduce all --quick` (the README's main job)", ["all", "--quick"]),
        ("`quiclab reproduce inet-validation`", ["inet-validation"]),
        ("`quiclab reproduce handshake-latency`", ["handshake-latency"]),
        ("`quiclab reproduce satellite-ack`", ["satellite-ack"]),
        ("`quiclab reproduce instant-ack`", ["instant-ack"]),
    ]
    if with_ack_ratio:
        jobs.append(("`quiclab reproduce ack-ratio` (fig7 and lower-loss)", ["ack-ratio"]))
    rows = []
    for label, args in jobs:
        out = Path(tempfile.mkdtemp(prefix="quiclab-doc-figures-"))
        started = time.monotonic()
        subprocess.run([str(binary), "reproduce", *args, "--out", str(out), "--keep-going"],
                       cwd=ROOT, check=True, capture_output=True)
        wall = time.monotonic() - started
        runs = sum(max(0, len(p.read_text().splitlines()) - 1) for p in out.rglob("runs.csv"))
        shutil.rmtree(out)
        shown = f"{wall:.1f} s" if wall < 10 else f"{wall:.0f} s" if wall < 600 else f"{wall / 60:.0f} min"
        rows.append(f"| {label} | {runs:,} | {shown} |\n")
        print(f"{label}: {runs} runs, {wall:.1f} s", file=sys.stderr)
    return (
        f"Wall time on this machine ({os.cpu_count()} cores), release build, empty cache, "
        f"measured {time.strftime('%Y-%m-%d')} by `scripts/doc_figures.py --only timing`:\n\n"
        "| command | runs | wall time |\n|---|---|---|\n" + "".join(rows)
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true",
                    help="compare the guide's tables instead of writing them")
    ap.add_argument("--only", choices=["validation", "timing", "reproduction"])
    ap.add_argument("--with-ack-ratio", action="store_true")
    a = ap.parse_args()
    if a.only in (None, "validation"):
        update_block(VALIDATION_PAGE, "validation", validation_table(validation_figures()), a.check)
    if a.only in (None, "reproduction"):
        update_block(REPRODUCTION_PAGE, "reproduction", reproduction_table(), a.check)
    if a.only in (None, "timing") and not a.check:
        text = PERFORMANCE.read_text()
        PERFORMANCE.write_text(replace_block(text, "timing", timing_table(a.with_ack_ratio)))
        print("doc_figures: docs/PERFORMANCE.md updated")


if __name__ == "__main__":
    main()
