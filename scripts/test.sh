#!/usr/bin/env bash
# The project's test command (README, CI): format, lints, unit and integration tests,
# then interop against aioquic. Tests run in release mode so the interop step reuses
# the same build.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { echo; echo "== $*"; }

step "cargo fmt --check"
cargo fmt --all --check

step "cargo clippy --all-targets -- -D warnings"
cargo clippy --workspace --all-targets -- -D warnings

step "cargo test --workspace --release"
cargo test --workspace --release

step "interop (tests/interop/run.sh)"
tests/interop/run.sh
