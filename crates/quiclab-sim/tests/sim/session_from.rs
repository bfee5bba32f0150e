//! `session_from`: a repeat connection resumes an earlier flow's TLS session and, with
//! `zero_rtt`, sends its request in 0-RTT; the same seed gives the same bytes; bad
//! references are typed errors naming the key.

use crate::common;

use common::TempDir;
use quiclab_sim::scenario::ScenarioError;
use quiclab_sim::{Scenario, SimError, Simulation};

fn scenario(zero_rtt: bool, repeat_extra: &str) -> String {
    format!(
        r#"
name = "session-from"
seed = 5
[stop]
time_s = 10.0
when_flows_done = true
[measure]
qlog = true
[topology]
kind = "point_to_point"
[topology.forward]
rate_mbps = 100.0
delay_ms = 20.0
[topology.return]
rate_mbps = 100.0
delay_ms = 20.0
[client]
zero_rtt = {zero_rtt}
[server]
zero_rtt = {zero_rtt}
[[flows]]
name = "first"
workload = {{ kind = "request", size = 1000 }}
[[flows]]
name = "repeat"
start_s = 1.0
workload = {{ kind = "request", size = 1000 }}
{repeat_extra}
"#
    )
}

/// (repeat flow's TTFB s, its client qlog text).
fn run(text: &str) -> (f64, String) {
    let dir = TempDir::new("session-from");
    let s = Scenario::parse(text, "inline").unwrap_or_else(|e| panic!("{e}"));
    let r = Simulation::new(s, "inline", Some(dir.path()))
        .unwrap_or_else(|e| panic!("{e}"))
        .run()
        .unwrap_or_else(|e| panic!("{e}"));
    let qlog = std::fs::read_to_string(dir.path().join("qlog/repeat_client.sqlog")).unwrap();
    (
        r.flows[1].ttfb_s.expect("repeat flow gets its response"),
        qlog,
    )
}

#[test]
fn a_repeat_flow_resumes_and_sends_zero_rtt() {
    let resumed = r#"session_from = "first""#;
    let (ttfb_0rtt, qlog) = run(&scenario(true, resumed));
    let (ttfb_resumed, qlog_resumed) = run(&scenario(false, resumed));
    let (ttfb_first, _) = run(&scenario(true, ""));
    println!("ttfb: 0-RTT {ttfb_0rtt} s, resumed 1-RTT {ttfb_resumed} s, new {ttfb_first} s");
    // 40 ms RTT: 0-RTT answers in one RTT, 1-RTT in two.
    assert!((0.040..0.042).contains(&ttfb_0rtt), "{ttfb_0rtt}");
    assert!((0.080..0.082).contains(&ttfb_resumed), "{ttfb_resumed}");
    assert!((0.080..0.082).contains(&ttfb_first), "{ttfb_first}");
    assert!(
        qlog.contains(r#""packet_type":"0RTT""#),
        "0-RTT packets in qlog"
    );
    assert!(!qlog_resumed.contains(r#""packet_type":"0RTT""#));
    // Same seed, same bytes (qlog records every packet).
    let (again, qlog_again) = run(&scenario(true, resumed));
    assert_eq!(again, ttfb_0rtt);
    assert_eq!(qlog_again, qlog);
}

fn error(extra: &str) -> String {
    let s = Scenario::parse(&scenario(true, extra), "inline");
    let e = match s {
        Err(e) => e,
        Ok(s) => match Simulation::new(s, "inline", None) {
            Err(SimError::Scenario(e)) => e,
            Err(e) => panic!("{e}"),
            Ok(_) => panic!("accepted: {extra}"),
        },
    };
    match e {
        ScenarioError::Invalid { key, why, .. } => format!("{key}: {why}"),
        other => other.to_string(),
    }
}

#[test]
fn bad_references_are_typed_errors() {
    let e = error(r#"session_from = "nope""#);
    assert!(
        e.contains("session_from") && e.contains("no flow named"),
        "{e}"
    );
    let e = error(r#"session_from = "repeat""#);
    assert!(e.contains("its own session"), "{e}");
    let text =
        scenario(true, r#"session_from = "first""#).replace("start_s = 1.0", "start_s = 0.0");
    let e = match Scenario::parse(&text, "inline") {
        Err(ScenarioError::Invalid { why, .. }) => why,
        other => panic!("{other:?}"),
    };
    assert!(e.contains("must start before"), "{e}");
}
