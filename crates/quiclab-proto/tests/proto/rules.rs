//! Protocol rules checked in the pair harness and at the endpoint: the server's
//! anti-amplification limit, the idle timeout, datagram sizes, accepting connections
//! and Version Negotiation.

use quiclab_proto::raw::{parse_header, parse_version_negotiation, write_long_header};
use quiclab_proto::testing::{LinkConfig, Pair};
use quiclab_proto::{
    tls, varint, CloseReason, ConnectionId, Endpoint, Instant, PacketType, TransportConfig,
    Unrouted, VERSION_1,
};
use std::sync::Arc;
use std::time::Duration;

#[test]
fn server_never_sends_more_than_three_times_what_it_received_before_validation() {
    // A 5 KB certificate makes the server's first flight larger than 3 x 1200 bytes, and
    // the client's path loses everything after its first datagram, so the server must
    // stop at the limit and wait (RFC 9000 §8.1, RFC 9002 §6.2.2.1).
    let d = LinkConfig::delay(Duration::from_millis(10));
    let mut pair = Pair::with_cert_padding(
        TransportConfig::default(),
        TransportConfig::default(),
        [d.clone(), d],
        9,
        5000,
    );
    pair.run_until(Instant::from_millis(1000), |p| p.link_stats[0].sent >= 1)
        .unwrap();
    pair.flush();
    pair.links[0].loss = 1.0;
    let _ = pair.run_until(Instant::from_millis(20_000), |_| false);
    let s = pair.server_conn().expect("server accepted").stats().clone();
    assert_eq!(s.datagrams_received.packets, 1);
    assert!(
        s.datagrams_sent.bytes > 2400,
        "the server used its budget: {}",
        s.datagrams_sent.bytes
    );
    assert!(
        s.datagrams_sent.bytes <= 3 * s.datagrams_received.bytes,
        "{} > 3 x {}",
        s.datagrams_sent.bytes,
        s.datagrams_received.bytes
    );
}

#[test]
fn large_certificate_handshake_completes_through_the_amplification_limit() {
    let d = LinkConfig::delay(Duration::from_millis(10));
    let mut pair = Pair::with_cert_padding(
        TransportConfig::default(),
        TransportConfig::default(),
        [d.clone(), d],
        9,
        5000,
    );
    pair.run_until(Instant::from_millis(10_000), |p| {
        p.client_conn().is_handshake_complete()
    })
    .unwrap();
    // The server's flight needs more than 3x the client's first datagram, so it stops at
    // the limit; the client's (padded) ACK datagram at 2d unlocks the rest, which
    // arrives at 4d: one extra round trip.
    assert_eq!(pair.now, Instant::from_millis(40));
}

#[test]
fn idle_timeout_closes_both_sides_at_the_negotiated_time() {
    let client = TransportConfig {
        idle_timeout_ms: 5_000,
        ..TransportConfig::default()
    };
    let server = TransportConfig {
        idle_timeout_ms: 3_000,
        ..TransportConfig::default()
    };
    let d = LinkConfig::delay(Duration::from_millis(10));
    let mut pair = Pair::new(client, server, [d.clone(), d], 4);
    pair.run_until(Instant::from_millis(1000), |p| {
        p.server_conn().is_some_and(|s| s.is_handshake_confirmed())
            && p.client_conn().is_handshake_confirmed()
    })
    .unwrap();
    let settled = pair.now;
    pair.run_until(Instant::from_millis(60_000), |p| {
        p.client_conn().is_drained() && p.server_conn().unwrap().is_drained()
    })
    .unwrap();
    assert_eq!(
        pair.client_conn().close_reason(),
        Some(&CloseReason::IdleTimeout)
    );
    assert_eq!(
        pair.server_conn().unwrap().close_reason(),
        Some(&CloseReason::IdleTimeout)
    );
    // RFC 9000 §10.1: the minimum of the two advertised values, from the last activity.
    let elapsed = pair.now - settled;
    assert!(
        elapsed >= Duration::from_millis(2_900) && elapsed <= Duration::from_millis(3_100),
        "idle after {elapsed:?}"
    );
}

#[test]
fn datagram_size_follows_the_configured_maximum() {
    for size in [1200u16, 1350, 1452] {
        let config = TransportConfig {
            max_udp_payload_size: size,
            ..TransportConfig::default()
        };
        let mut pair = Pair::new(
            config.clone(),
            config,
            [LinkConfig::default(), LinkConfig::default()],
            2,
        );
        pair.run_until(Instant::from_millis(1000), |p| {
            p.client_conn().is_handshake_complete()
        })
        .unwrap();
        let id = pair
            .client_conn()
            .open_stream(quiclab_proto::Dir::Uni)
            .unwrap();
        pair.client_conn().write(id, &vec![1u8; 100_000]).unwrap();
        let _ = pair.run_until(Instant::from_millis(2000), |p| p.link_stats[0].sent > 40);
        assert_eq!(pair.link_stats[0].max_datagram, usize::from(size));
    }
}

fn server_endpoint() -> Endpoint {
    let id = tls::self_signed(&["localhost".into()], 1, 0);
    let tls = tls::server_config(id, &[b"hq-interop".to_vec()], None).unwrap();
    Endpoint::new(Arc::new(TransportConfig::default()), Some(tls), 1)
}

/// A fake client Initial header with a zero-filled payload (not decryptable, so the
/// endpoint must never create a connection for it).
fn initial_datagram(version: u32, dcid: &[u8], total: usize) -> Vec<u8> {
    let mut buf = Vec::new();
    let dcid = ConnectionId::new(dcid).unwrap();
    let scid = ConnectionId::new(&[9; 8]).unwrap();
    let o = write_long_header(
        &mut buf,
        PacketType::Initial,
        VERSION_1,
        &dcid,
        &scid,
        &[],
        0,
        4,
    );
    buf.resize(total, 0);
    varint::patch_u14(&mut buf, o.length_offset, (total - o.pn_offset) as u64);
    buf[1..5].copy_from_slice(&version.to_be_bytes());
    buf
}

#[test]
fn server_accepts_only_full_size_initials_with_long_enough_cids() {
    let addr = "10.0.0.1:1000".parse().unwrap();
    let mut ep = server_endpoint();
    let now = Instant::ZERO;
    assert_eq!(
        ep.handle_datagram(
            now,
            addr,
            quiclab_proto::Ecn::NotEct,
            &mut initial_datagram(VERSION_1, &[1; 8], 1100)
        ),
        Err(Unrouted::Dropped)
    );
    assert_eq!(
        ep.handle_datagram(
            now,
            addr,
            quiclab_proto::Ecn::NotEct,
            &mut initial_datagram(VERSION_1, &[1; 7], 1200)
        ),
        Err(Unrouted::Dropped)
    );
    // RFC 9001 §5.2: a full-size Initial that does not decrypt creates no state.
    assert_eq!(
        ep.handle_datagram(
            now,
            addr,
            quiclab_proto::Ecn::NotEct,
            &mut initial_datagram(VERSION_1, &[1; 8], 1200)
        ),
        Err(Unrouted::Dropped)
    );
    assert!(ep.accept().is_none());
    // A real client's first datagram (1200 bytes, 8-byte DCID) does.
    let mut client = Endpoint::new(Arc::new(TransportConfig::default()), None, 2);
    let tls = tls::client_config(
        tls::ServerVerification::Insecure,
        &[b"hq-interop".to_vec()],
        None,
    );
    client.connect(now, tls, "localhost", addr).unwrap();
    let mut first = Vec::new();
    let t = client.poll_transmit(now, &mut first).unwrap();
    assert_eq!(t.size, 1200);
    assert!(ep
        .handle_datagram(now, addr, quiclab_proto::Ecn::NotEct, &mut first)
        .is_ok());
    assert!(
        ep.accept().is_some(),
        "a decryptable 1200-byte Initial with an 8-byte DCID creates a connection"
    );
}

#[test]
fn unknown_version_gets_version_negotiation() {
    let addr = "10.0.0.1:1000".parse().unwrap();
    let mut ep = server_endpoint();
    let now = Instant::ZERO;
    let mut dgram = initial_datagram(0x1a2a_3a4a, &[3; 8], 1200);
    assert_eq!(
        ep.handle_datagram(now, addr, quiclab_proto::Ecn::NotEct, &mut dgram),
        Err(Unrouted::VersionNegotiation)
    );
    let mut out = Vec::new();
    let t = ep
        .poll_transmit(now, &mut out)
        .expect("a Version Negotiation packet");
    assert_eq!(t.destination, addr);
    let h = parse_header(&out, 8).unwrap();
    assert_eq!(h.ty, PacketType::VersionNegotiation);
    // RFC 9000 §17.2.1: the IDs are echoed swapped.
    assert_eq!(h.dcid.as_bytes(), &[9; 8]);
    assert_eq!(h.scid.as_bytes(), &[3; 8]);
    assert_eq!(parse_version_negotiation(&out).unwrap(), vec![VERSION_1]);
    // Too small to answer (RFC 9000 §14.1): dropped silently.
    let mut small = initial_datagram(0x1a2a_3a4a, &[3; 8], 600);
    assert_eq!(
        ep.handle_datagram(now, addr, quiclab_proto::Ecn::NotEct, &mut small),
        Err(Unrouted::Dropped)
    );
}
