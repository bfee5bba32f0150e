//! TLS choices in scenarios (`certificate_type`, `[tls]`, `[flows.tls]`): every
//! certificate type completes a handshake over QUIC and over TLS/TCP and the server's
//! first flight grows with its certificate (RSA > ECDSA > Ed25519); the chosen cipher
//! suite is the one negotiated (the client's qlog `parameters_set`); key exchange
//! groups show in the ServerHello's size and in a HelloRetryRequest's extra round
//! trip; Ed25519 and ECDSA runs repeat byte for byte, RSA runs repeat their results
//! and qlog (only the RSA-PSS salt, hence pcaps and keys, differ); bad values are
//! typed errors naming the key.

use crate::common;
use crate::common::{files, run};

use common::TempDir;
use quiclab_sim::RunResult;
use std::path::Path;

/// A 10 KB GET over a slow (1 Mbit/s) 40 ms RTT path, where a bigger server flight
/// takes visibly longer to serialize. `top` goes before the tables, `flow` into the
/// flow.
fn scenario(top: &str, flow: &str) -> String {
    format!(
        r#"
name = "tls-choices"
seed = 5
{top}
[stop]
time_s = 10.0
when_flows_done = true
[measure]
qlog = true
pcap = true
[topology]
kind = "point_to_point"
[topology.forward]
rate_mbps = 1.0
delay_ms = 20.0
[topology.return]
rate_mbps = 1.0
delay_ms = 20.0
[[flows]]
name = "get"
workload = {{ kind = "request", size = 10000 }}
{flow}
"#
    )
}

/// Bytes the server sent in packets of `ty` ("initial", "handshake").
fn server_bytes(r: &RunResult, ty: &str) -> u64 {
    r.flows[0].server.sent_by_packet_type[ty].bytes
}

/// Bytes of CRYPTO frames the server sent (its TLS flight, without the padding that
/// fills its first datagram to 1200 bytes).
fn server_crypto_bytes(r: &RunResult) -> u64 {
    r.flows[0].server.sent_by_frame_type["crypto"].bytes
}

/// The flow's handshake duration, seconds.
fn handshake_s(r: &RunResult) -> f64 {
    let f = &r.flows[0];
    f.handshake_done_s.expect("the handshake completes") - f.start_s
}

/// The cipher suite in the client's qlog (`parameters_set` with the server's
/// parameters carries `tls_cipher`).
fn negotiated_cipher(out: &Path) -> String {
    let text = std::fs::read_to_string(out.join("qlog/get_client.sqlog")).expect("client qlog");
    let found: Vec<String> = text
        .split('\u{1e}')
        .filter_map(|rec| serde_json::from_str::<serde_json::Value>(rec.trim()).ok())
        .filter_map(|v| v["data"]["tls_cipher"].as_str().map(String::from))
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one parameters_set with tls_cipher: {found:?}"
    );
    found[0].clone()
}

#[test]
fn every_certificate_type_handshakes_and_grows_the_server_flight() {
    let mut rows = Vec::new();
    for ty in ["ed25519", "ecdsa_p256", "rsa2048"] {
        let dir = TempDir::new("tls-cert");
        let t = std::time::Instant::now();
        let r = run(
            &scenario(&format!("certificate_type = \"{ty}\""), ""),
            dir.path(),
        );
        let f = &r.flows[0];
        assert!(f.ttlb_s.is_some(), "{ty}: the GET completes: {f:?}");
        let row = (
            server_crypto_bytes(&r),
            server_bytes(&r, "initial"),
            handshake_s(&r),
            server_bytes(&r, "handshake"),
        );
        println!(
            "{ty}: server CRYPTO bytes {}, Initial bytes {}, handshake {:.4} s, \
             Handshake packet bytes {} (wall {:?})",
            row.0,
            row.1,
            row.2,
            row.3,
            t.elapsed()
        );
        rows.push(row);
    }
    let (ed, ec, rsa) = (rows[0], rows[1], rows[2]);
    // The certificate and CertificateVerify ride in Handshake packets; the ServerHello
    // (Initial) does not depend on the certificate.
    assert!(ec.0 > ed.0, "ECDSA flight {} > Ed25519 {}", ec.0, ed.0);
    assert!(rsa.0 > ec.0 + 500, "RSA flight {} >> ECDSA {}", rsa.0, ec.0);
    assert_eq!(ed.1, ec.1, "ServerHello sizes");
    assert_eq!(ed.1, rsa.1, "ServerHello sizes");
    // Ed25519's and ECDSA's flights fit the first datagram, padded to 1200 bytes
    // (RFC 9000 §14.1), so they take the same time; RSA's needs a second datagram, and
    // at 1 Mbit/s every byte costs 8 µs before the client can finish.
    assert!(ec.2 >= ed.2, "ECDSA handshake {} >= Ed25519 {}", ec.2, ed.2);
    assert!(
        rsa.3 > ec.3,
        "RSA Handshake packets {} > ECDSA {}",
        rsa.3,
        ec.3
    );
    assert!(
        rsa.2 > ec.2 + 0.001,
        "RSA handshake {} > ECDSA {}",
        rsa.2,
        ec.2
    );
}

#[test]
fn tls_over_tcp_uses_the_same_certificate_type() {
    for version in ["1.3", "1.2"] {
        let mut bytes = Vec::new();
        for ty in ["ed25519", "ecdsa_p256", "rsa2048"] {
            let dir = TempDir::new("tls-tcp");
            let flow = format!("transport = \"tcp\"\ntls = {{ version = \"{version}\" }}");
            let r = run(
                &scenario(&format!("certificate_type = \"{ty}\""), &flow),
                dir.path(),
            );
            let f = &r.flows[0];
            assert!(f.ttlb_s.is_some(), "TLS {version} {ty}: {f:?}");
            println!(
                "TLS {version} {ty}: server sent {} bytes, handshake {:?}",
                f.server.sent.bytes, f.handshake_done_s
            );
            bytes.push(f.server.sent.bytes);
        }
        assert!(
            bytes[0] < bytes[1] && bytes[1] < bytes[2],
            "TLS {version}: {bytes:?}"
        );
    }
}

#[test]
fn the_chosen_cipher_suite_is_negotiated() {
    let cases = [
        (
            "[tls]\ncipher_suites = [\"aes128_gcm\"]",
            "",
            "TLS13_AES_128_GCM_SHA256",
        ),
        (
            "[tls]\ncipher_suites = [\"aes256_gcm\"]",
            "",
            "TLS13_AES_256_GCM_SHA384",
        ),
        (
            "[tls]\ncipher_suites = \"chacha20_poly1305\"",
            "",
            "TLS13_CHACHA20_POLY1305_SHA256",
        ),
        // The client's most preferred suite that the server accepts (rustls's
        // server follows the client's order).
        (
            "[tls]\ncipher_suites = \"chacha20_poly1305, aes128_gcm\"\n\
             server = { cipher_suites = [\"aes256_gcm\", \"aes128_gcm\"] }",
            "",
            "TLS13_AES_128_GCM_SHA256",
        ),
        (
            "[tls]\ncipher_suites = \"chacha20_poly1305, aes128_gcm\"\n\
             server = { cipher_suites = [\"aes128_gcm\", \"chacha20_poly1305\"] }",
            "",
            "TLS13_CHACHA20_POLY1305_SHA256",
        ),
        // A flow's table overrides the scenario's.
        (
            "[tls]\ncipher_suites = [\"chacha20_poly1305\"]",
            "tls = { cipher_suites = [\"aes256_gcm\"] }",
            "TLS13_AES_256_GCM_SHA384",
        ),
        // The default: AES-128-GCM first.
        ("", "", "TLS13_AES_128_GCM_SHA256"),
    ];
    for (top, flow, expect) in cases {
        let dir = TempDir::new("tls-suite");
        let r = run(&scenario(top, flow), dir.path());
        assert!(r.flows[0].ttlb_s.is_some(), "{top} {flow}");
        assert_eq!(negotiated_cipher(dir.path()), expect, "{top} / {flow}");
    }
}

#[test]
fn key_exchange_groups_show_in_the_handshake() {
    let dir = TempDir::new("tls-kx");
    let x25519 = run(&scenario("", ""), dir.path());
    let p256 = run(&scenario("[tls]\nkx_groups = [\"p256\"]", ""), dir.path());
    // An uncompressed P-256 share is 65 bytes, an X25519 share 32 (RFC 8446 §4.2.8.2).
    assert_eq!(
        server_bytes(&p256, "initial"),
        server_bytes(&x25519, "initial") + 33,
        "the ServerHello's key share"
    );
    // A client whose first (key-share) group the server does not accept gets a
    // HelloRetryRequest (RFC 8446 §4.1.4): one more round trip of 40 ms.
    let hrr = run(
        &scenario(
            "[tls]\nkx_groups = [\"x25519\", \"p256\"]\nserver = { kx_groups = \"p256\" }",
            "",
        ),
        dir.path(),
    );
    let extra = handshake_s(&hrr) - handshake_s(&p256);
    println!(
        "handshake: x25519 {:.4} s, p256 {:.4} s, HelloRetryRequest {:.4} s",
        handshake_s(&x25519),
        handshake_s(&p256),
        handshake_s(&hrr)
    );
    // A HelloRetryRequest adds one round trip: 40 ms RTT plus, at 1 Mbit/s, the HRR's
    // datagram and the second ClientHello's, each an Initial padded to 1200 bytes
    // (RFC 9000 §14.1) plus 28 bytes of IPv4 and UDP headers: 2 x 9.824 ms.
    let expected = 0.040 + 2.0 * (1200.0 + 28.0) * 8.0 / 1e6;
    assert!(
        (extra - expected).abs() < 1e-6,
        "HRR adds {extra:.6} s to the handshake, expected {expected:.6} s (one RTT and two \
         1200-byte Initial datagrams at 1 Mbit/s)"
    );
}

/// A QUIC flow and a TLS 1.3/TCP flow, with qlog and pcap.
fn both_transports(cert: &str) -> String {
    scenario(
        &format!("certificate_type = \"{cert}\"\n[tls]\nkx_groups = \"p256\""),
        "",
    ) + "[[flows]]\nname = \"tcp\"\nstart_s = 0.01\ntransport = \"tcp\"\n\
           workload = { kind = \"request\", size = 10000 }\ntls = { version = \"1.3\" }\n"
}

fn json(r: &RunResult) -> String {
    serde_json::to_string_pretty(r).expect("results serialize")
}

#[test]
fn ecdsa_and_ed25519_runs_repeat_byte_for_byte() {
    for cert in ["ed25519", "ecdsa_p256"] {
        let (a, b) = (TempDir::new("tls-det-a"), TempDir::new("tls-det-b"));
        let text = both_transports(cert);
        let (ra, rb) = (run(&text, a.path()), run(&text, b.path()));
        assert!(ra.flows.iter().all(|f| f.ttlb_s.is_some()), "{cert}");
        assert_eq!(json(&ra), json(&rb), "{cert}: results differ");
        let (fa, fb) = (files(a.path()), files(b.path()));
        assert!(fa.contains_key("pcap/all.pcap") && fa.contains_key("pcap/keys.log"));
        assert_eq!(fa.keys().collect::<Vec<_>>(), fb.keys().collect::<Vec<_>>());
        for (name, bytes) in &fa {
            assert!(bytes == &fb[name], "{cert}: {name} differs between runs");
        }
    }
}

/// RSA-PSS signatures take a random salt (ring's OS random), so the CertificateVerify
/// and everything keyed after it differ between runs; sizes and timing do not, so the
/// results and qlog files repeat. If the pcaps ever repeat too, the docs of
/// `certificate_type` (scenario/tls.rs, mod.rs, ARCHITECTURE) are out of date.
#[test]
fn rsa_runs_repeat_results_and_qlog_but_not_pcap_bytes() {
    let (a, b) = (TempDir::new("tls-rsa-a"), TempDir::new("tls-rsa-b"));
    let text = both_transports("rsa2048");
    let (ra, rb) = (run(&text, a.path()), run(&text, b.path()));
    assert!(ra.flows.iter().all(|f| f.ttlb_s.is_some()));
    assert_eq!(json(&ra), json(&rb), "RSA results differ between runs");
    let (fa, fb) = (files(a.path()), files(b.path()));
    for (name, bytes) in &fa {
        let same = bytes == &fb[name];
        if name.starts_with("qlog/") {
            assert!(same, "{name} differs between RSA runs");
        } else if name.starts_with("pcap/") {
            println!("{name}: {}", if same { "same" } else { "differs" });
        }
    }
    assert!(
        fa["pcap/all.pcap"] != fb["pcap/all.pcap"],
        "RSA pcaps repeat: update the determinism notes"
    );
    assert_eq!(fa["pcap/all.pcap"].len(), fb["pcap/all.pcap"].len());
}
