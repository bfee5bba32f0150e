//! TCP flows in the simulator: a run is a pure function of the scenario and its seed
//! (byte-identical results and pcap), request and bulk workloads complete with the
//! expected handshake time, and tshark decodes the captured segments as valid TCP
//! (checksums, options, SACK) when it is installed.

use crate::common;
use crate::common::run;

use common::{tshark_available, TempDir};
use quiclab_sim::{RunResult, Scenario};
use std::process::Command;

/// 20 ms RTT, 10 Mbit/s, 1% loss both ways and jitter with reordering: recovery,
/// SACK and RACK all run. A bulk flow and a request flow.
const LOSSY: &str = r#"
name = "tcp-determinism"
seed = 7

[stop]
time_s = 30.0
when_flows_done = true

[measure]
pcap = true
traces = true

[topology]
kind = "point_to_point"

[topology.forward]
rate_mbps = 10.0
delay_ms = 10.0
queue = { discipline = "drop_tail", packets = 100 }
impairments = { loss = { model = "bernoulli", p = 0.01 }, jitter = { max_ms = 2.0, reorder = true } }

[topology.return]
rate_mbps = 10.0
delay_ms = 10.0
queue = { discipline = "drop_tail", packets = 100 }
impairments = { loss = { model = "bernoulli", p = 0.01 }, jitter = { max_ms = 2.0, reorder = true } }

[[flows]]
name = "bulk"
transport = "tcp"
workload = { kind = "bulk", bytes = 2000000 }
tcp = { congestion_control = { algorithm = "cubic" } }

[[flows]]
name = "get"
start_s = 0.1
transport = "tcp"
workload = { kind = "request", size = 50000, count = 3 }
"#;

#[test]
fn same_seed_same_bytes() {
    let (a, b) = (TempDir::new("tcp-det-a"), TempDir::new("tcp-det-b"));
    let ra = run(LOSSY, a.path());
    let rb = run(LOSSY, b.path());
    let ja = serde_json::to_string(&ra).unwrap();
    assert_eq!(ja, serde_json::to_string(&rb).unwrap());
    for f in ["all.pcap", "forward.pcap", "return.pcap"] {
        let pa = std::fs::read(a.path().join("pcap").join(f)).unwrap();
        let pb = std::fs::read(b.path().join("pcap").join(f)).unwrap();
        assert!(pa.len() > 100_000, "{f} holds the run");
        assert!(pa == pb, "{f} differs between identical runs");
    }
    // The workloads completed despite the loss, and loss recovery ran.
    for f in &ra.flows {
        assert_eq!(f.incomplete, None, "{}: {:?}", f.name, f.incomplete);
    }
    assert_eq!(ra.flows[0].goodput_bytes, 2_000_000);
    assert_eq!(ra.flows[1].goodput_bytes, 150_000);
    assert!(ra.flows[0].client.packets_lost > 0);
    // Another seed, another loss pattern.
    let rc = run(
        &LOSSY.replace("seed = 7", "seed = 8"),
        TempDir::new("tcp-det-c").path(),
    );
    assert_ne!(serde_json::to_string(&rc).unwrap(), ja);
}

#[test]
fn request_times_follow_the_round_trips() {
    let text = r#"
name = "tcp-request"
seed = 1
[stop]
time_s = 10.0
when_flows_done = true
[topology]
kind = "point_to_point"
[topology.forward]
delay_ms = 25.0
[topology.return]
delay_ms = 25.0
[[flows]]
name = "get"
transport = "tcp"
workload = { kind = "request", size = 1000 }
"#;
    let r = run(text, TempDir::new("tcp-req").path());
    let f = &r.flows[0];
    // SYN, SYN-ACK: 1 RTT; then the request and its 1000-byte response: 1 RTT.
    assert_eq!(f.handshake_done_s, Some(0.05));
    assert_eq!(f.ttlb_s, Some(0.1));
    assert_eq!(f.close.as_deref(), None);
}

#[test]
fn tshark_decodes_the_segments() {
    if !tshark_available("tshark_decodes_the_segments") {
        return;
    }
    let dir = TempDir::new("tcp-pcap");
    run(LOSSY, dir.path());
    let pcap = dir.path().join("pcap").join("all.pcap");
    let out = Command::new("tshark")
        .args(["-r"])
        .arg(&pcap)
        .args([
            "-o",
            "tcp.check_checksum:TRUE",
            "-T",
            "fields",
            "-E",
            "separator=|",
        ])
        .args([
            "-e",
            "tcp.srcport",
            "-e",
            "tcp.flags.syn",
            "-e",
            "tcp.checksum.status",
        ])
        .args([
            "-e",
            "tcp.options.sack_perm",
            "-e",
            "tcp.options.wscale.shift",
        ])
        .args([
            "-e",
            "tcp.options.sack_le",
            "-e",
            "_ws.malformed",
            "-e",
            "tcp.len",
        ])
        .output()
        .expect("tshark runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split('|').collect()).collect();
    assert!(rows.len() > 1000, "{} segments", rows.len());
    // Every checksum verifies (status 1 = good, 0 = bad), nothing is malformed.
    for r in &rows {
        assert_eq!(r[2], "1", "checksum status in {r:?}");
        assert_eq!(r[6], "", "malformed: {r:?}");
    }
    // The SYNs carry SACK-permitted and a window scale; SACK blocks appear.
    let syns: Vec<_> = rows.iter().filter(|r| r[1] == "1").collect();
    assert_eq!(syns.len(), 4, "two handshakes");
    assert!(
        syns.iter().all(|r| !r[3].is_empty() && !r[4].is_empty()),
        "{syns:?}"
    );
    assert!(
        rows.iter().any(|r| !r[5].is_empty()),
        "no SACK blocks decoded"
    );
    // Data: 2 MB client to server (port 40000), 150 kB server to client (4434).
    let data = |port: &str| -> u64 {
        rows.iter()
            .filter(|r| r[0] == port)
            .map(|r| r[7].parse::<u64>().unwrap_or(0))
            .sum()
    };
    assert!(data("40000") >= 2_000_000);
    assert!(data("4434") >= 150_000);
}

/// A request over TLS over TCP, RTT 50 ms: the handshake completes at the client after
/// 2 RTT with TLS 1.3 and 3 RTT with TLS 1.2 (from the SYN), the response (10 kB,
/// within the initial window of 10 segments) one RTT later.
fn tls_request(version: &str, pcap: bool) -> (RunResult, TempDir) {
    let text = format!(
        r#"
name = "tls-request"
seed = 1
[stop]
time_s = 10.0
when_flows_done = true
[measure]
pcap = {pcap}
[topology]
kind = "point_to_point"
[topology.forward]
delay_ms = 25.0
[topology.return]
delay_ms = 25.0
[[flows]]
name = "get"
transport = "tcp"
workload = {{ kind = "request", size = 10000 }}
tls = {{ version = "{version}" }}
"#
    );
    let dir = TempDir::new("tls-req");
    (run(&text, dir.path()), dir)
}

/// TLS over a lossy TCP path: when a repaired hole releases more than rustls's 16 KiB
/// of unread plaintext at once, the layer keeps it for the application instead of
/// aborting the flow ("TLS record buffer full", seen at this seed before the fix).
#[test]
fn tls_over_lossy_tcp_delivers_everything() {
    let text = r#"
name = "tls-lossy"
seed = 8359712186300414085
[stop]
time_s = 60.0
when_flows_done = true
[topology]
kind = "point_to_point"
[topology.forward]
rate_mbps = 20.0
delay_ms = 19.0
queue = { discipline = "drop_tail", packets = 1000 }
[topology.return]
rate_mbps = 20.0
delay_ms = 19.0
queue = { discipline = "drop_tail", packets = 63 }
impairments = { loss = { model = "bernoulli", p = 0.01 } }
[[flows]]
name = "tcp"
transport = "tcp"
workload = { kind = "request", size = 100000 }
tcp = { congestion_control = { algorithm = "cubic" } }
tls = { version = "1.3" }
"#;
    let dir = TempDir::new("tls-lossy");
    let r = run(text, dir.path());
    let f = &r.flows[0];
    assert_eq!(f.incomplete, None, "{:?}", f.close);
    assert_eq!(f.goodput_bytes, 100_000);
    assert!(f.server.packets_lost > 0, "the path lost segments");
}

#[test]
fn tls13_over_tcp_completes_at_two_round_trips() {
    let (r, _d) = tls_request("1.3", false);
    let f = &r.flows[0];
    assert_eq!(f.incomplete, None);
    assert_eq!(f.handshake_done_s, Some(0.1));
    assert_eq!(f.ttlb_s, Some(0.15));
    assert_eq!(f.goodput_bytes, 10_000);
}

#[test]
fn tls12_over_tcp_completes_at_three_round_trips() {
    let (r, _d) = tls_request("1.2", false);
    let f = &r.flows[0];
    assert_eq!(f.incomplete, None);
    assert_eq!(f.handshake_done_s, Some(0.15));
    assert_eq!(f.ttlb_s, Some(0.2));
}

#[test]
fn tls_over_tcp_is_deterministic_and_decrypts_in_tshark() {
    let (a, da) = tls_request("1.3", true);
    let (b, db) = tls_request("1.3", true);
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
    let pa = std::fs::read(da.path().join("pcap/all.pcap")).unwrap();
    assert!(pa == std::fs::read(db.path().join("pcap/all.pcap")).unwrap());
    if !tshark_available("tls_over_tcp_decrypts_in_tshark") {
        return;
    }
    let keys = da.path().join("pcap/keys.log");
    let out = Command::new("tshark")
        .arg("-r")
        .arg(da.path().join("pcap/all.pcap"))
        .arg("-o")
        .arg(format!("tls.keylog_file:{}", keys.display()))
        .args([
            "-d",
            "tcp.port==4433,tls",
            "-T",
            "fields",
            "-e",
            "tls.handshake.type",
        ])
        .args(["-e", "tls.app_data_proto", "-e", "http.request.line"])
        .output()
        .expect("tshark runs");
    let text = String::from_utf8_lossy(&out.stdout);
    // ClientHello (1), ServerHello (2) and the decrypted Finished (20) appear.
    assert!(text.lines().any(|l| l.starts_with('1')), "{text}");
    assert!(
        text.contains("20"),
        "the encrypted handshake decrypts: {text}"
    );
}

#[test]
fn tcp_scenario_errors_name_the_key() {
    let base = r#"
name = "tcp-errors"
seed = 1
[stop]
time_s = 1.0
[topology]
kind = "point_to_point"
[topology.forward]
delay_ms = 1.0
mtu = 1500
[topology.return]
delay_ms = 1.0
[[flows]]
name = "f"
"#;
    let err = |flow: &str| {
        Scenario::parse(&format!("{base}{flow}"), "inline")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    let e = err("transport = \"tcp\"\nworkload = { kind = \"bulk\", bytes = 1 }\ntcp = { window_scaleing = false }");
    assert!(e.contains("window_scaleing"), "{e}");
    let e = err("workload = { kind = \"bulk\", bytes = 1 }\ntls = { version = \"1.3\" }");
    assert!(e.contains("flows[0].tls") && e.contains("transport"), "{e}");
    let e = err("transport = \"tcp\"\nworkload = { kind = \"request\", size = 1, parallel = 2 }");
    assert!(e.contains("flows[0].workload.parallel"), "{e}");
    let e =
        err("transport = \"tcp\"\nworkload = { kind = \"bulk\", bytes = 1 }\ntcp = { mss = 1461 }");
    assert!(e.contains("flows[0].tcp.mss"), "{e}");
    let e = err(
        "transport = \"tcp\"\nworkload = { kind = \"bulk\", bytes = 1 }\ntcp = { ack_every = 0 }",
    );
    assert!(e.contains("flows[0].tcp.ack_every"), "{e}");
    let e = err("transport = \"tcp\"\nworkload = { kind = \"bulk\", bytes = 1 }\ntls = { version = \"1.1\" }");
    assert!(e.contains("1.1") || e.contains("variant"), "{e}");
    assert_eq!(
        err("transport = \"tcp\"\nworkload = { kind = \"bulk\", bytes = 1 }"),
        ""
    );
}
