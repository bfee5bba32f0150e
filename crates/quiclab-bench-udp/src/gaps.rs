//! `bench-udp gaps`: how accurately the real-UDP driver keeps the pacer's schedule
//! (issue 13). A `quiclab server` sends a bulk transfer at a set rate (`congestion_control
//! = { algorithm = "fixed", pacing_rate_mbps = R }`: a constant window and rate, so the
//! schedule is known) through a relay ([`crate::stamp`]) that records each datagram's
//! departure (the kernel's loopback timestamp) to a `quiclab client`.
//!
//! The schedule is the sender's own pacer (`quiclab_proto::Pacer`, the same
//! code and burst setting) replayed on the actual departures: after each burst the
//! replayed pacer says when the next datagram was allowed to leave; the gap error of
//! the next burst is its actual gap minus that scheduled gap (= how late it left). A
//! burst is a run of datagrams less than a quarter of one datagram's time at the rate
//! apart (a GSO batch arrives with one timestamp).

use crate::stamp::{Capture, Departure, Relay};
use anyhow::{bail, Context, Result};
use quiclab_link::quantile::percentile;
use quiclab_proto::{Instant as PInstant, Pacer, PacingRate};
use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// Datagrams at most this long are taken as ACK-only (they spend no pacing tokens).
const ACK_ONLY_MAX: usize = 200;
/// The window: large enough that a loopback transfer at these rates is never
/// window-limited (4,000 x 1200 bytes = 4.8 MB: 1 Gbit/s for 38 ms).
const WINDOW_PACKETS: u64 = 4000;

/// One configuration's measurement.
pub struct Case {
    pub rate_mbps: f64,
    pub wake: String,
    /// `--pacing-burst-us` (0: fixed 10-datagram bursts).
    pub burst_us: u64,
    /// The server (the paced sender) in the real-time FIFO class: its wake-ups then do
    /// not wait behind other processes for a CPU, which separates the timer's own
    /// accuracy from the machine's load.
    pub fifo: bool,
}

/// The FIFO priority of the server with `Case::fifo` (as the lab's real endpoints).
const FIFO_PRIORITY: i32 = 10;

/// What one run gave.
pub struct Figures {
    pub datagrams: usize,
    pub bursts: usize,
    /// Datagrams per burst: p50, p99, max.
    pub burst_p50: f64,
    pub burst_p99: f64,
    pub burst_max: usize,
    /// Actual gap minus scheduled gap, µs: p50, p99.
    pub err_p50_us: f64,
    pub err_p99_us: f64,
    pub achieved_mbps: f64,
    pub relay_drops: u32,
    /// The server's SO_TXTIME report line.
    pub txtime: String,
}

/// The sender's pacer as configured for `case` (the CLI's `--pacing-burst-us`).
fn pacer(case: &Case, mds: u64) -> Pacer {
    match case.burst_us {
        0 => Pacer::new(mds),
        us => Pacer::with_burst_interval(mds, Duration::from_micros(us)),
    }
}

/// Gap errors (ns) and burst sizes (datagrams) of the departures in `[from, to)` ns,
/// replaying the whole transfer through the pacer so its tokens are right.
pub fn analyse(case: &Case, deps: &[Departure], window: (u64, u64)) -> (Vec<f64>, Vec<usize>) {
    let rate_bps = (case.rate_mbps * 1e6 / 8.0).round() as u64;
    let rate = PacingRate::from_bytes_per_sec(rate_bps);
    let data: Vec<&Departure> = deps.iter().filter(|d| d.len > ACK_ONLY_MAX).collect();
    let Some(first) = data.first() else {
        return (vec![], vec![]);
    };
    let mds = data.iter().map(|d| d.len).max().unwrap_or(1200) as u64;
    let per_datagram_ns = mds as f64 * 1e9 / rate_bps as f64;
    let split_ns = (per_datagram_ns / 4.0) as u64;
    let mut p = pacer(case, mds);
    let at = |d: &Departure| PInstant::from_nanos(d.ns - first.ns);
    let (mut errors, mut sizes) = (vec![], vec![]);
    // The previous datagram's departure, ns.
    let mut prev: Option<u64> = None;
    let mut size = 0usize;
    for d in &data {
        let now = at(d);
        let new_burst = prev.is_none_or(|ns| d.ns - ns > split_ns);
        if new_burst {
            if let Some(ns) = prev {
                let last = PInstant::from_nanos(ns - first.ns);
                // When the pacer let the next datagram go, as of the last departure.
                let due = p.next_send_time(last, mds, rate).unwrap_or(last);
                if (window.0..window.1).contains(&d.ns) {
                    errors.push(now.as_nanos() as f64 - due.as_nanos() as f64);
                    sizes.push(size);
                }
            }
            size = 0;
        }
        size += 1;
        p.on_sent(now, d.len as u64, rate);
        prev = Some(d.ns);
    }
    (errors, sizes)
}

/// The figures of one capture.
fn figures(case: &Case, cap: &Capture, txtime: String) -> Result<Figures> {
    let data: Vec<&Departure> = cap
        .departures
        .iter()
        .filter(|d| d.len > ACK_ONLY_MAX)
        .collect();
    let (Some(a), Some(b)) = (data.first(), data.last()) else {
        bail!("no data departures captured");
    };
    // The middle 80% of the transfer: no handshake, no slow first flight, no tail.
    let span = b.ns - a.ns;
    let window = (a.ns + span / 10, b.ns - span / 10);
    let (mut errors, mut sizes) = analyse(case, &cap.departures, window);
    errors.sort_by(f64::total_cmp);
    sizes.sort_unstable();
    let in_window: u64 = data
        .iter()
        .filter(|d| (window.0..window.1).contains(&d.ns))
        .map(|d| d.len as u64)
        .sum();
    let secs = (window.1 - window.0) as f64 / 1e9;
    let sizes_f: Vec<f64> = sizes.iter().map(|&s| s as f64).collect();
    Ok(Figures {
        datagrams: sizes.iter().sum(),
        bursts: sizes.len(),
        burst_p50: percentile(&sizes_f, 0.5),
        burst_p99: percentile(&sizes_f, 0.99),
        burst_max: sizes.last().copied().unwrap_or(0),
        err_p50_us: percentile(&errors, 0.5) / 1e3,
        err_p99_us: percentile(&errors, 0.99) / 1e3,
        achieved_mbps: in_window as f64 * 8.0 / secs / 1e6,
        relay_drops: cap.relay_drops,
        txtime,
    })
}

fn stop(mut child: Child) {
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let _ = child.wait();
}

/// Runs one transfer of `secs` at the case's rate; its figures.
pub fn measure(quiclab: &Path, dir: &Path, case: &Case, secs: f64) -> Result<Figures> {
    let root = dir.join("root");
    std::fs::create_dir_all(&root)?;
    let server_cfg = dir.join("server.toml");
    std::fs::write(
        &server_cfg,
        format!(
            "congestion_control = {{ algorithm = \"fixed\", window_packets = {WINDOW_PACKETS}, pacing_rate_mbps = {} }}\n",
            case.rate_mbps
        ),
    )?;
    // The client's flow-control windows must not limit the sender either.
    let client_cfg = dir.join("client.toml");
    std::fs::write(
        &client_cfg,
        "[flow]\ninitial_max_data = 67108864\ninitial_max_stream_data = 67108864\n",
    )?;
    let port = UdpSocket::bind("127.0.0.1:0")?.local_addr()?.port();
    let server_addr: SocketAddr = format!("127.0.0.1:{port}").parse()?;
    let server_err = dir.join("server.err");
    let mut server = Command::new(quiclab);
    if case.fifo {
        // SAFETY: runs in the child between fork and exec and makes one
        // async-signal-safe syscall; a refusal is reported after the run.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut server, || {
                let param = libc::sched_param {
                    sched_priority: FIFO_PRIORITY,
                };
                libc::sched_setscheduler(0, libc::SCHED_FIFO, &param);
                Ok(())
            });
        }
    }
    let server = server
        .args([
            "server",
            "--seed",
            "1",
            "--listen",
            &server_addr.to_string(),
        ])
        .arg("--root")
        .arg(&root)
        .arg("--config")
        .arg(&server_cfg)
        .args(["--wake", &case.wake])
        .args(["--pacing-burst-us", &case.burst_us.to_string()])
        .stderr(std::fs::File::create(&server_err)?)
        .spawn()
        .context("starting the server")?;
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: a query about our own child, not yet reaped.
    let policy = unsafe { libc::sched_getscheduler(server.id() as libc::pid_t) };
    if case.fifo && policy != libc::SCHED_FIFO {
        stop(server);
        bail!("SCHED_FIFO refused for the server (needs root or CAP_SYS_NICE)");
    }
    let relay = Relay::start(server_addr)?;
    let bytes = (case.rate_mbps * 1e6 / 8.0 * secs) as u64;
    let client_err = dir.join("client.err");
    let status = Command::new(quiclab)
        .args(["client", "--insecure", "--alpn", "hq-interop", "--check"])
        .args(["--seed", "2", "--wake", &case.wake])
        .arg("--config")
        .arg(&client_cfg)
        .arg(format!("https://{}/{bytes}", relay.front))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&client_err)?)
        .status()
        .context("running the client")?;
    let cap = relay.finish()?;
    stop(server);
    if !status.success() {
        let err = std::fs::read_to_string(&client_err).unwrap_or_default();
        bail!("client failed: {err}");
    }
    let log = std::fs::read_to_string(&server_err).unwrap_or_default();
    let txtime = log
        .lines()
        .find(|l| l.starts_with("SO_TXTIME"))
        .unwrap_or("SO_TXTIME: not reported")
        .to_string();
    if cap.unstamped > 0 {
        eprintln!("{} datagrams came without a timestamp", cap.unstamped);
    }
    figures(case, &cap, txtime)
}

/// A scratch directory for one suite run.
pub fn scratch() -> Result<PathBuf> {
    let d = std::env::temp_dir().join(format!("bench-gaps-{}", std::process::id()));
    std::fs::create_dir_all(&d)?;
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(burst_us: u64) -> Case {
        Case {
            rate_mbps: 96.0, // 12 MB/s: a 1200-byte datagram every 100 µs
            wake: "timerfd".into(),
            burst_us,
            fifo: false,
        }
    }

    #[test]
    fn on_schedule_departures_have_no_error() {
        // Fixed 10-datagram bucket: a first burst of 10, then one datagram every
        // 100 µs, exactly as the pacer allows.
        let mut deps: Vec<Departure> = (0..10)
            .map(|_| Departure {
                ns: 1_000,
                len: 1200,
            })
            .collect();
        deps.extend((1..=50).map(|i| Departure {
            ns: 1_000 + i * 100_000,
            len: 1200,
        }));
        let (errors, sizes) = analyse(&case(0), &deps, (0, u64::MAX));
        assert_eq!(sizes[0], 10);
        assert!(sizes[1..].iter().all(|&s| s == 1), "{sizes:?}");
        assert!(errors.iter().all(|e| e.abs() < 1.0), "{errors:?}");
    }

    #[test]
    fn late_wakes_show_as_gap_error_and_bigger_bursts() {
        // After the first burst, each wake comes 1 ms apart: 10 datagrams earned per
        // wake, 900 µs after the first one was allowed.
        let mut deps = vec![];
        for k in 0..20u64 {
            let n = 10;
            deps.extend((0..n).map(|_| Departure {
                ns: 1_000 + k * 1_000_000,
                len: 1200,
            }));
        }
        let (errors, sizes) = analyse(&case(0), &deps, (0, u64::MAX));
        assert!(sizes.iter().all(|&s| s == 10), "{sizes:?}");
        for e in &errors {
            assert!((e - 900_000.0).abs() < 1_000.0, "{errors:?}");
        }
    }
}
