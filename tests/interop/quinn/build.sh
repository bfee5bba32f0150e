#!/usr/bin/env bash
# Builds quinn-hq (this crate, a workspace member) into <repo>/target/release/quinn-hq
# and prints that path on its last line: instant-ack-foreign's `requires` for its quinn
# client. When the binary is newer than this crate's sources and the lock it is used as
# it is, with no cargo run: under `cargo test --workspace` (scripts/test.sh) cargo has
# just built it, and a cargo started from inside a cargo test would wait for the build
# directory's lock. Otherwise `cargo build --release -p quiclab-interop-quinn`.
# Exits 3 when there is no cargo and no up-to-date binary.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
out="$repo/target/release/quinn-hq"

newer=""
if [[ -x $out ]]; then
    newer=$(find "$here/src" "$here/Cargo.toml" "$repo/Cargo.lock" -newer "$out" -print -quit)
fi
if [[ -x $out && -z $newer ]]; then
    echo "$out"
    exit 0
fi
cargo=$(command -v cargo || true)
if [[ -z $cargo && -x $HOME/.cargo/bin/cargo ]]; then cargo=$HOME/.cargo/bin/cargo; fi
if [[ -z $cargo ]]; then
    echo "quinn-hq: not built and no cargo to build it (install Rust with rustup)" >&2
    exit 3
fi
(cd "$repo" && "$cargo" build --release -p quiclab-interop-quinn --bin quinn-hq) >&2
echo "$out"
