//! `quiclab server|client --tls-random os|seeded` over real UDP: with OS randomness
//! (ring's provider) on either side handshakes complete (for every certificate type on
//! the server) and the handshake secrets differ between two runs with the same seeds;
//! with the seeded default on both they repeat (the key logs, SSLKEYLOGFILE, show the
//! secrets and the client random).

#![cfg(target_os = "linux")]

use std::io::{BufRead, BufReader};
use std::net::UdpSocket;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(30);

/// What one run logged: the server's SERVER_HANDSHAKE_TRAFFIC_SECRET key-log lines and
/// the client's CLIENT_HANDSHAKE_TRAFFIC_SECRET ones (`LABEL client_random secret`).
struct Keys {
    server: Vec<String>,
    client: Vec<String>,
}

/// The key-log lines of `path` labelled `label`; one connection, so exactly one.
fn key_lines(path: &Path, label: &str) -> Vec<String> {
    let keys = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<String> = keys
        .lines()
        .filter(|l| l.split(' ').next() == Some(label))
        .map(String::from)
        .collect();
    assert_eq!(lines.len(), 1, "one connection, {label}: {keys}");
    lines
}

/// One server run (`random`, `cert_type`, seed 1) and one checked hq-interop fetch
/// (`client_random`, seed 2); both sides' handshake secrets.
fn run(dir: &Path, tag: &str, random: &str, client_random: &str, cert_type: &str) -> Keys {
    let root = dir.join("root");
    std::fs::create_dir_all(&root).unwrap();
    let key_log = dir.join(format!("keys-{tag}.txt"));
    let client_key_log = dir.join(format!("client-keys-{tag}.txt"));
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
        .args(["--seed", "2", "--tls-random", client_random])
        .arg(format!("https://127.0.0.1:{port}/5000"))
        .env("SSLKEYLOGFILE", &client_key_log)
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
    assert!(
        status.success(),
        "server {random}, client {client_random}, {cert_type}: {stderr}"
    );
    assert_eq!(
        client_random == "os",
        stderr.contains("TLS randomness from the OS"),
        "{stderr}"
    );
    Keys {
        server: key_lines(&key_log, "SERVER_HANDSHAKE_TRAFFIC_SECRET"),
        client: key_lines(&client_key_log, "CLIENT_HANDSHAKE_TRAFFIC_SECRET"),
    }
}

/// The client random of a key-log line (its second field).
fn client_random_of(keys: &[String]) -> &str {
    keys[0]
        .split(' ')
        .nth(1)
        .expect("LABEL client_random secret")
}

#[test]
fn os_randomness_completes_handshakes_and_seeded_repeats_them() {
    let dir = std::env::temp_dir().join(format!("quiclab-tls-random-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for cert_type in ["ecdsa-p256", "ed25519"] {
        let a = run(
            &dir,
            &format!("os-a-{cert_type}"),
            "os",
            "seeded",
            cert_type,
        );
        let b = run(
            &dir,
            &format!("os-b-{cert_type}"),
            "os",
            "seeded",
            cert_type,
        );
        assert_ne!(
            a.server, b.server,
            "OS-random key shares: different secrets"
        );
        // The seeded client's random repeats whatever the server does.
        assert_eq!(client_random_of(&a.client), client_random_of(&b.client));
    }
    let a = run(&dir, "seeded-a", "seeded", "seeded", "ecdsa-p256");
    let b = run(&dir, "seeded-b", "seeded", "seeded", "ecdsa-p256");
    assert_eq!(a.server, b.server, "seeded: the same handshake secrets");
    assert_eq!(a.client, b.client, "seeded: the same client secrets");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn os_randomness_on_the_client_completes_handshakes() {
    let dir =
        std::env::temp_dir().join(format!("quiclab-tls-random-client-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // A seeded server, so whatever differs between the runs is the client's doing.
    let a = run(&dir, "client-os-a", "seeded", "os", "ecdsa-p256");
    let b = run(&dir, "client-os-b", "seeded", "os", "ecdsa-p256");
    assert_ne!(
        client_random_of(&a.client),
        client_random_of(&b.client),
        "OS-random client random"
    );
    assert_ne!(
        a.client, b.client,
        "OS-random client key shares: different secrets"
    );
    assert_ne!(a.server, b.server);
    // Both sides on the OS.
    let c = run(&dir, "both-os", "os", "os", "ecdsa-p256");
    assert_ne!(client_random_of(&c.client), client_random_of(&a.client));
    let _ = std::fs::remove_dir_all(&dir);
}
