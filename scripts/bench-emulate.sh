#!/usr/bin/env bash
# Real-time link emulator accuracy (issue 14): one-way delay error (actual arrival minus
# the link model's due time for the actual send times, p50/p99/p999) and throughput
# through `quiclab emulate` on loopback at 10, 100, 500 and 1000 Mbit/s, at 50% and 120%
# load (RATES=10,100 for a quicker run).
# Usage: [RATES=...] scripts/bench-emulate.sh [SECONDS_PER_PHASE] [-- EMULATOR FLAGS]
# Run under `chrt -f 10` when permitted, so the emulator starts in the FIFO class; the
# bench's sender and receiver put themselves in the normal class (arrivals are the
# kernel's receive timestamps; see crates/quiclab-bench-udp/src/emulate.rs).
# Figures go to docs/PERFORMANCE.md. Not part of scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-2}
shift || true
cargo build --release -q -p quiclab-cli -p quiclab-bench-udp
run=(target/release/bench-udp emulate --quiclab target/release/quiclab --rates "${RATES:-10,100,500,1000}" --secs "$secs" "$@")
if chrt -f 10 true 2>/dev/null; then
  chrt -f 10 "${run[@]}"
else
  "${run[@]}"
fi
