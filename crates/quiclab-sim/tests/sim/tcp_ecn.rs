//! TCP with ECN in the simulator: a CUBIC upload through CoDel that marks CE
//! (`queue.ecn = true`). With classic ECN (RFC 3168) or AccECN (RFC 9768) the queue
//! marks instead of dropping and the sender reduces without losing (or
//! retransmitting) a segment; without ECN the same queue drops and the sender
//! repairs.

use quiclab_sim::{RunResult, Scenario, Simulation};

/// A 4 s CUBIC upload over 20 Mbit/s, 40 ms RTT, CoDel marking; `tcp` is the flow's
/// extra `[flows.tcp]` keys.
fn run(tcp: &str) -> RunResult {
    let text = format!(
        r#"
name = "tcp-ecn"
seed = 5
[stop]
time_s = 4.0
[measure]
from_s = 1.0
[topology]
kind = "point_to_point"
[topology.forward]
rate_mbps = 20.0
delay_ms = 20.0
queue = {{ discipline = "codel", packets = 1000, ecn = true }}
[topology.return]
rate_mbps = 20.0
delay_ms = 20.0
[[flows]]
name = "bulk"
transport = "tcp"
workload = {{ kind = "bulk" }}
tcp = {{ congestion_control = {{ algorithm = "cubic" }}{tcp} }}
"#
    );
    let s = Scenario::parse(&text, "inline").unwrap_or_else(|e| panic!("{e}"));
    Simulation::new(s, "inline", None)
        .unwrap_or_else(|e| panic!("{e}"))
        .run()
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn codel_marks_tcp_with_ecn_instead_of_dropping() {
    let off = run("");
    let l_off = &off.links[0];
    // Not-ECT segments: CoDel drops, the sender declares losses and retransmits.
    assert!(l_off.queue_drops > 0, "{l_off:?}");
    assert_eq!(l_off.ecn_marks, Some(0));
    assert!(off.flows[0].client.packets_lost > 0);
    for mode in ["classic", "accecn"] {
        let on = run(&format!(", ecn = \"{mode}\""));
        let l_on = &on.links[0];
        // ECT(0) data: marks, no drop, nothing lost, so nothing retransmitted for them.
        assert!(l_on.ecn_marks.unwrap() > 0, "{mode}: {l_on:?}");
        assert_eq!(l_on.queue_drops, 0, "{mode}");
        assert_eq!(on.flows[0].client.packets_lost, 0, "{mode}");
        // The sender reduced on the marks: the queue peaks no higher than with drops,
        // and the link is as busy.
        let ratio = l_on.throughput_bps / l_off.throughput_bps;
        assert!(
            (ratio - 1.0).abs() < 0.05,
            "{mode}: throughput ratio {ratio}"
        );
        assert!(
            l_on.max_queue_packets <= l_off.max_queue_packets + 10,
            "{mode}: queue peaked at {} packets, {} without ECN",
            l_on.max_queue_packets,
            l_off.max_queue_packets
        );
    }
}

/// Without ECN reductions CoDel's marks would be ignored: the queue would grow to its
/// 1000 packets and CoDel would drop. The AccECN flow with ECT(1) (TCP Prague's
/// codepoint, here with CUBIC) is marked the same way by a classic CoDel.
#[test]
fn accecn_with_ect1_is_marked_and_reduces() {
    let on = run(", ecn = \"accecn\", ecn_codepoint = \"ect1\"");
    let l = &on.links[0];
    assert!(l.ecn_marks.unwrap() > 0, "{l:?}");
    assert_eq!(l.queue_drops, 0);
    assert_eq!(on.flows[0].client.packets_lost, 0);
    assert!(
        on.flows[0].goodput_bps > 15e6,
        "{}",
        on.flows[0].goodput_bps
    );
}

#[test]
fn ecn_keys_are_checked() {
    let text = r#"
name = "x"
seed = 1
[stop]
time_s = 1.0
[topology]
kind = "point_to_point"
[topology.forward]
delay_ms = 1.0
[topology.return]
delay_ms = 1.0
[[flows]]
name = "f"
transport = "tcp"
workload = { kind = "bulk" }
"#;
    for (tcp, needle) in [
        ("tcp = { ecn = \"on\" }", "unknown variant `on`"),
        ("tcp = { ecn_codepoint = \"ect1\" }", "ecn_codepoint"),
        (
            "tcp = { ecn = \"classic\", ecn_codepoint = \"ce\" }",
            "unknown variant `ce`",
        ),
    ] {
        let e = Scenario::parse(&format!("{text}{tcp}\n"), "inline")
            .expect_err(tcp)
            .to_string();
        assert!(e.contains(needle), "{tcp}: {e}");
    }
    assert!(Scenario::parse(&format!("{text}tcp = {{ ecn = \"accecn\" }}\n"), "inline").is_ok());
}

/// QUIC and TCP, both with ECN, share one marking bottleneck (the coexistence setup
/// L4S studies use, here with CoDel): both flows are marked, neither loses a packet,
/// and each gets a fair share within a factor of two.
#[test]
fn quic_and_tcp_with_ecn_share_a_marking_queue() {
    let text = r#"
name = "quic-tcp-ecn"
seed = 9
[stop]
time_s = 8.0
[measure]
from_s = 3.0
[topology]
kind = "point_to_point"
[topology.forward]
rate_mbps = 20.0
delay_ms = 20.0
queue = { discipline = "codel", packets = 1000, ecn = true }
[topology.return]
rate_mbps = 20.0
delay_ms = 20.0
[client]
ecn = "ect0"
congestion_control = { algorithm = "cubic" }
flow = { initial_max_data = 1073741824, initial_max_stream_data = 1073741824 }
[server]
ecn = "ect0"
flow = { initial_max_data = 1073741824, initial_max_stream_data = 1073741824 }
[[flows]]
name = "quic"
workload = { kind = "bulk" }
[[flows]]
name = "tcp"
transport = "tcp"
workload = { kind = "bulk" }
tcp = { ecn = "accecn", congestion_control = { algorithm = "cubic" } }
"#;
    let s = Scenario::parse(text, "inline").unwrap_or_else(|e| panic!("{e}"));
    let r = Simulation::new(s, "inline", None)
        .unwrap_or_else(|e| panic!("{e}"))
        .run()
        .unwrap_or_else(|e| panic!("{e}"));
    let l = &r.links[0];
    assert!(l.ecn_marks.unwrap() > 0, "{l:?}");
    assert_eq!(l.queue_drops, 0, "{l:?}");
    let (quic, tcp) = (&r.flows[0], &r.flows[1]);
    assert_eq!((quic.client.packets_lost, tcp.client.packets_lost), (0, 0));
    let share = quic.goodput_bps / tcp.goodput_bps;
    assert!((0.5..2.0).contains(&share), "QUIC/TCP goodput {share}");
    assert!(quic.goodput_bps + tcp.goodput_bps > 17e6);
}
