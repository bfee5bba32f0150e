//! ACK frames that acknowledge what was never sent (RFC 9000 §13.1: "An endpoint
//! SHOULD treat receipt of an acknowledgment for a packet it did not send as a
//! connection error of type PROTOCOL_VIOLATION" — we do) or whose ranges go below
//! zero (§19.3.1: FRAME_ENCODING_ERROR).

use crate::misbehaving;

use misbehaving::{conn, connected, expect_close, pair, run_for, send, DELAY};
use quiclab_proto::raw::{frame_type, AckFrame, Frame, SpaceId};
use quiclab_proto::{Instant, Side, TransportConfig, TransportErrorCode as Code};
use std::time::Duration;

fn ack(largest: u64) -> Frame<'static> {
    Frame::Ack(AckFrame {
        ack_delay: 0,
        ranges: vec![0..=largest],
        ecn: None,
    })
}

/// The victim's 1-RTT packets so far; packet numbers start at 0 and no number is
/// skipped, so the next one is this.
fn data_packets_sent(p: &mut quiclab_proto::testing::Pair, side: Side) -> u64 {
    conn(p, side).stats().packets_sent[SpaceId::Data as usize]
}

/// The first packet number not sent yet is a PROTOCOL_VIOLATION; the last one sent is
/// fine (so the check is exact, not a margin).
#[test]
fn ack_of_the_next_unsent_packet_number() {
    let mut p = connected(1);
    run_for(&mut p, Duration::from_millis(200)); // every ACK sent; both sides idle
    let next = data_packets_sent(&mut p, Side::Server);
    send(&mut p, Side::Client, SpaceId::Data, &[ack(next - 1)]);
    run_for(&mut p, DELAY * 3);
    let s = p.server_conn().unwrap();
    assert!(!s.is_closed(), "{:?}", s.close_reason());
    assert_eq!(data_packets_sent(&mut p, Side::Server), next, "still idle");
    send(&mut p, Side::Client, SpaceId::Data, &[ack(next)]);
    expect_close(
        &mut p,
        Side::Server,
        Code::PROTOCOL_VIOLATION,
        frame_type::ACK,
    );
}

/// Far beyond anything sent, in 1-RTT (server victim) and in the Handshake space
/// during the handshake (client victim).
#[test]
fn ack_of_packets_never_sent() {
    let mut p = connected(2);
    send(&mut p, Side::Client, SpaceId::Data, &[ack(1_000_000)]);
    expect_close(
        &mut p,
        Side::Server,
        Code::PROTOCOL_VIOLATION,
        frame_type::ACK,
    );

    let mut p = pair(TransportConfig::default(), TransportConfig::default(), 3);
    p.run_until(Instant::ZERO + DELAY * 3 / 2, |p| p.server_conn().is_some())
        .unwrap();
    send(&mut p, Side::Server, SpaceId::Handshake, &[ack(50)]);
    expect_close(
        &mut p,
        Side::Client,
        Code::PROTOCOL_VIOLATION,
        frame_type::ACK,
    );
}

/// RFC 9000 §19.3.1: a First ACK Range larger than the Largest Acknowledged (the
/// smallest acknowledged would be negative) is a FRAME_ENCODING_ERROR; so is a Gap
/// that goes below zero.
#[test]
fn ack_ranges_below_zero() {
    let mut p = connected(4);
    // ACK: largest 2, delay 0, 0 more ranges, first range 5.
    assert!(p.send_crafted(Side::Client, SpaceId::Data, &[0x02, 2, 0, 0, 5]));
    expect_close(
        &mut p,
        Side::Server,
        Code::FRAME_ENCODING_ERROR,
        frame_type::ACK,
    );

    let mut p = connected(5);
    // ACK: largest 2, delay 0, 1 more range, first range 0, gap 3, length 0.
    assert!(p.send_crafted(Side::Client, SpaceId::Data, &[0x02, 2, 0, 1, 0, 3, 0]));
    expect_close(
        &mut p,
        Side::Server,
        Code::FRAME_ENCODING_ERROR,
        frame_type::ACK,
    );
}
