//! mulTCP CUBIC (`emulated_flows`, `quiclab-proto`'s `cc/cubic_multcp.rs`) with real flows:
//! one QUIC connection emulating two CUBIC flows shares a drop-tail bottleneck with two
//! plain CUBIC connections and takes about half of it, as the two flows it stands for
//! would (seed 003 §3's "variant of mulTCP for Cubic", Chromium's CubicBytes).

use quiclab_sim::{RunResult, Scenario, Simulation};

/// A 20 Mbit/s, 40 ms RTT bottleneck with a 100-packet drop-tail queue (about 1.4 BDP of
/// 1200-byte packets), CUBIC at every sender; one bulk flow whose server emulates `n`
/// CUBIC flows and two plain CUBIC bulk flows; measured from 10 s to 60 s.
fn run(n: u32, seed: u64) -> RunResult {
    // Start times in [0, 2) s drawn from the seed: the runs differ only by these.
    let start =
        |i: u64| (seed.wrapping_mul(7_919).wrapping_add(i * 104_729) % 2_000) as f64 / 1_000.0;
    let (s0, s1, s2) = (start(0), start(1), start(2));
    let text = format!(
        r#"
name = "multcp"
seed = {seed}
[stop]
time_s = 60.0
[measure]
from_s = 10.0
[topology]
kind = "point_to_point"
[topology.forward]
rate_mbps = 20.0
delay_ms = 20.0
queue = {{ discipline = "drop_tail", packets = 100 }}
[topology.return]
rate_mbps = 20.0
delay_ms = 20.0
[client]
congestion_control = {{ algorithm = "cubic" }}
flow = {{ initial_max_data = 1073741824, initial_max_stream_data = 1073741824 }}
[server]
congestion_control = {{ algorithm = "cubic" }}
flow = {{ initial_max_data = 1073741824, initial_max_stream_data = 1073741824 }}
[[flows]]
name = "multcp"
workload = {{ kind = "bulk" }}
start_s = {s0}
client = {{ congestion_control = {{ algorithm = "cubic", emulated_flows = {n} }} }}
[[flows]]
name = "cubic0"
start_s = {s1}
workload = {{ kind = "bulk" }}
[[flows]]
name = "cubic1"
start_s = {s2}
workload = {{ kind = "bulk" }}
"#
    );
    let s = Scenario::parse(&text, "multcp.toml").unwrap_or_else(|e| panic!("{e}"));
    Simulation::new(s, "multcp.toml", None)
        .unwrap_or_else(|e| panic!("{e}"))
        .run()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The first flow's share of the three flows' goodput.
fn share(r: &RunResult) -> f64 {
    let total: f64 = r.flows.iter().map(|f| f.goodput_bps).sum();
    r.flows[0].goodput_bps / total
}

/// N = 2 against two plain CUBIC flows takes about half the link (two of four flows'
/// worth); the same connection with N = 1 takes about a third (one of three).
///
/// Tolerance ±0.08 around 1/2 (and ±0.06 around 1/3): over seeds 1-6 (start times in
/// [0, 2) s) the measured shares were 0.5365-0.5366 for N = 2 and 0.3525-0.3528 for
/// N = 1, so the seeds barely matter once the flows synchronise on the drop-tail queue;
/// the bound allows the systematic offset seen here (+0.037: the emulated flow backs
/// off by β_2 = 0.85 on each of its loss events, while two real flows would not always
/// both lose) with about twice its size as margin, and still separates N = 2 from
/// N = 1 by more than 0.1.
#[test]
fn two_emulated_flows_take_half_against_two_cubic_flows() {
    for seed in 1..=3 {
        let two = share(&run(2, seed));
        let one = share(&run(1, seed));
        assert!((two - 0.5).abs() <= 0.08, "seed {seed}: N = 2 share {two}");
        assert!(
            (one - 1.0 / 3.0).abs() <= 0.06,
            "seed {seed}: N = 1 share {one}"
        );
        assert!(two > one + 0.1, "seed {seed}: {two} vs {one}");
    }
}
