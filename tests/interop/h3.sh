#!/usr/bin/env bash
# HTTP/3 interop: quiclab against aioquic's HTTP/3 (aioquic.h3) and ngtcp2's example
# h3 client and server (Debian ngtcp2-client / ngtcp2-server: gtlsclient, gtlsserver),
# in both directions, plus quiclab against itself. Each case fetches a 1 MB and a 10 MB
# random file and four more files concurrently over one connection (and /N generated
# bytes where the server supports it), all checked byte-exact (sha256), and quiclab's
# HTTP/3 qlog shows every request of a case with a quiclab end (its client created, its
# server parsed one request HEADERS frame per URL: none went over hq-interop). Prints a
# client x server matrix, then "N passed, M failed"; exits non-zero on any failure.
# Env: PYTHON (default python3, needs aioquic), KEEP=1 keeps the work dir,
# CASE_TIMEOUT (s, default 120).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=tests/interop/common.sh
source "$here/common.sh"
py=${PYTHON:-python3}
case_timeout=${CASE_TIMEOUT:-120}
work=$(mktemp -d "${TMPDIR:-/tmp}/quiclab-h3.XXXXXX")
pids=()
passed=0
failed=0
declare -A matrix

trap interop_cleanup EXIT
trap 'exit 130' INT TERM

build_quiclab

www="$work/www"
mkdir -p "$www" "$work/qlog"
head -c 1048576 /dev/urandom >"$www/1mb.bin"
head -c 10485760 /dev/urandom >"$www/10mb.bin"
for i in 1 2 3 4; do head -c $((50000 * i + 7)) /dev/urandom >"$www/c$i.bin"; done
# The expected body of /300000 (byte i = i mod 251).
"$py" -c 'import sys; sys.stdout.buffer.write((bytes(range(251)) * 1200)[:300000])' >"$work/gen300000"
"$py" "$here/make_cert.py" "$work/cert.pem" "$work/key.pem" || { echo "FAIL cert"; exit 1; }
files=(1mb.bin 10mb.bin c1.bin c2.bin c3.bin c4.bin)

base=$((20000 + ($$ % 20000)))
declare -A port=([aioquic]=$base [ngtcp2]=$((base + 1)) [quiclab]=$((base + 2)))


have_ngtcp2=1
if ! command -v gtlsclient >/dev/null || ! command -v gtlsserver >/dev/null; then
    echo "ngtcp2 (gtlsclient/gtlsserver) not installed: scripts/setup-tests.sh installs them as root"
    have_ngtcp2=0
fi

start_server "aioquic h3 server" "$work/aioquic_server.log" "listening" \
    "$py" "$here/aioquic_h3_server.py" --host 127.0.0.1 --port "${port[aioquic]}" \
    --root "$www" --cert "$work/cert.pem" --key "$work/key.pem" || failed=$((failed + 1))
if [[ $have_ngtcp2 == 1 ]]; then
    # gtlsserver prints nothing when ready; give it a moment.
    gtlsserver -q -d "$www" 127.0.0.1 "${port[ngtcp2]}" "$work/key.pem" "$work/cert.pem" \
        >"$work/ngtcp2_server.log" 2>&1 &
    pids+=($!)
    sleep 0.5
fi
start_server "quiclab server" "$work/quiclab_server.log" "server on" \
    "$quiclab" server --listen "127.0.0.1:${port[quiclab]}" --root "$www" \
    --cert "$work/cert.pem" --key "$work/key.pem" --qlog-dir "$work/qlog" --seed 1 ||
    failed=$((failed + 1))

# Request HEADERS frames in quiclab's HTTP/3 qlog files of SIDE: created by its client,
# parsed by its server.
h3_requests() { # side
    local event=http:frame_created
    [[ $1 == server ]] && event=http:frame_parsed
    cat "$work"/qlog/*_"$1"_h3.sqlog 2>/dev/null | grep -c "\"$event\".*\"frame_type\":\"headers\""
}

# Every request of a case with a quiclab end came over HTTP/3: as many request heads in
# that end's HTTP/3 qlog as the case made requests (a server writes its qlog when the
# connection ends, after its draining period: waits up to 5 s for it).
all_over_h3() { # side before n
    local side=$1 want=$(($2 + $3)) got
    for _ in $(seq 50); do
        got=$(h3_requests "$side")
        [[ $got -ge $want ]] && break
        sleep 0.1
    done
    [[ $got == "$want" ]] && return 0
    echo "quiclab $side's HTTP/3 qlog has $((got - $2)) request heads for $3 requests"
    return 1
}

# run_case CLIENT SERVER: fetches all files (and /300000 from servers that generate it)
# over one connection and checks every body, and that every request went over h3.
run_case() {
    local client=$1 server=$2
    local out="$work/out-$client-$server" log="$work/$client-$server.log"
    local p=${port[$server]} urls=() f
    for f in "${files[@]}"; do urls+=("https://127.0.0.1:$p/$f"); done
    [[ $server != ngtcp2 ]] && urls+=("https://127.0.0.1:$p/300000")
    mkdir -p "$out"
    local start end ok=1 secs h3c h3s why=""
    h3c=$(h3_requests client)
    h3s=$(h3_requests server)
    start=$(date +%s.%N)
    case $client in
        quiclab) timeout "$case_timeout" "$quiclab" client --alpn h3 --ca "$work/cert.pem" \
            --output "$out" --qlog-dir "$work/qlog" "${urls[@]}" >"$log" 2>&1 || ok=0 ;;
        aioquic) timeout "$case_timeout" "$py" "$here/aioquic_h3_client.py" --output "$out" \
            "${urls[@]}" >"$log" 2>&1 || ok=0 ;;
        ngtcp2) timeout "$case_timeout" gtlsclient -q --exit-on-all-streams-close \
            --download "$out" 127.0.0.1 "$p" "${urls[@]}" >"$log" 2>&1 || ok=0 ;;
    esac
    end=$(date +%s.%N)
    secs=$(awk "BEGIN { printf \"%.2f\", $end - $start }")
    local bad=()
    for f in "${files[@]}"; do
        if [[ ! -f "$out/$f" ]] || [[ $(sha256sum <"$out/$f") != $(sha256sum <"$www/$f") ]]; then
            bad+=("$f")
        fi
    done
    if [[ $server != ngtcp2 ]] && ! cmp -s "$out/300000" "$work/gen300000"; then bad+=(300000); fi
    if [[ $client == quiclab ]]; then why+=$(all_over_h3 client "$h3c" ${#urls[@]}) || ok=0; fi
    if [[ $server == quiclab ]]; then why+=$(all_over_h3 server "$h3s" ${#urls[@]}) || ok=0; fi
    if [[ $ok == 1 && ${#bad[@]} == 0 ]]; then
        echo "PASS $client client <- $server server (${#urls[@]} concurrent requests, ${secs} s)"
        passed=$((passed + 1))
        matrix[$client,$server]=PASS
    else
        echo "FAIL $client client <- $server server (${secs} s; bad: ${bad[*]:-none}${why:+; $why}); log $log:"
        tail -15 "$log" | sed 's/^/    /'
        failed=$((failed + 1))
        matrix[$client,$server]=FAIL
    fi
}

run_case quiclab aioquic
run_case aioquic quiclab
if [[ $have_ngtcp2 == 1 ]]; then
    run_case quiclab ngtcp2
    run_case ngtcp2 quiclab
else
    failed=$((failed + 2))
    matrix[quiclab,ngtcp2]=MISSING
    matrix[ngtcp2,quiclab]=MISSING
fi
run_case quiclab quiclab

echo
echo "h3 interop matrix (rows: client, columns: server)"
printf '%-10s' ""
for s in aioquic ngtcp2 quiclab; do printf '%-10s' "$s"; done
echo
for c in quiclab aioquic ngtcp2; do
    printf '%-10s' "$c"
    for s in aioquic ngtcp2 quiclab; do printf '%-10s' "${matrix[$c,$s]:--}"; done
    echo
done
echo "$passed passed, $failed failed"
[[ $failed == 0 ]]
