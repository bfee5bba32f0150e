//! Server handshake options (IMC '24 instant-ACK study, seed 000): instant ACK (IACK)
//! versus waiting for the certificate (WFC), certificate and signing delays, the PING
//! with the instant ACK, and large certificates under the amplification limit.

use quiclab_proto::testing::{LinkConfig, Pair};
use quiclab_proto::{HandshakeConfig, Instant, TransportConfig};
use std::time::Duration;

const D: Duration = Duration::from_millis(20);

fn server(instant_ack: bool, certificate_delay_ms: f64, ping: bool) -> TransportConfig {
    TransportConfig {
        handshake: HandshakeConfig {
            instant_ack,
            certificate_delay_ms,
            instant_ack_ping: ping,
            ..HandshakeConfig::default()
        },
        ..TransportConfig::default()
    }
}

/// Runs the handshake over 2 x `D` links with `server` and a `cert_padding`-byte
/// certificate; returns the pair when the client completes.
fn handshake(server: TransportConfig, cert_padding: usize) -> Pair {
    let mut pair = Pair::with_cert_padding(
        TransportConfig::default(),
        server,
        [LinkConfig::delay(D), LinkConfig::delay(D)],
        3,
        cert_padding,
    );
    pair.capture = Some(Vec::new());
    pair.run_until(Instant::from_millis(10_000), |p| {
        p.client_conn().is_handshake_complete()
    })
    .unwrap();
    pair
}

/// Sizes of the server's datagrams, in send order, with their send times.
fn server_datagrams(pair: &Pair) -> Vec<(Instant, usize)> {
    pair.capture
        .as_ref()
        .unwrap()
        .iter()
        .filter(|(_, c2s, _)| !c2s)
        .map(|(t, _, d)| (*t, d.len()))
        .collect()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

#[test]
fn default_config_completes_at_2d_with_a_coalesced_ack() {
    let mut pair = handshake(TransportConfig::default(), 0);
    assert_eq!(pair.now, Instant::ZERO + 2 * D);
    // The first server datagram carries the ACK and the ServerHello: padded.
    assert!(server_datagrams(&pair)[0].1 >= 1200);
    let c = pair.client_conn();
    assert_eq!(c.rtt().first_sample(), Some(2 * D));
    assert_eq!(c.stats().first_sample_pto, Some(6 * D));
}

#[test]
fn wfc_certificate_delay_inflates_the_first_sample_and_pto() {
    let dt = Duration::from_millis(50);
    let mut pair = handshake(server(false, 50.0, false), 0);
    assert_eq!(pair.now, Instant::ZERO + 2 * D + dt, "handshake at 2d + Δt");
    // No ACK goes out alone: the first server datagram leaves at d + Δt with the
    // ServerHello.
    let first = server_datagrams(&pair)[0];
    assert_eq!(first.0, Instant::ZERO + D + dt);
    assert!(first.1 >= 1200);
    let c = pair.client_conn();
    // RFC 9002 §5.3: the Initial ACK's delay field is ignored, so Δt is in the sample.
    assert_eq!(c.rtt().first_sample(), Some(2 * D + dt));
    // RFC 9002 §6.2.1: smoothed + 4 x rttvar = 3 x the first sample.
    assert_eq!(c.stats().first_sample_pto, Some(3 * (2 * D + dt)));
    // The signing delay adds to the certificate delay.
    let mut cfg = server(false, 30.0, false);
    cfg.handshake.signing_delay_ms = 20.0;
    let mut pair = handshake(cfg, 0);
    assert_eq!(pair.now, Instant::ZERO + 2 * D + dt);
    assert_eq!(pair.client_conn().rtt().first_sample(), Some(2 * D + dt));
}

#[test]
fn iack_gives_the_client_a_1_rtt_sample_and_a_shorter_first_pto() {
    let dt = Duration::from_millis(50);
    let mut wfc = handshake(server(false, 50.0, false), 0);
    let mut iack = handshake(server(true, 50.0, false), 0);
    assert_eq!(
        iack.now,
        Instant::ZERO + 2 * D + dt,
        "handshake still at 2d + Δt"
    );
    // The instant ACK leaves at d, alone and unpadded (RFC 9000 §14.1 pads only
    // ack-eliciting server Initials); the ServerHello follows at d + Δt.
    let dg = server_datagrams(&iack);
    assert_eq!(dg[0].0, Instant::ZERO + D);
    assert!(dg[0].1 < 200, "ACK-only Initial of {} bytes", dg[0].1);
    assert_eq!(dg[1].0, Instant::ZERO + D + dt);
    let c = iack.client_conn();
    assert_eq!(c.rtt().first_sample(), Some(2 * D));
    let iack_pto = c.stats().first_sample_pto.unwrap();
    assert_eq!(iack_pto, 3 * 2 * D);
    let wfc_pto = wfc.client_conn().stats().first_sample_pto.unwrap();
    assert!(iack_pto < wfc_pto);
    eprintln!(
        "first PTO: IACK {:.1} ms, WFC {:.1} ms (Δt 50 ms, RTT 40 ms)",
        ms(iack_pto),
        ms(wfc_pto)
    );
    // Without a certificate delay IACK still sends the ACK in its own packet first.
    let mut pair = handshake(server(true, 0.0, false), 0);
    assert_eq!(pair.now, Instant::ZERO + 2 * D);
    let dg = server_datagrams(&pair);
    assert!(dg[0].1 < 200 && dg[1].1 >= 1200);
    assert_eq!(pair.client_conn().rtt().first_sample(), Some(2 * D));
}

#[test]
fn instant_ack_ping_pads_the_datagram_and_gives_the_server_a_sample() {
    let mut pair = handshake(server(true, 50.0, true), 0);
    let dg = server_datagrams(&pair);
    assert_eq!(dg[0].0, Instant::ZERO + D);
    assert!(dg[0].1 >= 1200, "IACK+PING datagram of {} bytes", dg[0].1);
    assert_eq!(pair.now, Instant::ZERO + 2 * D + Duration::from_millis(50));
    assert_eq!(pair.client_conn().rtt().first_sample(), Some(2 * D));
    // The client acknowledged the PING at once: the server has a 1-RTT sample.
    let s = pair.server_conn().unwrap();
    assert_eq!(s.rtt().first_sample(), Some(2 * D));
}

#[test]
fn large_certificate_with_iack_respects_the_amplification_limit() {
    for ping in [false, true] {
        let mut pair = Pair::with_cert_padding(
            TransportConfig::default(),
            server(true, 50.0, ping),
            [LinkConfig::delay(D), LinkConfig::delay(D)],
            9,
            5000,
        );
        // RFC 9000 §8.1: before address validation the server sends at most 3x what it
        // received. Until the client answers the first flight (at 2d + Δt + d = 110 ms), the server has
        // received only the ClientHello datagram (and, with the PING, the client's ACK).
        let at = Instant::from_millis(90);
        pair.run_until(Instant::from_millis(10_000), |p| p.now >= at)
            .unwrap();
        let s = pair.server_conn().unwrap().stats().clone();
        assert_eq!(s.datagrams_received.bytes, if ping { 2400 } else { 1200 });
        // The flight stopped at the limit: the rest needs the client's next datagram.
        assert!(s.datagrams_sent.bytes + 1200 > 3 * s.datagrams_received.bytes);
        assert!(
            s.datagrams_sent.bytes <= 3 * s.datagrams_received.bytes,
            "{} > 3 x {}",
            s.datagrams_sent.bytes,
            s.datagrams_received.bytes
        );
        pair.run_until(Instant::from_millis(10_000), |p| {
            p.client_conn().is_handshake_complete()
        })
        .unwrap();
        eprintln!(
            "5 KB certificate, IACK (ping {ping}): handshake at {:?}",
            pair.now
        );
        // Without the PING the flight stalls at the limit until the client's answer at
        // 2d + Δt + d unlocks the rest: one more RTT. With it, the client's ACK of the
        // PING (at 3d) raises the budget before the flight leaves (d + Δt).
        let rtts = if ping { 2 } else { 4 };
        assert_eq!(
            pair.now,
            Instant::ZERO + rtts * D + Duration::from_millis(50)
        );
    }
}

/// RFC 9002 §6.2.3: every datagram arrives twice, so both endpoints see duplicate CRYPTO
/// data all through the handshake; the early retransmissions this triggers stay within
/// the per-connection limit (no ping-pong), and the handshake is still confirmed at 4 x D.
#[test]
fn duplicated_datagrams_trigger_a_bounded_number_of_early_retransmissions() {
    let mut link = LinkConfig::delay(D);
    link.duplicate = 1.0;
    let mut pair = Pair::new(
        TransportConfig::default(),
        TransportConfig::default(),
        [link.clone(), link],
        3,
    );
    pair.run_until(Instant::from_millis(10_000), |p| {
        p.client_conn().is_handshake_confirmed()
    })
    .unwrap();
    assert!(
        pair.now <= Instant::ZERO + 4 * D,
        "confirmed at {:?}",
        pair.now
    );
    let client = pair.client_conn().stats().early_crypto_retransmits;
    let server = pair.server_conn().unwrap().stats().early_crypto_retransmits;
    assert!(
        client <= 2 && server <= 2,
        "client {client}, server {server}"
    );
}
