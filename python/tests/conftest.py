"""Shared fixtures: the repository root, the `quiclab` CLI (the reference the
Python package must match byte for byte), and `require` for optional modules."""

import importlib
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


@pytest.fixture(scope="session")
def require():
    """Imports a module that tests/requirements.txt installs into the venv. Without it
    the test fails after scripts/setup-tests.sh (`QUICLAB_TEST_SETUP`) or under `CI`;
    otherwise it skips and records the skip in the skip list (`QUICLAB_TEST_SKIPS`,
    else target/test-skips.txt; tests/skip.rs), which scripts/test.sh prints."""

    def load(module: str):
        try:
            return importlib.import_module(module)
        except ImportError as e:
            why = f"{module} not importable ({e}); pip install -r tests/requirements.txt"
            if os.environ.get("QUICLAB_TEST_SETUP") or os.environ.get("CI"):
                pytest.fail(f"{why}: scripts/setup-tests.sh installs it into .venv")
            skips = os.environ.get("QUICLAB_TEST_SKIPS") or ROOT / "target" / "test-skips.txt"
            os.makedirs(os.path.dirname(skips), exist_ok=True)
            with open(skips, "a") as f:
                f.write(f"SKIPPED python/tests: {why}\n")
            pytest.skip(why)

    return load
