#!/usr/bin/env bash
# A real browser over HTTP/3: starts `quiclab server` with a certificate, loads a page
# with several objects (CSS, JS, images, a fetch()) in headless Chromium forced onto
# QUIC for that origin (--origin-to-force-quic-on) and trusting the certificate by its
# SPKI hash (--ignore-certificate-errors-spki-list), then checks from the server's
# HTTP/3 qlog that every object was requested over h3, and from the DOM that the page's
# script ran with all objects loaded. There is no TCP server at all: a load can only
# succeed over QUIC. Keeps a screenshot (browser.png) in the work dir, or in $OUT.
# Env: KEEP=1 keeps the work dir, CHROMIUM (default: chromium), OUT (screenshot dir).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
py=${PYTHON:-python3}
chromium=${CHROMIUM:-chromium}
work=$(mktemp -d "${TMPDIR:-/tmp}/quiclab-browser.XXXXXX")
pid=
fail() {
    echo "FAIL browser: $*"
    KEEP=1
    exit 1
}
cleanup() {
    [[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    if [[ "${KEEP:-0}" == 1 ]]; then echo "work dir kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

command -v "$chromium" >/dev/null || fail "$chromium not installed (Debian package chromium)"
# QUICLAB_BIN: a built binary to use as it is (scripts/test.sh; see common.sh).
if [[ -n ${QUICLAB_BIN:-} ]]; then
    quiclab=$QUICLAB_BIN
else
    (cd "$repo" && cargo build --release -q -p quiclab-cli) || fail "build"
    quiclab="$repo/target/release/quiclab"
fi

www="$work/www"
mkdir -p "$www" "$work/qlog"
objects=(style.css app.js a.svg b.svg c.svg data.txt)
cat >"$www/index.html" <<'HTML'
<!doctype html>
<html><head><meta charset="utf-8"><title>quiclab h3</title>
<link rel="stylesheet" href="/style.css"><script src="/app.js" defer></script></head>
<body><h1>quiclab over HTTP/3</h1>
<img src="/a.svg" width="100"><img src="/b.svg" width="100"><img src="/c.svg" width="100">
<p id="status">loading</p></body></html>
HTML
echo 'body { font-family: sans-serif; background: #eef; } h1 { color: #226; }' >"$www/style.css"
cat >"$www/app.js" <<'JS'
window.addEventListener('load', async () => {
  const imgs = [...document.images].filter(i => i.complete && i.naturalWidth > 0).length;
  const text = await (await fetch('/data.txt')).text();
  document.getElementById('status').textContent = `loaded ${imgs} images, data ${text.length} bytes`;
});
JS
for n in a b c; do
    printf '<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"><circle cx="50" cy="50" r="40" fill="#%s"/></svg>\n' \
        "$([[ $n == a ]] && echo c33 || ([[ $n == b ]] && echo 3c3 || echo 33c))" >"$www/$n.svg"
done
head -c 5000 /dev/zero | tr '\0' 'x' >"$www/data.txt"

"$py" "$here/make_cert.py" "$work/cert.pem" "$work/key.pem" || fail "cert"
spki=$(openssl x509 -in "$work/cert.pem" -pubkey -noout | openssl pkey -pubin -outform der |
    openssl dgst -sha256 -binary | base64)
port=$((30000 + ($$ % 20000)))
"$quiclab" server --listen "127.0.0.1:$port" --root "$www" --cert "$work/cert.pem" \
    --key "$work/key.pem" --qlog-dir "$work/qlog" --seed 1 >"$work/server.log" 2>&1 &
pid=$!
for _ in $(seq 50); do grep -qs "server on" "$work/server.log" && break; sleep 0.1; done

flags=(--headless=new --no-sandbox --disable-gpu --no-first-run --disable-extensions
    --user-data-dir="$work/profile" --enable-quic --origin-to-force-quic-on="localhost:$port"
    --ignore-certificate-errors-spki-list="$spki" --virtual-time-budget=5000
    --host-resolver-rules="MAP localhost 127.0.0.1")
url="https://localhost:$port/index.html"
timeout 60 "$chromium" "${flags[@]}" --dump-dom "$url" >"$work/dom.html" 2>"$work/chromium.log"
timeout 60 "$chromium" "${flags[@]}" --window-size=800,600 --screenshot="$work/browser.png" "$url" \
    >>"$work/chromium.log" 2>&1
if [[ -n ${OUT:-} ]]; then mkdir -p "$OUT" && cp "$work/browser.png" "$OUT/"; fi

grep -q 'loaded 3 images, data 5000 bytes' "$work/dom.html" ||
    fail "page script did not see every object; DOM: $(grep -o '<p id="status">[^<]*' "$work/dom.html")"
[[ -s "$work/browser.png" ]] || fail "no screenshot"

# Every object, and the page, requested over h3 (parsed by the server's HTTP/3 layer).
kill "$pid" && wait "$pid" 2>/dev/null
pid=
h3paths=$(cat "$work"/qlog/*_server_h3.sqlog 2>/dev/null | grep '"http:frame_parsed"' |
    grep -o '"name":":path","value":"[^"]*"' | sed 's/.*"value":"//; s/"$//' | sort -u)
for p in /index.html "${objects[@]/#//}"; do
    grep -qx "$p" <<<"$h3paths" || fail "$p not requested over h3 (h3 requests: $(echo $h3paths))"
done
quic=$(ls "$work"/qlog/*_server.sqlog | wc -l)
h3=$(ls "$work"/qlog/*_server_h3.sqlog | wc -l)
[[ $quic == "$h3" ]] || fail "$quic QUIC connections but $h3 HTTP/3 ones (some not h3)"
hq=$(grep -c '^  [0-9]*: GET' "$work/server.log")
[[ $hq == 0 ]] || fail "$hq hq-interop requests"
echo "PASS browser: $(grep -c 'h3 GET' "$work/server.log") requests over h3 on $h3 connection(s)," \
    "page complete; screenshot ${OUT:-$work}/browser.png"
KEEP=${KEEP:-0}
