//! A CRYPTO flood (RFC 9000 §7.5): out-of-order CRYPTO data a receiver must buffer
//! until the gap before it fills. Shifted, overlapping copies of the same range are
//! stored once, so the victim holds at most its CRYPTO budget (64 KiB per
//! connection) whatever the peer sends; data past the budget, or in more pieces than
//! the receiver tracks, is a CRYPTO_BUFFER_EXCEEDED. The buffers are freed once the
//! space's keys are discarded.

use crate::misbehaving;

use misbehaving::{connected, expect_close, pair, send, DELAY};
use quiclab_proto::raw::{frame_type, Frame, SpaceId};
use quiclab_proto::testing::Pair;
use quiclab_proto::MAX_CRYPTO_BUFFER;
use quiclab_proto::{Instant, Side, TransportConfig, TransportErrorCode as Code};

/// The victim's CRYPTO budget (RFC 9000 §7.5 asks for at least 4096 bytes).
const BUDGET: u64 = MAX_CRYPTO_BUFFER;

/// CRYPTO bytes `side` holds for reassembly, over all spaces.
fn crypto_held(p: &mut Pair, side: Side) -> u64 {
    let c = misbehaving::conn(p, side);
    c.footprint().crypto_buffered as u64
}

fn crypto(offset: u64, data: &[u8]) -> Frame<'_> {
    Frame::Crypto { offset, data }
}

/// The flood of issue 40 in 1-RTT packets: offset 0 never comes, and each packet
/// carries the same 1100 bytes shifted by one. Stored once, they take 1100 + 400
/// bytes, not 400 × 1100.
#[test]
fn shifted_copies_are_stored_once() {
    let mut p = connected(1);
    let data = [0x16u8; 1100];
    for k in 1..=400 {
        send(&mut p, Side::Client, SpaceId::Data, &[crypto(k, &data)]);
    }
    p.run_until(p.now + DELAY * 2, |p| {
        p.server_conn().unwrap().stats().packets_received[SpaceId::Data as usize] > 400
    })
    .expect("the flood arrives");
    let held = crypto_held(&mut p, Side::Server);
    assert!(held <= BUDGET, "{held} bytes of CRYPTO data held");
    let s = p.server_conn().unwrap();
    assert!(!s.is_closed(), "{:?}", s.close_reason());
}

/// RFC 9000 §7.5: CRYPTO data ending past the budget is a CRYPTO_BUFFER_EXCEEDED.
#[test]
fn data_past_the_budget() {
    let mut p = connected(2);
    send(&mut p, Side::Client, SpaceId::Data, &[crypto(BUDGET, b"x")]);
    expect_close(
        &mut p,
        Side::Server,
        Code::CRYPTO_BUFFER_EXCEEDED,
        frame_type::CRYPTO,
    );
}

/// Single bytes with gaps between them: few bytes, but one piece each. The receiver
/// bounds its bookkeeping and closes with CRYPTO_BUFFER_EXCEEDED before 2000 pieces.
#[test]
fn data_in_too_many_pieces() {
    let mut p = connected(3);
    let frames: Vec<Frame<'_>> = (0..200).map(|k| crypto(2 * k + 1, b"x")).collect();
    for chunk in frames.chunks(100) {
        send(&mut p, Side::Client, SpaceId::Data, chunk);
    }
    let more: Vec<Frame<'_>> = (200..2000).map(|k| crypto(2 * k + 1, b"x")).collect();
    for chunk in more.chunks(100) {
        send(&mut p, Side::Client, SpaceId::Data, chunk);
    }
    expect_close(
        &mut p,
        Side::Server,
        Code::CRYPTO_BUFFER_EXCEEDED,
        frame_type::CRYPTO,
    );
}

/// Mid-handshake, in Handshake packets after the server's real flight: the client
/// holds at most the budget, and frees it when the handshake is confirmed (RFC 9001
/// §4.9.2: the Handshake keys, and what waited to be read with them, are discarded).
#[test]
fn flood_in_handshake_packets() {
    let mut p = pair(TransportConfig::default(), TransportConfig::default(), 4);
    p.run_until(Instant::ZERO + DELAY * 3 / 2, |p| p.server_conn().is_some())
        .unwrap();
    let data = [0x16u8; 1100];
    for k in 0..200 {
        send(
            &mut p,
            Side::Server,
            SpaceId::Handshake,
            &[crypto(20_000 + k, &data)],
        );
    }
    p.run_until(Instant::from_millis(1000), |p| {
        p.client_conn().is_handshake_complete()
    })
    .unwrap();
    let held = crypto_held(&mut p, Side::Client);
    assert!(
        held > 0 && held <= BUDGET,
        "{held} bytes of CRYPTO data held"
    );
    p.run_until(Instant::from_millis(1000), |p| {
        p.client_conn().is_handshake_confirmed()
    })
    .unwrap();
    assert_eq!(crypto_held(&mut p, Side::Client), 0, "freed with the keys");
    assert!(!p.client_conn().is_closed());
}
