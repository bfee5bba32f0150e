# Shared by run.sh, h3.sh and datagram.sh (sourced, not run): removing the work dir on
# exit, building quiclab, quinn-hq and quic-go-hq. The sourcing script sets `here`,
# `repo`, `work` (a fresh temp dir), `pids` (background processes to stop) and `failed`
# (a count).

# Stops the background processes; keeps the work dir when asked (KEEP=1) or when a case
# failed, so its logs can be read.
interop_cleanup() {
    for pid in "${pids[@]}"; do
        kill "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    if [[ "${KEEP:-0}" == 1 || $failed -gt 0 ]]; then
        echo "work dir kept: $work"
    else
        rm -rf "$work"
    fi
}

# Builds the release binary and sets `quiclab`; a failed build ends the script. With
# QUICLAB_BIN set (scripts/test.sh sets it to the binary `cargo test --workspace
# --release` built), that binary is used as it is: building `-p quiclab-cli` alone
# resolves the dependencies' features differently and would compile the stack again.
build_quiclab() {
    if [[ -n ${QUICLAB_BIN:-} ]]; then
        [[ -x $QUICLAB_BIN ]] || { echo "FAIL build: QUICLAB_BIN=$QUICLAB_BIN is not an executable"; echo "0 passed, 1 failed"; exit 1; }
        echo "== quiclab: $QUICLAB_BIN (QUICLAB_BIN)"
        quiclab=$QUICLAB_BIN
        return
    fi
    echo "== building quiclab (release)"
    (cd "$repo" && cargo build --release -q -p quiclab-cli) || {
        echo "FAIL build"
        echo "0 passed, 1 failed"
        exit 1
    }
    quiclab="$repo/target/release/quiclab"
}

# Builds quinn-hq (tests/interop/quinn/, a workspace crate: cargo alone, so never
# skipped) and sets `quinn`; a failed build counts as a failure and leaves it empty.
build_quinn() {
    # QUINN_HQ_BIN: the binary `cargo test --workspace --release` built (scripts/test.sh;
    # building -p quiclab-interop-quinn alone resolves other features of libc, tokio and
    # more, and would compile much of the stack again).
    if [[ -n ${QUINN_HQ_BIN:-} ]]; then
        if [[ -x $QUINN_HQ_BIN ]]; then
            echo "== quinn-hq: $QUINN_HQ_BIN (QUINN_HQ_BIN)"
            quinn=$QUINN_HQ_BIN
        else
            echo "FAIL quinn-hq: QUINN_HQ_BIN=$QUINN_HQ_BIN is not an executable"
            failed=$((failed + 1))
            quinn=""
        fi
        return
    fi
    echo "== building quinn-hq (release)"
    if (cd "$repo" && cargo build --release -q -p quiclab-interop-quinn); then
        quinn="$repo/target/release/quinn-hq"
    else
        echo "FAIL building quinn-hq (tests/interop/quinn)"
        failed=$((failed + 1))
        quinn=""
    fi
}

# Builds quic-go-hq and sets `quicgo` (empty when it is not available). Without a Go
# toolchain, run on its own (not by scripts/test.sh after its setup, not in CI), the
# quic-go cases are skipped with a line in the skip list (tests/skip.rs) naming
# "$1"; otherwise a failed build counts as a failure.
build_quicgo() {
    echo "== building quic-go-hq (Go)"
    local gobuild=0
    quicgo=$("$here/quic-go/build.sh" | tail -1) || gobuild=$?
    if [[ $gobuild == 3 && -z "${CI:-}" && -z "${QUICLAB_TEST_SETUP:-}" ]]; then
        local skip="SKIPPED $1: no Go toolchain (install Go >= 1.26)"
        echo "$skip"
        local skips=${QUICLAB_TEST_SKIPS:-$repo/target/test-skips.txt}
        mkdir -p "$(dirname "$skips")" && echo "$skip" >>"$skips"
        quicgo=""
    elif [[ $gobuild != 0 ]]; then
        echo "FAIL building quic-go-hq (tests/interop/quic-go/build.sh exit $gobuild)"
        failed=$((failed + 1))
        quicgo=""
    fi
}

# Starts a server in the background and waits (10 s at most) for its ready line.
start_server() { # name log ready-pattern cmd...
    local name=$1 log=$2 pattern=$3
    shift 3
    "$@" >"$log" 2>&1 &
    pids+=($!)
    for _ in $(seq 100); do
        if grep -qs "$pattern" "$log"; then return 0; fi
        if ! kill -0 "${pids[-1]}" 2>/dev/null; then break; fi
        sleep 0.1
    done
    echo "FAIL starting $name:"; tail -20 "$log"
    return 1
}
