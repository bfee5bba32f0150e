//! Stateless Reset over real UDP (RFC 9000 §10.3): a server killed mid-transfer and
//! restarted on the same port with the same `--stateless-reset-key` file answers the
//! client's next packets with a Stateless Reset, and the client ends at once (its
//! probes reach the new process within a PTO or two), long before the 30 s idle
//! timeout that would end it otherwise.
//!
//! A downloading client sends only while it has something unacknowledged: had the
//! server acknowledged its last window update before dying, it would wait silently
//! for the idle timeout. So the client talks to the server through a relay in this
//! test that drops the client's packets for a moment before the kill: the server
//! keeps sending up to the client's (small, fixed) flow-control window, the client's
//! window updates go unacknowledged, and its probes are certain to reach the new
//! process.

#![cfg(target_os = "linux")]

use std::io::{BufRead, BufReader};
use std::net::UdpSocket;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// From the restarted server's first line to the client's exit: the client's next
/// PTO probe and one round trip. Far below the idle timeout (30 s).
const BOUND: Duration = Duration::from_secs(2);

fn free_port() -> u16 {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.local_addr().unwrap().port()
}

/// Starts `quiclab server` and returns once it listens (its start-up line), with the
/// lines it printed up to then.
/// A UDP relay on loopback from one client to `server_port`, which drops the
/// client's datagrams while `drop` is set. Runs until `stop` is set.
fn relay(server_port: u16, drop: Arc<AtomicBool>, stop: Arc<AtomicBool>) -> u16 {
    let front = UdpSocket::bind("127.0.0.1:0").unwrap();
    let back = UdpSocket::bind("127.0.0.1:0").unwrap();
    back.connect(("127.0.0.1", server_port)).unwrap();
    let port = front.local_addr().unwrap().port();
    let tick = Some(Duration::from_millis(20));
    front.set_read_timeout(tick).unwrap();
    back.set_read_timeout(tick).unwrap();
    let client = Arc::new(std::sync::Mutex::new(None));
    let (f2, b2, c2, stop2) = (
        front.try_clone().unwrap(),
        back.try_clone().unwrap(),
        client.clone(),
        stop.clone(),
    );
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 65_536];
        while !stop2.load(Ordering::Relaxed) {
            if let Ok((n, from)) = f2.recv_from(&mut buf) {
                *c2.lock().unwrap() = Some(from);
                if !drop.load(Ordering::Relaxed) {
                    let _ = b2.send(&buf[..n]);
                }
            }
        }
    });
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 65_536];
        while !stop.load(Ordering::Relaxed) {
            // A dead server's port answers with ICMP errors: keep reading.
            if let Ok(n) = back.recv(&mut buf) {
                if let Some(to) = *client.lock().unwrap() {
                    let _ = front.send_to(&buf[..n], to);
                }
            }
        }
    });
    port
}

/// Without `key`, the server draws a key for its process alone.
fn start_server(port: u16, root: &Path, key: Option<&Path>) -> (Child, Vec<String>) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_quiclab"));
    cmd.args(["server", "--listen"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("--root")
        .arg(root);
    if let Some(key) = key {
        cmd.arg("--stateless-reset-key").arg(key);
    }
    let mut child = cmd
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts the server");
    let mut lines = Vec::new();
    let mut reader = BufReader::new(child.stderr.take().unwrap());
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap() == 0 {
            panic!("the server ended: {lines:?}");
        }
        let ready = line.starts_with("quiclab server on");
        lines.push(line);
        if ready {
            break;
        }
    }
    // Keep draining its stderr so it never blocks on a full pipe.
    std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
    (child, lines)
}

/// Kills the server mid-transfer and restarts it (with the key file, or without);
/// returns how long after the restart the client ended (or `None` within `wait`) and
/// its stderr.
fn kill_and_restart(same_key: bool, wait: Duration) -> (Option<Duration>, String) {
    let tag = if same_key { "same" } else { "none" };
    let dir = std::env::temp_dir().join(format!("quiclab-reset-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let root = dir.join("root");
    std::fs::create_dir_all(&root).unwrap();
    let key = dir.join("reset.key");
    let port = free_port();

    // Fixed windows: the server is flow-control limited, the client sends updates.
    let config = dir.join("client.toml");
    let flow = "[flow]\ninitial_max_stream_data = 65536\ninitial_max_data = 131072\n";
    std::fs::write(&config, format!("{flow}autotune = false\n")).unwrap();
    let (drop, stop) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let front = relay(port, drop.clone(), stop.clone());

    let (mut first, lines) = start_server(port, &root, Some(&key));
    let created = lines
        .iter()
        .any(|l| l.contains("stateless reset key: created"));
    assert!(created, "{lines:?}");
    // 20 GB generated by the server: far more than the test lets it send.
    let mut client = Command::new(env!("CARGO_BIN_EXE_quiclab"))
        .args(["client", "--insecure", "--alpn", "hq-interop", "--check"])
        .arg("--config")
        .arg(&config)
        .arg(format!("https://127.0.0.1:{front}/20000000000"))
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("starts the client");
    let mut client_err = client.stderr.take().unwrap();
    let stderr = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut client_err, &mut s).map(|_| s)
    });
    std::thread::sleep(Duration::from_millis(700));
    drop.store(true, Ordering::Relaxed);
    std::thread::sleep(Duration::from_millis(200));
    first.kill().unwrap();
    first.wait().unwrap();

    let (mut second, lines) = start_server(port, &root, same_key.then_some(key.as_path()));
    drop.store(false, Ordering::Relaxed);
    let restarted = Instant::now();
    let want = if same_key {
        "read from"
    } else {
        "for this process"
    };
    assert!(lines.iter().any(|l| l.contains(want)), "{lines:?}");
    let mut ended = None;
    while restarted.elapsed() < wait {
        if client.try_wait().unwrap().is_some() {
            ended = Some(restarted.elapsed());
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    if ended.is_none() {
        let _ = client.kill();
    }
    let status = client.wait().unwrap();
    let _ = second.kill();
    let _ = second.wait();
    stop.store(true, Ordering::Relaxed);
    let stderr = stderr.join().unwrap().unwrap();
    if ended.is_some() {
        assert!(
            !status.success(),
            "the fetch cannot have completed: {stderr}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    (ended, stderr)
}

#[test]
fn a_restarted_server_with_the_same_key_resets_the_client_at_once() {
    let (ended, stderr) = kill_and_restart(true, Duration::from_secs(40));
    let took = ended.expect("the client ended");
    eprintln!("client ended {took:?} after the restart");
    assert!(stderr.contains("stateless reset"), "{stderr}");
    assert!(took < BOUND, "took {took:?}: {stderr}");
}

#[test]
fn a_restarted_server_with_another_key_leaves_the_client_to_its_timers() {
    // The new process's token is not the one the client holds: no reset is
    // recognised, the client keeps probing (the control for the test above).
    let (ended, stderr) = kill_and_restart(false, 2 * BOUND);
    assert_eq!(ended, None, "{stderr}");
    assert!(!stderr.contains("stateless reset"), "{stderr}");
}
