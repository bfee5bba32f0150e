#!/usr/bin/env bash
# Real-time link emulator accuracy (issue 14): one-way delay error (actual arrival minus
# the link model's due time for the actual send times, p50/p99) and throughput through
# `quiclab emulate` on loopback at 10, 100 and 500 Mbit/s, at 50% and 120% load.
# Usage: scripts/bench-emulate.sh [SECONDS_PER_PHASE] [-- EMULATOR FLAGS]
# Run under `chrt -f 10` when permitted: the bench's receiving thread then raises itself
# to FIFO 30 (above the emulator's 20) and its sender drops to the normal class (see
# crates/quiclab-bench-udp/src/emulate.rs); without it a loaded machine's wake-up latency
# dominates.
# Figures go to docs/PERFORMANCE.md. Not part of scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-2}
shift || true
cargo build --release -q -p quiclab-cli -p quiclab-bench-udp
run=(target/release/bench-udp emulate --quiclab target/release/quiclab --rates 10,100,500 --secs "$secs" "$@")
if chrt -f 10 true 2>/dev/null; then
  chrt -f 10 "${run[@]}"
else
  "${run[@]}"
fi
