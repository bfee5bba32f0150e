#!/usr/bin/env bash
# Builds quic-go-hq (this directory: an hq-interop client and server on quic-go, pinned
# by go.mod/go.sum) into <repo>/target/quic-go/quic-go-hq and prints that path on its
# last line. `go build` rebuilds only what changed (about a second when up to date);
# the first build fetches the modules through the Go module proxy (GOPROXY).
# Exits 3 with a message when there is no Go toolchain ($GO if set, else `go` on PATH
# or /usr/local/go/bin/go): callers skip quic-go then, or fail under CI.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
out="$repo/target/quic-go/quic-go-hq"

if [[ -n ${GO+set} ]]; then
    go=$(command -v "$GO" || true)
else
    go=$(command -v go || true)
    if [[ -z $go && -x /usr/local/go/bin/go ]]; then go=/usr/local/go/bin/go; fi
fi
if [[ -z $go ]]; then
    echo "quic-go-hq: no Go toolchain (go on PATH or /usr/local/go/bin/go); install Go >= 1.26 (https://go.dev/dl)" >&2
    exit 3
fi
mkdir -p "$(dirname "$out")"
(cd "$here" && GOFLAGS=-buildvcs=false "$go" build -trimpath -o "$out" .) >&2
echo "$out"
