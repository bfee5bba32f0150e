//! quiclab's server and an hq-interop fetch in-process on loopback (the lab's and
//! Python's way to run real endpoints): the checked body arrives whole, the qlog files
//! are written, and a stop request ends the server.

use quiclab_net::transfer::{fetch, serve, FetchOptions, ServerOptions};
use quiclab_net::DriverConfig;
use std::sync::mpsc;
use std::time::Duration;

fn temp_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("quiclab-net-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn fetch_options(server: std::net::SocketAddr, size: u64) -> FetchOptions {
    FetchOptions {
        server,
        size,
        config: None,
        qlog_dir: None,
        key_log: None,
        seed: 2,
        driver: DriverConfig::default(),
    }
}

#[test]
fn fetches_a_checked_body_and_stops_the_server() {
    let dir = temp_dir("fetch");
    let opts = ServerOptions {
        listen: "127.0.0.1:0".parse().unwrap(),
        root: dir.clone(),
        config: None,
        cert_padding: 0,
        qlog_dir: Some(dir.join("qlog-server")),
        key_log: Some(dir.join("keylog.txt")),
        seed: 1,
        driver: DriverConfig::default(),
    };
    let (tx, rx) = mpsc::channel();
    let server =
        std::thread::spawn(move || serve(&opts, |addr, stop| tx.send((addr, stop)).unwrap()));
    let (addr, stop) = rx.recv_timeout(Duration::from_secs(5)).unwrap();
    assert_ne!(addr.port(), 0);

    let size = 300_000;
    let mut opts = fetch_options(addr, size);
    opts.qlog_dir = Some(dir.join("qlog-client"));
    let report = fetch(&opts, |_| {}).unwrap();
    assert!(report.handshake_completed, "{report:?}");
    assert_eq!(report.failures, 0, "{report:?}");
    assert_eq!(report.body_bytes, size);
    // Loopback's MTU lets PMTU discovery grow datagrams: count bytes, not datagrams.
    assert!(report.counters.bytes_received > size, "{report:?}");
    let qlogs = std::fs::read_dir(dir.join("qlog-client")).unwrap().count();
    assert_eq!(qlogs, 1, "one client qlog file");
    let keylog = std::fs::read_to_string(dir.join("keylog.txt")).unwrap();
    assert!(keylog.contains("CLIENT_TRAFFIC_SECRET_0 "), "{keylog}");

    // The stop request ends the server's loop (its idle wait is a second).
    let stopped = std::time::Instant::now();
    stop.stop();
    let counters = server.join().unwrap().unwrap();
    assert!(
        stopped.elapsed() < Duration::from_millis(500),
        "woken at once"
    );
    assert!(counters.datagrams_sent > 0, "{counters:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_stop_request_wakes_an_idle_server_at_once() {
    let dir = temp_dir("idle");
    let opts = ServerOptions {
        listen: "127.0.0.1:0".parse().unwrap(),
        root: dir.clone(),
        config: None,
        cert_padding: 0,
        qlog_dir: None,
        key_log: None,
        seed: 1,
        driver: DriverConfig::default(),
    };
    let (tx, rx) = mpsc::channel();
    let server = std::thread::spawn(move || serve(&opts, |_, stop| tx.send(stop).unwrap()));
    let stop = rx.recv_timeout(Duration::from_secs(5)).unwrap();
    // No connection, no timer: the loop sleeps its idle wait (1 s) from its first turn.
    std::thread::sleep(Duration::from_millis(100));
    let asked = std::time::Instant::now();
    stop.stop();
    server.join().unwrap().unwrap();
    assert!(
        asked.elapsed() < Duration::from_millis(400),
        "the waker ended the sleep: {:?}",
        asked.elapsed()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_fetch_from_a_closed_port_fails_without_a_handshake() {
    // A port just released: nothing listens (ICMP port unreachable ends the handshake).
    let addr = std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let report = fetch(&fetch_options(addr, 1000), |_| {}).unwrap();
    assert!(!report.handshake_completed, "{report:?}");
    assert!(report.failures > 0, "{report:?}");
    assert_eq!(report.body_bytes, 0);
}
