#!/usr/bin/env bash
# Interop of RFC 9221 DATAGRAM frames over real UDP on 127.0.0.1: quiclab's client
# (`--datagrams COUNT:SIZE`) against quic-go's server and quiclab's own, and quic-go's
# client against quiclab's server (`--datagrams`: it offers DATAGRAM and echoes each
# one). Each client sends COUNT datagrams besides fetching a file and counts the
# echoes; the check is that every one came back (loopback loses none), so each
# direction carried COUNT datagrams, and that the file arrived intact. quic-go-hq's
# `-testcase datagram` enables DATAGRAM on its side (tests/interop/quic-go/datagram.go).
# Without a Go toolchain the quic-go pairings are skipped with a message recorded in the
# skip list (tests/skip.rs), or fail when scripts/test.sh ran its setup
# (QUICLAB_TEST_SETUP) or CI is set. Ends with "N passed, M failed"; exits non-zero on
# any failure. Env: COUNT (default 200), SIZE (default 1000), KEEP=1 keeps the work dir.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=tests/interop/common.sh
source "$here/common.sh"
count=${COUNT:-200}
size=${SIZE:-1000}
work=$(mktemp -d "${TMPDIR:-/tmp}/quiclab-datagram.XXXXXX")
pids=()
passed=0
failed=0

trap interop_cleanup EXIT
trap 'exit 130' INT TERM

build_quiclab

build_quicgo "tests/interop/datagram.sh quic-go pairings"

mkdir -p "$work/www"
head -c 100000 /dev/urandom >"$work/www/file.bin"
python3 "$here/make_cert.py" "$work/cert.pem" "$work/key.pem" || { echo "FAIL cert"; exit 1; }
base=$((20000 + ($$ % 20000)))
quiclab_port=$base
quicgo_port=$((base + 1))

# A server that does not start is a failure of its pairings.
start_counted() {
    start_server "$@" || { failed=$((failed + 1)); return 1; }
}


# check NAME OUTDIR LOG cmd...: runs the client; passes when it exits 0, the file
# arrived intact and its log says every datagram came back.
check() {
    local name=$1 out=$2 log=$3 why=""
    shift 3
    mkdir -p "$out"
    timeout 60 "$@" >"$log" 2>&1 || why="exit status $?"
    if [[ -z $why ]] && ! cmp -s "$out/file.bin" "$work/www/file.bin"; then why="file.bin differs"; fi
    if [[ -z $why ]] && ! grep -qE "datagrams: sent $count received $count( |$)" "$log"; then
        why="not every datagram came back: $(grep -o 'datagrams: .*' "$log" | tail -1)"
    fi
    if [[ -z $why ]]; then
        echo "PASS $name: $(grep -o 'datagrams: .*' "$log" | tail -1)"
        passed=$((passed + 1))
    else
        echo "FAIL $name: $why; log $log:"
        tail -15 "$log" | sed 's/^/    /'
        failed=$((failed + 1))
    fi
}

start_counted "quiclab server" "$work/quiclab_server.log" "server on" \
    "$quiclab" server --listen "127.0.0.1:$quiclab_port" --root "$work/www" --seed 1 --datagrams
check "quiclab->quiclab" "$work/out-qq" "$work/qq.log" \
    "$quiclab" client --insecure --alpn hq-interop --datagrams "$count:$size" \
    --output "$work/out-qq" "https://127.0.0.1:$quiclab_port/file.bin"
if [[ -n $quicgo ]]; then
    start_counted "quic-go server" "$work/quicgo_server.log" "listening" \
        "$quicgo" server -listen "127.0.0.1:$quicgo_port" -root "$work/www" \
        -cert "$work/cert.pem" -key "$work/key.pem" -testcase datagram &&
        check "quiclab->quic-go" "$work/out-qg" "$work/qg.log" \
            "$quiclab" client --ca "$work/cert.pem" --alpn hq-interop --datagrams "$count:$size" \
            --output "$work/out-qg" "https://127.0.0.1:$quicgo_port/file.bin"
    check "quic-go->quiclab" "$work/out-gq" "$work/gq.log" \
        "$quicgo" client -testcase datagram -datagrams "$count" -datagram-size "$size" \
        -out "$work/out-gq" "https://127.0.0.1:$quiclab_port/file.bin"
fi
echo "$passed passed, $failed failed"
[[ $failed == 0 ]]
