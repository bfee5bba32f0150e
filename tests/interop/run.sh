#!/usr/bin/env bash
# Interop: byte-exact (sha256) hq-interop downloads of a 1 MB and a 10 MB random file
# between quiclab and aioquic, in both directions (plus quiclab against itself, to tell
# a stack bug from an interop one). Needs python3 with aioquic. 127.0.0.1 only.
# Ends with "N passed, M failed"; exits non-zero on any failure.
# Env: PYTHON (default python3), KEEP=1 keeps the work dir, CASE_TIMEOUT (s, default 120).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
py=${PYTHON:-python3}
case_timeout=${CASE_TIMEOUT:-120}
work=$(mktemp -d "${TMPDIR:-/tmp}/quiclab-interop.XXXXXX")
pids=()
passed=0
failed=0

cleanup() {
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
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== building quiclab (release)"
(cd "$repo" && cargo build --release -q -p quiclab-cli) || { echo "FAIL build"; echo "0 passed, 1 failed"; exit 1; }
quiclab="$repo/target/release/quiclab"

mkdir -p "$work/www" "$work/qlog"
head -c 1048576 /dev/urandom >"$work/www/1mb.bin"
head -c 10485760 /dev/urandom >"$work/www/10mb.bin"
"$py" "$here/make_cert.py" "$work/cert.pem" "$work/key.pem" || { echo "FAIL cert"; exit 1; }

# Ports from the PID, so parallel runs on one machine rarely collide.
base=$((20000 + ($$ % 20000)))
aioquic_port=$base
quiclab_port=$((base + 1))

# Starts a server in the background and waits for its "listening"/"server on" line.
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

start_server "aioquic server" "$work/aioquic_server.log" "listening" \
    "$py" "$here/aioquic_server.py" --host 127.0.0.1 --port "$aioquic_port" \
    --root "$work/www" --cert "$work/cert.pem" --key "$work/key.pem" || failed=$((failed + 1))
start_server "quiclab server" "$work/quiclab_server.log" "server on" \
    "$quiclab" server --listen "127.0.0.1:$quiclab_port" --root "$work/www" \
    --qlog-dir "$work/qlog" --seed 1 || failed=$((failed + 1))

# run_case NAME FILE OUTDIR LOG cmd...: runs a fetch and compares sha256 with the source.
run_case() {
    local name=$1 file=$2 out=$3 log=$4
    shift 4
    mkdir -p "$out"
    local start end ok=1
    start=$(date +%s.%N)
    timeout "$case_timeout" "$@" >"$log" 2>&1 || ok=0
    end=$(date +%s.%N)
    local secs
    secs=$(awk "BEGIN { printf \"%.2f\", $end - $start }")
    if [[ $ok == 1 && -f "$out/$file" ]] &&
        [[ $(sha256sum <"$out/$file") == $(sha256sum <"$work/www/$file") ]]; then
        echo "PASS $name ($(stat -c %s "$out/$file") bytes, ${secs} s)"
        passed=$((passed + 1))
    else
        echo "FAIL $name (${secs} s); log $log:"
        tail -15 "$log" | sed 's/^/    /'
        failed=$((failed + 1))
    fi
}

for file in 1mb.bin 10mb.bin; do
    run_case "quiclab client <- aioquic server: $file" "$file" "$work/out-qa" \
        "$work/qa-$file.log" \
        "$quiclab" client --ca "$work/cert.pem" --output "$work/out-qa" \
        --qlog-dir "$work/qlog" "https://127.0.0.1:$aioquic_port/$file"
    run_case "aioquic client <- quiclab server: $file" "$file" "$work/out-aq" \
        "$work/aq-$file.log" \
        "$py" "$here/aioquic_client.py" --output "$work/out-aq" \
        "https://127.0.0.1:$quiclab_port/$file"
    run_case "quiclab client <- quiclab server: $file" "$file" "$work/out-qq" \
        "$work/qq-$file.log" \
        "$quiclab" client --insecure --output "$work/out-qq" \
        --qlog-dir "$work/qlog" "https://127.0.0.1:$quiclab_port/$file"
done

echo "$passed passed, $failed failed"
[[ $failed == 0 ]]
