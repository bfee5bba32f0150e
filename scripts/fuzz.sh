#!/usr/bin/env bash
# Builds the cargo-fuzz targets of fuzz/ and runs each one briefly: first the inputs of
# past findings (fuzz/regressions/<target>/), then coverage-guided fuzzing from the
# committed seeds (fuzz/seeds/<target>/) for SECONDS each (default 15), its new inputs in
# fuzz/corpus/<target>/ (not committed). Needs the nightly toolchain and cargo-fuzz
# (scripts/setup-tests.sh installs cargo-fuzz when nightly is there); without nightly it
# says so and exits 0. A finding fails the run and leaves its input in fuzz/artifacts/.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
set -uo pipefail
cd "$(dirname "$0")/../fuzz"
export PATH="$HOME/.cargo/bin:$PATH"

seconds=${1:-15}
shift || true
# A skip is printed, and recorded in the test command's summary (tests/skip.rs's file).
skip() {
    echo "fuzz: skipped ($1)"
    [[ -n ${QUICLAB_TEST_SKIPS:-} ]] && echo "scripts/fuzz.sh: $1" >>"$QUICLAB_TEST_SKIPS"
    exit 0
}
if ! cargo +nightly --version >/dev/null 2>&1; then
    skip "no nightly toolchain: rustup toolchain install nightly"
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    skip "cargo-fuzz missing: cargo install cargo-fuzz --locked"
fi
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
    mapfile -t targets < <(cargo +nightly fuzz list)
fi

# No sanitizer: the targets are safe Rust; debug assertions and overflow checks stay on.
start=$SECONDS
# 16 codegen units: cargo-fuzz defaults to 1, which leaves one of two cores idle while
# the big crates compile (the targets run a little slower; CI fuzzes 10 s each).
cargo +nightly fuzz build -s none --codegen-units 16 || exit 1
echo "fuzz: build took $((SECONDS - start)) s"
bin=${CARGO_TARGET_DIR:-target}/x86_64-unknown-linux-gnu/release
failed=()
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t" "artifacts/$t"
    if compgen -G "regressions/$t/*" >/dev/null; then
        "$bin/$t" regressions/"$t"/* >"artifacts/$t/regressions.log" 2>&1 ||
            { failed+=("$t (regressions)"); tail -30 "artifacts/$t/regressions.log"; continue; }
    fi
    log="artifacts/$t/run.log"
    if "$bin/$t" -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="artifacts/$t/" \
        "corpus/$t" "seeds/$t" >"$log" 2>&1; then
        runs=$(grep -o 'number_of_executed_units: [0-9]*' "$log" | grep -o '[0-9]*$')
        echo "fuzz: $t: $runs executions in $seconds s, no finding"
    else
        failed+=("$t")
        grep -m1 -A3 'panicked\|ERROR' "$log"
        echo "fuzz: $t: FINDING, input in fuzz/artifacts/$t/ (log: fuzz/$log)"
    fi
done
echo "fuzz: $((SECONDS - start)) s in all"
if [[ ${#failed[@]} -gt 0 ]]; then
    printf 'fuzz: failed: %s\n' "${failed[@]}"
    exit 1
fi
