//! Kernel receive drops reach the qlog (issue 13): a client with a tiny receive buffer
//! (`--socket-buffer 4096`, not grown: `--socket-buffer-max 4096`) downloads from a
//! server on loopback, which sends in paced bursts faster than such a buffer drains; the
//! kernel drops datagrams, and the client's qlog shows `quiclab:kernel_drops` records
//! with a growing count, ending with a `final` one equal to the count in its log line.
//! The server paces at a fixed 800 Mbit/s (the `fixed` controller), so the transfer
//! lasts over a second on any machine: several of the driver's 250 ms samples. Its
//! datagrams stay at 1452 bytes, one per send (`--pmtud-max 1452 --no-gso`).

use serde_json::Value;
use std::net::UdpSocket;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BODY: usize = 100_000_000;
/// The server's transport config: a constant window and pacing rate (100 MB >= 1 s).
const SERVER_CONFIG: &str =
    "[congestion_control]\nalgorithm = \"fixed\"\nwindow_packets = 4000\npacing_rate_mbps = 800.0\n";
/// Generous for a loaded 2-core machine and a debug build; a run takes ~2 s here.
const LIMIT: Duration = Duration::from_secs(60);

fn wait_bounded(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("waiting") {
            return Some(status);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The `quiclab:kernel_drops` records of every .sqlog file in `dir` ending in `side`.
fn records(dir: &Path, side: &str) -> Vec<Value> {
    let mut out = vec![];
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.ends_with(&format!("_{side}.sqlog")) {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for rec in text.split('\u{1e}').filter(|r| !r.trim().is_empty()) {
            let v: Value = serde_json::from_str(rec.trim()).unwrap();
            if v["name"] == "quiclab:kernel_drops" {
                out.push(v);
            }
        }
    }
    out
}

#[test]
fn kernel_drops_arrive_in_the_qlog() {
    let bin = env!("CARGO_BIN_EXE_quiclab");
    let dir = std::env::temp_dir().join(format!("quiclab-drops-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (root, qlog) = (dir.join("root"), dir.join("qlog"));
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(dir.join("server.toml"), SERVER_CONFIG).unwrap();
    let port = UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = Command::new(bin)
        .args(["server", "--seed", "1", "--listen"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("--root")
        .arg(&root)
        .arg("--config")
        .arg(dir.join("server.toml"))
        // Ethernet-sized datagrams, one per sendmsg: Linux admits any skb into an empty
        // receive queue, and a GSO burst reaches a GRO socket on loopback as one skb, so
        // 64 KB datagrams or GSO batches let a fast reader see no drops at all (it failed
        // so in CI). Separate 1452-byte datagrams overflow 4 KiB within each burst.
        .args(["--pmtud-max", "1452", "--no-gso"])
        .stderr(Stdio::null())
        .spawn()
        .expect("starting the server");
    std::thread::sleep(Duration::from_millis(300));
    let mut client = Command::new(bin)
        .args(["client", "--insecure", "--alpn", "hq-interop", "--check"])
        .args(["--seed", "2", "--socket-buffer", "4096"])
        .args(["--socket-buffer-max", "4096", "--qlog-dir"])
        .arg(&qlog)
        .arg(format!("https://127.0.0.1:{port}/{BODY}"))
        .stderr(std::fs::File::create(dir.join("client.err")).unwrap())
        .spawn()
        .expect("starting the client");
    let status = wait_bounded(&mut client, LIMIT);
    // SAFETY: signalling our own child by pid.
    unsafe { libc::kill(server.id() as libc::pid_t, libc::SIGTERM) };
    let _ = wait_bounded(&mut server, Duration::from_secs(10));
    let log = std::fs::read_to_string(dir.join("client.err")).unwrap();
    assert!(
        status.is_some_and(|s| s.success()),
        "client failed or timed out: {log}"
    );

    let recs = records(&qlog, "client");
    let last = recs
        .last()
        .unwrap_or_else(|| panic!("no kernel_drops record: {log}"));
    assert_eq!(last["data"]["trigger"], "final", "{recs:?}");
    let final_drops = last["data"]["drops"].as_u64().unwrap();
    assert!(final_drops > 0, "no drops with a 4 KiB buffer: {log}");
    // The log line's count is the same reading.
    assert!(
        log.contains(&format!("kernel_drops: Some({final_drops})")),
        "{final_drops} vs {log}"
    );
    // Sampled records while the transfer ran: counts only grow.
    let increased: Vec<u64> = recs
        .iter()
        .filter(|r| r["data"]["trigger"] == "increased")
        .map(|r| r["data"]["drops"].as_u64().unwrap())
        .collect();
    assert!(!increased.is_empty(), "{recs:?}");
    assert!(increased.windows(2).all(|w| w[0] < w[1]), "{increased:?}");
    // Every record carries the receive buffer the kernel granted, the one the client's
    // log states at start ("recv 4 KiB": 4096 bytes when the driver may force the size,
    // 8192 when Linux doubles an unprivileged request), never grown (`--socket-buffer-max
    // 4096`).
    let granted_kib: u64 = log
        .lines()
        .find(|l| l.contains("socket buffers"))
        .and_then(|l| l.split("recv ").nth(1))
        .and_then(|rest| rest.split(" KiB").next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no \"socket buffers ... recv N KiB\" line: {log}"));
    assert!(
        granted_kib <= 8,
        "granted {granted_kib} KiB for 4096 bytes asked"
    );
    for r in &recs {
        let recv = r["data"]["recv_buffer"].as_u64();
        assert_eq!(recv.map(|b| b >> 10), Some(granted_kib), "{r}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
