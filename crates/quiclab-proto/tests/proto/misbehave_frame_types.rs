//! Frames a packet type may not carry (RFC 9000 §12.4, Table 3) and frames the sender's
//! role may not send (§19.7, §19.20, RFC 9221 §3): PROTOCOL_VIOLATION naming the frame.
//! Frame types that do not exist are a FRAME_ENCODING_ERROR, frame types not in their
//! shortest encoding a PROTOCOL_VIOLATION (§12.4).
//!
//! During the handshake the victim closes in the packet types the sender can still
//! read (RFC 9000 §10.2.3); the tests check that the sender hears of it.

use crate::misbehaving;

use misbehaving::{connected, expect_close, pair, send, DELAY};
use quiclab_proto::raw::{frame_type, AckFrame, Frame, SpaceId, StreamFrame};
use quiclab_proto::testing::{LinkConfig, Pair, PairTls, ALPN};
use quiclab_proto::tls::{
    resuming_client_config, server_session_storage, ticketing_server_config, ServerVerification,
    SessionCache, VirtualClock,
};
use quiclab_proto::{
    tls, ConnectionId, Dir, Instant, Side, StreamId, TransportConfig, TransportErrorCode as Code,
};

fn stream_frame() -> Frame<'static> {
    Frame::Stream(StreamFrame {
        id: StreamId::new(Side::Client, Dir::Bi, 0),
        offset: 0,
        fin: false,
        data: b"GET /",
    })
}

/// A pair whose client Initial (the ClientHello) is on its way to the server.
fn client_hello_sent(seed: u64) -> Pair {
    let mut p = pair(TransportConfig::default(), TransportConfig::default(), seed);
    p.flush();
    p
}

/// A pair whose server flight (Initial and Handshake packets) is on its way to the
/// client, the server holding Handshake keys.
fn server_flight_sent(seed: u64) -> Pair {
    let mut p = client_hello_sent(seed);
    p.run_until(Instant::ZERO + DELAY * 3 / 2, |p| p.server_conn().is_some())
        .expect("the ClientHello arrives");
    p
}

/// RFC 9000 §12.4: STREAM in an Initial packet (Table 3: 1-RTT and 0-RTT only).
#[test]
fn stream_in_an_initial_packet() {
    let mut p = client_hello_sent(1);
    send(&mut p, Side::Client, SpaceId::Initial, &[stream_frame()]);
    expect_close(
        &mut p,
        Side::Server,
        Code::PROTOCOL_VIOLATION,
        frame_type::STREAM | 0x02,
    );
}

/// RFC 9000 §12.4: NEW_CONNECTION_ID in an Initial packet; the client, mid-handshake,
/// closes in packets the server can read.
#[test]
fn new_connection_id_in_an_initial_packet() {
    let mut p = server_flight_sent(2);
    let frame = Frame::NewConnectionId(quiclab_proto::raw::NewConnectionIdFrame {
        sequence: 1,
        retire_prior_to: 0,
        id: ConnectionId::new(&[5; 8]).unwrap(),
        reset_token: [5; 16],
    });
    send(&mut p, Side::Server, SpaceId::Initial, &[frame]);
    expect_close(
        &mut p,
        Side::Client,
        Code::PROTOCOL_VIOLATION,
        frame_type::NEW_CONNECTION_ID,
    );
}

/// RFC 9000 §12.4: STREAM in a Handshake packet. The client reads it after the
/// server's flight, its handshake complete but not confirmed: its CONNECTION_CLOSE
/// must still reach a server that cannot read 1-RTT packets yet (§10.2.3).
#[test]
fn stream_in_a_handshake_packet() {
    let mut p = server_flight_sent(3);
    send(&mut p, Side::Server, SpaceId::Handshake, &[stream_frame()]);
    expect_close(
        &mut p,
        Side::Client,
        Code::PROTOCOL_VIOLATION,
        frame_type::STREAM | 0x02,
    );
}

/// RFC 9000 §12.4: HANDSHAKE_DONE and PATH_CHALLENGE in Handshake packets (Table 3:
/// 1-RTT only, and 0-RTT/1-RTT only).
#[test]
fn one_rtt_frames_in_a_handshake_packet() {
    let cases = [
        (Frame::HandshakeDone, frame_type::HANDSHAKE_DONE),
        (Frame::PathChallenge([1; 8]), frame_type::PATH_CHALLENGE),
    ];
    for (seed, (frame, ty)) in (10..).zip(cases) {
        let mut p = server_flight_sent(seed);
        send(&mut p, Side::Server, SpaceId::Handshake, &[frame]);
        expect_close(&mut p, Side::Client, Code::PROTOCOL_VIOLATION, ty);
    }
}

/// RFC 9000 §19.20: a server receiving HANDSHAKE_DONE; §19.7: a server receiving
/// NEW_TOKEN; RFC 9221 §3: a DATAGRAM frame the receiver never offered to take.
#[test]
fn frames_a_client_may_not_send() {
    let cases = [
        (Frame::HandshakeDone, frame_type::HANDSHAKE_DONE),
        (Frame::NewToken { token: b"t" }, frame_type::NEW_TOKEN),
        (Frame::Datagram { data: b"d" }, frame_type::DATAGRAM_LEN),
    ];
    for (seed, (frame, ty)) in (20..).zip(cases) {
        let mut p = connected(seed);
        send(&mut p, Side::Client, SpaceId::Data, &[frame]);
        expect_close(&mut p, Side::Server, Code::PROTOCOL_VIOLATION, ty);
    }
}

/// RFC 9000 §12.4: an unknown frame type is a FRAME_ENCODING_ERROR; a known type in
/// a longer encoding than needed (PING as the two-byte varint 0x4001) a
/// PROTOCOL_VIOLATION.
#[test]
fn unknown_and_overlong_frame_types() {
    let mut p = connected(30);
    assert!(p.send_crafted(Side::Client, SpaceId::Data, &[0x21, 0, 0]));
    expect_close(&mut p, Side::Server, Code::FRAME_ENCODING_ERROR, 0x21);

    let mut p = connected(31);
    assert!(p.send_crafted(Side::Client, SpaceId::Data, &[0x40, 0x01, 0, 0]));
    expect_close(
        &mut p,
        Side::Server,
        Code::PROTOCOL_VIOLATION,
        frame_type::PING,
    );
}

/// A client that resumes a session and sends 0-RTT: a first pair gets tickets, the
/// second (returned, not yet started) can send 0-RTT packets at once.
fn zero_rtt_pair(seed: u64) -> Pair {
    let names = vec!["localhost".to_string()];
    let id = tls::self_signed(&names, 9, 0);
    let roots = id.chain.clone();
    let server = tls::server_config(id, &[ALPN.to_vec()], None).unwrap();
    let client = tls::client_config(ServerVerification::Roots(roots), &[ALPN.to_vec()], None);
    let (cache, storage) = (SessionCache::new(), server_session_storage(64));
    let config = TransportConfig {
        zero_rtt: true,
        ..TransportConfig::default()
    };
    let link = LinkConfig::delay(DELAY);
    let make = |seed| {
        let clock = VirtualClock::default();
        let c = resuming_client_config(&client, cache.clone(), true, clock);
        let s = ticketing_server_config(&server, storage.clone(), 2, true, clock);
        let tls = PairTls {
            configs: Some((c, s)),
            ..PairTls::default()
        };
        let links = [link.clone(), link.clone()];
        Pair::with_tls(config.clone(), config.clone(), links, seed, tls)
    };
    let mut first = make(seed);
    first
        .run_until(Instant::from_millis(5_000), |p| {
            p.client_conn().is_handshake_confirmed() && cache.tickets() >= 1
        })
        .expect("tickets");
    let mut p = make(seed + 1);
    assert!(p.client_conn().is_zero_rtt_sending());
    p
}

/// RFC 9000 §12.4 (Table 3) and §12.5: ACK, CRYPTO, HANDSHAKE_DONE, NEW_TOKEN and
/// RETIRE_CONNECTION_ID in a 0-RTT packet, which the server reads with the 0-RTT keys
/// it derived from the ClientHello.
#[test]
fn frames_not_allowed_in_zero_rtt() {
    let ack = Frame::Ack(AckFrame {
        ack_delay: 0,
        ranges: vec![0..=0],
        ecn: None,
    });
    let cases = [
        (ack, frame_type::ACK),
        (
            Frame::Crypto {
                offset: 0,
                data: b"x",
            },
            frame_type::CRYPTO,
        ),
        (Frame::HandshakeDone, frame_type::HANDSHAKE_DONE),
        (Frame::NewToken { token: b"t" }, frame_type::NEW_TOKEN),
        (
            Frame::RetireConnectionId { sequence: 0 },
            frame_type::RETIRE_CONNECTION_ID,
        ),
    ];
    for (seed, (frame, ty)) in (40..).step_by(2).zip(cases) {
        let mut p = zero_rtt_pair(seed);
        p.flush(); // the ClientHello first
        send(&mut p, Side::Client, SpaceId::Data, &[frame]);
        expect_close(&mut p, Side::Server, Code::PROTOCOL_VIOLATION, ty);
        assert!(
            p.server_conn().unwrap().zero_rtt_packets() >= 1,
            "read as 0-RTT"
        );
    }
}
