//! The queue disciplines of `quiclab-link` with real flows, against their RFCs' stated
//! behaviour: PIE holds a saturating CUBIC flow's queuing delay near its 15 ms target
//! (RFC 8033 §1); FQ-CoDel keeps a sparse flow's delay near zero beside a bulk flow
//! whose queue CoDel holds near 5 ms (RFC 8290 §1.3, §4.2); DualPI2 marks ECT(1)
//! traffic from its L-queue ramp (RFC 9332 A.1) and keeps the L queue's delay far
//! below the C queue's.

use quiclab_sim::output::results::LinkResult;
use quiclab_sim::{RunResult, Scenario, Simulation};

/// A 20 Mbit/s, 40 ms RTT point-to-point path whose forward queue is `queue`, CUBIC
/// on both ends, and the flows `flows` (TOML `[[flows]]` tables), measured from
/// `from_s` (the sojourn quantiles cover the measurement window) to `time_s`.
fn run(queue: &str, flows: &str, from_s: f64, time_s: f64) -> RunResult {
    let text = format!(
        r#"
name = "aqm"
seed = 5
[stop]
time_s = {time_s}
[measure]
from_s = {from_s}
[topology]
kind = "point_to_point"
[topology.forward]
rate_mbps = 20.0
delay_ms = 20.0
mtu = 1500
queue = {queue}
[topology.return]
rate_mbps = 20.0
delay_ms = 20.0
mtu = 1500
[client]
congestion_control = {{ algorithm = "cubic" }}
flow = {{ initial_max_data = 1073741824, initial_max_stream_data = 1073741824 }}
[server]
congestion_control = {{ algorithm = "cubic" }}
flow = {{ initial_max_data = 1073741824, initial_max_stream_data = 1073741824 }}
{flows}
"#
    );
    let s = Scenario::parse(&text, "aqm.toml").unwrap_or_else(|e| panic!("{e}"));
    Simulation::new(s, "aqm.toml", None)
        .unwrap_or_else(|e| panic!("{e}"))
        .run()
        .unwrap_or_else(|e| panic!("{e}"))
}

const BULK: &str = r#"
[[flows]]
name = "bulk"
workload = { kind = "bulk" }
"#;

/// `n` bulk flows.
fn bulk_flows(n: usize) -> String {
    (0..n)
        .map(|i| format!("[[flows]]\nname = \"bulk{i}\"\nworkload = {{ kind = \"bulk\" }}\n"))
        .collect()
}

fn forward(r: &RunResult) -> &LinkResult {
    &r.links[0]
}

/// RFC 8033 §1, §4: PIE controls the queuing delay to its target (15 ms) whatever
/// the buffer size; a 1000-packet drop-tail buffer lets CUBIC fill it. Four CUBIC
/// flows saturate the link (one flow's sawtooth leaves the queue empty after each
/// cut), measured from 5 s to 15 s, after slow start.
#[test]
fn pie_holds_saturating_cubic_flows_near_15_ms() {
    let flows = bulk_flows(4);
    let pie = run(r#"{ discipline = "pie" }"#, &flows, 5.0, 15.0);
    let l = forward(&pie);
    let p50 = l.sojourn_p50_ms.unwrap();
    // Tolerance: ±3 ms around the 15 ms target.
    assert!((12.0..=18.0).contains(&p50), "PIE median sojourn {p50} ms");
    assert!(l.sojourn_p99_ms.unwrap() < 40.0, "{l:?}");
    assert!(l.queue_drops > 0);
    assert!(l.throughput_bps > 19e6, "{}", l.throughput_bps);
    let tail = run(
        r#"{ discipline = "drop_tail", packets = 1000 }"#,
        &flows,
        5.0,
        15.0,
    );
    let p50_tail = forward(&tail).sojourn_p50_ms.unwrap();
    assert!(
        p50_tail > 3.0 * p50,
        "drop-tail {p50_tail} ms vs PIE {p50} ms"
    );
}

/// A sparse flow, 50 datagrams/s of 200 bytes (80 kbit/s) for 7 s, beside two bulk
/// flows.
const SPARSE_AND_BULK: &str = r#"
[[flows]]
name = "sparse"
workload = { kind = "datagram", rate_pps = 50.0, size = 200, duration_s = 7.0 }
client = { max_datagram_frame_size = 65535 }
server = { max_datagram_frame_size = 65535 }
[[flows]]
name = "bulk0"
workload = { kind = "bulk" }
[[flows]]
name = "bulk1"
workload = { kind = "bulk" }
"#;

/// RFC 8290 §1.3, §4.2: the new-flow list serves a sparse flow's packets ahead of the
/// bulk flow's queue, so the sparse flow sees almost no queuing delay, while CoDel
/// holds the bulk flow's queue near its 5 ms target. With one FIFO (CoDel alone) the
/// sparse flow waits behind the bulk queue.
#[test]
fn fq_codel_keeps_a_sparse_flow_delay_near_zero() {
    let fq = run(r#"{ discipline = "fq_codel" }"#, SPARSE_AND_BULK, 3.0, 10.0);
    let d = fq.flows[0].datagrams.clone().unwrap();
    // The path alone: 20 ms propagation + ~0.1 ms serialization of a 256-byte packet.
    let sparse_queuing = d.owd_p50_ms.unwrap() - 20.1;
    assert!(
        sparse_queuing < 2.0,
        "sparse flow queuing {sparse_queuing} ms ({d:?})"
    );
    let p99_queuing = d.owd_p99_ms.unwrap() - 20.1;
    assert!(p99_queuing < 5.0, "sparse p99 queuing {p99_queuing} ms");
    // The bulk flows' packets (nearly all of the link's) are held near CoDel's 5 ms
    // target: their sawtooth leaves the median lower, the p95 within 3 to 15 ms.
    let link = forward(&fq);
    let (p50, p95) = (link.sojourn_p50_ms.unwrap(), link.sojourn_p95_ms.unwrap());
    assert!(
        p50 <= 6.0 && (3.0..=15.0).contains(&p95),
        "bulk sojourn {p50} / {p95} ms"
    );
    assert!(link.throughput_bps > 18e6, "{}", link.throughput_bps);
    // Control: one CoDel FIFO, the same target.
    let fifo = run(
        r#"{ discipline = "codel", packets = 1000 }"#,
        SPARSE_AND_BULK,
        3.0,
        10.0,
    );
    let fifo_queuing = fifo.flows[0].datagrams.clone().unwrap().owd_p50_ms.unwrap() - 20.1;
    assert!(
        fifo_queuing > 2.0 * sparse_queuing.max(0.5),
        "FIFO {fifo_queuing} ms vs FQ {sparse_queuing} ms"
    );
}

/// RFC 9332 A.1: ECT(1) traffic goes to the L queue and is marked CE from the ramp
/// (800 µs over 400 µs of L sojourn); with no Classic traffic p' stays 0, so every mark
/// is the ramp's, and nothing is dropped.
#[test]
fn dualpi2_marks_ect1_traffic_from_its_ramp() {
    let r = run(
        r#"{ discipline = "dualpi2" }"#,
        &format!("{BULK}client = {{ ecn = \"ect1\" }}\nserver = {{ ecn = \"ect1\" }}\n"),
        1.0,
        6.0,
    );
    let link = forward(&r);
    let (l, c) = (&link.subqueues[0], &link.subqueues[1]);
    assert_eq!((l.name.as_str(), c.name.as_str()), ("l", "c"));
    assert!(l.marks > 10, "{l:?}");
    assert_eq!(l.drops, 0);
    assert_eq!(c.sojourn_p50_ms, None, "nothing in the C queue: {c:?}");
    assert_eq!(link.ecn_marks, Some(l.marks));
    // The ramp keeps the L queue's median sojourn below its top (1.2 ms).
    let p50 = l.sojourn_p50_ms.unwrap();
    assert!(p50 < 1.2, "L median sojourn {p50} ms");
    assert!(r.flows[0].client.packets_lost == 0);
}

/// An ECT(1) flow and a not-ECT flow through DualPI2: the C queue is held near the
/// PI2 target (15 ms) by drops, the L queue near 1 ms by marks. (A classic controller
/// on ECT(1), as here, gets a small share: it answers every mark as a loss; a
/// scalable controller is what the L queue is for.)
#[test]
fn dualpi2_keeps_l_delay_far_below_c_delay() {
    let flows = r#"
[[flows]]
name = "l4s"
workload = { kind = "bulk" }
client = { ecn = "ect1" }
server = { ecn = "ect1" }
[[flows]]
name = "classic"
workload = { kind = "bulk" }
"#;
    let r = run(r#"{ discipline = "dualpi2" }"#, flows, 3.0, 10.0);
    // Same seed, same results (the queue's random stream is seeded).
    assert_eq!(r, run(r#"{ discipline = "dualpi2" }"#, flows, 3.0, 10.0));
    let link = forward(&r);
    let (l, c) = (&link.subqueues[0], &link.subqueues[1]);
    assert!(l.marks > 0 && c.drops > 0, "{l:?} {c:?}");
    let (l50, c50) = (l.sojourn_p50_ms.unwrap(), c.sojourn_p50_ms.unwrap());
    assert!(l50 < 1.2, "L median {l50} ms");
    assert!((9.0..=21.0).contains(&c50), "C median {c50} ms");
    assert!(l.sojourn_p99_ms.unwrap() < 2.0, "{l:?}");
}
