//! `packet_protection = "checksum"` (quiclab-proto's `crypto/checksum_keys.rs`) keeps
//! every behaviour that depends on packet protection: the same scenario run with
//! `"aead"` and `"checksum"` gives identical results, qlog and traces; only the pcaps
//! (plaintext payloads, checksum tags) and keys.log may differ, and the pcaps must (so
//! the option is in effect). Covered: corrupted datagrams (dropped as failing
//! authentication), 1-RTT key updates (trial decryption with the next keys), Retry,
//! 0-RTT on a resumed session, multipath (the path ID in the nonce) and a compatible
//! upgrade to QUIC v2 (keys rederived for another version).

use crate::common::TempDir;
use crate::common::{files, run};
use quiclab_sim::RunResult;

/// Point-to-point, 20 Mbit/s, 10 ms each way; `extra` appended (its own tables and flows).
fn scenario(protection: &str, forward_extra: &str, extra: &str) -> String {
    format!(
        r#"
name = "protection"
seed = 3
packet_protection = "{protection}"
[stop]
time_s = 20.0
when_flows_done = true
[measure]
qlog = true
traces = true
pcap = true
[topology]
kind = "point_to_point"
[topology.forward]
rate_mbps = 20.0
delay_ms = 10.0
queue = {{ discipline = "drop_tail", packets = 60 }}
{forward_extra}
[topology.return]
rate_mbps = 20.0
delay_ms = 10.0
queue = {{ discipline = "drop_tail", packets = 60 }}
{extra}
"#
    )
}

/// Runs the scenario with both protections; asserts identical results and files
/// (pcaps aside, which must differ) and returns the checksum run's results and the
/// text of its qlog files, to check the scenario exercised what it is about.
fn same_outputs(what: &str, forward_extra: &str, extra: &str) -> (RunResult, String) {
    let (a, c) = (TempDir::new("prot-aead"), TempDir::new("prot-cksum"));
    let ra = run(&scenario("aead", forward_extra, extra), a.path());
    let rc = run(&scenario("checksum", forward_extra, extra), c.path());
    let json = |r: &RunResult| serde_json::to_string_pretty(r).expect("results serialize");
    assert_eq!(json(&ra), json(&rc), "{what}: results differ");
    let (fa, fc) = (files(a.path()), files(c.path()));
    assert_eq!(
        fa.keys().collect::<Vec<_>>(),
        fc.keys().collect::<Vec<_>>(),
        "{what}: different files written"
    );
    let mut qlog = String::new();
    for (name, bytes) in &fa {
        if name.ends_with(".pcap") {
            assert!(
                bytes != &fc[name],
                "{what}: {name} is the same: checksum not in effect"
            );
        } else if !name.ends_with("keys.log") {
            assert!(bytes == &fc[name], "{what}: {name} differs");
        }
        if name.ends_with(".sqlog") {
            qlog.push_str(&String::from_utf8_lossy(&fc[name]));
        }
    }
    for f in &rc.flows {
        assert!(
            f.ttlb_s.is_some(),
            "{what}: flow {} incomplete: {f:?}",
            f.name
        );
    }
    (rc, qlog)
}

const GET: &str = "[[flows]]\nname = \"get\"\nworkload = { kind = \"request\", size = 1000000 }\n";

#[test]
fn corrupted_datagrams_are_dropped_alike() {
    let corrupt = "impairments = { corrupt = { p = 0.03, bytes = 1, within_bytes = 51 } }";
    let (r, _) = same_outputs("corrupt", corrupt, GET);
    assert!(r.links[0].corrupted_packets > 5, "{:?}", r.links[0]);
}

#[test]
fn key_updates_alike() {
    let extra = format!("[client]\nkey_update = {{ every_packets = 100 }}\n{GET}");
    let (_, qlog) = same_outputs("key updates", "", &extra);
    assert!(
        qlog.matches("key_updated").count() > 10,
        "key updates happen"
    );
}

#[test]
fn retry_and_zero_rtt_alike() {
    let extra = r#"
[client]
zero_rtt = true
[server]
zero_rtt = true
admission = { retry = "always" }
[[flows]]
name = "first"
workload = { kind = "request", size = 20000 }
[[flows]]
name = "repeat"
start_s = 1.0
session_from = "first"
workload = { kind = "request", size = 20000 }
"#;
    let (_, qlog) = same_outputs("retry, 0-RTT", "", extra);
    assert!(qlog.contains("\"retry\""), "a Retry was sent");
    assert!(qlog.contains("0RTT"), "0-RTT packets were sent");
}

#[test]
fn multipath_alike() {
    let extra = r#"
[topology.client]
told = true
interfaces = [
  { name = "a", forward = { rate_mbps = 20.0, delay_ms = 10.0 }, return = { rate_mbps = 20.0, delay_ms = 10.0 } },
  { name = "b", forward = { rate_mbps = 10.0, delay_ms = 30.0 }, return = { rate_mbps = 10.0, delay_ms = 30.0 } },
]
[client]
multipath = { enabled = true }
[server]
multipath = { enabled = true }
"#;
    let (r, _) = same_outputs("multipath", "", &format!("{extra}{GET}"));
    assert_eq!(r.flows[0].paths.len(), 2, "{:?}", r.flows[0].paths);
}

#[test]
fn compatible_upgrade_to_v2_alike() {
    let extra = format!(
        "[client]\nversions = {{ initial = \"v1\", supported = [\"v1\", \"v2\"] }}\n\
         [server]\nversions = {{ supported = [\"v2\", \"v1\"] }}\n{GET}"
    );
    let (_, qlog) = same_outputs("v2 upgrade", "", &extra);
    assert!(qlog.contains("6b3343cf"), "the connection moved to v2");
}
