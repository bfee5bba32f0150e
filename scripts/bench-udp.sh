#!/usr/bin/env bash
# Real-UDP benchmarks (issue 13), every stack side by side in one invocation:
#   bulk        100 MB over loopback, one connection: quiclab vs quinn vs rustls/TCP
#               (wall time, CPU per GB of client and server)
#   handshakes  1,000 concurrent connections: quiclab vs quinn (handshakes per
#               server CPU-second, i.e. per core); quiclab's server and client with
#               --tls-random os, and seeded interleaved (BENCH_TLS_RANDOM=seeded:
#               seeded only)
#   idle        server RSS per idle connection (10,000 connections held open)
#   gaps        pacing accuracy: departures of paced transfers at 50/200/500 Mbit/s
#               against the sender's pacer, --wake timerfd and poll, 1 ms and fixed
#               10-datagram bursts, server in the normal and the FIFO class (REPS is
#               ignored: each case runs once, 2 s)
# Usage: scripts/bench-udp.sh [bulk|handshakes|idle|gaps|all] [REPS]   (default: all 5)
# Figures go to docs/PERFORMANCE.md with this command. Not part of scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
reps=${2:-5}
cargo build --release -q -p quiclab-cli -p quiclab-bench-udp
bench=target/release/bench-udp
quiclab=target/release/quiclab
case "$what" in
bulk | all) "$bench" bulk --quiclab "$quiclab" --bytes 100000000 --reps "$reps" ;;&
handshakes | all) "$bench" handshakes --quiclab "$quiclab" --connections 1000 --reps "$reps" ;;&
idle | all) "$bench" idle --quiclab "$quiclab" --connections 10000 --reps 1 ;;&
gaps | all) "$bench" gaps --quiclab "$quiclab" --rates 50,200,500 --secs 2 ;;&
bulk | handshakes | idle | gaps | all) ;;
*) echo "usage: $0 [bulk|handshakes|idle|gaps|all] [REPS]" >&2; exit 2 ;;
esac
