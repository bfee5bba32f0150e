//! `quiclab server --tls-random os|seeded` over real UDP: with OS randomness (ring's
//! provider) handshakes complete for every certificate type and the handshake secrets
//! differ between two runs with the same seeds; with the seeded default they repeat
//! (the server's key log, SSLKEYLOGFILE, shows the secrets).

#![cfg(target_os = "linux")]

use std::io::{BufRead, BufReader};
use std::net::UdpSocket;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(30);

/// One server run (`random`, `cert_type`, seed 1) and one checked hq-interop fetch
/// (seed 2); the server's SERVER_HANDSHAKE_TRAFFIC_SECRET key-log lines.
fn run(dir: &Path, tag: &str, random: &str, cert_type: &str) -> Vec<String> {
    let root = dir.join("root");
    std::fs::create_dir_all(&root).unwrap();
    let key_log = dir.join(format!("keys-{tag}.txt"));
    let port = UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let bin = env!("CARGO_BIN_EXE_quiclab");
    let mut server = Command::new(bin)
        .args(["server", "--seed", "1", "--tls-random", random])
        .args(["--cert-type", cert_type, "--listen"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("--root")
        .arg(&root)
        .env("SSLKEYLOGFILE", &key_log)
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts the server");
    let mut reader = BufReader::new(server.stderr.take().unwrap());
    let mut lines = String::new();
    loop {
        let mut line = String::new();
        assert_ne!(
            reader.read_line(&mut line).unwrap(),
            0,
            "server ended: {lines}"
        );
        lines.push_str(&line);
        if line.starts_with("quiclab server on") {
            break;
        }
    }
    assert_eq!(
        random == "os",
        lines.contains("TLS randomness from the OS"),
        "{lines}"
    );
    std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
    let mut client = Command::new(bin)
        .args(["client", "--insecure", "--alpn", "hq-interop", "--check"])
        .args(["--seed", "2"])
        .arg(format!("https://127.0.0.1:{port}/5000"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts the client");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = client.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > LIMIT {
            let _ = client.kill();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let out = client.wait_with_output().unwrap();
    let _ = server.kill();
    let _ = server.wait();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let status = status.unwrap_or_else(|| panic!("client still running: {stderr}"));
    assert!(status.success(), "{random} {cert_type}: {stderr}");
    let keys = std::fs::read_to_string(&key_log).unwrap_or_default();
    let secrets: Vec<String> = keys
        .lines()
        .filter(|l| l.starts_with("SERVER_HANDSHAKE_TRAFFIC_SECRET "))
        .map(String::from)
        .collect();
    assert_eq!(secrets.len(), 1, "one connection: {keys}");
    secrets
}

#[test]
fn os_randomness_completes_handshakes_and_seeded_repeats_them() {
    let dir = std::env::temp_dir().join(format!("quiclab-tls-random-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for cert_type in ["ecdsa-p256", "ed25519"] {
        let a = run(&dir, &format!("os-a-{cert_type}"), "os", cert_type);
        let b = run(&dir, &format!("os-b-{cert_type}"), "os", cert_type);
        assert_ne!(a, b, "OS-random key shares: different secrets");
    }
    let a = run(&dir, "seeded-a", "seeded", "ecdsa-p256");
    let b = run(&dir, "seeded-b", "seeded", "ecdsa-p256");
    assert_eq!(a, b, "seeded: the same handshake secrets");
    let _ = std::fs::remove_dir_all(&dir);
}
