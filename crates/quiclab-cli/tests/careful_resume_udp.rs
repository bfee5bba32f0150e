//! Careful Resume on real UDP (loopback): `quiclab server --careful-resume` saves the
//! first connection's window and RTT, and the second connection from the same address
//! resumes from them, its qlog showing the Careful Resume phases.

use std::net::UdpSocket;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

fn free_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn fetch(url: &str, out: &Path) {
    let r = Command::new(env!("CARGO_BIN_EXE_quiclab"))
        .args(["client", "--insecure", "--output"])
        .arg(out)
        .arg(url)
        .output()
        .expect("runs the client");
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
}

/// The server qlogs (transport, not h3) that contain `needle`.
fn server_qlogs_with(dir: &Path, needle: &str) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with("_server.sqlog"))
        .filter(|e| {
            std::fs::read_to_string(e.path())
                .unwrap_or_default()
                .contains(needle)
        })
        .count()
}

#[test]
fn second_connection_resumes_with_careful_resume() {
    let dir = std::env::temp_dir().join(format!("quiclab-cr-udp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (root, qlog, out) = (dir.join("root"), dir.join("qlog"), dir.join("out"));
    for d in [&root, &qlog, &out] {
        std::fs::create_dir_all(d).unwrap();
    }
    let body: Vec<u8> = (0..4_000_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(root.join("obj"), &body).unwrap();
    let port = free_port();
    let mut server = Command::new(env!("CARGO_BIN_EXE_quiclab"))
        .args(["server", "--careful-resume", "--listen"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("--root")
        .arg(&root)
        .arg("--qlog-dir")
        .arg(&qlog)
        .stderr(Stdio::null())
        .spawn()
        .expect("starts the server");
    std::thread::sleep(Duration::from_millis(300));
    let url = format!("https://127.0.0.1:{port}/obj");
    fetch(&url, &out);
    // Let the first connection close on the server (its window is saved then).
    std::thread::sleep(Duration::from_millis(1500));
    fetch(&url, &out);
    std::thread::sleep(Duration::from_millis(1500));
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(std::fs::read(out.join("obj")).unwrap(), body);
    // Only the second connection ran Careful Resume, starting in Reconnaissance with
    // the first one's saved window.
    assert_eq!(server_qlogs_with(&qlog, "\"new\":\"reconnaissance\""), 1);
    assert_eq!(server_qlogs_with(&qlog, "saved_congestion_window"), 1);
    assert_eq!(server_qlogs_with(&qlog, "quic:recovery_metrics_updated"), 2);
    let _ = std::fs::remove_dir_all(&dir);
}
