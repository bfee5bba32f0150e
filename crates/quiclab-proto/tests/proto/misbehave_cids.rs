//! A peer abusing connection IDs (RFC 9000 §5.1, §19.15, §19.16): Retire Prior To
//! above the sequence number (FRAME_ENCODING_ERROR), more IDs than our
//! active_connection_id_limit or more forced retirements than we track
//! (CONNECTION_ID_LIMIT_ERROR), a sequence number reused for another ID, and
//! retirements of IDs never issued or of the packet's own (PROTOCOL_VIOLATION). The
//! victim keeps at most its limit of the peer's IDs and a bounded retirement queue.

use crate::misbehaving;

use misbehaving::{connected, expect_close, expect_unheard_close, run_for, send};
use quiclab_proto::raw::{frame_type, Frame, NewConnectionIdFrame, SpaceId};
use quiclab_proto::{ConnectionId, Side, TransportConfig, TransportErrorCode as Code};
use std::time::Duration;

/// The victim's (and the default) active_connection_id_limit.
fn limit() -> usize {
    TransportConfig::default().active_connection_id_limit as usize
}

/// A NEW_CONNECTION_ID whose ID and token derive from the sequence number (distinct
/// from the sender's real IDs, which are random).
fn new_cid(sequence: u64, retire_prior_to: u64) -> Frame<'static> {
    let mut id = [0xcc; 8];
    id[..4].copy_from_slice(&(sequence as u32).to_be_bytes());
    Frame::NewConnectionId(NewConnectionIdFrame {
        sequence,
        retire_prior_to,
        id: ConnectionId::new(&id).unwrap(),
        reset_token: [sequence as u8; 16],
    })
}

/// RFC 9000 §19.15: "Retire Prior To ... MUST be less than or equal to the Sequence
/// Number"; more is a FRAME_ENCODING_ERROR.
#[test]
fn retire_prior_to_above_the_sequence_number() {
    let mut p = connected(1);
    send(&mut p, Side::Client, SpaceId::Data, &[new_cid(10, 11)]);
    expect_close(
        &mut p,
        Side::Server,
        Code::FRAME_ENCODING_ERROR,
        frame_type::NEW_CONNECTION_ID,
    );
}

/// RFC 9000 §5.1.1: more active IDs than our limit is a CONNECTION_ID_LIMIT_ERROR.
/// The sender already gave the victim IDs up to the limit in the handshake's
/// aftermath, so a flood of further ones fails at its first frame, and the victim
/// keeps no more than one past its limit.
#[test]
fn new_connection_id_flood_past_the_limit() {
    let mut p = connected(2);
    assert_eq!(p.server_conn().unwrap().footprint().remote_cids, limit());
    let flood: Vec<Frame<'_>> = (100..200).map(|s| new_cid(s, 0)).collect();
    send(&mut p, Side::Client, SpaceId::Data, &flood);
    expect_close(
        &mut p,
        Side::Server,
        Code::CONNECTION_ID_LIMIT_ERROR,
        frame_type::NEW_CONNECTION_ID,
    );
    let f = p.server_conn().unwrap().footprint();
    assert!(f.remote_cids <= limit() + 1, "{f:?}");
}

/// RFC 9000 §5.1.2: each NEW_CONNECTION_ID may retire all earlier IDs, and the victim
/// queues a RETIRE_CONNECTION_ID for each. A flood that never lets the queue drain is
/// a CONNECTION_ID_LIMIT_ERROR once the queue passes what the victim tracks (four
/// times its limit, above the RFC's "at least twice"); the queue stays bounded.
#[test]
fn forced_retirement_flood() {
    let mut p = connected(3);
    let flood: Vec<Frame<'_>> = (10..100).map(|s| new_cid(s, s)).collect();
    send(&mut p, Side::Client, SpaceId::Data, &flood);
    // The flood retired every ID the client really has: the victim's CONNECTION_CLOSE
    // goes to one the client made up, and reaches no one.
    expect_unheard_close(
        &mut p,
        Side::Server,
        Code::CONNECTION_ID_LIMIT_ERROR,
        frame_type::NEW_CONNECTION_ID,
    );
    let f = p.server_conn().unwrap().footprint();
    assert!(f.retire_pending <= 4 * limit() + 1, "{f:?}");
    assert!(f.remote_cids <= limit() + 1, "{f:?}");
}

/// The same retirements at a pace the victim keeps up with (it sends each
/// RETIRE_CONNECTION_ID as it goes) are fine: the bound is on the queue, not on the
/// number of retirements.
#[test]
fn paced_retirements_are_fine() {
    let mut p = connected(4);
    for s in 10..100 {
        send(&mut p, Side::Client, SpaceId::Data, &[new_cid(s, s)]);
        run_for(&mut p, Duration::from_millis(30));
        let f = p.server_conn().unwrap().footprint();
        assert!(f.retire_pending <= 1 && f.remote_cids <= limit(), "{f:?}");
    }
    let s = p.server_conn().unwrap();
    assert!(!s.is_closed(), "{:?}", s.close_reason());
}

/// RFC 9000 §19.15: a sequence number used for two different IDs "MAY" be treated as
/// a PROTOCOL_VIOLATION (we do).
#[test]
fn sequence_number_reused_for_another_id() {
    let mut p = connected(5);
    // Sequence 9 retires the client's first ID (the victim holds `limit` IDs, so it
    // needs the room), then comes again with another ID.
    let Frame::NewConnectionId(mut other) = new_cid(9, 1) else {
        unreachable!()
    };
    other.id = ConnectionId::new(&[0xdd; 8]).unwrap();
    let frames = [new_cid(9, 1), Frame::NewConnectionId(other)];
    send(&mut p, Side::Client, SpaceId::Data, &frames);
    expect_close(
        &mut p,
        Side::Server,
        Code::PROTOCOL_VIOLATION,
        frame_type::NEW_CONNECTION_ID,
    );
}

/// RFC 9000 §19.16: retiring a sequence number never issued, or the ID the packet
/// itself was sent to, is a PROTOCOL_VIOLATION.
#[test]
fn bad_retirements() {
    let mut p = connected(6);
    let never = Frame::RetireConnectionId { sequence: 1000 };
    send(&mut p, Side::Client, SpaceId::Data, &[never]);
    expect_close(
        &mut p,
        Side::Server,
        Code::PROTOCOL_VIOLATION,
        frame_type::RETIRE_CONNECTION_ID,
    );

    // The client sends to the server's first ID (sequence 0) until it retires it.
    let mut p = connected(7);
    let own = Frame::RetireConnectionId { sequence: 0 };
    send(&mut p, Side::Client, SpaceId::Data, &[own]);
    expect_close(
        &mut p,
        Side::Server,
        Code::PROTOCOL_VIOLATION,
        frame_type::RETIRE_CONNECTION_ID,
    );
}
