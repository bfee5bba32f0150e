#!/usr/bin/env python3
"""Reports as a person sees them (issue 36): reproduces every experiment quickly, then
opens the index and one report per experiment in headless Chromium, keeps a screenshot
of each, and fails on an image the browser could not load, a relative link to a
missing file, or an SVG figure with no plotted series (Python 3 stdlib only).

An image counts as loaded when Chromium says so (`complete` and a natural width, read
by a script injected into a copy of the page beside it). A series is a polyline in one
of the plot palette's colours with at least three points, or at least two markers or
bars (circles, rects) of one palette colour: axes, grid and legend samples (one short
line, marker or box per entry) do not count.

Usage: tests/reports/check_reports.py [--quiclab BIN] [--chromium BIN] [--out DIR]
                                      [--reuse]   (check an existing DIR, no reproduce)
                                      [--from-tests KEPT]
--from-tests checks the reproductions the test suite kept (QUICLAB_KEEP_REPRODUCTIONS=KEPT,
set by scripts/test.sh: KEPT/NAME/ is `reproduce NAME --quick`'s output for every
experiment) instead of reproducing all of them again: each experiment's index and its
first report. It fails when an experiment of experiments/ is missing there.
"""

import argparse
import html.parser
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
# crates/quiclab-lab/src/present/plot/draw.rs, PALETTE (Tableau 10).
PALETTE = {"#1F77B4", "#FF7F0E", "#2CA02C", "#D62728", "#9467BD", "#8C564B", "#E377C2",
           "#7F7F7F", "#BCBD22", "#17BECF"}
PROBE = """<script>window.addEventListener('load', () => {
  const bad = [...document.images].filter(i => !i.complete || i.naturalWidth === 0);
  document.body.setAttribute('data-images', document.images.length);
  document.body.setAttribute('data-broken', bad.map(i => i.getAttribute('src')).join(' '));
});</script>"""


class Refs(html.parser.HTMLParser):
    """The relative `href`s and `src`s of a page."""

    def __init__(self):
        super().__init__()
        self.links, self.images = [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "a" and a.get("href"):
            self.links.append(a["href"])
        if tag == "img" and a.get("src"):
            self.images.append(a["src"])


def relative(url):
    return not re.match(r"^([a-z]+:|#|/)", url)


def plotted_series(svg_text):
    """How many palette-coloured series an SVG figure draws (see the module doc)."""
    lines, markers = 0, Counter()
    for m in re.finditer(r"<(polyline|circle|rect|path)\b([^>]*)>", svg_text):
        attrs = m.group(2)
        colour = re.search(r'(?:stroke|fill)="(#[0-9A-Fa-f]{6})"', attrs)
        if not colour or colour.group(1).upper() not in PALETTE:
            continue
        if m.group(1) == "polyline":
            points = re.search(r'points="([^"]*)"', attrs)
            if points and len(points.group(1).split()) >= 3:
                lines += 1
        else:
            markers[colour.group(1).upper()] += 1
    return lines + sum(1 for n in markers.values() if n >= 2)


def browser(chromium, page, shot, profile):
    """Screenshot of `page` and what the probe saw: (images, broken srcs)."""
    probe = page.with_name(".browser-check-" + page.name)
    text = page.read_text()
    probe.write_text(text.replace("</body>", PROBE + "</body>") if "</body>" in text
                     else text + PROBE)
    flags = ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-extensions", f"--user-data-dir={profile}",
             "--allow-file-access-from-files", "--virtual-time-budget=5000"]
    url = probe.resolve().as_uri()
    try:
        dom = subprocess.run([chromium, *flags, "--dump-dom", url], capture_output=True,
                             text=True, timeout=120).stdout
        subprocess.run([chromium, *flags, "--window-size=1200,5000", f"--screenshot={shot}",
                        url], capture_output=True, timeout=120)
    finally:
        probe.unlink()
    body = re.search(r"<body([^>]*)>", dom)
    attrs = dict(re.findall(r'(data-[a-z]+)="([^"]*)"', body.group(1))) if body else {}
    if "data-images" not in attrs:
        return None, []
    return int(attrs["data-images"]), attrs.get("data-broken", "").split()


def check_page(page, base, chromium, shots, profile):
    failures = []
    where = str(page)
    refs = Refs()
    refs.feed(page.read_text())
    for link in filter(relative, refs.links + refs.images):
        target = (page.parent / link.split("#")[0]).resolve()
        if not target.exists():
            failures.append(f"{where}: broken link or image {link}")
    for src in filter(relative, refs.images):
        svg = (page.parent / src).with_suffix(".svg")
        if svg.exists() and plotted_series(svg.read_text()) == 0:
            failures.append(f"{where}: figure {svg.name} has no plotted series")
    name = re.sub(r"[^\w.-]", "_", str(page.relative_to(base)))
    shot = shots / (name.removesuffix(".html") + ".png")
    images, broken = browser(chromium, page, shot, profile)
    if images is None:
        failures.append(f"{where}: Chromium did not load the page")
    for src in broken:
        failures.append(f"{where}: Chromium could not load image {src}")
    if not shot.exists() or shot.stat().st_size < 5000:
        failures.append(f"{where}: no screenshot (or a blank one): {shot}")
    print(f"{'ok  ' if not failures else 'FAIL'} {where}: {images} images, screenshot {shot}")
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quiclab", default=str(ROOT / "target" / "release" / "quiclab"))
    ap.add_argument("--chromium", default="chromium")
    ap.add_argument("--out", type=Path, default=ROOT / "target" / "report-check")
    ap.add_argument("--reuse", action="store_true")
    ap.add_argument("--from-tests", type=Path, metavar="KEPT")
    a = ap.parse_args()
    if not shutil.which(a.chromium):
        sys.exit(f"check_reports: {a.chromium} not found (Debian package chromium)")
    out = a.out.resolve()
    shots = out / "screenshots"
    if a.from_tests:
        shutil.rmtree(out, ignore_errors=True)
        base = a.from_tests.resolve()
        pages = kept_pages(base)
    else:
        base = out / "reproduce"
        pages = reproduced_pages(a.quiclab, out, base, a.reuse)
    shots.mkdir(parents=True, exist_ok=True)
    failures = []
    for page in pages:
        failures += check_page(page, base, a.chromium, shots, out / "profile")
    for f in failures:
        print(f, file=sys.stderr)
    if failures:
        sys.exit(f"check_reports: {len(failures)} failure(s) in {len(pages)} pages")
    print(f"check_reports: {len(pages)} pages passed; screenshots in {shots}")


def first_report(experiment_dir):
    reports = sorted(experiment_dir.rglob("report.html"))
    return reports[:1]


def kept_pages(kept):
    """Each kept experiment's index and first report; every experiment must be there."""
    names = sorted(p.stem for p in (ROOT / "experiments").iterdir()
                   if p.is_dir() or p.suffix == ".toml")
    missing = [n for n in names if not (kept / n / "index.html").exists()]
    if missing:
        sys.exit(f"check_reports: no kept reproduction of {', '.join(missing)} in {kept} "
                 "(run the tests with QUICLAB_KEEP_REPRODUCTIONS set)")
    pages = []
    for n in names:
        pages.append(kept / n / "index.html")
        pages += first_report(kept / n / n)
    return pages


def reproduced_pages(quiclab, out, reproduce, reuse):
    """`reproduce all --quick` into REPRODUCE (unless reused): the index and one report
    per experiment."""
    if not reuse:
        shutil.rmtree(out, ignore_errors=True)
        # --keep-going: the checks' verdicts are the lab tests' concern; here, rendering.
        subprocess.run([quiclab, "reproduce", "all", "--quick", "--keep-going", "--out",
                        str(reproduce)], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    index = reproduce / "index.html"
    if not index.exists():
        sys.exit(f"check_reports: no {index}")
    pages = [index]
    # One report per experiment: the first report.html under each experiment directory.
    for experiment in sorted(p for p in reproduce.iterdir() if p.is_dir()):
        pages += first_report(experiment)
    return pages


if __name__ == "__main__":
    main()
