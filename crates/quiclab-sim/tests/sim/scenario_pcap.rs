//! A scenario run with `measure.pcap = true` writes captures that tshark decrypts
//! completely with the run's `keys.log`: the simulator's pcap path (link taps, key log
//! written at the end of the run, server ports 4433 + flow index) works end to end, not
//! just the pcap writer (see pcap_decrypt.rs).
//!
//! Needs `tshark`: without it a failure after scripts/setup-tests.sh or under `CI`,
//! otherwise a recorded skip (tests/skip.rs).

use crate::common;

use common::{merge_pcaps, tshark_available, tshark_decrypt_all, TempDir};
use quiclab_sim::{Scenario, Simulation};

const SIZE: usize = 20000;

const SCENARIO: &str = r#"
name = "pcap-request"
seed = 3

[stop]
time_s = 10.0
when_flows_done = true

[measure]
pcap = true

[topology]
kind = "point_to_point"

[topology.forward]
rate_mbps = 10.0
delay_ms = 10.0

[topology.return]
rate_mbps = 10.0
delay_ms = 10.0

[[flows]]
name = "get"
workload = { kind = "request", size = 20000 }
"#;

#[test]
fn scenario_pcap_decrypts() {
    if !tshark_available("scenario_pcap_decrypts") {
        return;
    }
    let dir = TempDir::new("scenario-pcap");
    let scenario = Scenario::parse(SCENARIO, "inline").unwrap_or_else(|e| panic!("{e}"));
    let result = Simulation::new(scenario, "inline", Some(dir.path()))
        .unwrap_or_else(|e| panic!("{e}"))
        .run()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(result.flows[0].ttlb_s.is_some(), "the request completed");
    let pcap_dir = dir.path().join("pcap");
    let keys = pcap_dir.join("keys.log");
    let key_lines = std::fs::read_to_string(&keys).expect("keys.log");
    assert!(
        key_lines.contains("CLIENT_HANDSHAKE_TRAFFIC_SECRET")
            && key_lines.contains("CLIENT_TRAFFIC_SECRET_0"),
        "keys.log has the handshake and 1-RTT secrets:\n{key_lines}"
    );

    // Each link's capture holds one direction; tshark needs both to follow the
    // handshake (see merge_pcaps), so decrypt the merged capture.
    let links = [pcap_dir.join("forward.pcap"), pcap_dir.join("return.pcap")];
    let merged = dir.path().join("both.pcap");
    merge_pcaps(&links, &merged);
    // The only flow's server listens on 4433 (+ flow index 0).
    let d = tshark_decrypt_all(&merged, &keys, &[4433]);
    // A datagram is captured when its transmission starts and counted when it ends; the
    // run stops when the flow is done, so each link may have one datagram in between.
    let sent: u64 = result.links.iter().map(|l| l.delivered_packets).sum();
    let frames = d.frames as u64;
    assert!(
        (sent..=sent + 2).contains(&frames),
        "one pcap record per datagram sent: {frames} records, {sent} datagrams"
    );
    println!(
        "tshark decrypted all {} QUIC packets in {} datagrams",
        d.quic_packets, d.frames
    );
    let request = format!("GET /{SIZE}\r\n");
    assert!(
        d.stream_data
            .windows(request.len())
            .any(|w| w == request.as_bytes()),
        "the request is visible in the decrypted STREAM frames"
    );
    // The responder sends zero bytes; no loss, so nothing is retransmitted.
    assert_eq!(
        d.stream_data.len(),
        request.len() + SIZE,
        "the request and the response body, once each"
    );

    // all.pcap holds every datagram once, both directions, as each sender emitted it:
    // it decrypts on its own, to the same packets.
    let all = tshark_decrypt_all(&pcap_dir.join("all.pcap"), &keys, &[4433]);
    assert_eq!(
        all.quic_packets, d.quic_packets,
        "all.pcap has every QUIC packet"
    );
    assert_eq!(
        all.stream_data, d.stream_data,
        "and the same decrypted data"
    );
}

/// Other TLS choices decrypt as well: an RSA certificate (its run's own keys.log, as the
/// RSA-PSS salt differs per run) with ChaCha20-Poly1305 and P-256, and ECDSA with
/// AES-256-GCM.
#[test]
fn scenario_pcap_decrypts_with_other_tls_choices() {
    if !tshark_available("scenario_pcap_decrypts_with_other_tls_choices") {
        return;
    }
    let cases = [
        ("rsa2048", "chacha20_poly1305", "p256"),
        ("ecdsa_p256", "aes256_gcm", "x25519"),
    ];
    for (cert, suite, group) in cases {
        let text = SCENARIO.replace(
            "seed = 3\n",
            &format!(
                "seed = 3\ncertificate_type = \"{cert}\"\n\
                 [tls]\ncipher_suites = \"{suite}\"\nkx_groups = \"{group}\"\n"
            ),
        );
        let dir = TempDir::new("scenario-pcap-tls");
        let scenario = Scenario::parse(&text, "inline").unwrap_or_else(|e| panic!("{e}"));
        let result = Simulation::new(scenario, "inline", Some(dir.path()))
            .unwrap_or_else(|e| panic!("{e}"))
            .run()
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            result.flows[0].ttlb_s.is_some(),
            "{cert}: the request completed"
        );
        let pcap_dir = dir.path().join("pcap");
        let d = tshark_decrypt_all(
            &pcap_dir.join("all.pcap"),
            &pcap_dir.join("keys.log"),
            &[4433],
        );
        let request = format!("GET /{SIZE}\r\n");
        assert_eq!(
            d.stream_data.len(),
            request.len() + SIZE,
            "{cert} {suite} {group}: the request and the response body, decrypted"
        );
        println!(
            "{cert} {suite} {group}: tshark decrypted {} QUIC packets",
            d.quic_packets
        );
    }
}
