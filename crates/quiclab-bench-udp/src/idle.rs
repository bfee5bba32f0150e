//! Memory per idle connection: the RSS growth of a `quiclab server` holding N
//! connections that completed their handshake and sit idle (`quiclab client
//! --streams 0` holds them open until SIGTERM).

use crate::harness::Bins;
use anyhow::{bail, Context, Result};
use std::net::UdpSocket;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Resident set of a process, KiB (`VmRSS` in /proc/PID/status).
fn rss_kib(pid: u32) -> Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let line = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .context("no VmRSS")?;
    Ok(line
        .split_whitespace()
        .nth(1)
        .context("VmRSS value")?
        .parse()?)
}

fn stop(mut child: Child) {
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let _ = child.wait();
}

/// RSS per idle connection (server, client), in bytes, and the seconds the client took
/// to establish the `n` connections (issue 29: ≤ 10 s for 10,000).
pub fn measure(b: &Bins, n: usize) -> Result<(f64, f64, f64)> {
    // Long enough an idle timeout that the first connections outlive the last handshake.
    let config = b.root.join("idle.toml");
    std::fs::write(&config, "idle_timeout_ms = 600000\n")?;
    let port = UdpSocket::bind("127.0.0.1:0")?.local_addr()?.port();
    // The handshakes' CPU sets how fast the N connections come up: the server's and
    // the client's TLS randomness as in the handshakes suite (`BENCH_TLS_RANDOM`,
    // default `os`).
    let server = Command::new(&b.quiclab)
        .args([
            "server",
            "--seed",
            "1",
            "--cert-type",
            "ecdsa-p256",
            "--tls-random",
            &crate::harness::tls_random(),
            "--listen",
        ])
        .arg(format!("127.0.0.1:{port}"))
        .arg("--root")
        .arg(&b.root)
        .arg("--config")
        .arg(&config)
        .stderr(Stdio::null())
        .spawn()?;
    std::thread::sleep(Duration::from_millis(500));
    let server_base = rss_kib(server.id())?;
    let log = b.root.join("idle-client.err");
    let client = Command::new(&b.quiclab)
        .args([
            "client",
            "--insecure",
            "--alpn",
            "hq-interop",
            "--streams",
            "0",
            "--tls-random",
            &crate::harness::tls_random(),
        ])
        .arg("--connections")
        .arg(n.to_string())
        .arg("--config")
        .arg(&config)
        .arg(format!("https://127.0.0.1:{port}/0"))
        .stderr(std::fs::File::create(&log)?)
        .spawn()?;
    let start = Instant::now();
    let want = format!("all {n} connections established");
    while !std::fs::read_to_string(&log)?.contains(&want) {
        if start.elapsed() > Duration::from_secs(540) {
            stop(client);
            stop(server);
            bail!("{n} connections not established in 540 s");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let up = start.elapsed().as_secs_f64();
    eprintln!("{n} connections up in {up:.1} s");
    // Let the last handshakes' buffers (ACKs, crypto) settle.
    std::thread::sleep(Duration::from_secs(2));
    let server_rss = rss_kib(server.id())?;
    let client_rss = rss_kib(client.id())?;
    stop(client);
    stop(server);
    let per = |kib: u64| kib as f64 * 1024.0 / n as f64;
    eprintln!("server RSS {server_base} -> {server_rss} KiB; client RSS {client_rss} KiB");
    Ok((
        per(server_rss.saturating_sub(server_base)),
        per(client_rss),
        up,
    ))
}
