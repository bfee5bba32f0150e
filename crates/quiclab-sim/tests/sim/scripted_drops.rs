//! Scripted drops work end to end in the simulator: flights are counted on the real
//! handshake, the dropped datagrams are the ones meant, and the stack recovers (PTO,
//! retransmission) with the expected cost in time.

use quiclab_sim::{RunResult, Scenario, Simulation};

/// Point-to-point, 20 ms RTT, unlimited rate (a peer's flight arrives at one instant,
/// so the client answers the server's whole first flight with one flight), one GET.
const BASE: &str = r#"
name = "scripted"
seed = 5

[stop]
time_s = 10.0
when_flows_done = true

[topology]
kind = "point_to_point"

[topology.forward]
delay_ms = 10.0
#FORWARD

[topology.return]
delay_ms = 10.0
#RETURN

[[flows]]
name = "get"
workload = { kind = "request", size = 20000 }
"#;

fn run(forward: &str, ret: &str) -> RunResult {
    let text = BASE.replace("#FORWARD", forward).replace("#RETURN", ret);
    let s = Scenario::parse(&text, "inline").unwrap_or_else(|e| panic!("{e}"));
    let r = Simulation::new(s, "inline", None)
        .unwrap_or_else(|e| panic!("{e}"))
        .run()
        .unwrap_or_else(|e| panic!("{e}"));
    let f = &r.flows[0];
    println!(
        "{forward:?} {ret:?}: handshake {:?} s, ttfb {:?} s, ttlb {:?} s, client PTOs {}, \
         drops forward {} return {}",
        f.handshake_done_s,
        f.ttfb_s,
        f.ttlb_s,
        f.client.pto_expirations,
        r.links[0].impairment_drops,
        r.links[1].impairment_drops
    );
    r
}

#[test]
fn baseline_has_no_drops_or_ptos() {
    let r = run("", "");
    let f = &r.flows[0];
    assert!(f.ttlb_s.is_some(), "{f:?}");
    assert_eq!(f.client.pto_expirations, 0);
    assert_eq!(r.links[0].impairment_drops + r.links[1].impairment_drops, 0);
}

/// Dropping the client's second flight (its Initial ACK and Handshake Finished) leaves
/// the server without the Finished: the client's PTO fires, and the request is
/// answered late, but the connection gets through.
#[test]
fn dropped_client_finished_is_recovered() {
    let base = run("", "");
    let r = run("impairments = { drops = [{ flight = 2 }] }", "");
    let (f, b) = (&r.flows[0], &base.flows[0]);
    assert!(r.links[0].impairment_drops >= 1, "the flight was dropped");
    assert!(f.handshake_done_s.is_some(), "handshake completed: {f:?}");
    assert!(f.ttlb_s.is_some(), "the request was answered: {f:?}");
    assert!(f.client.pto_expirations >= 1, "client PTO fired: {f:?}");
    // The server cannot send 1-RTT data before it has the client's Finished.
    let ttfb = f.ttfb_s.expect("ttfb");
    assert!(ttfb > 0.040, "ttfb {ttfb} s is more than 2 RTT");
    assert!(ttfb > b.ttfb_s.expect("baseline ttfb"));
}

/// The server's first flight is a single datagram here (Initial + Handshake fit in 1200
/// bytes with the simulator's small self-signed certificate), so "the rest of the
/// first flight" (`from_datagram = 2`) drops nothing: checked, so that this test notices
/// if the flight grows. Dropping the whole flight delays the handshake and so the
/// first response byte.
#[test]
fn dropped_server_flight_delays_ttfb() {
    let base = run("", "");
    let b = &base.flows[0];
    assert_eq!(b.server.sent_by_packet_type["initial"].packets, 1);
    let rest = run(
        "",
        "impairments = { drops = [{ flight = 1, from_datagram = 2 }] }",
    );
    assert_eq!(rest.links[1].impairment_drops, 0, "a one-datagram flight");
    assert_eq!(rest.flows[0].ttfb_s, b.ttfb_s);

    let r = run("", "impairments = { drops = [{ flight = 1 }] }");
    assert!(r.links[1].impairment_drops >= 1, "the flight was dropped");
    let f = &r.flows[0];
    assert!(f.ttlb_s.is_some(), "the request was answered: {f:?}");
    let (hs, base_hs) = (
        f.handshake_done_s.expect("hs"),
        b.handshake_done_s.expect("hs"),
    );
    assert!(hs > base_hs, "handshake {hs} s not after {base_hs} s");
    let (ttfb, base_ttfb) = (f.ttfb_s.expect("ttfb"), b.ttfb_s.expect("ttfb"));
    assert!(ttfb > base_ttfb, "ttfb {ttfb} s not above {base_ttfb} s");
}

/// Dropping the rest of the server's second flight (its first window of response data
/// after the first datagram) costs a loss recovery: the last byte comes later.
#[test]
fn dropped_rest_of_response_flight_delays_ttlb() {
    let base = run("", "");
    let r = run(
        "",
        "impairments = { drops = [{ flight = 2, from_datagram = 2 }] }",
    );
    assert!(
        r.links[1].impairment_drops >= 2,
        "the rest of the flight was dropped"
    );
    let (f, b) = (&r.flows[0], &base.flows[0]);
    assert_eq!(
        f.goodput_bytes, b.goodput_bytes,
        "the whole response arrived"
    );
    let (ttlb, base_ttlb) = (f.ttlb_s.expect("ttlb"), b.ttlb_s.expect("ttlb"));
    assert!(ttlb > base_ttlb, "ttlb {ttlb} s not above {base_ttlb} s");
}

/// RFC 9002 §6.2.3. `flight = 2` with no `max_drops` drops the client's second flight
/// *and* its PTO probes (60, 120, 240, 480 ms later), because the server says nothing
/// until its own PTO: without an RTT sample (the client's Initial ACK was in the lost
/// flight) that is the default 1 s (3 x 333 ms, RFC 9002 §6.2.2). The server's
/// retransmission reaches the client at 1.019 s carrying CRYPTO data the client already
/// has; before §6.2.3 the client only acknowledged it and resent its Finished at its
/// next, backed-off PTO (pto_count 4: 0.92 + 0.96 = 1.88 s), for a first byte at
/// 1.94 s. Now the duplicate makes it resend the Finished at once.
#[test]
fn lost_client_finished_is_resent_on_the_servers_duplicate_crypto() {
    let r = run("impairments = { drops = [{ flight = 2 }] }", "");
    let f = &r.flows[0];
    let ttfb = f.ttfb_s.expect("ttfb");
    // Server PTO (1 s) + 1 RTT for the Finished + the request's own loss recovery.
    assert!(
        ttfb > 1.0,
        "ttfb {ttfb} s: the server's 1 s PTO bounds recovery"
    );
    assert!(
        ttfb < 1.2,
        "ttfb {ttfb} s: was 1.94 s before RFC 9002 §6.2.3"
    );
}

/// A single lost second flight (one datagram: Initial ACK, Handshake ACK + Finished,
/// the request) is recovered by the client's first PTO, 3 x 20 ms after its RTT sample.
#[test]
fn single_lost_client_flight_is_recovered_by_the_first_pto() {
    let r = run(
        "impairments = { drops = [{ flight = 2, max_drops = 1 }] }",
        "",
    );
    let f = &r.flows[0];
    assert_eq!(r.links[0].impairment_drops, 1);
    assert_eq!(
        f.client.pto_expirations, 2,
        "one Handshake and one 1-RTT PTO"
    );
    let ttfb = f.ttfb_s.expect("ttfb");
    assert!(ttfb < 0.2, "ttfb {ttfb} s");
}

/// RFC 9002 §6.2.4: a lost request is repaired by the client's first PTO probe, which
/// carries the request's stream data again (no new data is waiting), so the first byte
/// comes one PTO plus one RTT late; a bare PING probe would add a loss-detection round
/// trip on top. Forward 1-RTT datagrams after the handshake's are the request's here.
#[test]
fn lost_request_is_resent_in_the_pto_probe() {
    let base = run("", "");
    let r = run(
        "impairments = { drops = [{ packet_type = \"one_rtt\", max_drops = 1 }] }",
        "",
    );
    assert_eq!(r.links[0].impairment_drops, 1);
    let (f, b) = (&r.flows[0], &base.flows[0]);
    assert!(f.client.pto_expirations >= 1, "{f:?}");
    let (ttfb, base_ttfb) = (f.ttfb_s.expect("ttfb"), b.ttfb_s.expect("ttfb"));
    // RFC 9002 §6.2.1 after the handshake's 20 ms samples: smoothed_rtt 20 ms +
    // 4 x rttvar (10 ms) + max_ack_delay 25 ms.
    let pto = 0.020 + 4.0 * 0.010 + 0.025;
    println!("ttfb {ttfb} s, baseline {base_ttfb} s, 1-RTT PTO {pto} s");
    // Sent at 1 RTT and lost, resent by the probe one PTO later, answered one RTT on:
    // the baseline plus one PTO. With a bare PING it would be one more RTT (0.145 s).
    assert!(ttfb >= base_ttfb + pto - 0.001, "ttfb {ttfb}");
    assert!(
        ttfb < base_ttfb + pto + 0.010,
        "ttfb {ttfb} s: the probe did not carry the request"
    );
}
