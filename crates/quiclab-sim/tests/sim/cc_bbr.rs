//! BBRv3 (draft-ietf-ccwg-bbr) in the simulator, against the draft's stated goals:
//! full utilisation with a small queue on a clean path (§3.1: "high throughput ... low
//! queue pressure"), and ProbeRTT every BBR.ProbeRTTInterval = 5 s (§2.16.2).
//!
//! Every figure is measured from the run and printed as `FIGURE cc_bbr key value`.

use crate::common;

use common::TempDir;
use quiclab_sim::{RunResult, Scenario, Simulation};

fn figure(key: &str, value: f64) {
    println!("FIGURE cc_bbr {key} {value:e}");
}

/// A bulk upload with BBR over a point-to-point path: `rate_mbps`, `rtt_ms` two-way
/// propagation delay, a drop-tail buffer of `buffer_bdp` bandwidth-delay products.
fn bulk(
    rate_mbps: f64,
    rtt_ms: f64,
    buffer_bdp: f64,
    time_s: f64,
    from_s: f64,
    qlog: bool,
) -> String {
    // 1500-byte packets on the wire.
    let bdp_packets = rate_mbps * 1e6 / 8.0 * rtt_ms / 1e3 / 1500.0;
    let buffer = (bdp_packets * buffer_bdp).round() as u64;
    format!(
        r#"
name = "bbr-bulk"
seed = 11
[stop]
time_s = {time_s}
[measure]
from_s = {from_s}
traces = true
qlog = {qlog}
[topology]
kind = "point_to_point"
[topology.forward]
rate_mbps = {rate_mbps}
delay_ms = {half}
mtu = 1500
queue = {{ discipline = "drop_tail", packets = {buffer} }}
[topology.return]
rate_mbps = {rate_mbps}
delay_ms = {half}
mtu = 1500
[client]
congestion_control = {{ algorithm = "bbr" }}
flow = {{ initial_max_data = 1073741824, initial_max_stream_data = 1073741824, send_buffer = 16777216 }}
[server]
congestion_control = {{ algorithm = "bbr" }}
flow = {{ initial_max_data = 1073741824, initial_max_stream_data = 1073741824 }}
[[flows]]
name = "bulk"
workload = {{ kind = "bulk" }}
"#,
        half = rtt_ms / 2.0
    )
}

fn run(text: &str, out: Option<&std::path::Path>) -> RunResult {
    let s = Scenario::parse(text, "inline").unwrap_or_else(|e| panic!("{e}"));
    Simulation::new(s, "inline", out)
        .unwrap_or_else(|e| panic!("{e}"))
        .run()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// §3.1 goals on a clean 100 Mbit/s, 50 ms path with a 2-BDP drop-tail buffer: at
/// least 95% of the link, and a median RTT at most 25% above the minimum (the queue
/// Startup built is drained and ProbeBW keeps it small).
#[test]
fn bbr_fills_a_clean_path_with_a_small_queue() {
    let from_s = 5.0;
    let r = run(&bulk(100.0, 50.0, 2.0, 20.0, from_s, false), None);
    let link = &r.links[0];
    let utilisation = link.throughput_bps / 100e6;
    let rtts: Vec<f64> = r.flows[0]
        .client
        .rtt
        .iter()
        .filter(|(t, _, _)| *t >= from_s)
        .map(|&(_, _, latest)| latest)
        .collect();
    assert!(rtts.len() > 1000, "too few RTT samples: {}", rtts.len());
    let min = rtts.iter().copied().fold(f64::INFINITY, f64::min);
    let med = median(rtts);
    figure("utilisation", utilisation);
    figure("median_rtt_ms", med);
    figure("min_rtt_ms", min);
    figure("queue_drops", link.queue_drops as f64);
    println!(
        "utilisation {:.4}, median RTT {med:.2} ms, min {min:.2} ms ({:+.1}%), drops {}",
        utilisation,
        (med / min - 1.0) * 100.0,
        link.queue_drops
    );
    assert!(utilisation >= 0.95, "utilisation {utilisation}");
    assert!(med <= 1.25 * min, "median RTT {med} ms vs min {min} ms");
    assert!(min >= 50.0, "an RTT below the propagation delay: {min}");
}

/// §5.3.4: ProbeRTT is entered when the min_rtt sample is older than
/// BBR.ProbeRTTInterval (5 s): on a bulk flow that never idles, the qlog's
/// `congestion_state_updated` to `probe_rtt` comes about every 5 s plus the ProbeRTT
/// episode itself (about 200 ms and a round).
#[test]
fn probe_rtt_every_five_seconds() {
    let dir = TempDir::new("bbr-probe-rtt");
    run(&bulk(10.0, 50.0, 2.0, 22.0, 0.0, true), Some(dir.path()));
    let qlog = std::fs::read_to_string(dir.path().join("qlog/bulk_client.sqlog")).unwrap();
    let mut entries = Vec::new();
    let mut states = Vec::new();
    for record in qlog.split('\u{1e}').filter(|r| !r.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(record.trim()).unwrap();
        if v["name"] != "quic:congestion_state_updated" {
            continue;
        }
        let t = v["time"].as_f64().unwrap();
        let new = v["data"]["new"].as_str().unwrap().to_string();
        if new == "probe_rtt" {
            entries.push(t);
        }
        states.push((t, new));
    }
    // The state machine went through every phase.
    for s in [
        "drain",
        "probe_bw_down",
        "probe_bw_cruise",
        "probe_bw_refill",
        "probe_bw_up",
        "probe_rtt",
    ] {
        assert!(
            states.iter().any(|(_, n)| n == s),
            "never entered {s}: {states:?}"
        );
    }
    assert!(entries.len() >= 3, "ProbeRTT entries at {entries:?} ms");
    let gaps: Vec<f64> = entries.windows(2).map(|w| w[1] - w[0]).collect();
    for (i, g) in gaps.iter().enumerate() {
        figure(&format!("probe_rtt_gap_{i}_ms"), *g);
    }
    println!("ProbeRTT at {entries:?} ms, gaps {gaps:?} ms");
    // Interval after the previous ProbeRTT's end: 5 s, plus that episode (>= 200 ms
    // and one round of 50+ ms) and one RTT of sampling slack.
    for g in &gaps {
        assert!((5_200.0..5_600.0).contains(g), "ProbeRTT gap {g} ms");
    }
}

/// The scenario key: `congestion_control = { algorithm = "bbr", ... }` with knobs;
/// unknown knobs and bad values are errors naming the key.
#[test]
fn bbr_scenario_keys_are_validated() {
    let good = bulk(10.0, 50.0, 1.0, 1.0, 0.0, false).replace(
        r#"congestion_control = { algorithm = "bbr" }
flow = { initial_max_data = 1073741824, initial_max_stream_data = 1073741824, send_buffer"#,
        r#"congestion_control = { algorithm = "bbr", loss_thresh = 0.05, beta = 0.8, probe_rtt_interval_ms = 2000 }
flow = { initial_max_data = 1073741824, initial_max_stream_data = 1073741824, send_buffer"#,
    );
    assert!(good.contains("loss_thresh"));
    Scenario::parse(&good, "inline").unwrap();
    let unknown = good.replace("beta = 0.8", "bta = 0.8");
    assert!(Scenario::parse(&unknown, "inline").is_err());
    let bad = good.replace("loss_thresh = 0.05", "loss_thresh = 1.5");
    let err = Scenario::parse(&bad, "inline").unwrap_err().to_string();
    assert!(err.contains("loss_thresh"), "{err}");
    let bad = good.replace(
        "probe_rtt_interval_ms = 2000",
        "probe_rtt_interval_ms = 20000",
    );
    let err = Scenario::parse(&bad, "inline").unwrap_err().to_string();
    assert!(err.contains("min_rtt_filter_len_ms"), "{err}");
}
