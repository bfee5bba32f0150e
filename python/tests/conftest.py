"""Shared fixtures: the repository root and the `quiclab` CLI (the reference the
Python package must match byte for byte)."""

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def cli():
    """Runs the `quiclab` CLI (QUICLAB_BIN, else `cargo run --release`) in the repo root
    and returns its CompletedProcess; fails the test on a non-zero exit."""
    binary = os.environ.get("QUICLAB_BIN")
    base = [binary] if binary else ["cargo", "run", "--release", "-q", "-p", "quiclab-cli", "--"]

    def run(*args: str) -> subprocess.CompletedProcess:
        p = subprocess.run([*base, *args], cwd=ROOT, capture_output=True, text=True)
        assert p.returncode == 0, f"quiclab {' '.join(args)} failed:\n{p.stderr}"
        return p

    return run
