//! `measure.ack_sizes`: each QUIC endpoint's ACK frames over time (count, bytes,
//! ranges per bin), for seed 001's "after loss, size of QUIC ACKs can grow".

use quiclab_sim::{RunResult, Scenario, Simulation};

/// A 2 MB download over 100 ms RTT with `loss` on the download direction.
fn run(loss: f64, ack_sizes: bool) -> RunResult {
    let text = format!(
        r#"
name = "ack-sizes"
seed = 3
[stop]
time_s = 60.0
when_flows_done = true
[measure]
interval_s = 0.5
ack_sizes = {ack_sizes}
[topology]
kind = "point_to_point"
[topology.forward]
rate_mbps = 10.0
delay_ms = 50.0
[topology.return]
rate_mbps = 20.0
delay_ms = 50.0
impairments = {{ loss = {{ model = "bernoulli", p = {loss} }} }}
[[flows]]
name = "download"
workload = {{ kind = "request", size = 2000000 }}
"#
    );
    let s = Scenario::parse(&text, "inline").unwrap_or_else(|e| panic!("{e}"));
    Simulation::new(s, "inline", None)
        .unwrap_or_else(|e| panic!("{e}"))
        .run()
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn ack_frames_are_counted_per_bin_and_loss_adds_ranges() {
    let clean = run(0.0, true);
    let lossy = run(0.03, true);
    for r in [&clean, &lossy] {
        let f = &r.flows[0];
        assert_eq!(f.incomplete, None);
        let c = &f.client;
        let a = c.ack_sizes.as_ref().expect("collected");
        // The same frames as the per-type counts, bin by bin.
        let acks = c.sent_by_frame_type["ack"].clone();
        assert_eq!(a.frames, acks.packets);
        let sum = |s: &[(f64, f64)]| s.iter().map(|p| p.1).sum::<f64>();
        assert_eq!(sum(&a.frames_series) as u64, acks.packets);
        assert_eq!(sum(&a.bytes_series) as u64, acks.bytes);
        assert!(a.frames_series.windows(2).all(|w| w[0].0 < w[1].0));
    }
    let (c, l) = (
        clean.flows[0].client.ack_sizes.as_ref().unwrap(),
        lossy.flows[0].client.ack_sizes.as_ref().unwrap(),
    );
    // Without loss every ACK reports one range; with loss some report several, and
    // the frames grow by a Gap and a length per range (RFC 9000 §19.3).
    let ranges: f64 = c.ranges_series.iter().map(|p| p.1).sum();
    assert_eq!(ranges as u64, c.frames);
    assert_eq!(c.max_ranges, 1);
    assert!(l.max_ranges >= 2, "{l:?}");
    assert!(l.max_bytes > c.max_bytes);
}

#[test]
fn off_by_default() {
    let r = run(0.0, false);
    assert!(r.flows[0].client.ack_sizes.is_none());
    let json = serde_json::to_string(&r).unwrap();
    assert!(!json.contains("ack_sizes"));
}
