#!/usr/bin/env bash
# Headless Chromium as a client of the plan (`[endpoints.stacks.chromium]`): forced onto
# QUIC for the origin (as tests/interop/browser.sh), trusting the run's ECDSA P-256
# cert.pem by its SPKI hash, it GETs https://localhost:PORT/SIZE over h3 with its NetLog
# on; chromium_netlog.py turns the NetLog into OUT_DIR/times.json (the lab's
# run/real/times.rs). Chromium writes no qlog: its `first_retransmit_ms` is from the
# emulator's capture (run/real/pcap.rs).
#   chromium_client.sh CERT HOST PORT SIZE OUT_DIR
set -euo pipefail
cert=$1; host=$2; port=$3; size=$4; out=$5
here=$(cd "$(dirname "$0")" && pwd)
spki=$(openssl x509 -in "$cert" -pubkey -noout | openssl pkey -pubin -outform der |
    openssl dgst -sha256 -binary | base64)
profile=$(mktemp -d "${TMPDIR:-/tmp}/iaf-chromium.XXXXXX")
trap 'rm -rf "$profile"' EXIT
# The server sends /SIZE without a content type, which Chromium would download
# (ERR_ABORTED, then a hang); as an image of a local page it is fetched and the page's
# load (which --dump-dom waits for) ends when the response has arrived.
echo "<img src=\"https://localhost:$port/$size\">" >"$profile/page.html"
chromium --headless=new --no-sandbox --disable-gpu --no-first-run \
    --disable-extensions --user-data-dir="$profile" --enable-quic \
    --origin-to-force-quic-on="localhost:$port" --ignore-certificate-errors-spki-list="$spki" \
    --host-resolver-rules="MAP localhost $host" --log-net-log="$out/netlog.json" \
    --net-log-capture-mode=Everything --dump-dom "file://$profile/page.html" \
    >"$out/dom.html" 2>"$out/chromium.log"
python3 "$here/chromium_netlog.py" "$out/netlog.json" --times "$out/times.json"
