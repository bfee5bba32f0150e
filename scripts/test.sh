#!/usr/bin/env bash
# The project's test command (README, CI): installs what the tests need
# (scripts/setup-tests.sh: rustfmt/clippy, a .venv with aioquic, tshark), then format,
# lints, unit and integration tests, then interop against aioquic. Every step runs even
# if an earlier one failed, so one CI log shows everything; the exit status is non-zero
# if any step failed. Tests run in release mode so the interop step reuses the build.
set -uo pipefail
cd "$(dirname "$0")/.."

python=$(scripts/setup-tests.sh | tail -1) || {
    echo "FAILED: scripts/setup-tests.sh (see its message above)"
    exit 1
}
export PATH="$HOME/.cargo/bin:$PATH"

failed=()
step() {
    echo
    echo "== $*"
    "$@" || failed+=("$*")
}

step cargo fmt --all --check
step cargo clippy --workspace --all-targets -- -D warnings
step python3 scripts/check_module_cycles.py
step python3 scripts/doc_figures.py --check --only validation
step python3 scripts/doc_figures.py --check --only reproduction
step cargo test --workspace --release --no-fail-fast
step env PYTHON="$python" tests/interop/run.sh
# Initial flood (issue 10), bounded: 50,000 junk Initials on loopback while a client
# fetches 1 MB; asserts a byte-exact fetch and server memory growth < 20 MB (the 1 s
# fetch goal is a benchmark figure in docs/PERFORMANCE.md, not asserted here).
step "$python" tests/flood/flood.py --quiclab target/release/quiclab --ci
# Python package (python/): pytest, incl. a Dask LocalCluster sweep vs `quiclab lab run`.
step "$python" -m pytest -q python/tests

# --- HTTP/3 interop (aioquic.h3, ngtcp2; matrix) ---
step env PYTHON="$python" tests/interop/h3.sh
step env PYTHON="$python" tests/interop/browser.sh
# --- end HTTP/3 interop ---

echo
if [[ ${#failed[@]} -gt 0 ]]; then
    printf 'FAILED: %s\n' "${failed[@]}"
    exit 1
fi
echo "all test steps passed"
