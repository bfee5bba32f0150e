//! A [`Calibration`] as a host profile (the keys of `quiclab_sim::host::HostConfig`,
//! loaded by `host = { profile = "FILE" }`) with a header saying where every number
//! comes from, and the timerfd wake-up samples as an empirical latency file next to it.

use super::wakeup::quantile;
use super::Calibration;
use std::fmt::Write;

/// Who, where and how the profile was made (the header's first lines).
pub struct Provenance {
    /// `quiclab calibrate ...` as run.
    pub command: String,
    /// UTC date and time.
    pub date: String,
}

/// The machine: host name, CPU model, online CPUs, kernel (best effort, from /proc).
pub fn machine() -> String {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let cpu = read("/proc/cpuinfo")
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map_or_else(|| "unknown CPU".to_string(), |s| s.trim().to_string());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let kernel = read("/proc/sys/kernel/osrelease").trim().to_string();
    let host = read("/proc/sys/kernel/hostname").trim().to_string();
    format!("{host}: {cpu}, {cores} CPUs available, Linux {kernel}")
}

/// Non-negative, in the unit of a key (a negative fit is noise: 0, and said so).
fn key(v: f64) -> (f64, bool) {
    if v.is_finite() && v >= 0.0 {
        (v, false)
    } else {
        (0.0, true)
    }
}

/// The profile's text; `wake_file` is the samples file's name, relative to the profile.
pub fn profile_toml(c: &Calibration, p: &Provenance, wake_file: &str) -> String {
    let crypto = c.crypto.per_byte_ns();
    let (recv, recv_neg) = key(c.fit.recv_ns / 1e3);
    let (send, send_neg) = key(c.fit.send_ns / 1e3);
    let (per_byte, pb_neg) = key(c.fit.per_byte_ns - crypto);
    let o = &c.options;
    let t = &c.wake.timerfd_us;
    let pl = &c.wake.poll_us;
    let q = |v: &[f64], x| quantile(v, x);
    let mut s = String::new();
    let mut w = |line: String| {
        let _ = writeln!(s, "{line}");
    };
    w("# Host profile of this machine's quiclab endpoint, written by `quiclab calibrate`".into());
    w(format!("# Machine: {}", machine()));
    w(format!("# Date: {} (UTC)", p.date));
    w(format!("# Command: {}", p.command));
    w(format!(
        "# Measuring threads' class: {} (the lab's real endpoints run in FIFO where permitted).",
        c.sched
    ));
    w("#".into());
    w(format!(
        "# CPU per datagram: bulk downloads over loopback UDP ({} x {} bytes per datagram size,",
        o.repetitions, o.transfer_bytes
    ));
    w(
        "# quiclab's server and client in-process, GSO on, PMTU discovery off), each thread's CPU"
            .into(),
    );
    w(
        "# time (CLOCK_THREAD_CPUTIME_ID, not wall time) less a 1-byte fetch's (handshake, setup)."
            .into(),
    );
    w("# Least squares over both sides and both sizes (1200 and 1452 bytes):".into());
    w(
        "#   CPU = send x datagrams sent + recv x datagrams received + per-byte x bytes each way"
            .into(),
    );
    w(format!(
        "#   send {:.0} ns, recv {:.0} ns per datagram, {:.3} ns per byte.",
        c.fit.send_ns, c.fit.recv_ns, c.fit.per_byte_ns
    ));
    for (size, base, pairs) in &c.runs {
        for (srv, cli) in pairs {
            let (s, k) = (srv, cli);
            w(format!(
                "#   {size} B: server {:.1} ms CPU, {:.0} sent / {:.0} received; client {:.1} ms, {:.0} / {:.0} (baseline {:.1} / {:.1} ms)",
                s.cpu_ns / 1e6, s.sent, s.received, k.cpu_ns / 1e6, k.sent, k.received,
                base.0.cpu_ns / 1e6, base.1.cpu_ns / 1e6
            ));
        }
    }
    w(
        "# The send cost is per datagram (the sender's share of each GSO sendmsg, its framing and"
            .into(),
    );
    w(
        "# packet work), so gso_segments is left out: with it the model would charge send_cost_us"
            .into(),
    );
    w("# once per batch.".into());
    if recv_neg || send_neg || pb_neg {
        w(
            "# A fitted value came out negative (noise on a loaded machine) and is written as 0."
                .into(),
        );
    }
    w(format!("recv_cost_us = {recv:.3}"));
    w(format!("send_cost_us = {send:.3}"));
    w("#".into());
    w(format!(
        "# AEAD alone (quiclab-proto's seal and open, AES-128-GCM, {} per size in 5 rounds, the fastest kept, thread CPU time):",
        o.crypto_iters
    ));
    w(format!(
        "#   seal {:.0} / {:.0} / {:.0} ns, open {:.0} / {:.0} / {:.0} ns at {} / 1200 / 1452 bytes:",
        c.crypto.small_ns.0,
        c.crypto.seal_ns.0,
        c.crypto.seal_ns.1,
        c.crypto.small_ns.1,
        c.crypto.open_ns.0,
        c.crypto.open_ns.1,
        super::crypto::SLOPE_FROM
    ));
    w(format!(
        "#   {crypto:.3} ns per byte (the slope from {} to 1452 bytes).",
        super::crypto::SLOPE_FROM
    ));
    w("# per_byte_ns is the transfers' per-byte cost less this share.".into());
    w(format!("crypto_per_byte_ns = {crypto:.3}"));
    w(format!("per_byte_ns = {per_byte:.3}"));
    w("#".into());
    w(format!(
        "# Wake-up lateness (wall clock, {} waits of {} us each in a mio poll, as the driver waits):",
        o.wake_samples,
        c.wake.wait.as_micros()
    ));
    w(format!(
        "#   timerfd (the driver's default under 5 ms): p50 {:.1} us, p90 {:.1}, p99 {:.1}, max {:.1}",
        q(t, 0.5), q(t, 0.9), q(t, 0.99), q(t, 1.0)
    ));
    w(format!(
        "#   poll timeout (--wake poll; epoll rounds up to whole ms): p50 {:.1} us, p99 {:.1}, max {:.1}",
        q(pl, 0.5), q(pl, 0.99), q(pl, 1.0)
    ));
    w("# The timerfd samples are the empirical distribution the model draws from.".into());
    w(format!(
        "wakeup_latency = {{ dist = \"empirical\", file = \"{wake_file}\" }}"
    ));
    w("#".into());
    w(format!(
        "# GSO: the senders sent {:.1} datagrams per sendmsg on average in these transfers",
        c.gso_mean()
    ));
    w("# (unpaced loopback; paced at a link rate, bursts are ~1 ms of the pacing rate).".into());
    w(
        "# Socket buffers are left unbounded: the driver grows them from its windows (monitor.rs)."
            .into(),
    );
    s
}

/// The timerfd samples, one µs value a line, with a header.
pub fn wake_samples(c: &Calibration, p: &Provenance) -> String {
    let mut s = format!(
        "# Timer wake-up lateness, us: {} timerfd waits of {} us in a mio poll.\n# {}; {}; `{}`\n",
        c.wake.timerfd_us.len(),
        c.wake.wait.as_micros(),
        machine(),
        p.date,
        p.command
    );
    for v in &c.wake.timerfd_us {
        let _ = writeln!(s, "{v:.1}");
    }
    s
}
