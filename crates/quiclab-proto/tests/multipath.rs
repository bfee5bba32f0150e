//! The multipath extension's first layer (draft-ietf-quic-multipath, the version
//! named in `src/wire/frame_mp.rs`) with the in-memory pair: negotiation needs both
//! sides' initial_max_path_id (§2), otherwise the connection is single-path and a
//! multipath frame is a PROTOCOL_VIOLATION; once negotiated, the frames' limits
//! (§4, §4.6, §4.7) and path 0's frames.

mod misbehaving;

use misbehaving::{conn, connected_with, expect_close, run_for, send, DELAY};
use quiclab_proto::raw::{mp_type, AckFrame, Frame, MultipathFrame, PathId, SpaceId};
use quiclab_proto::testing::drain_stream;
use quiclab_proto::{Dir, MultipathConfig, Side, TransportConfig, TransportErrorCode as Code};

fn config(multipath: Option<u32>) -> TransportConfig {
    TransportConfig {
        multipath: MultipathConfig {
            enabled: multipath.is_some(),
            max_path_id: multipath.unwrap_or(3),
        },
        ..TransportConfig::default()
    }
}

fn mp(m: MultipathFrame) -> Frame<'static> {
    Frame::Multipath(m)
}

/// Both sides offer: negotiated, each with its own limit and the peer's.
#[test]
fn negotiated_when_both_sides_offer() {
    let mut p = connected_with(config(Some(3)), config(Some(2)), 1);
    assert!(conn(&mut p, Side::Client).multipath_negotiated());
    assert!(conn(&mut p, Side::Server).multipath_negotiated());
    // (largest the peer may use, largest we may use)
    assert_eq!(
        conn(&mut p, Side::Client).multipath_path_id_limits(),
        Some((3, 2))
    );
    assert_eq!(
        conn(&mut p, Side::Server).multipath_path_id_limits(),
        Some((2, 3))
    );
}

/// One side only: single-path on both, and data still flows (fallback, §2).
#[test]
fn falls_back_to_single_path_when_one_side_does_not_offer() {
    for (client, server, seed) in [(Some(3), None, 2), (None, Some(3), 3), (None, None, 4)] {
        let mut p = connected_with(config(client), config(server), seed);
        for side in [Side::Client, Side::Server] {
            let c = conn(&mut p, side);
            assert!(!c.multipath_negotiated(), "{client:?} {server:?} {side:?}");
            assert_eq!(c.multipath_path_id_limits(), None);
        }
        let id = p.client_conn().open_stream(Dir::Bi).unwrap();
        p.client_conn().write(id, b"ping").unwrap();
        p.client_conn().finish(id).unwrap();
        run_for(&mut p, DELAY * 4);
        let s = p.server_conn().unwrap();
        let sid = s.accept_stream(Dir::Bi).expect("the stream arrives");
        let mut got = Vec::new();
        assert!(drain_stream(s, sid, &mut got));
        assert_eq!(got, b"ping");
    }
}

/// §2: "If either of the endpoints does not advertise the initial_max_path_id
/// transport parameter, then both endpoints MUST NOT use any frame ... defined in this
/// document": the receiver closes with PROTOCOL_VIOLATION naming the frame.
#[test]
fn multipath_frame_without_negotiation_is_a_protocol_violation() {
    let cases = [
        (
            mp(MultipathFrame::PathAck {
                path_id: PathId(0),
                ack: AckFrame {
                    ack_delay: 0,
                    ranges: vec![0..=0],
                    ecn: None,
                },
            }),
            mp_type::PATH_ACK,
        ),
        (
            mp(MultipathFrame::MaxPathId(PathId(4))),
            mp_type::MAX_PATH_ID,
        ),
    ];
    for (i, (frame, ty)) in cases.into_iter().enumerate() {
        // The server offers, the client does not: still not negotiated.
        let mut p = connected_with(config(None), config(Some(3)), 10 + i as u64);
        send(&mut p, Side::Server, SpaceId::Data, &[frame]);
        expect_close(&mut p, Side::Client, Code::PROTOCOL_VIOLATION, ty);
    }
}

/// §4: a path ID above the maximum we announced is PROTOCOL_VIOLATION.
#[test]
fn path_id_above_our_limit_is_a_protocol_violation() {
    let mut p = connected_with(config(Some(3)), config(Some(1)), 20);
    let frame = mp(MultipathFrame::PathStatus {
        path_id: PathId(2),
        sequence: 0,
        backup: true,
    });
    send(&mut p, Side::Client, SpaceId::Data, &[frame]);
    expect_close(
        &mut p,
        Side::Server,
        Code::PROTOCOL_VIOLATION,
        mp_type::PATH_STATUS_BACKUP,
    );
}

/// §4.6: a MAX_PATH_ID below the sender's initial_max_path_id is PROTOCOL_VIOLATION.
#[test]
fn max_path_id_below_the_initial_is_a_protocol_violation() {
    let mut p = connected_with(config(Some(3)), config(Some(3)), 21);
    send(
        &mut p,
        Side::Client,
        SpaceId::Data,
        &[mp(MultipathFrame::MaxPathId(PathId(2)))],
    );
    expect_close(
        &mut p,
        Side::Server,
        Code::PROTOCOL_VIOLATION,
        mp_type::MAX_PATH_ID,
    );
}

/// Negotiated: PATH_STATUS is kept per path with its sequence (§4.3), MAX_PATH_ID
/// raises our limit (§4.6), PATH_ACK for path 0 acknowledges the application space
/// (§2.3), and the connection stays open.
#[test]
fn path_frames_on_a_negotiated_connection() {
    let mut p = connected_with(config(Some(3)), config(Some(3)), 22);
    let frames = [
        mp(MultipathFrame::PathStatus {
            path_id: PathId(1),
            sequence: 4,
            backup: true,
        }),
        mp(MultipathFrame::PathStatus {
            path_id: PathId(1),
            sequence: 3,
            backup: false,
        }),
        mp(MultipathFrame::MaxPathId(PathId(7))),
        mp(MultipathFrame::PathsBlocked(PathId(3))),
        mp(MultipathFrame::PathAck {
            path_id: PathId(0),
            ack: AckFrame {
                ack_delay: 0,
                ranges: vec![0..=0],
                ecn: None,
            },
        }),
    ];
    send(&mut p, Side::Client, SpaceId::Data, &frames);
    run_for(&mut p, DELAY * 3);
    let s = p.server_conn().unwrap();
    assert!(!s.is_closed(), "{:?}", s.close_reason());
    assert_eq!(s.multipath_peer_status(1), Some((4, true)));
    assert_eq!(s.multipath_peer_status(2), None);
    assert_eq!(s.multipath_path_id_limits(), Some((3, 7)));
}

/// RFC 9000 §13.1 applied per path: nothing was sent on path 1, so acknowledging a
/// packet there is PROTOCOL_VIOLATION.
#[test]
fn path_ack_for_an_unused_path_is_a_protocol_violation() {
    let mut p = connected_with(config(Some(3)), config(Some(3)), 23);
    let frame = mp(MultipathFrame::PathAck {
        path_id: PathId(1),
        ack: AckFrame {
            ack_delay: 0,
            ranges: vec![0..=0],
            ecn: None,
        },
    });
    send(&mut p, Side::Client, SpaceId::Data, &[frame]);
    expect_close(
        &mut p,
        Side::Server,
        Code::PROTOCOL_VIOLATION,
        mp_type::PATH_ACK,
    );
}
