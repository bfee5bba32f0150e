//! The satellite gateway and its split-connection TCP PEP (`[topology.gateway]`,
//! `scenario/gateway.rs`, `workload/pep.rs`): bytes arrive exactly through the PEP, its relay
//! buffers stay within their limit, a run is a pure function of its seed, both TCP
//! halves appear in the captures, QUIC does not see the PEP, and the time to the first
//! byte follows the round trips of each segment.

use crate::common;

use common::TempDir;
use quiclab_sim::{RunResult, Scenario, Simulation};
use std::path::Path;

/// A GEO-like path (`sat_ms` each way, 50/5 Mbit/s) with a terrestrial segment
/// (`ter_ms` each way, 1 Gbit/s) and a PEP switched by `pep`; `flows` are appended.
fn scenario(sat_ms: f64, ter_ms: f64, pep: &str, flows: &str) -> String {
    format!(
        r#"
name = "pep"
seed = 5

[stop]
time_s = 120.0
when_flows_done = true

[topology]
kind = "point_to_point"

[topology.forward]
rate_mbps = 5.0
delay_ms = {sat_ms}
queue = {{ discipline = "drop_tail", packets = 500 }}

[topology.return]
rate_mbps = 50.0
delay_ms = {sat_ms}
queue = {{ discipline = "drop_tail", packets = 3000 }}

[topology.gateway.forward]
rate_mbps = 1000.0
delay_ms = {ter_ms}

[topology.gateway.return]
rate_mbps = 1000.0
delay_ms = {ter_ms}

[topology.gateway.pep]
{pep}

{flows}
"#
    )
}

const TLS_GET: &str = r#"
[[flows]]
name = "get"
transport = "tcp"
workload = { kind = "request", size = 2000000 }
tls = { version = "1.3" }
"#;

fn run(text: &str, out: Option<&Path>) -> RunResult {
    let s = Scenario::parse(text, "inline").unwrap_or_else(|e| panic!("{e}"));
    Simulation::new(s, "inline", out)
        .unwrap_or_else(|e| panic!("{e}"))
        .run()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// TLS 1.3 runs end to end through the PEP: every record is authenticated (AEAD), so a
/// byte the PEP lost, duplicated, reordered or altered would fail decryption and abort
/// the flow. The download completes with exactly its bytes, and the PEP relayed them
/// plus TLS's framing. A plain-TCP upload through the PEP arrives with its exact count.
#[test]
fn bytes_arrive_exactly_through_the_pep() {
    let r = run(&scenario(295.0, 5.0, "enabled = true", TLS_GET), None);
    let f = &r.flows[0];
    assert_eq!(f.incomplete, None, "{f:?}");
    assert_eq!(f.goodput_bytes, 2_000_000);
    let pep = f.pep.as_ref().expect("the PEP split the flow");
    // 2 MB in records of at most 16 KiB, each with 22 bytes of TLS 1.3 framing, plus
    // the server's handshake flight (certificate and all): a few kB above 2 MB.
    assert!(
        (2_000_000..2_010_000).contains(&pep.relayed_down_bytes),
        "{pep:?}"
    );
    assert!(pep.relayed_up_bytes > 0 && pep.satellite.segments_sent > 0);
    assert!(pep.terrestrial.segments_sent > 0);

    let upload = r#"
[[flows]]
name = "up"
transport = "tcp"
workload = { kind = "bulk", bytes = 300000 }
"#;
    let r = run(&scenario(295.0, 5.0, "enabled = true", upload), None);
    let f = &r.flows[0];
    assert_eq!(f.incomplete, None, "{f:?}");
    assert_eq!(f.goodput_bytes, 300_000);
    assert_eq!(f.pep.as_ref().map(|p| p.relayed_up_bytes), Some(300_000));
}

/// A 16 KiB relay buffer between a 1 Gbit/s, 10 ms terrestrial segment and a 50 Mbit/s
/// satellite whose PEP end has a 64 KiB send buffer: the server's side fills both at
/// once, so the limit is reached, and never exceeded (the PEP stops reading the
/// server's connection; its window closes and the server waits).
#[test]
fn relay_buffers_stay_within_their_limit() {
    let limit = 16_384;
    let r = run(
        &scenario(
            295.0,
            5.0,
            &format!("buffer_bytes = {limit}\nsatellite = {{ send_buffer = 65536 }}"),
            TLS_GET,
        ),
        None,
    );
    let f = &r.flows[0];
    assert_eq!(f.incomplete, None, "{f:?}");
    assert_eq!(f.goodput_bytes, 2_000_000);
    let pep = f.pep.as_ref().expect("the PEP split the flow");
    assert_eq!(pep.buffer_bytes, limit);
    assert!(pep.max_down_buffered <= limit, "{pep:?}");
    assert!(pep.max_up_buffered <= limit, "{pep:?}");
    assert_eq!(
        pep.max_down_buffered, limit,
        "the download should fill the buffer (back-pressure exercised): {pep:?}"
    );
}

/// Reads the TCP segments of a LINKTYPE_RAW pcap: (source, destination, flags, seq).
fn segments(pcap: &Path) -> Vec<([u8; 4], [u8; 4], u8, u32)> {
    let bytes = std::fs::read(pcap).unwrap_or_else(|e| panic!("{}: {e}", pcap.display()));
    let mut out = Vec::new();
    let mut at = 24;
    while at + 16 <= bytes.len() {
        let len = u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
        let ip = &bytes[at + 16..at + 16 + len];
        if ip[9] == 6 {
            let tcp = &ip[20..];
            out.push((
                ip[12..16].try_into().unwrap(),
                ip[16..20].try_into().unwrap(),
                tcp[13],
                u32::from_be_bytes(tcp[4..8].try_into().unwrap()),
            ));
        }
        at += 16 + len;
    }
    out
}

/// Same seed, same bytes (results and every capture); the captures hold both halves
/// of the split connection: the client's SYN on the satellite link and the PEP's own
/// SYN (another initial sequence number, the client's address) on the terrestrial one.
#[test]
fn same_seed_same_bytes_and_both_halves_captured() {
    let text = scenario(295.0, 5.0, "enabled = true", TLS_GET)
        .replace("[topology]", "[measure]\npcap = true\n\n[topology]");
    let (a, b) = (TempDir::new("pep-a"), TempDir::new("pep-b"));
    let (ra, rb) = (run(&text, Some(a.path())), run(&text, Some(b.path())));
    assert_eq!(ra, rb);
    let names = [
        "all",
        "forward",
        "return",
        "terrestrial_forward",
        "terrestrial_return",
    ];
    for name in names {
        let file = format!("pcap/{name}.pcap");
        let (x, y) = (
            std::fs::read(a.path().join(&file)).unwrap(),
            std::fs::read(b.path().join(&file)).unwrap(),
        );
        assert!(x.len() > 24, "{file} is empty");
        assert_eq!(x, y, "{file} differs between two runs of one seed");
    }
    assert_eq!(ra.links.len(), 4);
    assert_eq!(ra.links[2].name, "terrestrial_forward");
    assert!(ra.links[3].delivered_bytes > 2_000_000);
    let syn = |link: &str| {
        segments(&a.path().join(format!("pcap/{link}.pcap")))
            .into_iter()
            .filter(|s| s.2 & 0x12 == 0x02)
            .collect::<Vec<_>>()
    };
    let (sat, ter) = (syn("forward"), syn("terrestrial_forward"));
    assert_eq!((sat.len(), ter.len()), (1, 1), "{sat:?} {ter:?}");
    // Both SYNs carry the client's and the server's addresses (the PEP is transparent)
    // but start different sequence spaces: two connections.
    assert_eq!((sat[0].0, sat[0].1), (ter[0].0, ter[0].1));
    assert_ne!(sat[0].3, ter[0].3);
    // The SYN-ACKs: the PEP's on the satellite, the server's on the terrestrial link.
    let synack = |link: &str| {
        segments(&a.path().join(format!("pcap/{link}.pcap")))
            .into_iter()
            .filter(|s| s.2 & 0x12 == 0x12)
            .count()
    };
    assert_eq!((synack("return"), synack("terrestrial_return")), (1, 1));
}

/// A QUIC flow beside a TCP flow: the PEP splits the TCP flow and leaves the QUIC
/// flow's packets alone, so the QUIC flow's results are the same with and without it.
#[test]
fn quic_is_unaffected_by_the_pep() {
    let flows = r#"
[[flows]]
name = "quic"
workload = { kind = "request", size = 1000000 }
"#;
    let on = run(&scenario(295.0, 5.0, "enabled = true", flows), None);
    let off = run(&scenario(295.0, 5.0, "enabled = false", flows), None);
    assert_eq!(on, off);
    assert_eq!(on.flows[0].goodput_bytes, 1_000_000);
    assert!(on.flows[0].pep.is_none());
    // The QUIC packets did cross the terrestrial segment.
    assert!(on.links[3].delivered_bytes > 1_000_000);
}

/// TLS 1.3 over TCP, a 1000-byte response (one segment, one record), satellite one way
/// S = 300 ms, terrestrial one way T = 50 ms, rates high enough that serialization is
/// under a millisecond in total.
///
/// End to end (no PEP) each exchange crosses the whole path: SYN/SYN-ACK, ClientHello/
/// server flight, Finished+GET/response = 3 round trips of 2(S+T): 3 x 700 = 2100 ms.
///
/// With the PEP: the client's SYN reaches the PEP at S, which answers it and sends its
/// own SYN to the server (done by S + 2T). The client's ClientHello leaves at 2S,
/// reaches the PEP at 3S and the server at 3S + T; the server's flight is back at the
/// PEP at 3S + 2T and at the client at 4S + 2T; Finished + GET reach the server at
/// 5S + 3T, the response the client at 6S + 4T = 3 x 600 + 2 x 100 = 2000 ms: the
/// terrestrial TCP handshake overlaps the satellite one.
#[test]
fn time_to_first_byte_follows_the_round_trips() {
    let flow = r#"
[[flows]]
name = "get"
transport = "tcp"
workload = { kind = "request", size = 1000 }
tls = { version = "1.3" }
"#;
    let fast = |t: String| {
        t.replace("rate_mbps = 5.0", "rate_mbps = 1000.0")
            .replace("rate_mbps = 50.0", "rate_mbps = 1000.0")
    };
    for (pep, expect_s) in [("enabled = true", 2.0), ("enabled = false", 2.1)] {
        let r = run(&fast(scenario(300.0, 50.0, pep, flow)), None);
        let f = &r.flows[0];
        let ttfb = f.ttfb_s.expect("a response");
        assert!(
            (ttfb - expect_s).abs() < 0.002,
            "{pep}: TTFB {ttfb} s, expected {expect_s} s"
        );
        assert_eq!(f.pep.is_some(), pep == "enabled = true");
    }
}

/// Bad PEP settings are typed errors naming the key.
#[test]
fn bad_pep_keys_are_errors() {
    for (pep, key) in [
        ("buffer_bytes = 0", "topology.gateway.pep.buffer_bytes"),
        (
            "satellite = { ack_every = 0 }",
            "topology.gateway.pep.satellite.ack_every",
        ),
        (
            "terrestrial = { fast_open = true }",
            "topology.gateway.pep.terrestrial.fast_open",
        ),
        ("unknown = 1", "unknown field"),
        ("ack_thinning = 0", "topology.gateway.pep.ack_thinning"),
        ("ack_thinning = 33", "topology.gateway.pep.ack_thinning"),
    ] {
        let text = scenario(295.0, 5.0, pep, TLS_GET);
        let e = Scenario::parse(&text, "inline").expect_err(pep).to_string();
        assert!(e.contains(key), "{pep}: {e}");
    }
    let tfo = TLS_GET.replace("tls =", "tcp = { fast_open = true }\ntls =");
    let e = Scenario::parse(&scenario(295.0, 5.0, "", &tfo), "inline")
        .expect_err("TFO through the PEP")
        .to_string();
    assert!(e.contains("flows[0].tcp.fast_open"), "{e}");
    // A gateway only behind a point-to-point path.
    let dumbbell = scenario(295.0, 5.0, "", TLS_GET).replace(
        "kind = \"point_to_point\"",
        "kind = \"dumbbell\"\npairs = 1",
    );
    assert!(Scenario::parse(&dumbbell, "inline").is_err());
}

/// TLS over TCP after loss recovery: a repaired hole makes a whole window readable at
/// once, more than rustls's received-plaintext buffer takes; the TLS layer keeps the
/// rest until the application read (`TlsLayer::pending_in`) instead of aborting with
/// "TLS record buffer full" (as it did before the PEP study ran TCP with loss).
#[test]
fn tls_over_tcp_survives_loss_recovery() {
    let flow = r#"
[[flows]]
name = "get"
transport = "tcp"
workload = { kind = "request", size = 3000000 }
tls = { version = "1.3" }
"#;
    for pep in ["enabled = false", "enabled = true"] {
        // 1% loss on the satellite download; NewReno needs minutes at 600 ms.
        let text = scenario(295.0, 5.0, pep, flow)
            .replace("time_s = 120.0", "time_s = 1000.0")
            .replace(
                "packets = 3000 }",
                "packets = 3000 }\nimpairments = { loss = { model = \"bernoulli\", p = 0.01 } }",
            );
        let r = run(&text, None);
        let f = &r.flows[0];
        assert_eq!(f.incomplete, None, "{pep}: {f:?}");
        assert_eq!(f.goodput_bytes, 3_000_000, "{pep}");
        assert!(r.links[1].impairment_drops > 0, "{pep}: no loss happened");
    }
}

/// Seed 001's PEP thins TCP's ACKs on the satellite return channel (`ack_thinning = K`):
/// the client's pure ACKs for the PEP's segments cross the satellite K times less often,
/// so the return link's packets and bytes fall by about K (the handshake, the request and
/// the TLS client records do not thin), while the download still completes exactly.
/// Without the knob the scenario's serialized PEP table has no `ack_thinning` key.
#[test]
fn ack_thinning_cuts_the_satellite_return_volume_by_k() {
    let base = run(&scenario(295.0, 5.0, "enabled = true", TLS_GET), None);
    let (p1, b1) = (
        base.links[0].delivered_packets,
        base.links[0].delivered_bytes,
    );
    for k in [2u64, 4] {
        let pep = format!("enabled = true\nack_thinning = {k}");
        let r = run(&scenario(295.0, 5.0, &pep, TLS_GET), None);
        assert_eq!(r.flows[0].goodput_bytes, 2_000_000);
        assert_eq!(r.flows[0].incomplete, None);
        let (p, b) = (r.links[0].delivered_packets, r.links[0].delivered_bytes);
        let (pk, bk) = (p1 as f64 / p as f64, b1 as f64 / b as f64);
        eprintln!("K = {k}: packets {p1} -> {p} ({pk:.2}x), bytes {b1} -> {b} ({bk:.2}x)");
        // Within 10% of K (measured: 1.99x/1.97x at K = 2, 3.92x/3.82x at K = 4): the
        // handshake, request and TLS client records do not thin, and the 40 ms
        // delayed-ACK timer sends a few ACKs early while the PEP's window is small.
        let kf = k as f64;
        assert!(
            pk > 0.9 * kf && pk <= 1.02 * kf,
            "K = {k}: packets {pk:.2}x"
        );
        assert!(bk > 0.9 * kf && bk <= 1.02 * kf, "K = {k}: bytes {bk:.2}x");
    }
    let s = Scenario::parse(&scenario(295.0, 5.0, "enabled = true", TLS_GET), "inline").unwrap();
    assert!(!toml::to_string(&s).unwrap().contains("ack_thinning"));
}
