#!/usr/bin/env bash
# Headless Chromium as a client of instant-ack-foreign's setup, outside the lab (it
# writes no qlog; its NetLog is read instead): `quiclab server` (IACK or WFC, Δt = 50 ms,
# the run's server config; its certificate is the run's own ECDSA P-256 cert.pem, which
# Chromium trusts by its SPKI hash, unpadded: Chromium offers no Ed25519, and
# --cert-padding pads only the server's own Ed25519 certificate) behind `quiclab emulate`
# (the run's scenario), Chromium forced onto QUIC for the origin (as tests/interop/browser.sh) GETs
# /10000 over h3 and logs its NetLog. Per run it prints the client's TTFB (first
# STREAM frame received on a request stream, from its first sent packet) and how many
# packets carried CRYPTO at offset 0 in the Initial space (2 or more = a ClientHello
# retransmission; the first PTO's value is in neither log unless it fires).
#   chromium.sh RUN_DIR REPS    (RUN_DIR: a quiclab-stack run directory of the plan,
#                                e.g. <out>/real/<key>, for its server.toml/scenario.toml)
set -euo pipefail
run=$1; reps=${2:-3}
repo=$(cd "$(dirname "$0")/../.." && pwd)
quiclab=${QUICLAB_BIN:-$repo/target/release/quiclab}
work=$(mktemp -d "${TMPDIR:-/tmp}/iaf-chromium.XXXXXX")
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
spki=$(openssl x509 -in "$run/cert.pem" -pubkey -noout | openssl pkey -pubin -outform der |
    openssl dgst -sha256 -binary | base64)
sport=$((30000 + $$ % 10000)); lport=$((sport + 1))
mkdir -p "$work/root"
"$quiclab" server --listen "127.0.0.1:$sport" --root "$work/root" --config "$run/server.toml" \
    --cert "$run/cert.pem" --key "$run/key.pem" \
    --qlog-dir "$work/qlog" >"$work/server.log" 2>&1 &
pids+=($!)
"$quiclab" emulate "$run/scenario.toml" --listen "127.0.0.1:$lport" \
    --upstream "127.0.0.1:$sport" --out "$work/emu" >"$work/emu.log" 2>&1 &
pids+=($!)
sleep 1
for i in $(seq "$reps"); do
    rm -rf "$work/profile"
    timeout 60 chromium --headless=new --no-sandbox --disable-gpu --no-first-run \
        --disable-extensions --user-data-dir="$work/profile" --enable-quic \
        --origin-to-force-quic-on="localhost:$lport" --ignore-certificate-errors-spki-list="$spki" \
        --host-resolver-rules="MAP localhost 127.0.0.1" --log-net-log="$work/net$i.json" \
        --net-log-capture-mode=Everything --dump-dom "https://localhost:$lport/10000" \
        >"$work/dom$i.html" 2>"$work/chromium$i.log" || true
    python3 "$(dirname "$0")/chromium_netlog.py" "$work/net$i.json"
done
echo "work dir: $work"
