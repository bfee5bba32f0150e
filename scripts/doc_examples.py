#!/usr/bin/env python3
"""Runs the documentation's runnable examples and checks its links (Python 3 stdlib only).

- Examples: every fenced block whose info string is `sh,run` in README.md and
  docs/book/src/**/*.md runs with bash (`set -euo pipefail`) in a fresh temporary
  directory per file, which links the repository's scenarios/, experiments/, tests/ and
  the built binary as target/release/quiclab (also first on PATH as `quiclab`). The
  blocks of one file run in order in the same directory. A block fails on its first
  failing command or after --timeout seconds.
- Links: every relative Markdown link in README.md, CONTRIBUTING.md, docs/*.md and
  docs/book/src/**/*.md must name an existing file or directory; an anchor into a
  Markdown file (or into the page itself) must match one of its headings' slugs.

Usage: scripts/doc_examples.py [--links-only] [--binary PATH] [--timeout S] [FILE...]
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```", re.S | re.M)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
SHARED = ["scenarios", "experiments", "tests"]


def doc_files():
    files = [ROOT / "README.md", ROOT / "CONTRIBUTING.md"]
    files += sorted((ROOT / "docs").glob("*.md"))
    files += sorted((ROOT / "docs" / "book" / "src").rglob("*.md"))
    return files


def examples(path):
    """The `sh,run` blocks of a file, with their line numbers."""
    text = path.read_text()
    for m in FENCE.finditer(text):
        info = [w.strip() for w in m.group(1).split(",")]
        if info[:1] == ["sh"] and "run" in info[1:]:
            yield text[: m.start()].count("\n") + 1, m.group(2)


def run_examples(path, binary, timeout):
    blocks = list(examples(path))
    if not blocks:
        return []
    failures = []
    with tempfile.TemporaryDirectory(prefix="quiclab-doc-") as tmp:
        work = Path(tmp)
        for name in SHARED:
            (work / name).symlink_to(ROOT / name)
        (work / "target" / "release").mkdir(parents=True)
        (work / "target" / "release" / "quiclab").symlink_to(binary)
        env = dict(os.environ, PATH=f"{work / 'target' / 'release'}:{os.environ['PATH']}")
        for line, code in blocks:
            where = f"{path.relative_to(ROOT)}:{line}"
            start = time.monotonic()
            try:
                done = subprocess.run(
                    ["bash", "-c", "set -euo pipefail\n" + code], cwd=work, env=env,
                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                    timeout=timeout, start_new_session=True)
                ok, output = done.returncode == 0, done.stdout
            except subprocess.TimeoutExpired as e:
                ok, output = False, f"(timed out after {timeout} s)\n{e.stdout or ''}"
            took = time.monotonic() - start
            print(f"{'ok  ' if ok else 'FAIL'} {where} ({took:.1f} s)")
            if not ok:
                tail = "\n".join(str(output).splitlines()[-30:])
                failures.append(f"{where}: example failed:\n{code}\n--- output ---\n{tail}")
    return failures


def slug(heading):
    """GitHub's and mdBook's anchor for a heading."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        text = FENCE.sub("", path.read_text())
        cache[path] = {slug(h) for h in re.findall(r"^#{1,6} (.+)$", text, re.M)}
    return cache[path]


def check_links(path):
    failures = []
    text = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), path.read_text())
    for m in LINK.finditer(text):
        target = m.group(1)
        if re.match(r"^[a-z]+:", target):
            continue
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        line = text[: m.start()].count("\n") + 1
        where = f"{path.relative_to(ROOT)}:{line}"
        if not dest.exists():
            failures.append(f"{where}: broken link {target}")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            failures.append(f"{where}: no heading #{anchor} in {dest.relative_to(ROOT)}")
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--links-only", action="store_true")
    ap.add_argument("--binary", default=str(ROOT / "target" / "release" / "quiclab"))
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("files", nargs="*", type=Path)
    a = ap.parse_args()
    files = [f.resolve() for f in a.files] or doc_files()
    failures = []
    for f in files:
        failures += check_links(f)
    print(f"doc_examples: links checked in {len(files)} files")
    if not a.links_only:
        binary = Path(a.binary).resolve()
        if not binary.is_file():
            sys.exit(f"doc_examples: {binary} not found: cargo build --release first")
        for f in files:
            failures += run_examples(f, binary, a.timeout)
    for failure in failures:
        print(failure, file=sys.stderr)
    if failures:
        sys.exit(f"doc_examples: {len(failures)} failure(s)")
    print("doc_examples: all passed")


if __name__ == "__main__":
    main()
