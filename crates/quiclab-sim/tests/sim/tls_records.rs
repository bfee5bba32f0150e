//! Dynamic TLS record sizing over TCP (`[flows.tls] records = "dynamic"`): records that
//! fill one segment at the start and after an idle second, 16 KB ones after the first
//! MiB (read from the simulator's pcap by tshark), and what that does to the first byte
//! of a response larger than the initial window.

use crate::common;
use crate::common::run;

use common::{tshark_available, TempDir};
use quiclab_sim::Scenario;
use std::path::Path;
use std::process::Command;

/// `count` GETs of `size` bytes, `think_ms` apart, over TLS `version`/TCP, 50 ms RTT.
fn scenario(version: &str, records: &str, size: u64, count: u32, think_ms: u32) -> String {
    format!(
        r#"
name = "tls-records"
seed = 1
[stop]
time_s = 30.0
when_flows_done = true
[measure]
pcap = true
[topology]
kind = "point_to_point"
[topology.forward]
rate_mbps = 50.0
delay_ms = 25.0
[topology.return]
rate_mbps = 50.0
delay_ms = 25.0
[[flows]]
name = "get"
transport = "tcp"
workload = {{ kind = "request", size = {size}, count = {count}, think_ms = {think_ms} }}
tls = {{ version = "{version}", records = "{records}" }}
"#
    )
}

/// A 100 KB response: its first 16 KB record needs twelve segments, two more than the
/// initial window, so the first byte waits a round trip longer than with records of one
/// segment, over TLS 1.3 (handshake 2 RTT) and TLS 1.2 (3 RTT) alike.
#[test]
fn small_records_bring_the_first_byte_a_round_trip_earlier() {
    for (version, handshake_rtts) in [("1.3", 2.0), ("1.2", 3.0)] {
        let ttfb = |records: &str| {
            let dir = TempDir::new("tls-rec-ttfb");
            let r = run(&scenario(version, records, 100_000, 1, 0), dir.path());
            let f = &r.flows[0];
            assert_eq!(f.incomplete, None, "{version} {records}");
            assert_eq!(f.goodput_bytes, 100_000);
            f.ttfb_s.expect("a first byte")
        };
        let rtt = 0.05;
        let (full, dynamic) = (ttfb("full"), ttfb("dynamic"));
        // Handshake, the request's round trip, and for full records one more.
        let want = (handshake_rtts + 1.0) * rtt;
        assert!((dynamic - want).abs() < 0.005, "TLS {version}: {dynamic}");
        assert!((full - want - rtt).abs() < 0.005, "TLS {version}: {full}");
    }
}

/// The server's TLS records (lengths from the record headers, as tshark reads them),
/// after its handshake flight, with the time of the segment that completed each.
fn server_records(dir: &Path) -> Vec<(f64, u64)> {
    let out = Command::new("tshark")
        .arg("-r")
        .arg(dir.join("pcap/return.pcap"))
        .args(["-d", "tcp.port==4433,tls", "-Y", "tcp.srcport==4433 && tls"])
        .args(["-T", "fields", "-e", "frame.time_relative"])
        .args(["-e", "tls.record.length"])
        .output()
        .expect("tshark runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let mut frames = text.lines().filter_map(|l| l.split_once('\t'));
    // The first frame is the handshake flight (ServerHello, CCS, encrypted rest).
    frames.next().expect("a handshake flight");
    frames
        .flat_map(|(t, lens)| {
            let t: f64 = t.parse().expect("a time");
            lens.split(',')
                .filter(|n| !n.is_empty())
                .map(move |n| (t, n.parse::<u64>().expect("a record length")))
        })
        .collect()
}

/// 1448 data bytes per segment (MSS 1460 less 12 of timestamps): a small record is
/// 1426 bytes of plaintext (TLS 1.3: 22 bytes of overhead), 1443 in its header's
/// length field, 1448 on the wire. 16 KB records are 16384 + 17.
const SMALL: u64 = 1443;
const LARGE: u64 = 16_401;

#[test]
fn pcap_shows_segment_sized_records_then_16k_then_small_again_after_idle() {
    if !tshark_available("tls_records_in_pcap") {
        return;
    }
    // Two 1.5 MB responses 1.5 s apart: the second starts after an idle second.
    let dir = TempDir::new("tls-rec-pcap");
    let r = run(&scenario("1.3", "dynamic", 1_500_000, 2, 1500), dir.path());
    assert_eq!(r.flows[0].incomplete, None);
    let recs = server_records(dir.path());
    let first_large = recs.iter().position(|&(_, n)| n == LARGE).expect("16 KB");
    // Before it: records of at most one segment, the first a full one, worth the
    // first MiB of plaintext (each carries its length less 17).
    assert_eq!(recs[0].1, SMALL, "{:?}", &recs[..5]);
    assert!(recs[..first_large].iter().all(|&(_, n)| n <= SMALL));
    let plain: u64 = recs[..first_large].iter().map(|&(_, n)| n - 17).sum();
    assert!(
        (1 << 20..(1 << 20) + 1426).contains(&plain),
        "{plain} bytes in small records"
    );
    // The second response (after the think time) starts small again.
    let second = recs
        .iter()
        .position(|&(t, _)| t > 1.5)
        .expect("a second GET");
    assert!(recs[first_large..second].iter().any(|&(_, n)| n == LARGE));
    assert_eq!(recs[second].1, SMALL, "{:?}", &recs[second..second + 3]);
    // Full-size records from the start without the knob.
    let dir = TempDir::new("tls-rec-pcap-full");
    run(&scenario("1.3", "full", 1_500_000, 1, 0), dir.path());
    assert_eq!(server_records(dir.path())[0].1, LARGE);
}

#[test]
fn records_is_a_tcp_only_key() {
    let text = scenario("1.3", "dynamic", 1000, 1, 0).replace("transport = \"tcp\"\n", "");
    let text = text.replace("version = \"1.3\", ", "");
    let Err(e) = Scenario::parse(&text, "inline") else {
        panic!("records on a QUIC flow parsed");
    };
    assert!(e.to_string().contains("flows[0].tls.records"), "{e}");
    let bad = scenario("1.3", "tiny", 1000, 1, 0);
    let Err(e) = Scenario::parse(&bad, "inline") else {
        panic!("an unknown records value parsed");
    };
    assert!(e.to_string().contains("tiny"), "{e}");
}
