#!/bin/sh
# experiments/linux-tcp can run here: root (quiclab shell's namespaces and TUN
# devices), iproute2, curl, python3 and Linux's CUBIC.
set -e
[ "$(id -u)" = 0 ] || { echo "not root: quiclab shell needs root" >&2; exit 1; }
command -v ip >/dev/null || { echo "no ip (iproute2)" >&2; exit 1; }
command -v curl >/dev/null || { echo "no curl" >&2; exit 1; }
command -v python3 >/dev/null || { echo "no python3" >&2; exit 1; }
grep -qw cubic /proc/sys/net/ipv4/tcp_available_congestion_control ||
    modprobe tcp_cubic 2>/dev/null ||
    { echo "Linux CUBIC (tcp_cubic) is not available" >&2; exit 1; }
