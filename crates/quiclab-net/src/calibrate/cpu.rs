//! CPU per datagram each way, from bulk transfers over loopback UDP: quiclab's server
//! and client ([`crate::transfer`]), each on a thread of its own, fetch `bytes` with
//! every datagram `size` bytes (PMTU discovery off). Each thread's CPU time
//! (CLOCK_THREAD_CPUTIME_ID, not wall time) and the driver's counters give one row per
//! side: CPU = send × datagrams sent + recv × datagrams received + per-byte × bytes
//! sent and received. A 1-byte fetch's row (handshake, setup, teardown) is subtracted
//! first; the server's rows are mostly data sent and ACKs received, the client's the
//! reverse, so the rows of both sides at two sizes fit the three costs (least squares).

use super::clock::thread_cpu_ns;
use super::Sched;
use crate::error::{NetError, Result};
use crate::transfer::{self, FetchOptions, ServerOptions};
use crate::{Counters, DriverConfig};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::mpsc;

/// One side's work in one transfer (a baseline's already subtracted, or not yet).
#[derive(Clone, Copy, Debug, Default)]
pub struct Row {
    pub cpu_ns: f64,
    pub sent: f64,
    pub received: f64,
    pub bytes: f64,
    /// sendmsg calls (GSO batches).
    pub send_calls: f64,
}

impl Row {
    fn of(cpu_ns: f64, c: &Counters) -> Row {
        Row {
            cpu_ns,
            sent: c.datagrams_sent as f64,
            received: c.datagrams_received as f64,
            bytes: (c.bytes_sent + c.bytes_received) as f64,
            send_calls: c.sendmsg_calls as f64,
        }
    }

    fn minus(&self, b: &Row) -> Row {
        Row {
            cpu_ns: self.cpu_ns - b.cpu_ns,
            sent: self.sent - b.sent,
            received: self.received - b.received,
            bytes: self.bytes - b.bytes,
            send_calls: self.send_calls - b.send_calls,
        }
    }
}

/// One transfer's rows: (server, client).
pub type Pair = (Row, Row);

/// The three fitted costs.
#[derive(Clone, Copy, Debug)]
pub struct Fit {
    /// ns per datagram sent (its share of sendmsg, framing, sealing's fixed part).
    pub send_ns: f64,
    /// ns per datagram received.
    pub recv_ns: f64,
    /// ns per byte, each way (copies, framing and the AEAD together).
    pub per_byte_ns: f64,
}

/// A transfer of `bytes` at datagram size `size` (`dir`: a scratch directory).
pub fn transfer(dir: &Path, size: u16, bytes: u64, sched: Sched, seed: u64) -> Result<Pair> {
    let config = dir.join(format!("transport-{size}.toml"));
    let text = format!("max_udp_payload_size = {size}\npmtud_max_udp_payload_size = 0\n");
    std::fs::write(&config, text)
        .map_err(|e| NetError::Config(format!("{}: {e}", config.display())))?;
    let server = ServerOptions {
        listen: SocketAddr::from(([127, 0, 0, 1], 0)),
        root: dir.to_path_buf(),
        config: Some(config.clone()),
        cert_padding: 0,
        qlog_dir: None,
        key_log: None,
        seed,
        driver: DriverConfig::default(),
    };
    let (tx, rx) = mpsc::channel();
    let serving = std::thread::spawn(move || {
        sched.apply();
        let c = transfer::serve(&server, |addr, stop| {
            let _ = tx.send((addr, stop));
        })?;
        Ok::<Pair, NetError>((Row::of(thread_cpu_ns(), &c), Row::default()))
    });
    let Ok((addr, stop)) = rx.recv() else {
        return Err(joined(serving)
            .err()
            .unwrap_or(NetError::Config("server did not start".into())));
    };
    let fetch = FetchOptions {
        server: addr,
        size: bytes,
        config: Some(config),
        qlog_dir: None,
        key_log: None,
        seed: seed ^ 1,
        driver: DriverConfig::default(),
    };
    let fetching = std::thread::spawn(move || {
        sched.apply();
        let r = transfer::fetch(&fetch, |_| {})?;
        if r.failures > 0 || r.body_bytes != bytes {
            return Err(NetError::Config(format!(
                "calibration fetch of {bytes} bytes failed ({} bytes, {} failures)",
                r.body_bytes, r.failures
            )));
        }
        Ok((Row::default(), Row::of(thread_cpu_ns(), &r.counters)))
    });
    let client = joined(fetching);
    stop.stop();
    let server = joined(serving)?;
    Ok((server.0, client?.1))
}

fn joined(h: std::thread::JoinHandle<Result<Pair>>) -> Result<Pair> {
    h.join()
        .unwrap_or_else(|_| Err(NetError::Config("a calibration thread panicked".into())))
}

/// Rows of `pairs` less `baseline`'s, both sides.
pub fn rows(pairs: &[Pair], baseline: &Pair) -> Vec<Row> {
    pairs
        .iter()
        .flat_map(|(s, c)| [s.minus(&baseline.0), c.minus(&baseline.1)])
        .collect()
}

/// Least squares of cpu_ns = send × sent + recv × received + per_byte × bytes;
/// `None` when the rows do not determine the three (a singular system).
pub fn fit(rows: &[Row]) -> Option<Fit> {
    let x = |r: &Row| [r.sent, r.received, r.bytes];
    // Columns scaled to comparable size (bytes are ~1000x datagrams).
    let scale = [1.0, 1.0, 1e-3];
    let mut a = [[0.0f64; 3]; 3];
    let mut b = [0.0f64; 3];
    for r in rows {
        let v = x(r);
        for i in 0..3 {
            for j in 0..3 {
                a[i][j] += v[i] * scale[i] * v[j] * scale[j];
            }
            b[i] += v[i] * scale[i] * r.cpu_ns;
        }
    }
    let s = solve3(a, b)?;
    Some(Fit {
        send_ns: s[0] * scale[0],
        recv_ns: s[1] * scale[1],
        per_byte_ns: s[2] * scale[2],
    })
}

/// Gaussian elimination with partial pivoting.
fn solve3(mut a: [[f64; 3]; 3], mut b: [f64; 3]) -> Option<[f64; 3]> {
    let norm = a.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
    for c in 0..3 {
        let p = (c..3).max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs()))?;
        if a[p][c].abs() <= 1e-9 * norm || !a[p][c].is_finite() {
            return None;
        }
        a.swap(c, p);
        b.swap(c, p);
        for r in c + 1..3 {
            let f = a[r][c] / a[c][c];
            let pivot = a[c];
            for (v, p) in a[r].iter_mut().zip(pivot).skip(c) {
                *v -= f * p;
            }
            b[r] -= f * b[c];
        }
    }
    let mut x = [0.0; 3];
    for c in (0..3).rev() {
        let s: f64 = (c + 1..3).map(|k| a[c][k] * x[k]).sum();
        x[c] = (b[c] - s) / a[c][c];
    }
    Some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_recovers_known_costs() {
        let cost = |s: f64, r: f64, b: f64| 2500.0 * s + 1800.0 * r + 0.7 * b;
        let rows: Vec<Row> = [
            (10000.0, 5000.0, 1.3e7),
            (5100.0, 9900.0, 1.25e7),
            (9000.0, 4400.0, 1.4e7),
        ]
        .iter()
        .map(|&(s, r, b)| Row {
            cpu_ns: cost(s, r, b),
            sent: s,
            received: r,
            bytes: b,
            send_calls: 0.0,
        })
        .collect();
        let f = fit(&rows).unwrap();
        assert!((f.send_ns - 2500.0).abs() < 1e-3, "{f:?}");
        assert!((f.recv_ns - 1800.0).abs() < 1e-3, "{f:?}");
        assert!((f.per_byte_ns - 0.7).abs() < 1e-6, "{f:?}");
        assert!(fit(&rows[..1]).is_none());
    }
}
