#!/usr/bin/env bash
# Multipath interop (issue 33 item 5): quiclab's client against noq-mp-server (noq 1.4,
# draft-ietf-quic-multipath with the same codepoints as quiclab: initial_max_path_id
# 0x3e, PATH_ACK 0x3e, PATH_ABANDON 0x3e75, ...). Two 100 MB downloads over paths from
# 127.0.0.1 (path 0) and 127.0.0.2 (path 1), checked byte by byte by the client: one
# with both paths to the end, one abandoning path 1 after 30 MB. Passes when both
# complete, path 1 is validated, and (with the qlog) PATH_ABANDON went both ways.
# Not in CI: building noq takes minutes. Needs target/release/quiclab (cargo build
# --release -p quiclab-cli) and crates.io for the first build.
set -euo pipefail
cd "$(dirname "$0")"
here=$PWD
root=$(cd ../../.. && pwd)
quiclab=${QUICLAB:-$root/target/release/quiclab}
cargo build --release --locked --quiet
server_bin=$here/target/release/noq-mp-server
work=$(mktemp -d)
port=${PORT:-24466}
"$server_bin" "127.0.0.1:$port" 2>"$work/server.log" &
server=$!
trap 'kill $server; rm -rf "$work"' EXIT
sleep 0.5
fetch() {
  "$quiclab" client --insecure --alpn hq-interop --check --multipath \
    --path-local 127.0.0.2 --pmtud-max 0 --seed 7 "$@" \
    "https://127.0.0.1:$port/100000000" 2>&1 | grep -E '^multipath|bytes in'
}
echo "== both paths"
fetch | tee "$work/both.txt"
grep -q '^/100000000: 100000000 bytes in' "$work/both.txt"
grep -q 'path 1 (from 127.0.0.2:[0-9]*): [0-9]* bytes .*validated' "$work/both.txt"
echo "== path 1 abandoned after 30 MB"
fetch --abandon-path 1@30M --qlog-dir "$work/qlog" | tee "$work/abandon.txt"
grep -q '^/100000000: 100000000 bytes in' "$work/abandon.txt"
grep -q 'validated, abandoned' "$work/abandon.txt"
sent=$(grep -c '"quic:packet_sent".*"frame_type":"path_abandon"' "$work"/qlog/*.sqlog)
received=$(grep -c '"quic:packet_received".*"frame_type":"path_abandon"' "$work"/qlog/*.sqlog)
echo "PATH_ABANDON packets: $sent sent, $received received"
[[ $sent -ge 1 && $received -ge 1 ]]
echo "noq multipath interop: ok"
