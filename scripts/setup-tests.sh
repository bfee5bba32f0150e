#!/usr/bin/env bash
# Installs what scripts/test.sh needs, on a fresh Debian machine with Rust (rustup) and
# Python 3, and reuses what is already there (a second run takes about a second):
# - rustfmt and clippy (rustup components);
# - a project-local virtualenv .venv/ with tests/requirements.txt (aioquic for interop;
#   maturin, pytest, pandas, dask for the Python package) and the package itself (python/);
# - tshark (the pcap decryption test), gdb (scripts/ack_trace.py), curl and iproute2
#   (quiclab shell's tests), through apt-get
#   when running as root; otherwise it stops and names the command to run;
# - mdbook (the user guide, docs/book/), with cargo install, once;
# - quic-go-hq (tests/interop/quic-go/build.sh) with Go >= 1.26, which it does not
#   install (Debian's golang-go is older): without Go it stops and says so.
# Prints the venv's python on its last line (scripts/test.sh reads it).
#   scripts/setup-tests.sh [--no-package]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

say() { echo "setup: $*" >&2; }

as_root() {
    if [[ $(id -u) -eq 0 ]]; then
        "$@"
    else
        say "needs root for: $*"
        say "run it yourself (e.g. with sudo), then run scripts/test.sh again"
        exit 1
    fi
}

# apt's output goes to a log, shown only when it fails.
apt_log=$(mktemp "${TMPDIR:-/tmp}/quiclab-apt.XXXXXX")
apt_updated=0
apt_install() {
    if [[ $apt_updated -eq 0 ]]; then
        as_root apt-get update >"$apt_log" 2>&1 || { cat "$apt_log" >&2; exit 1; }
        apt_updated=1
    fi
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y "$@" >>"$apt_log" 2>&1 ||
        { cat "$apt_log" >&2; exit 1; }
}

if ! command -v cargo >/dev/null; then
    say "cargo not found: install Rust stable with rustup (https://rustup.rs)"
    exit 1
fi
if command -v rustup >/dev/null; then
    for component in rustfmt clippy; do
        if ! rustup component list --installed 2>/dev/null | grep -q "^$component"; then
            say "adding rustup component $component"
            rustup component add "$component" >&2
        fi
    done
fi

# cargo-fuzz for scripts/fuzz.sh, from the registry, when the nightly toolchain is there
# (without nightly the fuzz step is skipped, so it is not needed).
if cargo +nightly --version >/dev/null 2>&1 && ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    say "installing cargo-fuzz (fuzz targets)"
    cargo install cargo-fuzz --locked >&2 ||
        say "cargo-fuzz could not be installed: the fuzz step will say it is skipped"
fi

# The virtualenv: rebuilt when tests/requirements.txt changes (its copy is the stamp).
venv=.venv
stamp="$venv/.requirements.txt"
if ! cmp -s tests/requirements.txt "$stamp" 2>/dev/null || ! "$venv/bin/python" -c "" 2>/dev/null; then
    if ! python3 -m venv --help >/dev/null 2>&1 || ! python3 -c "import ensurepip" 2>/dev/null; then
        say "python3 cannot make virtualenvs; installing python3-venv"
        apt_install python3-venv
    fi
    say "creating $venv with tests/requirements.txt"
    rm -rf "$venv"
    python3 -m venv "$venv" >&2
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r tests/requirements.txt >&2
    cp tests/requirements.txt "$stamp"
fi

# The Python package (python/): scripts/build-python.sh, unless --no-package (scripts/test.sh
# builds it after the workspace's tests, so that it reuses their build of the stack).
if [[ ${1:-} != --no-package ]]; then
    # A failed build fails only the pytest step (its import), not every other test step.
    scripts/build-python.sh "$venv/bin/python" >&2 ||
        say "building the Python package failed (see above); its tests will fail"
fi

if ! command -v tshark >/dev/null; then
    say "installing tshark (pcap decryption test)"
    # Answer the setuid-dumpcap question up front so the install never prompts.
    echo "wireshark-common wireshark-common/install-setuid boolean false" | as_root debconf-set-selections
    apt_install tshark
fi

# curl and iproute2's ip: `quiclab shell`'s tests (crates/quiclab-cli/tests/shell.rs
# downloads with curl inside the shell, which sets itself up with ip) and
# experiments/linux-tcp (curl inside the shell against its python3 bulk server; `ss`
# and tc, also iproute2, read its socket state and qdiscs).
for tool in curl:curl ip:iproute2; do
    if ! command -v "${tool%%:*}" >/dev/null; then
        say "installing ${tool#*:} (quiclab shell tests)"
        apt_install "${tool#*:}"
    fi
done

if ! command -v gdb >/dev/null; then
    say "installing gdb (scripts/ack_trace.py follows one ACK through the core)"
    apt_install gdb
fi

# --- quic-go (tests/interop/quic-go/: the interop matrix's and instant-ack-foreign's second
# foreign stack), built with Go into target/quic-go/; the Go toolchain is not installed
# here (Debian's golang-go is older than quic-go needs), and the tests that use it fail
# without it after this setup, so a missing Go stops here ---
if ! tests/interop/quic-go/build.sh >/dev/null; then
    say "quic-go-hq not built (see above): install Go >= 1.26 (https://go.dev/dl; on PATH,"
    say "in /usr/local/go/bin, or GO=/path/to/go) and run scripts/test.sh again"
    exit 1
fi
# --- end quic-go ---

# --- mdBook (the user guide, docs/book/), from the registry into ~/.cargo/bin, once:
# the first install compiles it (11 min at nice 10 on the shared 2-core machine), later
# runs find it. The version is pinned so the rendered book does not change under us ---
mdbook_version=0.5.4
if [[ "$(mdbook --version 2>/dev/null)" != "mdbook v$mdbook_version" ]]; then
    say "installing mdbook $mdbook_version (the user guide; once, several minutes)"
    cargo install mdbook --version "$mdbook_version" --locked >&2
fi
# --- end mdBook ---

# --- HTTP/3 interop: ngtcp2's example h3 client and server (tests/interop/h3.sh; the client
# is also experiments/instant-ack-foreign's ngtcp2 stack) and
# Chromium (tests/interop/browser.sh), through apt-get as root like tshark ---
if ! command -v gtlsclient >/dev/null || ! command -v gtlsserver >/dev/null; then
    say "installing ngtcp2-client and ngtcp2-server (HTTP/3 interop)"
    apt_install ngtcp2-client ngtcp2-server
fi
if ! command -v chromium >/dev/null; then
    say "installing chromium (HTTP/3 browser test)"
    apt_install chromium
fi
# --- end HTTP/3 interop ---

echo "$PWD/$venv/bin/python"
