//! A peer changing its Source Connection ID mid-handshake (RFC 9000 §7.2): "Once a
//! client has received a valid Initial packet from the server, it MUST discard any
//! subsequent packet it receives on that connection with a different Source
//! Connection ID", and a server discards subsequent Initial packets with a different
//! one. The packets here carry a CONNECTION_CLOSE: had the victim processed them, it
//! would have closed; discarded, the handshake completes.

use crate::misbehaving;

use misbehaving::{conn, pair, send, DELAY};
use quiclab_proto::events::Owner;
use quiclab_proto::raw::{ConnectionCloseFrame, Frame, SpaceId};
use quiclab_proto::testing::Pair;
use quiclab_proto::{
    CloseReason, ConnectionId, Instant, Side, TransportConfig, TransportErrorCode,
};

fn close() -> Vec<u8> {
    misbehaving::encode(&[Frame::ConnectionClose(ConnectionCloseFrame {
        error_code: TransportErrorCode::INTERNAL_ERROR.0,
        frame_type: Some(0),
        reason: b"",
    })])
}

/// An 8-byte connection ID no one uses.
fn other_cid() -> Option<ConnectionId> {
    ConnectionId::new(&[0x5c; 8])
}

/// Packets `side` dropped so far (0 before the server's connection exists).
fn dropped(p: &mut Pair, side: Side) -> u64 {
    match side {
        Side::Client => p.client_conn().stats().packets_dropped,
        Side::Server => p.server_conn().map_or(0, |s| s.stats().packets_dropped),
    }
}

fn handshake_completes_despite(p: &mut Pair, victim: Side) {
    let dropped = dropped(p, victim);
    p.run_until(Instant::from_millis(1000), |p| {
        p.client_conn().is_handshake_confirmed()
            && p.server_conn().is_some_and(|s| s.is_handshake_confirmed())
    })
    .unwrap_or_else(|e| panic!("{e}: {victim:?} {:?}", conn(p, victim).close_reason()));
    assert!(!conn(p, victim).is_closed());
    assert!(
        conn(p, victim).stats().packets_dropped > dropped,
        "the packet was dropped, not lost"
    );
}

/// The server's Initial with another SCID, after its first one reached the client.
#[test]
fn client_discards_a_server_initial_with_another_scid() {
    let mut p = pair(TransportConfig::default(), TransportConfig::default(), 1);
    p.run_until(Instant::ZERO + DELAY * 3 / 2, |p| p.server_conn().is_some())
        .unwrap();
    assert!(p.send_crafted_with_scid(Side::Server, SpaceId::Initial, &close(), other_cid()));
    handshake_completes_despite(&mut p, Side::Client);
}

/// The same for a Handshake packet: the rule covers any packet with a Source
/// Connection ID.
#[test]
fn client_discards_a_server_handshake_packet_with_another_scid() {
    let mut p = pair(TransportConfig::default(), TransportConfig::default(), 2);
    p.run_until(Instant::ZERO + DELAY * 3 / 2, |p| p.server_conn().is_some())
        .unwrap();
    assert!(p.send_crafted_with_scid(Side::Server, SpaceId::Handshake, &close(), other_cid()));
    handshake_completes_despite(&mut p, Side::Client);
}

/// The client's second Initial with another SCID, after its first one created the
/// server's connection.
#[test]
fn server_discards_a_client_initial_with_another_scid() {
    let mut p = pair(TransportConfig::default(), TransportConfig::default(), 3);
    p.flush();
    assert!(p.send_crafted_with_scid(Side::Client, SpaceId::Initial, &close(), other_cid()));
    handshake_completes_despite(&mut p, Side::Server);
}

/// Control: the same close with the right SCID is processed (so the tests above pass
/// because of the SCID, not because the packet was unreadable).
#[test]
fn the_same_packet_with_the_right_scid_closes() {
    let mut p = pair(TransportConfig::default(), TransportConfig::default(), 4);
    p.run_until(Instant::ZERO + DELAY * 3 / 2, |p| p.server_conn().is_some())
        .unwrap();
    send_close(&mut p);
    let limit = Instant::from_millis(1000);
    p.run_until(limit, |p| p.client_conn().is_closed()).unwrap();
    assert!(matches!(
        p.client_conn().close_reason(),
        Some(CloseReason::Transport { owner: Owner::Remote, error })
            if error.code == TransportErrorCode::INTERNAL_ERROR
    ));
}

fn send_close(p: &mut Pair) {
    let frame = Frame::ConnectionClose(ConnectionCloseFrame {
        error_code: TransportErrorCode::INTERNAL_ERROR.0,
        frame_type: Some(0),
        reason: b"",
    });
    send(p, Side::Server, SpaceId::Initial, &[frame]);
}
