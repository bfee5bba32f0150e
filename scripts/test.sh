#!/usr/bin/env bash
# The project's test command (README, CI): installs what the tests need
# (scripts/setup-tests.sh: rustfmt/clippy, a .venv with aioquic, tshark; the Python
# package is built after the Rust tests, reusing their build), then format,
# lints, unit and integration tests, then interop against aioquic. Every step runs even
# if an earlier one failed, so one CI log shows everything; the exit status is non-zero
# if any step failed. Tests run in release mode so the interop step reuses the build.
set -uo pipefail
cd "$(dirname "$0")/.."

setup_start=$SECONDS
python=$(scripts/setup-tests.sh --no-package | tail -1) || {
    echo "FAILED: scripts/setup-tests.sh (see its message above)"
    exit 1
}
setup_s=$((SECONDS - setup_start))
export PATH="$HOME/.cargo/bin:$PATH"
# Setup installed every tool the tests need, so a test that misses one fails
# (QUICLAB_TEST_SETUP; tests/skip.rs); a test that skips anyway appends a line to
# QUICLAB_TEST_SKIPS, listed at the end.
export QUICLAB_TEST_SETUP=1
export QUICLAB_TEST_SKIPS="$PWD/target/test-skips.txt"
mkdir -p target && : >"$QUICLAB_TEST_SKIPS"
# The reproduction tests keep their outputs here for check_reports.py (below), which
# would otherwise reproduce every experiment a second time.
export QUICLAB_KEEP_REPRODUCTIONS="$PWD/target/reproductions"
rm -rf "$QUICLAB_KEEP_REPRODUCTIONS"

failed=()
times=()
step() {
    echo
    echo "== $*"
    local start=$SECONDS
    "$@" || failed+=("$*")
    times+=("$((SECONDS - start)) s  $*")
}

step cargo fmt --all --check
step cargo clippy --workspace --all-targets -- -D warnings
step python3 scripts/check_module_cycles.py
# One received ACK under gdb (docs/ARCHITECTURE.md "Following one ACK"): it enters
# recovery once (plus the getter on the timer it returns) and calls back out once.
step python3 scripts/ack_trace.py --max-recovery-calls 2
step python3 scripts/doc_figures.py --check --only reproduction
step cargo test --workspace --release --no-fail-fast
# The steps below use the binaries that step built (tests/interop/common.sh, browser.sh,
# python/tests/conftest.py): `cargo build -p quiclab-cli` alone resolves dependency
# features differently from the workspace's tests and would compile the stack again.
export QUICLAB_BIN="$PWD/target/release/quiclab" QUINN_HQ_BIN="$PWD/target/release/quinn-hq"
# The Python package, with the workspace tests' dependency features (python/Cargo.toml):
# only pyo3 and the extension crate compile.
# Its feature list is complete (otherwise the build above compiles the stack again). 2 s.
step scripts/check_python_features.sh
step env MATURIN_PEP517_ARGS="--features workspace-features" scripts/build-python.sh "$python"
# After the tests: it reruns the validation tests' binaries that step built.
step python3 scripts/doc_figures.py --check --only validation
# The user guide (docs/book/): rendered into docs/book/book/, its links and the README's
# checked and its `sh,run` examples run against the release binary (scripts/doc_examples.py).
step mdbook build docs/book
step python3 scripts/doc_examples.py
# Coverage-guided fuzzing (fuzz/): each target briefly, from its seeds and past findings;
# skipped with a message when the nightly toolchain is absent.
step scripts/fuzz.sh 10
step env PYTHON="$python" tests/interop/run.sh
# The rebind cases' qlog check (path_check.py) on made-up qlogs: it can fail. < 1 s.
step "$python" -m unittest tests/interop/test_path_check.py
# RFC 9221 DATAGRAM frames both ways, quiclab <-> quic-go and quiclab <-> quiclab
# (every echo back, the fetched file intact). ~5 s.
step tests/interop/datagram.sh
# Floods (issues 10, 40), bounded, each against a fresh server while a client fetches
# 1 MB: 50,000 junk Initials (RSS growth < 20 MB), one connection's 80 MB of CRYPTO
# frames leaving offset 0 empty (< 5 MB), 1,100 valid ClientHellos (< 40 MB); asserts
# byte-exact fetches and the memory bounds (the 1 s fetch goal is a benchmark figure in
# docs/PERFORMANCE.md, not asserted here). ~15 s.
step "$python" tests/flood/flood.py --quiclab target/release/quiclab --ci
# Python package (python/): pytest, incl. a Dask LocalCluster sweep vs `quiclab lab run`
# and real transfers in-process through quiclab-net (test_transfer.py).
step "$python" -m pytest -q python/tests
# Reports as a person sees them: the reproductions the tests above kept (every
# experiment's `reproduce NAME --quick`), each experiment's index and one report in
# headless Chromium (screenshots in target/report-check/); fails on an image the browser
# cannot load, a broken link, a figure with no series or an experiment not kept.
step python3 tests/reports/check_reports.py --from-tests "$QUICLAB_KEEP_REPRODUCTIONS"

# --- HTTP/3 interop (aioquic.h3, ngtcp2; matrix) ---
step env PYTHON="$python" tests/interop/h3.sh
step env PYTHON="$python" tests/interop/browser.sh
# --- end HTTP/3 interop ---

echo
echo "step times (setup ${setup_s} s):"
printf '    %s\n' "${times[@]}"
if [[ -s $QUICLAB_TEST_SKIPS ]]; then
    echo "skipped ($QUICLAB_TEST_SKIPS):"
    sed 's/^/    /' "$QUICLAB_TEST_SKIPS"
else
    echo "skipped: none"
fi
if [[ ${#failed[@]} -gt 0 ]]; then
    printf 'FAILED: %s\n' "${failed[@]}"
    exit 1
fi
echo "all test steps passed"
