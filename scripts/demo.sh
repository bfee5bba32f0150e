#!/usr/bin/env bash
# The main job, for now: builds quiclab (release); runs the four INET validation
# scenarios in the simulator (results under $DEMO_DIR/sim); then a real-UDP fetch over
# 127.0.0.1: serves a 10 MB random file with `quiclab server`, fetches it with
# `quiclab client`, checks its sha256, and prints where the qlog files are.
# Env: DEMO_DIR (default target/demo), PORT (default 4433), SIZE (bytes, default 10 MiB).
set -euo pipefail
cd "$(dirname "$0")/.."

dir=${DEMO_DIR:-target/demo}
port=${PORT:-4433}
size=${SIZE:-10485760}

cargo build --release -q -p quiclab-cli
quiclab=target/release/quiclab

rm -rf "$dir"
mkdir -p "$dir/www" "$dir/out" "$dir/qlog" "$dir/sim"

for scenario in scenarios/validation/*.toml; do
    name=$(basename "$scenario" .toml)
    echo "== simulating $scenario"
    "$quiclab" sim run "$scenario" --out "$dir/sim/$name"
    echo
done

echo "== real UDP: quiclab server and client on 127.0.0.1"
head -c "$size" /dev/urandom >"$dir/www/file.bin"

"$quiclab" server --listen "127.0.0.1:$port" --root "$dir/www" --qlog-dir "$dir/qlog" \
    >"$dir/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null' EXIT
for _ in $(seq 50); do
    grep -qs "server on" "$dir/server.log" && break
    kill -0 $server 2>/dev/null || { cat "$dir/server.log"; exit 1; }
    sleep 0.1
done

timeout 120 "$quiclab" client --insecure --output "$dir/out" --qlog-dir "$dir/qlog" \
    "https://127.0.0.1:$port/file.bin"

want=$(sha256sum <"$dir/www/file.bin")
got=$(sha256sum <"$dir/out/file.bin")
if [[ "$want" != "$got" ]]; then
    echo "FAIL: downloaded file differs (sha256 ${got%% *} != ${want%% *})"
    exit 1
fi
echo "OK: $size bytes, sha256 ${want%% *}"
# The server writes its qlog when the connection drains; give it a moment.
sleep 1
echo "qlog files (load them in qvis, https://qvis.quictools.info):"
ls -1 "$dir"/qlog/*.sqlog 2>/dev/null | sed 's/^/  /' || echo "  (none)"
echo "simulation results: $dir/sim/<scenario>/ (results.json, flows.csv, links.csv, goodput.csv)"
