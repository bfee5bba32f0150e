#!/bin/sh
# The TCP settings of the namespace this runs in (experiments/linux-tcp): one
# `key = value` line each, then the routes (initcwnd/initrwnd, when set, show there;
# unset = Linux's 10 segments) and the qdiscs (pacing needs fq: CUBIC is otherwise
# unpaced). Missing keys print as "unavailable".
for k in net.ipv4.tcp_congestion_control net.ipv4.tcp_available_congestion_control \
    net.ipv4.tcp_sack net.ipv4.tcp_timestamps net.ipv4.tcp_window_scaling \
    net.ipv4.tcp_slow_start_after_idle net.ipv4.tcp_rmem net.ipv4.tcp_wmem \
    net.ipv4.tcp_moderate_rcvbuf net.ipv4.tcp_adv_win_scale net.ipv4.tcp_no_metrics_save \
    net.ipv4.tcp_frto net.ipv4.tcp_recovery net.ipv4.tcp_ecn net.ipv4.tcp_early_retrans \
    net.ipv4.tcp_pacing_ss_ratio net.ipv4.tcp_pacing_ca_ratio net.ipv4.tcp_min_tso_segs \
    net.ipv4.tcp_rto_min_us net.ipv4.tcp_notsent_lowat \
    net.core.rmem_default net.core.rmem_max net.core.wmem_default net.core.wmem_max \
    net.core.default_qdisc; do
    f=/proc/sys/$(echo "$k" | tr . /)
    if [ -r "$f" ]; then v=$(tr '\t' ' ' < "$f"); else v=unavailable; fi
    echo "$k = $v"
done
echo "kernel = $(uname -r)"
echo "# ip route"
ip route 2>&1
echo "# tc qdisc"
tc qdisc show 2>&1 || echo "tc unavailable"
