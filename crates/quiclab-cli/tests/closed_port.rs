//! A client to a loopback port where nothing listens gives up at once (issue 40): the
//! kernel's ICMP port unreachable reaches it through IP_RECVERR, before its first
//! Initial could be retransmitted. Its handshake timeout is raised to 60 s here, so
//! only the ICMP path can end the run within the bound.

#![cfg(target_os = "linux")]

use std::net::UdpSocket;
use std::process::Command;
use std::time::{Duration, Instant};

/// Far below the 60 s handshake timeout (and the 30 s idle timeout); a run takes a
/// few ms here.
const BOUND: Duration = Duration::from_secs(5);

fn closed_port(addr: &str) -> u16 {
    // Bound then closed: nothing listens there any more.
    let s = UdpSocket::bind(addr).unwrap();
    s.local_addr().unwrap().port()
}

fn run_client(url: &str, config: &std::path::Path) -> (std::process::Output, Duration) {
    let bin = env!("CARGO_BIN_EXE_quiclab");
    let start = Instant::now();
    let out = Command::new(bin)
        .args(["client", "--insecure", "--config"])
        .arg(config)
        .arg(url)
        .output()
        .unwrap();
    (out, start.elapsed())
}

#[test]
fn a_closed_port_fails_at_once_with_a_clear_message() {
    let dir = std::env::temp_dir().join(format!("quiclab-closed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("client.toml");
    std::fs::write(&config, "handshake_timeout_ms = 60000\n").unwrap();
    for (bind, host) in [("127.0.0.1:0", "127.0.0.1"), ("[::1]:0", "[::1]")] {
        if UdpSocket::bind(bind).is_err() {
            continue; // no IPv6 loopback here
        }
        let port = closed_port(bind);
        let (out, took) = run_client(&format!("https://{host}:{port}/x"), &config);
        let stderr = String::from_utf8_lossy(&out.stderr);
        eprintln!("{host}: ended in {took:?}");
        assert!(!out.status.success(), "{stderr}");
        let want =
            format!("connection refused: nothing listens on {host}:{port} (ICMP port unreachable)");
        assert!(stderr.contains(&want), "{stderr}");
        assert!(took < BOUND, "took {took:?}: {stderr}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
