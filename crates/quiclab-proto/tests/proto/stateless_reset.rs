//! Stateless Reset end to end at the endpoint (RFC 9000 §10.3): a server that lost a
//! connection's state (a new endpoint, as after a restart) but kept its static reset
//! key answers the client's next packet with a reset, and the client's connection ends
//! at once; without a key the packet is dropped and the client notices nothing.

use crate::common;

use common::{config, fetch};
use quiclab_proto::testing::{LinkConfig, Pair, ALPN};
use quiclab_proto::{
    CloseReason, Dir, Endpoint, Instant, StatelessResetKey, TransportConfig, TransportErrorCode,
    Unrouted,
};
use std::sync::Arc;
use std::time::Duration;

const KEY: [u8; 32] = [0x5a; 32];
const ONE_WAY: Duration = Duration::from_millis(10);

fn keyed(key: Option<[u8; 32]>) -> TransportConfig {
    TransportConfig {
        stateless_reset_key: key.map(StatelessResetKey::new),
        ..config()
    }
}

fn links() -> [LinkConfig; 2] {
    let l = LinkConfig::delay(ONE_WAY);
    [l.clone(), l]
}

/// A fresh server endpoint, as a restarted process would have: no connections, the
/// same config (and key), another seed.
fn restarted_server(server_config: TransportConfig) -> Endpoint {
    let identity = quiclab_proto::tls::self_signed(&["localhost".into()], 99, 0);
    let tls = quiclab_proto::tls::server_config(identity, &[ALPN.to_vec()], None).unwrap();
    Endpoint::new(Arc::new(server_config), Some(tls), 12345)
}

/// Connects, fetches, restarts the server and has the client send one more stream;
/// returns the pair once the client's connection closed or `limit` passed.
fn restart_and_send(server_config: TransportConfig, limit: Duration) -> (Pair, Instant) {
    let mut pair = Pair::new(config(), server_config.clone(), links(), 7);
    fetch(&mut pair, 10_000).unwrap();
    // Let the last ACKs land (not the idle timer, the next event once all is quiet).
    let quiet = pair.now + Duration::from_millis(200);
    while pair.next_event_time().is_some_and(|t| t < quiet) {
        pair.step();
    }
    pair.server = restarted_server(server_config);
    pair.server_conn = None;
    let sent_at = pair.now;
    let conn = pair.client_conn();
    let id = conn.open_stream(Dir::Bi).unwrap();
    conn.write(id, b"GET /more\r\n").unwrap();
    conn.finish(id).unwrap();
    let end = sent_at + limit;
    let _ = pair.run_until(end, |p| p.client_conn().is_closed());
    (pair, sent_at)
}

#[test]
fn the_server_token_is_the_hmac_of_its_connection_id() {
    let mut pair = Pair::new(config(), keyed(Some(KEY)), links(), 3);
    fetch(&mut pair, 1_000).unwrap();
    let server_cid = pair.server_conn().unwrap().local_cid();
    let token = pair
        .client_conn()
        .peer_params()
        .unwrap()
        .stateless_reset_token;
    assert_eq!(token, Some(StatelessResetKey::new(KEY).token(&server_cid)));
}

#[test]
fn a_restarted_server_with_the_same_key_resets_the_client_at_once() {
    let (mut pair, sent_at) = restart_and_send(keyed(Some(KEY)), Duration::from_secs(5));
    let closed = pair.client_conn().is_closed();
    assert!(closed, "the client's connection ended");
    match pair.client_conn().close_reason() {
        Some(CloseReason::Transport { error, .. }) => {
            assert_eq!(error.code, TransportErrorCode::NO_ERROR);
            assert_eq!(error.reason, "stateless reset");
        }
        other => panic!("closed by {other:?}"),
    }
    // One round trip: the client's packet out, the reset back (2 x 10 ms).
    assert_eq!(pair.now - sent_at, 2 * ONE_WAY);
    let (sent, limited) = pair.server.stateless_resets();
    assert!(sent >= 1 && limited == 0, "{sent} sent, {limited} limited");
    // RFC 9000 §10.3.1: draining, so nothing more goes out to the dead server.
    let mut buf = Vec::new();
    assert!(pair.client.poll_transmit(pair.now, &mut buf).is_none());
}

#[test]
fn without_a_key_the_restarted_server_stays_silent() {
    let (mut pair, _) = restart_and_send(config(), Duration::from_secs(5));
    assert!(!pair.client_conn().is_closed(), "no reset, so no close yet");
    assert_eq!(pair.server.stateless_resets(), (0, 0));
}

#[test]
fn another_key_resets_nothing() {
    // The restarted server's token does not match the one the client holds.
    let mut other = keyed(Some([0x11; 32]));
    other.idle_timeout_ms = 600_000;
    let mut pair = Pair::new(config(), keyed(Some(KEY)), links(), 7);
    fetch(&mut pair, 1_000).unwrap();
    pair.server = restarted_server(other);
    let conn = pair.client_conn();
    let id = conn.open_stream(Dir::Bi).unwrap();
    conn.write(id, b"x").unwrap();
    let end = pair.now + Duration::from_secs(2);
    let _ = pair.run_until(end, |p| p.client_conn().is_closed());
    assert!(!pair.client_conn().is_closed());
    assert!(pair.server.stateless_resets().0 >= 1, "resets were sent");
}

#[test]
fn short_headers_for_unknown_ids_get_a_reset_only_if_big_enough() {
    let mut server = restarted_server(keyed(Some(KEY)));
    let from = "10.0.0.1:40000".parse().unwrap();
    let ecn = quiclab_proto::Ecn::NotEct;
    let mut packet = |len: usize| {
        let mut d = vec![0x41u8; len];
        d[1..9].copy_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
        server.handle_datagram(Instant::ZERO, from, ecn, &mut d)
    };
    assert_eq!(
        packet(21),
        Err(Unrouted::Dropped),
        "no smaller reset is valid"
    );
    assert_eq!(packet(22), Err(Unrouted::StatelessReset));
    assert_eq!(packet(1200), Err(Unrouted::StatelessReset));
    let mut sizes = Vec::new();
    let mut buf = Vec::new();
    while let Some(t) = server.poll_transmit(Instant::ZERO, &mut buf) {
        assert_eq!(t.destination, from);
        let cid = quiclab_proto::ConnectionId::new(&[1, 2, 3, 4, 5, 6, 7, 8]).unwrap();
        let token = StatelessResetKey::new(KEY).token(&cid);
        assert_eq!(buf[t.size - 16..t.size], token);
        assert_eq!(buf[0] & 0xc0, 0x40);
        sizes.push(t.size);
        buf.clear();
    }
    assert_eq!(sizes.len(), 2);
    assert_eq!(sizes[0], 21, "one byte below a 22-byte trigger");
    assert!((42..=64).contains(&sizes[1]), "{sizes:?}");
}

#[test]
fn a_flood_of_unknown_ids_gets_a_bounded_number_of_resets() {
    // The token bucket (burst 20, 100/s) bounds both what is sent and what waits in
    // the endpoint's queue of stateless responses, whatever arrives.
    let mut server = restarted_server(keyed(Some(KEY)));
    let from = "10.0.0.1:40000".parse().unwrap();
    let ecn = quiclab_proto::Ecn::NotEct;
    for i in 0..1000u32 {
        let mut d = vec![0x41u8; 100];
        d[1..5].copy_from_slice(&i.to_be_bytes());
        let r = server.handle_datagram(Instant::ZERO, from, ecn, &mut d);
        assert!(matches!(
            r,
            Err(Unrouted::StatelessReset | Unrouted::Dropped)
        ));
    }
    assert_eq!(server.stateless_resets(), (20, 980));
    let mut buf = Vec::new();
    let mut queued = 0;
    while server.poll_transmit(Instant::ZERO, &mut buf).is_some() {
        queued += 1;
        buf.clear();
    }
    assert_eq!(queued, 20);
    // A second later the bucket has refilled to its burst, not to 100.
    let later = Instant::from_millis(1000);
    for i in 0..1000u32 {
        let mut d = vec![0x41u8; 100];
        d[1..5].copy_from_slice(&i.to_be_bytes());
        let _ = server.handle_datagram(later, from, ecn, &mut d);
    }
    assert_eq!(server.stateless_resets().0, 40);
}
