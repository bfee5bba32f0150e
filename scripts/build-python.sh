#!/usr/bin/env bash
# Builds the Python package quiclab (python/, docs/PYTHON.md) with maturin into target/
# and installs it into the venv of PYTHON (scripts/setup-tests.sh made it, with maturin),
# only when its sources changed: the stamp beside the venv is a hash of python/, the
# crates' sources and the Cargo files. maturin compiles pyo3 and the extension crate,
# and the rest of the stack only when target/ lacks a build with the same features;
# scripts/test.sh runs it after `cargo test --workspace --release` with
# MATURIN_PEP517_ARGS="--features workspace-features" (python/Cargo.toml) so that the
# tests' build is that build. Exits non-zero when the build fails.
#
#   scripts/build-python.sh PYTHON
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
python=${1:?usage: scripts/build-python.sh PYTHON, the python of a venv}
venv_bin=$(cd "$(dirname "$python")" && pwd)

stamp="$venv_bin/../.quiclab-python.sha256"
hash=$(find python crates/*/src crates/*/Cargo.toml Cargo.toml Cargo.lock -type f \
        \( -name '*.rs' -o -name '*.py' -o -name '*.toml' -o -name Cargo.lock \) \
        -not -path '*/__pycache__/*' -not -path 'python/build/*' -print0 |
    LC_ALL=C sort -z | xargs -0 cat | sha256sum | cut -d' ' -f1)
if [[ "$(cat "$stamp" 2>/dev/null)" == "$hash" ]] && "$python" -c "import quiclab" 2>/dev/null; then
    exit 0
fi
echo "build-python: building and installing the Python package (python/) for $python"
if PATH="$venv_bin:$PATH" "$python" -m pip install --quiet --disable-pip-version-check \
    --no-build-isolation --no-deps --force-reinstall ./python; then
    echo "$hash" >"$stamp"
else
    echo "build-python: building the Python package failed (see above)"
    exit 1
fi
