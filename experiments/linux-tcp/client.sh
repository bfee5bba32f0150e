#!/bin/sh
# experiments/linux-tcp's client, run by the lab inside `quiclab shell` (emulator =
# "shell"): records the namespace's TCP settings (the receiver's side: rmem, window
# scaling, SACK, timestamps) in OUT/sysctls-client.txt, then GETs SIZE bytes over
# HTTP/1.1 from the bulk server on the host ($QUICLAB_SHELL_BASE:PORT) with curl, whose
# times go to OUT/times.json (the lab's run/real/times.rs reads them).
# Usage: client.sh PLAN_DIR PORT SIZE OUT
set -eu
plan_dir=$1 port=$2 size=$3 out=$4
sh "$plan_dir/sysctls.sh" > "$out/sysctls-client.txt"
curl -sS --fail -o /dev/null -w "@$plan_dir/curl_times.json" \
    "http://$QUICLAB_SHELL_BASE:$port/$size" > "$out/times.json"
