//! `quiclab probe` against quiclab's own server on 127.0.0.1, once with instant ACK
//! and once waiting for the certificate (both with a 20 ms certificate delay, as the
//! seed's remote certificate store), plus a silent port and a closed one: the probe
//! tells IACK from WFC, measures the ACK-ServerHello gap, keeps the first flight within
//! 3x the client's Initial, reports the certificate the server was given (its exact DER
//! size, rebuilt from the same seed) and the transport parameters it was configured
//! with, and turns the silent port into a timeout row.

#![cfg(target_os = "linux")]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::net::UdpSocket;
use std::path::Path;
use std::process::{Child, Command, Stdio};

const SEED: u64 = 4242;
const PADDING: usize = 3000;

fn free_port() -> u16 {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.local_addr().unwrap().port()
}

/// Starts `quiclab server` with `config` (TOML) and returns once it listens.
fn start_server(dir: &Path, tag: &str, config: &str, padding: usize) -> (Child, u16) {
    let port = free_port();
    let root = dir.join("root");
    std::fs::create_dir_all(&root).unwrap();
    let cfg = dir.join(format!("{tag}.toml"));
    std::fs::write(&cfg, config).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_quiclab"))
        .args(["server", "--listen", &format!("127.0.0.1:{port}")])
        .arg("--root")
        .arg(&root)
        .arg("--config")
        .arg(&cfg)
        .args(["--seed", &SEED.to_string()])
        .args(["--cert-padding", &padding.to_string()])
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts the server");
    let mut reader = BufReader::new(child.stderr.take().unwrap());
    let mut seen = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap() == 0 {
            panic!("the server ended: {seen:?}");
        }
        let ready = line.starts_with("quiclab server on");
        seen.push(line);
        if ready {
            break;
        }
    }
    std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
    (child, port)
}

/// The CSV's rows as column -> value maps, by input.
fn rows(csv: &str) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .map(|l| {
            // Only the last column (transport parameters) may hold commas: none here.
            let cells: Vec<&str> = l.split(',').collect();
            assert_eq!(cells.len(), head.len(), "{l}");
            let row: BTreeMap<String, String> = head
                .iter()
                .zip(cells)
                .map(|(h, c)| (h.to_string(), c.to_string()))
                .collect();
            (row["input"].clone(), row)
        })
        .collect()
}

fn num(row: &BTreeMap<String, String>, col: &str) -> u64 {
    row[col]
        .parse()
        .unwrap_or_else(|_| panic!("{col} = {:?} in {row:?}", row[col]))
}

/// The DER size of the certificate `quiclab server --seed SEED --cert-padding p` makes.
fn cert_der(padding: usize) -> u64 {
    let names = ["localhost", "127.0.0.1", "::1"].map(String::from);
    let id = quiclab_proto::tls::self_signed_as(
        &names,
        SEED,
        padding,
        quiclab_proto::tls::CertType::Ed25519,
    );
    id.chain.iter().map(|c| c.len() as u64).sum()
}

#[test]
fn probe_tells_iack_from_wfc() {
    let dir = std::env::temp_dir().join(format!("quiclab-probe-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let hold = "certificate_delay_ms = 20.0";
    let (mut iack, iack_port) = start_server(
        &dir,
        "iack",
        &format!(
            "handshake = {{ instant_ack = true, {hold} }}\n[flow]\ninitial_max_data = 1234567\n"
        ),
        0,
    );
    let (mut wfc, wfc_port) = start_server(
        &dir,
        "wfc",
        &format!(
            "handshake = {{ instant_ack = false, {hold} }}\n[flow]\ninitial_max_data = 7654321\n"
        ),
        PADDING,
    );
    // A socket that never answers, and a port where nothing listens.
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let silent_port = silent.local_addr().unwrap().port();
    let closed_port = free_port();
    let list = dir.join("servers.txt");
    std::fs::write(
        &list,
        format!("# probe test\n127.0.0.1:{wfc_port}\n127.0.0.1:{silent_port}\n"),
    )
    .unwrap();
    let csv = dir.join("probe.csv");
    let started = std::time::Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_quiclab"))
        .arg("probe")
        .arg(format!("https://127.0.0.1:{iack_port}/"))
        .arg(format!("127.0.0.1:{closed_port}"))
        .arg("--file")
        .arg(&list)
        .args(["--parallel", "4", "--rate", "0", "--timeout-ms", "1500"])
        .arg("--csv")
        .arg(&csv)
        .output()
        .expect("runs quiclab probe");
    let elapsed = started.elapsed();
    let _ = iack.kill();
    let _ = wfc.kill();
    let _ = iack.wait();
    let _ = wfc.wait();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(elapsed.as_secs() < 10, "took {elapsed:?}");
    let table = rows(&std::fs::read_to_string(&csv).unwrap());
    assert_eq!(table.len(), 4, "{table:?}");

    let i = &table[&format!("https://127.0.0.1:{iack_port}/")];
    let w = &table[&format!("127.0.0.1:{wfc_port}")];
    for r in [i, w] {
        assert_eq!(r["error"], "", "{r:?}");
        assert_eq!(r["version"], "v1");
        assert_eq!(r["alpn"], "h3");
        assert_eq!(
            num(r, "amplification_limit_bytes"),
            3 * num(r, "client_first_flight_bytes")
        );
        // RFC 9000 §8.1: at no datagram did the server exceed 3x what it had received.
        assert_eq!(r["amplification_exceeded"], "false");
        assert_eq!(num(r, "cert_count"), 1);
        // The Certificate message lies within the server's Handshake-space TLS bytes.
        let msg = num(r, "cert_message_bytes");
        let hs = num(r, "server_handshake_crypto_bytes");
        assert!(msg < hs && hs - msg < 400, "{r:?}");
        assert!(num(r, "handshake_us") >= 20_000, "{r:?}");
    }
    // The small certificate's flight fits within 3x the client's Initial; the padded
    // one cannot (its Certificate message alone is larger), so that server had to wait
    // for the client's next datagram: blocked by the amplification limit.
    let limit = num(i, "amplification_limit_bytes");
    assert!(num(i, "first_flight_bytes") <= limit, "{i:?}");
    assert!(
        num(w, "first_flight_bytes") > num(w, "amplification_limit_bytes"),
        "{w:?}"
    );
    assert_eq!(i["instant_ack"], "true", "{i:?}");
    // The ServerHello waits for the 20 ms certificate delay after the instant ACK.
    let gap = num(i, "iack_sh_gap_us");
    assert!((15_000..200_000).contains(&gap), "{i:?}");
    assert_eq!(w["instant_ack"], "false", "{w:?}");
    assert_eq!(w["iack_sh_gap_us"], "");
    // Without an RTT sample the WFC client's first PTO is 1 s (RFC 9002 §6.2.2): none
    // fires during the 20 ms wait.
    assert_eq!(num(w, "client_ptos"), 0, "{w:?}");
    // The chain is the server's certificate, byte for byte in size.
    assert_eq!(num(i, "cert_der_bytes"), cert_der(0));
    assert_eq!(num(w, "cert_der_bytes"), cert_der(PADDING));
    // The padding extension adds its DER header (a few tens of bytes) to the padding.
    let grown = num(w, "cert_message_bytes") - num(i, "cert_message_bytes");
    assert!(
        (PADDING as u64..PADDING as u64 + 64).contains(&grown),
        "{grown}"
    );
    assert!(
        i["transport_parameters"].contains("initial_max_data=1234567"),
        "{i:?}"
    );
    assert!(
        w["transport_parameters"].contains("initial_max_data=7654321"),
        "{w:?}"
    );

    let s = &table[&format!("127.0.0.1:{silent_port}")];
    assert_eq!(s["error"], "timeout", "{s:?}");
    assert_eq!(s["instant_ack"], "");
    let c = &table[&format!("127.0.0.1:{closed_port}")];
    assert!(!c["error"].is_empty(), "{c:?}");
    assert!(stdout.contains("timeout"), "{stdout}");
    drop(silent);
    let _ = std::fs::remove_dir_all(&dir);
}
