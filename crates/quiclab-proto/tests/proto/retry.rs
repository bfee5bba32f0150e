//! Retry and address validation (RFC 9000 §8.1, §17.2.5; RFC 9001 §5.8) and NEW_TOKEN
//! (§8.1.3) in the pair harness and at the endpoint.

use crate::common;

use common::{config, fetch};
use quiclab_proto::raw::{integrity_tag, parse_header, write_retry_without_tag};
use quiclab_proto::testing::{LinkConfig, Pair, ALPN};
use quiclab_proto::tls::{client_config, ServerVerification};
use quiclab_proto::{
    CloseReason, Connection, ConnectionId, Endpoint, Instant, PacketType, RetryMode,
    TransportConfig, TransportErrorCode, Unrouted, VERSION_1,
};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

fn retry_server(mode: RetryMode) -> TransportConfig {
    let mut c = config();
    c.admission.retry = mode;
    c
}

fn links() -> [LinkConfig; 2] {
    let l = LinkConfig::delay(Duration::from_millis(10));
    [l.clone(), l]
}

/// Runs the pair's client connection through its handshake and a 1 KB fetch; returns
/// when the client's handshake completed.
fn connect_and_fetch(pair: &mut Pair) -> Instant {
    fetch(pair, 1_000).unwrap();
    pair.client_conn().stats().handshake_completed_at.unwrap()
}

/// Starts a second client connection on the pair's client endpoint (so it sees the
/// tokens the first one received) and makes it the pair's connection.
fn reconnect(pair: &mut Pair) -> Instant {
    // Let the first connection's last ACKs land, so none is mistaken for the second's.
    let quiet = pair.now + Duration::from_secs(1);
    let _ = pair.run_until(quiet, |_| false);
    let now = pair.now;
    let tls = client_config(ServerVerification::Insecure, &[ALPN.to_vec()], None);
    let server = pair.server_addr;
    pair.client_conn = pair.client.connect(now, tls, "localhost", server).unwrap();
    pair.server_conn = None;
    now
}

#[test]
fn retry_always_costs_one_round_trip_and_validates_the_address() {
    let mut pair = Pair::new(config(), retry_server(RetryMode::Always), links(), 1);
    let done = connect_and_fetch(&mut pair);
    assert!(pair.client_conn().retry_received());
    // One extra round trip for the Retry: 2 RTT (20 ms each) to handshake completion.
    assert_eq!(done, Instant::from_millis(40));
    let odcid = pair.client_conn().original_dcid();
    let server = pair.server_conn().unwrap();
    // RFC 9000 §7.3: the server names the client's first DCID and the Retry's SCID.
    assert_eq!(server.original_dcid(), odcid);
    let client = pair.client_conn();
    let sp = client.peer_params().unwrap();
    assert_eq!(sp.original_destination_connection_id, Some(odcid));
    assert!(sp.retry_source_connection_id.is_some());
}

#[test]
fn new_token_round_trip_skips_retry() {
    let mut pair = Pair::new(config(), retry_server(RetryMode::Always), links(), 2);
    connect_and_fetch(&mut pair);
    assert!(pair.client_conn().retry_received());
    assert_eq!(pair.client.tokens().count(), 1, "the server sent NEW_TOKEN");
    let start = reconnect(&mut pair);
    assert_eq!(pair.client.tokens().count(), 0, "a token is used once");
    let done = connect_and_fetch(&mut pair);
    assert!(
        !pair.client_conn().retry_received(),
        "the token skipped Retry"
    );
    assert_eq!(done - start, Duration::from_millis(20), "one round trip");
    let sp = pair.client_conn().peer_params().unwrap();
    assert_eq!(sp.retry_source_connection_id, None);
    // And the second connection got a token for the third.
    assert_eq!(pair.client.tokens().count(), 1);
}

#[test]
fn no_tokens_without_retry() {
    let mut pair = Pair::new(config(), config(), links(), 3);
    connect_and_fetch(&mut pair);
    assert!(!pair.client_conn().retry_received());
    assert_eq!(pair.client.tokens().count(), 0);
}

/// A client endpoint and a server endpoint driven by hand: the client's first Initial.
struct Manual {
    client: Endpoint,
    server: Endpoint,
    handle: quiclab_proto::ConnectionHandle,
    server_addr: SocketAddr,
}

fn manual(server_config: TransportConfig) -> Manual {
    let mut rng = quiclab_proto::DetRng::new(5);
    let identity = quiclab_proto::tls::self_signed(&["localhost".into()], rng.next_u64(), 0);
    let server_tls = quiclab_proto::tls::server_config(identity, &[ALPN.to_vec()], None).unwrap();
    let mut client = Endpoint::new(Arc::new(config()), None, 6);
    let server = Endpoint::new(Arc::new(server_config), Some(server_tls), 7);
    let tls = client_config(ServerVerification::Insecure, &[ALPN.to_vec()], None);
    let server_addr: SocketAddr = "10.0.0.2:443".parse().unwrap();
    let handle = client
        .connect(Instant::ZERO, tls, "localhost", server_addr)
        .unwrap();
    Manual {
        client,
        server,
        handle,
        server_addr,
    }
}

fn next(ep: &mut Endpoint, now: Instant) -> Option<Vec<u8>> {
    let mut buf = Vec::new();
    ep.poll_transmit(now, &mut buf)
        .map(|t| buf[..t.size].to_vec())
}

/// The client's Initial after a real Retry from the server (client address `from`).
fn initial_with_retry_token(m: &mut Manual, from: SocketAddr) -> Vec<u8> {
    let now = Instant::ZERO;
    let mut first = next(&mut m.client, now).unwrap();
    let r = m
        .server
        .handle_datagram(now, from, quiclab_proto::Ecn::NotEct, &mut first);
    assert_eq!(r, Err(Unrouted::Retry));
    let mut retry = next(&mut m.server, now).unwrap();
    assert_eq!(parse_header(&retry, 8).unwrap().ty, PacketType::Retry);
    let _ = m
        .client
        .handle_datagram(now, m.server_addr, quiclab_proto::Ecn::NotEct, &mut retry);
    assert!(m.client.connection(m.handle).unwrap().retry_received());
    let second = next(&mut m.client, now).unwrap();
    assert!(!parse_header(&second, 8).unwrap().token.is_empty());
    second
}

fn client_closed_with(m: &mut Manual, now: Instant, code: TransportErrorCode) {
    let mut close = next(&mut m.server, now).expect("the server answers");
    assert_eq!(parse_header(&close, 8).unwrap().ty, PacketType::Initial);
    let _ = m
        .client
        .handle_datagram(now, m.server_addr, quiclab_proto::Ecn::NotEct, &mut close);
    let conn = m.client.connection(m.handle).unwrap();
    let Some(CloseReason::Transport { error, .. }) = conn.close_reason() else {
        panic!("{:?}", conn.close_reason())
    };
    assert_eq!(error.code, code);
}

#[test]
fn valid_retry_token_is_accepted() {
    let mut m = manual(retry_server(RetryMode::Always));
    let from: SocketAddr = "10.0.0.1:4000".parse().unwrap();
    let mut second = initial_with_retry_token(&mut m, from);
    let h = m
        .server
        .handle_datagram(Instant::ZERO, from, quiclab_proto::Ecn::NotEct, &mut second);
    assert!(h.is_ok(), "{h:?}");
}

#[test]
fn retry_token_from_another_address_gets_invalid_token() {
    let mut m = manual(retry_server(RetryMode::Always));
    let from: SocketAddr = "10.0.0.1:4000".parse().unwrap();
    let mut second = initial_with_retry_token(&mut m, from);
    let elsewhere: SocketAddr = "10.0.0.1:4001".parse().unwrap();
    let r = m.server.handle_datagram(
        Instant::ZERO,
        elsewhere,
        quiclab_proto::Ecn::NotEct,
        &mut second,
    );
    assert_eq!(r, Err(Unrouted::Retry));
    assert_eq!(m.server.handles().count(), 0, "no state");
    // RFC 9000 §8.1.2: CONNECTION_CLOSE with INVALID_TOKEN, readable by the client.
    client_closed_with(&mut m, Instant::ZERO, TransportErrorCode::INVALID_TOKEN);
}

#[test]
fn expired_retry_token_gets_invalid_token() {
    let mut m = manual(retry_server(RetryMode::Always));
    let from: SocketAddr = "10.0.0.1:4000".parse().unwrap();
    let mut second = initial_with_retry_token(&mut m, from);
    let late = Instant::from_millis(10_001); // default lifetime 10 s
    let r = m
        .server
        .handle_datagram(late, from, quiclab_proto::Ecn::NotEct, &mut second);
    assert_eq!(r, Err(Unrouted::Retry));
    client_closed_with(&mut m, late, TransportErrorCode::INVALID_TOKEN);
}

#[test]
fn tampered_token_makes_the_initial_undecryptable() {
    let mut m = manual(retry_server(RetryMode::Always));
    let from: SocketAddr = "10.0.0.1:4000".parse().unwrap();
    let mut second = initial_with_retry_token(&mut m, from);
    // The token sits in the header, which the packet's AEAD authenticates: a flipped
    // token byte makes the Initial junk, dropped without state or answer.
    let at = 1 + 4 + 1 + 8 + 1 + 8 + 1 + 3;
    second[at] ^= 0x40;
    let r = m
        .server
        .handle_datagram(Instant::ZERO, from, quiclab_proto::Ecn::NotEct, &mut second);
    assert_eq!(r, Err(Unrouted::Dropped));
    assert!(next(&mut m.server, Instant::ZERO).is_none());
}

/// A Retry for `odcid` to a client whose SCID is `client_cid`.
fn forged_retry(client_cid: &ConnectionId, odcid: &ConnectionId, scid: u8) -> Vec<u8> {
    let mut pkt = Vec::new();
    let scid = ConnectionId::new(&[scid; 8]).unwrap();
    write_retry_without_tag(&mut pkt, VERSION_1, client_cid, &scid, b"token!", 0);
    let tag = integrity_tag(VERSION_1, odcid, &pkt);
    pkt.extend_from_slice(&tag);
    pkt
}

fn client_conn() -> (Connection, Vec<u8>) {
    let tls = client_config(ServerVerification::Insecure, &[ALPN.to_vec()], None);
    let server: SocketAddr = "10.0.0.2:443".parse().unwrap();
    let mut c = Connection::new_client(
        Instant::ZERO,
        Arc::new(config()),
        tls,
        "localhost",
        server,
        9,
    )
    .unwrap();
    let mut first = Vec::new();
    c.poll_transmit(Instant::ZERO, &mut first).unwrap();
    (c, first)
}

#[test]
fn client_rejects_a_retry_with_a_bad_tag_and_ignores_a_second_retry() {
    let (mut c, _) = client_conn();
    let server: SocketAddr = "10.0.0.2:443".parse().unwrap();
    let (me, odcid) = (c.local_cid(), c.original_dcid());
    let now = Instant::from_millis(1);
    // Tag computed over another original DCID: RFC 9001 §5.8 says drop it.
    let other = ConnectionId::new(&[1; 8]).unwrap();
    c.handle_datagram(
        now,
        server,
        quiclab_proto::Ecn::NotEct,
        &mut forged_retry(&me, &other, 0xaa),
    );
    assert!(!c.retry_received());
    // A good one is accepted: the next Initial goes to its SCID with its token.
    c.handle_datagram(
        now,
        server,
        quiclab_proto::Ecn::NotEct,
        &mut forged_retry(&me, &odcid, 0xbb),
    );
    assert!(c.retry_received());
    let mut out = Vec::new();
    c.poll_transmit(now, &mut out).unwrap();
    let h = parse_header(&out, 8).unwrap();
    assert_eq!(h.dcid, ConnectionId::new(&[0xbb; 8]).unwrap());
    assert_eq!(h.token, b"token!");
    // RFC 9000 §17.2.5.2: only one Retry per connection.
    c.handle_datagram(
        now,
        server,
        quiclab_proto::Ecn::NotEct,
        &mut forged_retry(&me, &odcid, 0xcc),
    );
    let mut out = Vec::new();
    let later = c.poll_timeout().unwrap();
    c.handle_timeout(later);
    c.poll_transmit(later, &mut out).unwrap();
    let h = parse_header(&out, 8).unwrap();
    assert_eq!(h.dcid, ConnectionId::new(&[0xbb; 8]).unwrap());
}

#[test]
fn client_checks_retry_source_connection_id() {
    // The client accepted a Retry, but the server (here: one that never sent it, with
    // Retry off) does not name it: RFC 9000 §7.3 TRANSPORT_PARAMETER_ERROR.
    let (mut c, first) = client_conn();
    let server_addr: SocketAddr = "10.0.0.2:443".parse().unwrap();
    let mut m = manual(config());
    let (me, odcid) = (c.local_cid(), c.original_dcid());
    let _ = first;
    let now = Instant::ZERO;
    c.handle_datagram(
        now,
        server_addr,
        quiclab_proto::Ecn::NotEct,
        &mut forged_retry(&me, &odcid, 0xbb),
    );
    let mut second = Vec::new();
    c.poll_transmit(now, &mut second).unwrap();
    let from: SocketAddr = "10.0.0.1:4000".parse().unwrap();
    // The server does not know the token (another key): it treats it as absent.
    assert!(m
        .server
        .handle_datagram(now, from, quiclab_proto::Ecn::NotEct, &mut second)
        .is_ok());
    for _ in 0..4 {
        while let Some(mut d) = next(&mut m.server, now) {
            c.handle_datagram(now, server_addr, quiclab_proto::Ecn::NotEct, &mut d);
        }
    }
    let Some(CloseReason::Transport { error, .. }) = c.close_reason() else {
        panic!("{:?}", c.close_reason())
    };
    assert_eq!(error.code, TransportErrorCode::TRANSPORT_PARAMETER_ERROR);
}

#[test]
fn auto_retry_only_above_the_threshold() {
    let mut server = retry_server(RetryMode::Auto);
    server.admission.retry_above = 1;
    let mut pair = Pair::new(config(), server, links(), 4);
    // The first client finds no handshake running: no Retry.
    pair.run_until(Instant::from_millis(15), |p| p.server_conn.is_some())
        .unwrap();
    let mut m = manual(config());
    let mut first = next(&mut m.client, pair.now).unwrap();
    let from: SocketAddr = "10.0.0.3:4000".parse().unwrap();
    let now = pair.now;
    // A second one arrives while the first handshake runs: Retry.
    assert_eq!(
        pair.server
            .handle_datagram(now, from, quiclab_proto::Ecn::NotEct, &mut first.clone()),
        Err(Unrouted::Retry)
    );
    connect_and_fetch(&mut pair);
    assert!(!pair.client_conn().retry_received());
    // Load gone: admitted directly.
    let now = pair.now;
    assert!(pair
        .server
        .handle_datagram(now, from, quiclab_proto::Ecn::NotEct, &mut first)
        .is_ok());
}

#[test]
fn long_header_packets_fit_their_length_field_whatever_the_path_allows() {
    // RFC 9000 §17.2: a 2-byte Length field holds at most 16383. A path that allows
    // 64 KB datagrams and a 40 KB certificate used to fill a Handshake packet past it.
    let mut big = config();
    big.max_udp_payload_size = 65_527;
    let mut pair = Pair::with_cert_padding(big.clone(), big, links(), 8, 40_000);
    fetch(&mut pair, 100_000).unwrap();
    assert!(pair.link_stats[1].max_datagram > 16_383);
}

#[test]
fn version_negotiation_after_a_retry_is_ignored() {
    use quiclab_proto::raw::write_version_negotiation;
    use quiclab_proto::VERSION_2;
    let (mut c, _) = client_conn();
    let server: SocketAddr = "10.0.0.2:443".parse().unwrap();
    let (me, odcid) = (c.local_cid(), c.original_dcid());
    let now = Instant::from_millis(1);
    c.handle_datagram(
        now,
        server,
        quiclab_proto::Ecn::NotEct,
        &mut forged_retry(&me, &odcid, 0xbb),
    );
    assert!(c.retry_received());
    // RFC 9000 §6.2: a VN after any other packet was processed is discarded.
    let mut vn = Vec::new();
    write_version_negotiation(&mut vn, me.as_bytes(), odcid.as_bytes(), &[VERSION_2], 0);
    c.handle_datagram(now, server, quiclab_proto::Ecn::NotEct, &mut vn);
    assert!(!c.is_closed());
    assert_eq!(c.version(), VERSION_1);
}

#[test]
fn auto_retry_threshold_must_be_within_the_cap() {
    let mut c = retry_server(RetryMode::Auto);
    c.admission.retry_above = c.admission.max_handshaking + 1;
    assert!(c.validate().is_err());
    c.admission.retry_above = 0;
    assert!(c.validate().is_err());
    c.admission.retry_above = c.admission.max_handshaking;
    assert!(c.validate().is_ok());
    let mut t = retry_server(RetryMode::Always);
    t.admission.retry_token_lifetime_ms = 0;
    assert!(t.validate().is_err());
}

// ----- RFC 9369 §5: tokens are specific to the QUIC version that issued them -----

fn with_versions(
    mut c: TransportConfig,
    initial: quiclab_proto::QuicVersion,
    supported: &[quiclab_proto::QuicVersion],
) -> TransportConfig {
    c.versions = quiclab_proto::VersionConfig {
        initial,
        supported: supported.to_vec(),
    };
    c
}

fn v2_client() -> TransportConfig {
    use quiclab_proto::QuicVersion::V2;
    with_versions(config(), V2, &[V2])
}

/// A server with Retry always on that accepts both versions and moves no one.
fn both_versions_server() -> TransportConfig {
    use quiclab_proto::QuicVersion::{V1, V2};
    with_versions(retry_server(RetryMode::Always), V1, &[V1, V2])
}

/// Replaces the pair's client endpoint (after the first connection went quiet) and
/// starts a connection from it.
fn reconnect_from(pair: &mut Pair, client: Endpoint) {
    let quiet = pair.now + Duration::from_secs(1);
    let _ = pair.run_until(quiet, |_| false);
    pair.client = client;
    reconnect(pair);
}

fn stored(ep: &Endpoint) -> Vec<(String, u32, Vec<u8>)> {
    ep.tokens()
        .map(|(n, v, t)| (n.to_string(), v, t.to_vec()))
        .collect()
}

#[test]
fn a_new_token_token_serves_only_its_version() {
    use quiclab_proto::VERSION_2;
    let mut pair = Pair::new(config(), both_versions_server(), links(), 4);
    connect_and_fetch(&mut pair);
    let tokens = stored(&pair.client);
    assert_eq!(tokens.len(), 1);
    assert_eq!(tokens[0].1, VERSION_1, "kept with the version that got it");
    let v1_token = tokens[0].2.clone();

    // A client starting in v2 does not offer the v1 token: it stays, and the server
    // answers with Retry.
    let mut client = Endpoint::new(Arc::new(v2_client()), None, 40);
    client.insert_token("localhost", VERSION_1, v1_token.clone());
    reconnect_from(&mut pair, client);
    assert_eq!(pair.client.tokens().count(), 1, "the v1 token is not taken");
    connect_and_fetch(&mut pair);
    assert_eq!(pair.client_conn().version(), VERSION_2);
    assert!(pair.client_conn().retry_received());
    // The v2 connection's own token is kept for v2, next to the v1 one.
    let versions: Vec<u32> = stored(&pair.client).iter().map(|t| t.1).collect();
    assert_eq!(versions, vec![VERSION_1, VERSION_2]);

    // Same version: the v2 token skips Retry.
    reconnect(&mut pair);
    connect_and_fetch(&mut pair);
    assert!(!pair.client_conn().retry_received(), "a v2 token in v2");

    // A v1 token offered in v2 anyway (filed under v2) is ignored by the server
    // (RFC 9000 §8.1.3): the address is not validated, so Retry again.
    let mut client = Endpoint::new(Arc::new(v2_client()), None, 41);
    client.insert_token("localhost", VERSION_2, v1_token);
    reconnect_from(&mut pair, client);
    assert_eq!(pair.client.tokens().count(), 0, "the token went out");
    connect_and_fetch(&mut pair);
    assert_eq!(pair.client_conn().version(), VERSION_2);
    assert!(
        pair.client_conn().retry_received(),
        "the v1 token was ignored"
    );
}

#[test]
fn retry_token_from_another_version_gets_invalid_token() {
    use quiclab_proto::VERSION_2;
    let mut m = manual(both_versions_server());
    let from: SocketAddr = "10.0.0.1:4000".parse().unwrap();
    let second = initial_with_retry_token(&mut m, from);
    let token = parse_header(&second, 8).unwrap().token.to_vec();
    // The same Retry token in the Initial of a v2 connection.
    let mut client = Endpoint::new(Arc::new(v2_client()), None, 8);
    client.insert_token("localhost", VERSION_2, token.clone());
    let tls = client_config(ServerVerification::Insecure, &[ALPN.to_vec()], None);
    let now = Instant::ZERO;
    m.handle = client
        .connect(now, tls, "localhost", m.server_addr)
        .unwrap();
    m.client = client;
    let mut initial = next(&mut m.client, now).unwrap();
    let h = parse_header(&initial, 8).unwrap();
    assert_eq!((h.version, h.token), (VERSION_2, &token[..]));
    let r = m
        .server
        .handle_datagram(now, from, quiclab_proto::Ecn::NotEct, &mut initial);
    assert_eq!(r, Err(Unrouted::Retry));
    assert_eq!(m.server.handles().count(), 0, "no state");
    // RFC 9369 §5 with RFC 9000 §8.1.2: as invalid as an expired Retry token.
    client_closed_with(&mut m, now, TransportErrorCode::INVALID_TOKEN);
}

#[test]
fn an_upgraded_connection_s_token_is_for_the_negotiated_version() {
    use quiclab_proto::QuicVersion::{V1, V2};
    use quiclab_proto::VERSION_2;
    // Client starts in v1 offering v2; the server prefers v2 and moves it there.
    let client = with_versions(config(), V1, &[V1, V2]);
    let server = with_versions(retry_server(RetryMode::Always), V2, &[V2, V1]);
    let mut pair = Pair::new(client.clone(), server, links(), 5);
    connect_and_fetch(&mut pair);
    assert_eq!(pair.client_conn().version(), VERSION_2);
    let tokens = stored(&pair.client);
    assert_eq!(tokens.len(), 1);
    assert_eq!(
        tokens[0].1, VERSION_2,
        "RFC 9369 §5: the negotiated version"
    );
    // The next v1-starting connection does not use it; a v2-starting one does, and
    // the server takes it (no Retry).
    reconnect(&mut pair);
    assert_eq!(pair.client.tokens().count(), 1);
    let mut v2 = Endpoint::new(Arc::new(v2_client()), None, 50);
    v2.insert_token("localhost", VERSION_2, tokens[0].2.clone());
    reconnect_from(&mut pair, v2);
    connect_and_fetch(&mut pair);
    assert_eq!(pair.client_conn().version(), VERSION_2);
    assert!(
        !pair.client_conn().retry_received(),
        "the v2 token validated"
    );
}
