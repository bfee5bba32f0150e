//! The INET validation cases A-C (seed 002, §IV) over TCP (quiclab-tcp), with the
//! tolerances of the QUIC cases in `validation.rs`: each loads its scenario file from
//! `scenarios/validation/tcp_*.toml`, varies what the paper varies, and compares the
//! simulated result with the analytic one.

use quiclab_link::impair::LossModel;
use quiclab_sim::scenario::{LinkConfig, Topology};
use quiclab_sim::{RunResult, Scenario, Simulation};
use std::path::PathBuf;

/// One line per validation point, as `validation.rs` prints them.
fn figure(case: &str, key: &str, value: f64) {
    println!("FIGURE {case} {key} {value:e}");
}

fn load(name: &str) -> (Scenario, String) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/validation")
        .join(name);
    let file = path.display().to_string();
    (
        Scenario::load(&path).unwrap_or_else(|e| panic!("{e}")),
        file,
    )
}

fn run(s: Scenario, file: &str) -> RunResult {
    Simulation::new(s, file, None)
        .unwrap_or_else(|e| panic!("{e}"))
        .run()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn links(s: &mut Scenario) -> (&mut LinkConfig, &mut LinkConfig) {
    match &mut s.topology {
        Topology::PointToPoint { forward, ret, .. } | Topology::Dumbbell { forward, ret, .. } => {
            (forward, ret)
        }
    }
}

fn tcp(s: &mut Scenario) -> &mut quiclab_tcp::TcpConfig {
    s.flows[0].tcp.get_or_insert_with(Default::default)
}

/// Case A: TCP segment throughput (IP payload) = (MTU - 20) / MTU x 100 Mbit/s within
/// 0.01%, QUIC's bound; application goodput = (MTU - 52) / MTU x 100 Mbit/s within
/// 0.1% (it is counted when data reaches the receiver, so the queue at either end of
/// the window adds a little).
#[test]
fn a_link_bandwidth() {
    for mtu in [1280u32, 1452, 1500, 9000] {
        let (mut s, file) = load("tcp_a_link_bandwidth.toml");
        let (f, r) = links(&mut s);
        f.mtu = Some(mtu);
        r.mtu = Some(mtu);
        tcp(&mut s).mss = (mtu - 40) as u16;
        let result = run(s, &file);
        let measured = result.links[0].payload_throughput_bps;
        let expected = f64::from(mtu - 20) / f64::from(mtu) * 100e6;
        let dev = (measured - expected) / expected;
        let goodput = result.flows[0].goodput_bps;
        let expected_goodput = f64::from(mtu - 52) / f64::from(mtu) * 100e6;
        let gdev = (goodput - expected_goodput) / expected_goodput;
        println!(
            "A/TCP mtu {mtu}: segments {:.3} Mbit/s vs {:.3} ({:+.4}%), goodput {:.3} vs {:.3} ({:+.4}%)",
            measured / 1e6,
            expected / 1e6,
            100.0 * dev,
            goodput / 1e6,
            expected_goodput / 1e6,
            100.0 * gdev
        );
        figure("A-TCP", &format!("mtu={mtu}"), dev);
        assert!(dev.abs() < 1e-4, "mtu {mtu}: {measured} vs {expected}");
        assert!(
            gdev.abs() < 1e-3,
            "mtu {mtu}: goodput {goodput} vs {expected_goodput}"
        );
    }
}

/// Sawtooth cycles measured in case B (as for QUIC).
const CYCLES: f64 = 40.0;

/// Case B: goodput = MSS / RTT x sqrt(3 / (2p)) with MSS the data bytes per segment
/// (1228), below the formula by at most QUIC's 5% / 2% / 1.5% at p = 0.1% / 0.02% /
/// 0.005%. Measured: -4.34% / -1.83% / -0.37% (p = 0.005% at RTT 2 ms).
fn b_point(p: f64, bound: f64, rtt_ms: f64) {
    let (mut s, file) = load("tcp_b_lossy_link.toml");
    let (f, r) = links(&mut s);
    f.delay_ms = rtt_ms / 2.0;
    r.delay_ms = rtt_ms / 2.0;
    f.impairments.loss = LossModel::Periodic { p };
    let w = (8.0 / (3.0 * p)).sqrt();
    let cycle_s = w / 2.0 * rtt_ms / 1000.0;
    s.measure.from_s = 4.0 * cycle_s;
    s.stop.time_s = (4.0 + CYCLES) * cycle_s;
    let result = run(s, &file);
    let measured = result.flows[0].goodput_bps;
    let expected = 1228.0 * 8.0 / (rtt_ms / 1000.0) * (3.0 / (2.0 * p)).sqrt();
    let dev = (measured - expected) / expected;
    println!(
        "B/TCP p {:.3}% rtt {rtt_ms} ms: measured {:.3} Mbit/s, expected {:.3} ({:+.2}%)",
        p * 100.0,
        measured / 1e6,
        expected / 1e6,
        100.0 * dev
    );
    figure("B-TCP", &format!("p={p},rtt_ms={rtt_ms}"), dev);
    assert!(
        (-bound..=0.0).contains(&dev),
        "p {p} rtt {rtt_ms}: {measured} vs {expected}"
    );
}

#[test]
fn b_lossy_link() {
    for (p, bound) in [(0.001, 0.05), (0.0002, 0.02)] {
        for rtt_ms in [2.0, 20.0, 60.0, 100.0] {
            b_point(p, bound, rtt_ms);
        }
    }
    b_point(0.00005, 0.015, 2.0);
}

/// Case B's p = 0.005% points at RTT 20-100 ms: the slow-start overshoot before the
/// first loss leaves thousands of segments in the receiver's reassembly queue, which
/// the interval map (`quiclab_proto::range_set`) keeps cheap per ACK (a linear SACK-block
/// search made these runs take many minutes).
#[test]
fn b_lossy_link_long_cycles() {
    for rtt_ms in [20.0, 60.0, 100.0] {
        b_point(0.00005, 0.015, rtt_ms);
    }
}

/// Case C: goodput = receive window / RTT with congestion control off, exact (within
/// 1e-6, as QUIC's initialMaxData / RTT).
#[test]
fn c_flow_control() {
    for window in [65_000u64, 100_000, 140_000] {
        for rtt_ms in [2.0, 4.0, 10.0, 20.0, 50.0, 100.0] {
            let (mut s, file) = load("tcp_c_flow_control.toml");
            let (f, r) = links(&mut s);
            f.delay_ms = rtt_ms / 2.0;
            r.delay_ms = rtt_ms / 2.0;
            tcp(&mut s).receive_buffer = window;
            let result = run(s, &file);
            let measured = result.flows[0].goodput_bps;
            let expected = window as f64 * 8.0 / (rtt_ms / 1000.0);
            let dev = (measured - expected) / expected;
            println!(
                "C/TCP window {window} rtt {rtt_ms} ms: measured {:.3} Mbit/s, expected {:.3} ({:+.2}%)",
                measured / 1e6,
                expected / 1e6,
                100.0 * dev
            );
            figure("C-TCP", &format!("window={window},rtt_ms={rtt_ms}"), dev);
            assert!(
                dev.abs() < 1e-6,
                "window {window} rtt {rtt_ms}: {measured} vs {expected}"
            );
        }
    }
}

/// Seed 003 Fig. 11's limit: without window scaling a 6 MB buffer is still advertised
/// as 65535 bytes, so goodput = 65535 / RTT.
#[test]
fn c_without_window_scaling_the_window_is_64k() {
    for rtt_ms in [20.0, 100.0] {
        let (mut s, file) = load("tcp_c_flow_control.toml");
        let (f, r) = links(&mut s);
        f.delay_ms = rtt_ms / 2.0;
        r.delay_ms = rtt_ms / 2.0;
        let t = tcp(&mut s);
        t.receive_buffer = 6 << 20;
        t.window_scaling = false;
        let result = run(s, &file);
        let measured = result.flows[0].goodput_bps;
        let expected = 65_535.0 * 8.0 / (rtt_ms / 1000.0);
        let dev = (measured - expected) / expected;
        println!(
            "C/TCP no window scaling rtt {rtt_ms} ms: {:.3} Mbit/s vs {:.3} ({:+.2}%)",
            measured / 1e6,
            expected / 1e6,
            100.0 * dev
        );
        assert!(dev.abs() < 1e-6, "rtt {rtt_ms}: {measured} vs {expected}");
    }
}
