//! One `quiclab server` on loopback under 1,000 concurrent connections from one
//! `quiclab client --connections 1000`: every body byte-exact (the client checks
//! generated `/N` bodies byte by byte and in length), the whole run bounded in time,
//! and the server stopping cleanly on SIGTERM (issue 13: a real server).

use std::io::Read;
use std::net::UdpSocket;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const CONNECTIONS: usize = 1000;
const BODY: usize = 20_000;
/// Generous for a loaded 2-core CI machine; a run takes ~6 s on one.
const LIMIT: Duration = Duration::from_secs(60);

/// Waits for `child` up to `limit`; kills it past that.
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

#[test]
fn a_thousand_concurrent_connections_byte_exact() {
    let bin = env!("CARGO_BIN_EXE_quiclab");
    let root = std::env::temp_dir().join(format!("quiclab-many-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    // A free port: bound, noted, released (the server binds it right after).
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
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting the server");
    // Drained as it runs: a full pipe would block the server's logging.
    let mut server_err = server.stderr.take().unwrap();
    let server_reader = std::thread::spawn(move || {
        let mut log = String::new();
        let _ = server_err.read_to_string(&mut log);
        log
    });
    std::thread::sleep(Duration::from_millis(300));

    let start = Instant::now();
    let mut client = Command::new(bin)
        .args(["client", "--insecure", "--seed", "2", "--connections"])
        .arg(CONNECTIONS.to_string())
        .arg(format!("https://127.0.0.1:{port}/{BODY}"))
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting the client");
    let mut log = String::new();
    let mut err = client.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let _ = err.read_to_string(&mut log);
        log
    });
    let status = wait_bounded(&mut client, LIMIT);
    let log = reader.join().unwrap();
    let elapsed = start.elapsed();

    // SIGTERM: the server closes its connections and exits 0.
    // SAFETY: signalling our own child by pid.
    unsafe { libc::kill(server.id() as libc::pid_t, libc::SIGTERM) };
    let server_status = wait_bounded(&mut server, Duration::from_secs(10));
    let server_log = server_reader.join().unwrap();
    std::fs::remove_dir_all(&root).unwrap();

    let status = status.unwrap_or_else(|| panic!("client still running after {LIMIT:?}"));
    let done = log
        .lines()
        .filter(|l| l.starts_with(&format!("/{BODY}: {BODY} bytes")))
        .count();
    assert!(
        status.success(),
        "client failed ({status}):\n{}",
        log.lines()
            .filter(|l| l.contains("FAILED") || l.contains("error"))
            .take(20)
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert_eq!(done, CONNECTIONS, "transfers completed");
    assert!(!log.contains("FAILED"));
    eprintln!("{CONNECTIONS} connections x {BODY} bytes in {elapsed:?}");
    let server_status = server_status.expect("server did not stop on SIGTERM");
    assert!(
        server_status.success(),
        "server: {server_status}\n{server_log}"
    );
    assert!(server_log.contains("shutting down"));
    assert!(server_log.matches("connection ").count() >= CONNECTIONS);
}
