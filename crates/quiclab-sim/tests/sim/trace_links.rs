//! Trace-driven links in a simulation (issue 38): a QUIC bulk flow over a one-line
//! Mahimahi trace `1` (1504 bytes per ms, 12.032 Mbit/s) saturates it and its goodput
//! is bounded by it; trace files resolve against the scenario file's directory; bad
//! trace files and contradicting keys are typed errors naming the key.

use crate::common;

use common::TempDir;
use quiclab_sim::scenario::ScenarioError;
use quiclab_sim::{Scenario, Simulation};

const SCENARIO: &str = r#"
name = "trace"
seed = 7
[stop]
time_s = 10.0
[measure]
from_s = 2.0
to_s = 10.0
[topology]
kind = "point_to_point"
[topology.forward]
delay_ms = 20.0
mtu = 1500
queue = { discipline = "drop_tail", packets = 200 }
trace = { mahimahi = "traces/12mbps.trace" }
[topology.return]
delay_ms = 20.0
mtu = 1500
[client]
max_udp_payload_size = 1472
[server]
max_udp_payload_size = 1472
[[flows]]
name = "bulk"
workload = { kind = "bulk" }
"#;

/// Writes the scenario (with `replace` applied) and its trace in a fresh directory.
fn files(replace: (&str, &str), trace: &str) -> (TempDir, std::path::PathBuf) {
    let dir = TempDir::new("trace-links");
    std::fs::create_dir_all(dir.path().join("traces")).unwrap();
    std::fs::write(dir.path().join("traces/12mbps.trace"), trace).unwrap();
    let path = dir.path().join("s.toml");
    std::fs::write(&path, SCENARIO.replace(replace.0, replace.1)).unwrap();
    (dir, path)
}

#[test]
fn bulk_flow_saturates_a_one_line_trace() {
    let (_dir, path) = files(("", ""), "1\n");
    // Loaded from another working directory's point of view: the relative trace path
    // resolves against the scenario file's directory.
    let s = Scenario::load(&path).unwrap();
    let r = Simulation::new(s, "s.toml", None).unwrap().run().unwrap();
    let wire = r.links[0].throughput_bps;
    let goodput = r.flows[0].goodput_bps;
    println!(
        "wire {:.4} Mbit/s, goodput {:.4} Mbit/s",
        wire / 1e6,
        goodput / 1e6
    );
    // Whole 1 ms periods from 2 s to 10 s: within 1% of 12.0 Mbit/s, and never above
    // the trace's 12.032 Mbit/s (a packet's worth of slack at the window's edges).
    assert!((wire / 12.0e6 - 1.0).abs() < 0.01, "wire {wire}");
    assert!(wire <= 12.032e6 * 1.001, "wire {wire}");
    // Goodput is bounded by the link: at most the 1472 UDP payload bytes of each
    // 1500-byte packet (QUIC's headers and tag take some 40 of them), and the flow
    // keeps the link busy.
    assert!(goodput < wire * 1472.0 / 1500.0, "goodput {goodput}");
    assert!(goodput > 0.95 * wire * 1400.0 / 1500.0, "goodput {goodput}");
}

fn invalid(replace: (&str, &str), trace: &str) -> (String, String) {
    let (_dir, path) = files(replace, trace);
    let e = match Scenario::load(&path) {
        Err(e) => e,
        Ok(s) => match Simulation::new(s, "s.toml", None) {
            Err(quiclab_sim::SimError::Scenario(e)) => e,
            Err(e) => panic!("not a scenario error: {e}"),
            Ok(_) => panic!("accepted"),
        },
    };
    match e {
        ScenarioError::Invalid { key, why, .. } => (key, why),
        e => panic!("not an invalid key: {e}"),
    }
}

#[test]
fn bad_traces_are_typed_errors() {
    let (key, why) = invalid(("", ""), "2\n1\n");
    assert_eq!(key, "topology.forward.trace.mahimahi");
    assert!(
        why.contains("line 2") && why.contains("12mbps.trace"),
        "{why}"
    );
    let (key, why) = invalid(("", ""), "0\n");
    assert_eq!(key, "topology.forward.trace.mahimahi");
    assert!(why.contains("nonzero"), "{why}");
    let (key, _) = invalid(("12mbps.trace", "missing.trace"), "1\n");
    assert_eq!(key, "topology.forward.trace.mahimahi");
    let (key, _) = invalid(
        (
            "delay_ms = 20.0\nmtu",
            "rate_mbps = 10.0\ndelay_ms = 20.0\nmtu",
        ),
        "1\n",
    );
    assert_eq!(key, "topology.forward.rate_mbps");
    let schedule = "workload = { kind = \"bulk\" }\n[[schedule]]\nat_s = 1.0\nlink = \"forward\"\nrate_mbps = 5.0\n";
    let (key, _) = invalid(("workload = { kind = \"bulk\" }\n", schedule), "1\n");
    assert_eq!(key, "schedule[0].rate_mbps");
    let (key, _) = invalid(
        (
            "{ mahimahi = \"traces/12mbps.trace\" }",
            "{ reorder = true }",
        ),
        "1\n",
    );
    assert_eq!(key, "topology.forward.trace");
}
