//! ECN on the simulator's links, end to end: CoDel marking CE instead of dropping for a
//! sender that sends ECT(0), the `ecn` impairments that make ECN validation fail (the
//! sender then falls back to not-ECT, which CoDel drops), and the codepoint in the
//! pcap's TOS byte.

use crate::common;

use common::TempDir;
use quiclab_sim::{RunResult, Scenario, Simulation};

/// A CUBIC upload over 20 Mbit/s, 40 ms RTT, CoDel with marking `marking`; both
/// endpoints' `ecn` key; an optional forward `ecn` impairment.
fn run(marking: bool, ecn: &str, impairment: Option<&str>, out: Option<&TempDir>) -> RunResult {
    let impair = impairment.map_or(String::new(), |i| {
        format!("[topology.forward.impairments]\necn = \"{i}\"\n")
    });
    let text = format!(
        r#"
name = "ecn-links"
seed = 3
[stop]
time_s = 6.0
[measure]
from_s = 2.0
pcap = {pcap}
[topology]
kind = "point_to_point"
[topology.forward]
rate_mbps = 20.0
delay_ms = 20.0
queue = {{ discipline = "codel", packets = 1000, ecn = {marking} }}
{impair}[topology.return]
rate_mbps = 20.0
delay_ms = 20.0
[client]
ecn = "{ecn}"
congestion_control = {{ algorithm = "cubic" }}
flow = {{ initial_max_data = 1073741824, initial_max_stream_data = 1073741824 }}
[server]
ecn = "{ecn}"
flow = {{ initial_max_data = 1073741824, initial_max_stream_data = 1073741824 }}
[[flows]]
name = "bulk"
workload = {{ kind = "bulk" }}
"#,
        pcap = out.is_some(),
    );
    let s = Scenario::parse(&text, "inline").unwrap_or_else(|e| panic!("{e}"));
    Simulation::new(s, "inline", out.map(TempDir::path))
        .unwrap_or_else(|e| panic!("{e}"))
        .run()
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn codel_marks_ect_instead_of_dropping() {
    let on = run(true, "ect0", None, None);
    let off = run(true, "off", None, None);
    let (l_on, l_off) = (&on.links[0], &off.links[0]);
    // Not-ECT: CoDel with marking on still drops, and the sender sees losses.
    assert!(l_off.queue_drops > 0 && l_off.ecn_marks == Some(0));
    assert!(off.flows[0].client.packets_lost > 0);
    // ECT(0): marks instead, no drop, no loss.
    assert!(l_on.ecn_marks.unwrap() > 0, "{:?}", l_on.ecn_marks);
    assert_eq!(l_on.queue_drops, 0);
    assert_eq!(on.flows[0].client.packets_lost, 0);
    // The same share of the link (CE costs CUBIC what a loss does).
    let ratio = l_on.throughput_bps / l_off.throughput_bps;
    assert!((ratio - 1.0).abs() < 0.02, "throughput ratio {ratio}");
}

/// Each impairment makes ECN validation fail (RFC 9000 §13.4.2, Appendix A.4): the
/// sender goes back to not-ECT, so CoDel drops again, and the transfer goes on.
#[test]
fn impairments_make_validation_fail_and_the_sender_fall_back() {
    for i in ["bleach", "remark_ect1", "mark_all_ce"] {
        let r = run(true, "ect0", Some(i), None);
        let l = &r.links[0];
        assert!(
            l.queue_drops > 0,
            "{i}: no drop, so the sender still sends ECT"
        );
        assert!(
            r.flows[0].goodput_bps > 10e6,
            "{i}: goodput {}",
            r.flows[0].goodput_bps
        );
    }
}

/// The forward capture's IPv4 TOS byte carries the codepoint: ECT(0) from the sender,
/// CE where CoDel marked.
#[test]
fn pcap_tos_byte_carries_the_codepoint() {
    let dir = TempDir::new("ecn-links-pcap");
    let r = run(true, "ect0", None, Some(&dir));
    let pcap = std::fs::read(dir.path().join("pcap/forward.pcap")).unwrap();
    let mut counts = [0u64; 4];
    let mut at = 24;
    while at + 16 <= pcap.len() {
        let len = u32::from_le_bytes(pcap[at + 8..at + 12].try_into().unwrap()) as usize;
        counts[usize::from(pcap[at + 16 + 1] & 0b11)] += 1;
        at += 16 + len;
    }
    assert_eq!(counts[0] + counts[1], 0, "{counts:?}");
    assert!(counts[0b10] > 1000, "{counts:?}");
    assert_eq!(Some(counts[0b11]), r.links[0].ecn_marks, "{counts:?}");
}

/// Unknown ECN values in a scenario are refused with the parser's error, never defaulted.
#[test]
fn unknown_ecn_values_are_refused() {
    let scenario = |forward: &str| {
        format!(
            "name = \"x\"\nseed = 1\n[stop]\ntime_s = 1.0\n[topology]\nkind = \"point_to_point\"\n\
             [topology.forward]\ndelay_ms = 1.0\n{forward}\n[topology.return]\ndelay_ms = 1.0\n\
             [[flows]]\nname = \"f\"\nworkload = {{ kind = \"bulk\" }}\n"
        )
    };
    for (forward, needle) in [
        (
            "impairments = { ecn = \"bleached\" }",
            "unknown variant `bleached`",
        ),
        (
            "queue = { discipline = \"codel\", packets = 10, ecn = \"yes\" }",
            "expected a boolean",
        ),
        (
            "queue = { discipline = \"drop_tail\", packets = 10, ecn = true }",
            "unknown field `ecn`",
        ),
    ] {
        let e = Scenario::parse(&scenario(forward), "inline")
            .expect_err(forward)
            .to_string();
        assert!(e.contains(needle), "{forward}: {e}");
    }
    let ok = scenario("impairments = { ecn = \"remark_ect1\" }");
    assert!(Scenario::parse(&ok, "inline").is_ok());
}
