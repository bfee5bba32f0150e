#!/usr/bin/env bash
# Fails when python/Cargo.toml's `workspace-features` misses a dependency feature that
# `cargo test --workspace` resolves: the Python package's build (scripts/build-python.sh,
# run after the tests) would then compile the whole stack a second time (~5 min of CI).
# Prints the lines to add, as python/Cargo.toml explains.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
tree() { cargo tree -q "$@" -f '{p} [{f}]' --prefix none | sort -u; }
missing=$(comm -13 <(tree --workspace -e normal,build,dev) \
    <(tree -p quiclab-python --features workspace-features -e normal,build) |
    grep -v '^quiclab-python ' || true)
if [[ -n $missing ]]; then
    echo "python/Cargo.toml workspace-features: these dependency features differ from the workspace tests' build:"
    echo "$missing" | sed 's/^/    /'
    exit 1
fi
echo "check_python_features: the Python package reuses the workspace tests' build"
