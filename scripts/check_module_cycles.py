#!/usr/bin/env python3
"""Reports import cycles between the modules of each crate (Python 3 stdlib only).

For every `crates/*/src` tree it reads each `.rs` file, collects the module paths the
file refers to (`use crate::a::b`, `use super::x`, `self::`, and inline `crate::a::b::C`
paths), resolves each to the module file that defines it (the longest prefix of the path
that is a module file), and builds two graphs:

- files: one node per top-level module and per module file in a folder
  (`plan`, `plan::expand`, `run::runner`; deeper files count as their folder-level
  ancestor, e.g. `present::plot::draw` as `present::plot`);
- top-level: one node per top-level module (`plan`, `run`, `present`, ...).

- in the folders of `FILE_LEVEL_FOLDERS` (`quiclab-proto`'s `connection/`): one node per
  file, and a path that starts with a child module's name (`use close::CloseState;` in
  `connection/mod.rs`) counts as a reference to that file, so a part file that imports
  `mod.rs` while `mod.rs` names one of its types is a cycle.

The crate root (`lib.rs` / `main.rs`) is a node too (`crate`): it declares and
re-exports modules, so a module that uses a root re-export closes a cycle.

Test code is left out: files named `tests.rs` or `*_tests.rs` and the bodies of
`#[cfg(test)] mod ... { }` blocks. Like a dev-dependency, a test may use a layer above
the code it tests (e.g. the `testing` harness); it is not linked into the crate.

Cycles (strongly connected components with more than one node) are printed with one
reference per edge (file:line and the path written there). Exit status 1 if any.

Usage: scripts/check_module_cycles.py [CRATE_DIR ...]   (default: crates/*)
"""

import re
import sys
from pathlib import Path

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"

# Folders whose files are checked one by one (`check_folder`): (crate, module path).
FILE_LEVEL_FOLDERS = [("quiclab-proto", ("connection",))]


def strip_comments_and_strings(text):
    """The text with comments and string/char literals blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:]) and not re.match(r"\w", text[i - 1 : i] or " "):
            hashes = re.match(r"r(#*)\"", text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            j = n if end < 0 else end + 1 + len(hashes)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'":
            # A char literal ('a', '\n', '\u{..}'); a lifetime ('a) is left alone.
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", text[i:])
            if m:
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def expand_use_tree(tree):
    """`a::{b, c::{self, D}}` -> [[a, b], [a, c], [a, c, D]] (aliases already removed)."""
    tree = re.sub(r"\s+", "", tree)
    paths = []

    def walk(s, prefix):
        # s is a comma-separated list of trees at one level.
        depth, start, parts = 0, 0, []
        for k, ch in enumerate(s):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == "," and depth == 0:
                parts.append(s[start:k])
                start = k + 1
        parts.append(s[start:])
        for part in parts:
            if not part:
                continue
            brace = part.find("{")
            if brace >= 0:
                head = [seg for seg in part[:brace].split("::") if seg]
                walk(part[brace + 1 : part.rfind("}")], prefix + head)
            else:
                segs = [seg for seg in part.split("::") if seg]
                if segs and segs[-1] == "self":
                    segs = segs[:-1]
                if segs and segs[-1] == "*":
                    segs = segs[:-1]
                paths.append(prefix + segs)

    walk(tree, [])
    return paths


def module_path(src, file):
    rel = file.relative_to(src).with_suffix("")
    parts = list(rel.parts)
    if parts in (["lib"], ["main"]):
        return ()
    if parts[-1] == "mod":
        parts = parts[:-1]
    return tuple(parts)


def block_end(text, start):
    """The index just past the `}` closing the block whose body starts at `start`."""
    depth, j = 1, start
    while j < len(text) and depth:
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
        j += 1
    return j


def inline_mod_spans(text):
    """(start, end) of every inline `mod name { ... }` body."""
    return [(m.end(), block_end(text, m.end()))
            for m in re.finditer(r"\bmod\s+" + IDENT + r"\s*\{", text)]


def references(text, here, modules=()):
    """(line, written path, absolute segments) for every module reference in `text`.

    Besides `crate::`, `super::` and `self::` paths, a path whose first segment is a
    child module of `here` (`use close::CloseState;` in a `mod.rs`, Rust 2018) counts:
    it refers to that child's file. `modules` is the set of module paths in the crate."""
    spans = inline_mod_spans(text)
    refs = []

    def child(first, pos):
        return not any(a <= pos < b for a, b in spans) and tuple(here) + (first,) in modules

    def absolute(segs, pos):
        segs = list(segs)
        if segs and child(segs[0], pos):
            return list(here) + segs
        if not segs or segs[0] not in ("crate", "super", "self"):
            return None
        if segs[0] == "crate":
            return segs[1:]
        base = list(here)
        inline = sum(1 for a, b in spans if a <= pos < b)
        if segs[0] == "self":
            return base + segs[1:]
        while segs and segs[0] == "super":
            segs = segs[1:]
            if inline:
                inline -= 1
            else:
                base = base[:-1]
        return base + segs

    def line_of(pos):
        return text.count("\n", 0, pos) + 1

    use_spans = []
    for m in re.finditer(r"\buse\s+([^;]+);", text):
        use_spans.append((m.start(), m.end()))
        tree = re.sub(r"\s+as\s+" + IDENT, "", m.group(1))
        for segs in expand_use_tree(tree):
            a = absolute(segs, m.start())
            if a is not None:
                refs.append((line_of(m.start()), "::".join(segs), a))
    for m in re.finditer(r"(?<![\w:])" + IDENT + r"(?:::" + IDENT + r")+", text):
        if any(a <= m.start() < b for a, b in use_spans):
            continue
        segs = m.group(0).split("::")
        if segs[0] not in ("crate", "super", "self") and not child(segs[0], m.start()):
            continue
        a = absolute(segs, m.start())
        if a is not None:
            refs.append((line_of(m.start()), m.group(0), a))
    return refs


def resolve(modules, segs):
    """The longest prefix of `segs` that is a module file."""
    for k in range(len(segs), -1, -1):
        if tuple(segs[:k]) in modules:
            return tuple(segs[:k])
    return ()


def sccs(nodes, edges):
    """Tarjan's strongly connected components."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def name(node):
    return "::".join(node) if node else "crate"


def is_test_file(path):
    return path.name == "tests.rs" or path.name.endswith("_tests.rs")


def blank_test_modules(text):
    """The text with every `#[cfg(test)] mod name { ... }` body blanked (newlines kept)."""
    test_mod = r"#\[cfg\(test\)\]\s*(pub(\([^)]*\))?\s+)?mod\s+" + IDENT + r"\s*\{"
    for m in reversed(list(re.finditer(test_mod, text))):
        j = block_end(text, m.end())
        text = text[: m.start()] + re.sub(r"[^\n]", " ", text[m.start() : j]) + text[j:]
    return text


def report(crate_dir, label, edges, why, nodes):
    """Prints the cycles of one graph; returns how many."""
    found = 0
    for comp in sccs(nodes, edges):
        if len(comp) < 2:
            continue
        found += 1
        members = set(comp)
        print(f"{crate_dir.name}: cycle between {label} modules: {', '.join(name(c) for c in comp)}")
        for a in comp:
            for b in sorted(edges.get(a, ())):
                if b in members:
                    print(f"    {name(a)} -> {name(b)}   ({why[(a, b)]})")
    return found


def check_folder(crate_dir, modules, folder):
    """Cycles between the files of one folder, each file its own node.

    Stricter than the crate-wide graphs: a path that starts with a child module's name
    (`use close::CloseState;` in the folder's `mod.rs`) is a reference to that file, so
    a `mod.rs` naming a type of a file that imports the `mod.rs` back is a cycle."""
    edges, why = {}, {}
    nodes = {m for m in modules if m[: len(folder)] == folder}
    for mod in sorted(nodes):
        f = modules[mod]
        text = blank_test_modules(strip_comments_and_strings(f.read_text(encoding="utf-8")))
        for line, written, segs in references(text, mod, modules):
            b = resolve(modules, segs)
            if b == mod or b not in nodes:
                continue
            edges.setdefault(mod, set()).add(b)
            why.setdefault((mod, b), f"{f.relative_to(crate_dir.parent.parent)}:{line}: {written}")
    return report(crate_dir, f"{name(folder)}/ file", edges, why, nodes)


def check_crate(crate_dir):
    src = crate_dir / "src"
    files = sorted(
        p
        for p in src.rglob("*.rs")
        if "bin" not in p.relative_to(src).parts[:1] and not is_test_file(p)
    )
    modules = {module_path(src, f): f for f in files}
    found = 0
    for label, depth in (("files", 2), ("top-level", 1)):
        edges, why = {}, {}
        nodes = {m[:depth] for m in modules}
        for mod, f in modules.items():
            text = blank_test_modules(strip_comments_and_strings(f.read_text(encoding="utf-8")))
            a = mod[:depth]
            for line, written, segs in references(text, mod):
                b = resolve(modules, segs)[:depth]
                if a == b:
                    continue
                edges.setdefault(a, set()).add(b)
                why.setdefault((a, b), f"{f.relative_to(crate_dir.parent.parent)}:{line}: {written}")
        found += report(crate_dir, label, edges, why, nodes)
    checked = ""
    for crate, folder in FILE_LEVEL_FOLDERS:
        if crate == crate_dir.name:
            found += check_folder(crate_dir, modules, folder)
            files = sum(1 for m in modules if m[: len(folder)] == folder)
            checked += f", {name(folder)}/ file by file: {files}"
    if not found:
        print(f"{crate_dir.name}: no cycles ({len(modules)} module files{checked})")
    return found


def main(argv):
    root = Path(__file__).resolve().parent.parent
    dirs = [Path(a) for a in argv] or sorted(p.parent for p in (root / "crates").glob("*/src"))
    total = sum(check_crate(d.resolve()) for d in dirs)
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
