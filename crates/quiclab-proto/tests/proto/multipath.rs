//! The multipath extension's first layer (draft-ietf-quic-multipath, the version
//! named in `src/wire/frame_mp.rs`) with the in-memory pair: negotiation needs both
//! sides' initial_max_path_id (§2), otherwise the connection is single-path and a
//! multipath frame is a PROTOCOL_VIOLATION; once negotiated, the frames' limits
//! (§4, §4.6, §4.7) and path 0's frames.

use crate::misbehaving;

use quiclab_proto::events::Owner;

use misbehaving::{conn, connected_with, expect_close, run_for, send, DELAY};
use quiclab_proto::raw::{
    mp_type, AckFrame, Frame, MultipathFrame, NewConnectionIdFrame, PathId, SpaceId,
};
use quiclab_proto::testing::{drain_stream, Pair};
use quiclab_proto::{
    CloseReason, ConnectionId, Dir, MultipathConfig, Side, TransportConfig,
    TransportErrorCode as Code,
};

pub(crate) fn config(multipath: Option<u32>) -> TransportConfig {
    TransportConfig {
        multipath: MultipathConfig {
            enabled: multipath.is_some(),
            max_path_id: multipath.unwrap_or(3),
            ..MultipathConfig::default()
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
        stream_arrives(&mut p, b"ping");
    }
}

/// The client sends `msg` on a new bidirectional stream; the server reads it whole.
fn stream_arrives(p: &mut Pair, msg: &[u8]) {
    let id = p.client_conn().open_stream(Dir::Bi).unwrap();
    p.client_conn().write(id, msg).unwrap();
    p.client_conn().finish(id).unwrap();
    run_for(p, DELAY * 4);
    let s = p.server_conn().unwrap();
    let sid = s.accept_stream(Dir::Bi).expect("the stream arrives");
    let mut got = Vec::new();
    assert!(drain_stream(s, sid, &mut got));
    assert_eq!(got, msg);
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

/// The limit both sides use: the default active_connection_id_limit.
const CID_LIMIT: usize = 4;

/// §3.5 "Issuing New Connection IDs": once the handshake completes, each side issues
/// IDs for every path ID from 1 to the smaller maximum, each up to the
/// active_connection_id_limit, and none above; without multipath, none at all.
#[test]
fn path_connection_ids_are_issued_for_every_usable_path_id() {
    let mut p = connected_with(config(Some(3)), config(Some(2)), 30);
    run_for(&mut p, DELAY * 4);
    let mut seen = Vec::new();
    for side in [Side::Client, Side::Server] {
        let c = conn(&mut p, side);
        assert!(!c.is_closed(), "{:?}", c.close_reason());
        for path in 1..=2 {
            let ids = c.multipath_peer_cids(path);
            assert_eq!(ids.len(), CID_LIMIT, "{side:?} path {path}");
            assert_eq!(c.multipath_local_cid_count(path), CID_LIMIT);
            seen.extend(ids);
        }
        assert!(c.multipath_peer_cids(3).is_empty(), "above the smaller max");
        assert_eq!(c.multipath_local_cid_count(3), 0);
    }
    // RFC 9000 §5.1 / §3.5: IDs are unique across the connection.
    let n = seen.len();
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), n);

    let mut p = connected_with(config(None), config(Some(2)), 31);
    run_for(&mut p, DELAY * 4);
    for side in [Side::Client, Side::Server] {
        let c = conn(&mut p, side);
        assert_eq!(c.multipath_peer_cid_total(), 0);
        assert_eq!(c.multipath_local_cid_count(1), 0);
    }
}

/// §3.5 with MAX_PATH_ID (§4.6): a raised limit makes us issue IDs for the path IDs
/// it opens, up to our own maximum.
#[test]
fn max_path_id_opens_more_path_ids() {
    let mut p = connected_with(config(Some(3)), config(Some(1)), 32);
    run_for(&mut p, DELAY * 4);
    assert_eq!(conn(&mut p, Side::Client).multipath_local_cid_count(2), 0);
    send(
        &mut p,
        Side::Server,
        SpaceId::Data,
        &[mp(MultipathFrame::MaxPathId(PathId(2)))],
    );
    run_for(&mut p, DELAY * 4);
    let c = conn(&mut p, Side::Client);
    assert_eq!(c.multipath_local_cid_count(2), CID_LIMIT);
    assert_eq!(
        c.multipath_local_cid_count(3),
        0,
        "the peer's new maximum is 2"
    );
    // The server never raised its limit (the frame was made up): it refuses the IDs
    // for path 2 (§3.5, §4), which shows its side of the rule.
    match conn(&mut p, Side::Server).close_reason() {
        Some(CloseReason::Transport { error, .. }) => {
            assert_eq!(error.code, Code::PROTOCOL_VIOLATION, "{error}");
            assert_eq!(error.frame_type, Some(mp_type::PATH_NEW_CONNECTION_ID));
        }
        other => panic!("{other:?}"),
    }
}

fn path_cid(path: u32, sequence: u64, retire_prior_to: u64) -> Frame<'static> {
    let mut id = [0xa5; 8];
    id[..4].copy_from_slice(&path.to_be_bytes());
    id[4..].copy_from_slice(&(sequence as u32).to_be_bytes());
    mp(MultipathFrame::PathNewConnectionId {
        path_id: PathId(path),
        cid: NewConnectionIdFrame {
            sequence,
            retire_prior_to,
            id: ConnectionId::new(&id).unwrap(),
            reset_token: [sequence as u8; 16],
        },
    })
}

/// A peer cannot grow our memory with PATH_NEW_CONNECTION_ID (§3.5, RFC 9000
/// §5.1.1 per path): IDs it keeps retiring leave at most the limit per path, so the
/// total never passes max path ID x active_connection_id_limit; one ID more than the
/// limit on a path is CONNECTION_ID_LIMIT_ERROR. The IDs are made up (the real client
/// never issued them), so the server's PATH_RETIRE_CONNECTION_ID frames, which the
/// real client would refuse, are dropped on the way.
#[test]
fn path_connection_ids_are_bounded_by_path_ids_times_the_limit() {
    let max_path = 3u32;
    let mut p = connected_with(config(Some(max_path)), config(Some(max_path)), 33);
    run_for(&mut p, DELAY * 4);
    p.links[1].loss = 1.0;
    let bound = max_path as usize * CID_LIMIT;
    for round in 1..10u64 {
        let seq = 100 + round;
        let frames: Vec<_> = (1..=max_path)
            .map(|path| path_cid(path, seq, seq))
            .collect();
        send(&mut p, Side::Client, SpaceId::Data, &frames);
        run_for(&mut p, DELAY * 2);
        let s = conn(&mut p, Side::Server);
        assert!(!s.is_closed(), "round {round}: {:?}", s.close_reason());
        assert!(s.multipath_peer_cid_total() <= bound, "round {round}");
    }
    let s = conn(&mut p, Side::Server);
    assert_eq!(s.multipath_peer_cids(1).len(), 1, "only the latest stays");
    // Fill path 1 to the limit, then one more.
    let frames: Vec<_> = (1..CID_LIMIT as u64)
        .map(|i| path_cid(1, 200 + i, 0))
        .collect();
    send(&mut p, Side::Client, SpaceId::Data, &frames);
    run_for(&mut p, DELAY * 2);
    let s = conn(&mut p, Side::Server);
    assert_eq!(s.multipath_peer_cids(1).len(), CID_LIMIT);
    send(&mut p, Side::Client, SpaceId::Data, &[path_cid(1, 300, 0)]);
    run_for(&mut p, DELAY * 2);
    match conn(&mut p, Side::Server).close_reason() {
        Some(CloseReason::Transport {
            owner: Owner::Local,
            error,
        }) => {
            assert_eq!(error.code, Code::CONNECTION_ID_LIMIT_ERROR, "{error}");
            assert_eq!(error.frame_type, Some(mp_type::PATH_NEW_CONNECTION_ID));
        }
        other => panic!("{other:?}"),
    }
}

/// §4.5: PATH_RETIRE_CONNECTION_ID retires one of our IDs of that path and we issue a
/// replacement (§3.5.2); a sequence never issued on that path is PROTOCOL_VIOLATION.
#[test]
fn path_retire_connection_id_is_per_path() {
    let mut p = connected_with(config(Some(2)), config(Some(2)), 34);
    run_for(&mut p, DELAY * 4);
    let before = conn(&mut p, Side::Client).multipath_peer_cids(1);
    // The client never retired the ID (the frame is made up) and would refuse a
    // fifth: the server's replies are dropped.
    p.links[1].loss = 1.0;
    send(
        &mut p,
        Side::Client,
        SpaceId::Data,
        &[mp(MultipathFrame::PathRetireConnectionId {
            path_id: PathId(1),
            sequence: 0,
        })],
    );
    run_for(&mut p, DELAY * 2);
    let s = conn(&mut p, Side::Server);
    assert!(!s.is_closed(), "{:?}", s.close_reason());
    // Replaced: the peer still holds the limit, sequence 0 gone, one new.
    assert_eq!(s.multipath_local_cid_count(1), CID_LIMIT);
    assert_eq!(s.multipath_local_cid_count(2), CID_LIMIT);
    assert_eq!(before.len(), CID_LIMIT);
    // The replacement took sequence CID_LIMIT on path 1 (§4.7: PATH_CIDS_BLOCKED up to
    // the next sequence is valid), none on path 2 (beyond it: PROTOCOL_VIOLATION).
    let blocked = |path, next_sequence| {
        mp(MultipathFrame::PathCidsBlocked {
            path_id: PathId(path),
            next_sequence,
        })
    };
    send(
        &mut p,
        Side::Client,
        SpaceId::Data,
        &[blocked(1, CID_LIMIT as u64 + 1)],
    );
    run_for(&mut p, DELAY * 2);
    let s = conn(&mut p, Side::Server);
    assert!(!s.is_closed(), "{:?}", s.close_reason());
    send(
        &mut p,
        Side::Client,
        SpaceId::Data,
        &[blocked(2, CID_LIMIT as u64 + 1)],
    );
    run_for(&mut p, DELAY * 2);
    match conn(&mut p, Side::Server).close_reason() {
        Some(CloseReason::Transport { error, .. }) => {
            assert_eq!(error.code, Code::PROTOCOL_VIOLATION, "{error}");
            assert_eq!(error.frame_type, Some(mp_type::PATH_CIDS_BLOCKED));
        }
        other => panic!("{other:?}"),
    }

    let mut p = connected_with(config(Some(2)), config(Some(2)), 35);
    run_for(&mut p, DELAY * 4);
    send(
        &mut p,
        Side::Client,
        SpaceId::Data,
        &[mp(MultipathFrame::PathRetireConnectionId {
            path_id: PathId(2),
            sequence: CID_LIMIT as u64,
        })],
    );
    expect_close(
        &mut p,
        Side::Server,
        Code::PROTOCOL_VIOLATION,
        mp_type::PATH_RETIRE_CONNECTION_ID,
    );
}

/// §2.3, §2.4, §4.1, §5: a PING on path 1 leaves in path 1's own packet number space
/// with the path's nonce (the receiver decrypts it only with path ID 1 in the nonce),
/// arrives on the receiver's path 1, is acknowledged by a PATH_ACK for path 1, and that
/// PATH_ACK reaches path 1's own recovery (an RTT sample, nothing left in flight),
/// both ways and on two paths, while path 0 goes on.
#[test]
fn packets_on_paths_above_0_are_acknowledged_per_path() {
    let mut p = connected_with(config(Some(3)), config(Some(3)), 40);
    run_for(&mut p, DELAY * 4);
    for side in [Side::Client, Side::Server] {
        assert_eq!(conn(&mut p, side).multipath_packets(1), None);
    }
    let c = conn(&mut p, Side::Client);
    c.multipath_ping(1).unwrap();
    c.multipath_ping(1).unwrap();
    c.multipath_ping(2).unwrap();
    conn(&mut p, Side::Server).multipath_ping(1).unwrap();
    // A lone ack-eliciting packet is acknowledged after max_ack_delay (25 ms).
    run_for(&mut p, DELAY * 8);
    let c = conn(&mut p, Side::Client);
    assert!(!c.is_closed(), "{:?}", c.close_reason());
    // (received, sent) per path.
    assert_eq!(c.multipath_packets(1), Some((1, 2)));
    assert_eq!(c.multipath_packets(2), Some((0, 1)));
    for path in [1, 2] {
        let (rtt, in_flight) = c.multipath_path_rtt(path).expect("PATH_ACK gave a sample");
        assert_eq!(in_flight, 0, "path {path}");
        assert!(rtt >= DELAY * 2, "path {path}: {rtt:?}");
    }
    let s = conn(&mut p, Side::Server);
    assert!(!s.is_closed(), "{:?}", s.close_reason());
    assert_eq!(s.multipath_packets(1), Some((2, 1)));
    assert_eq!(s.multipath_packets(2), Some((1, 0)));
    assert_eq!(s.multipath_path_rtt(1).map(|r| r.1), Some(0));
    assert_eq!(s.multipath_path_rtt(2), None, "nothing sent on it");
    // Path 0 still carries data.
    stream_arrives(&mut p, b"after");
}

/// RFC 9000 §13.1 per path (§4.1): a PATH_ACK for path 1 beyond what was sent on
/// path 1 is PROTOCOL_VIOLATION, even though path 0 sent that many packets.
#[test]
fn path_ack_beyond_the_paths_packets_is_a_protocol_violation() {
    let mut p = connected_with(config(Some(3)), config(Some(3)), 41);
    run_for(&mut p, DELAY * 4);
    conn(&mut p, Side::Server).multipath_ping(1).unwrap();
    run_for(&mut p, DELAY * 4);
    assert_eq!(
        conn(&mut p, Side::Server).multipath_packets(1),
        Some((0, 1))
    );
    let frame = mp(MultipathFrame::PathAck {
        path_id: PathId(1),
        ack: AckFrame {
            ack_delay: 0,
            ranges: vec![0..=1],
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

/// Sending on a path needs multipath, a path ID above 0 within the peer's maximum and
/// a connection ID from the peer for it: typed errors otherwise.
#[test]
fn sending_on_a_path_is_refused_with_a_reason() {
    use quiclab_proto::PathSendError as E;
    let mut p = connected_with(config(None), config(Some(3)), 42);
    run_for(&mut p, DELAY * 4);
    assert_eq!(
        conn(&mut p, Side::Client).multipath_ping(1),
        Err(E::NotNegotiated)
    );
    let mut p = connected_with(config(Some(3)), config(Some(1)), 43);
    let c = conn(&mut p, Side::Client);
    assert_eq!(c.multipath_ping(0), Err(E::InvalidPathId));
    assert_eq!(
        c.multipath_ping(2),
        Err(E::InvalidPathId),
        "peer's max is 1"
    );
    // Right after the handshake the peer's IDs for path 1 may not be there yet; once
    // they are, the ping goes.
    run_for(&mut p, DELAY * 4);
    assert_eq!(conn(&mut p, Side::Client).multipath_ping(1), Ok(()));
}

/// §3.1: the client opens path 1 from a second local address with a PATH_CHALLENGE on
/// one of the server's path-1 connection IDs; the server answers on path 1 (to that
/// address); once answered, the client sends stream data on both paths, each within its
/// own window, and 1 MB arrives byte-exact with a large share over each path ID.
#[test]
fn a_second_path_opens_and_carries_data_alongside_path_0() {
    let mut p = connected_with(config(Some(3)), config(Some(3)), 44);
    run_for(&mut p, DELAY * 4);
    let second: std::net::SocketAddr = "10.0.0.2:40001".parse().unwrap();
    p.add_client_address(second);
    p.client_conn().multipath_open_path(1, second).unwrap();
    assert!(!p.client_conn().multipath_path_validated(1));
    run_for(&mut p, DELAY * 4);
    assert!(p.client_conn().multipath_path_validated(1));
    assert!(
        p.server_received_from
            .get(&second)
            .is_some_and(|b| *b >= 1200),
        "the challenge came from the second address, padded"
    );
    let data = payload();
    let got = upload(&mut p, &data, |_, _| {});
    assert_eq!(got.len(), data.len());
    assert!(got == data, "byte-exact");
    let s = p.server_conn().unwrap();
    assert!(!s.is_closed(), "{:?}", s.close_reason());
    let on_1 = s.multipath_bytes_received(1);
    let total = s.stats().datagrams_received.bytes;
    assert!(on_1 >= 200_000, "path 1 carried {on_1} bytes");
    assert!(
        total - on_1 >= 200_000,
        "path 0 carried {} bytes",
        total - on_1
    );
    run_for(&mut p, DELAY * 8); // the last PATH_ACKs
    let (_, in_flight) = p.client_conn().multipath_path_rtt(1).unwrap();
    assert_eq!(
        in_flight, 0,
        "path 1's recovery saw its packets acknowledged"
    );
}

pub(crate) fn payload() -> Vec<u8> {
    (0..1_000_000u32).map(|i| (i * 7 % 251) as u8).collect()
}

pub(crate) fn second_address() -> std::net::SocketAddr {
    "10.0.0.2:40001".parse().unwrap()
}

/// The client writes `data` on a new stream while `step(pair, round)` runs each round
/// (every 5 ms); returns what the server read once the stream ended.
pub(crate) fn upload(p: &mut Pair, data: &[u8], mut step: impl FnMut(&mut Pair, usize)) -> Vec<u8> {
    let id = p.client_conn().open_stream(Dir::Uni).unwrap();
    let mut written = 0;
    let mut got = Vec::new();
    let mut sid = None;
    for round in 0..4000 {
        step(p, round);
        if written < data.len() {
            written += p.client_conn().write(id, &data[written..]).unwrap_or(0);
            if written == data.len() {
                p.client_conn().finish(id).unwrap();
            }
        }
        run_for(p, DELAY / 2);
        let s = p.server_conn().unwrap();
        if sid.is_none() {
            sid = s.accept_stream(Dir::Uni);
        }
        if let Some(sid) = sid {
            if drain_stream(s, sid, &mut got) {
                break;
            }
        }
    }
    got
}

/// A pair with path 1 open from the client's second address and validated.
pub(crate) fn two_paths(seed: u64) -> Pair {
    two_paths_with(config(Some(3)), config(Some(3)), seed)
}

/// [`two_paths`] with these configs (multipath enabled in both).
pub(crate) fn two_paths_with(client: TransportConfig, server: TransportConfig, seed: u64) -> Pair {
    let mut p = connected_with(client, server, seed);
    open_second_path(&mut p, DELAY * 4, DELAY * 4);
    assert!(p.client_conn().multipath_path_validated(1));
    p
}

/// After `before`, the client opens path 1 from [`second_address`]; then `after` runs.
pub(crate) fn open_second_path(
    p: &mut Pair,
    before: std::time::Duration,
    after: std::time::Duration,
) {
    run_for(p, before);
    p.add_client_address(second_address());
    p.client_conn()
        .multipath_open_path(1, second_address())
        .unwrap();
    run_for(p, after);
}

/// Runs `p` until both sides have confirmed the handshake (within 5 s).
pub(crate) fn confirm_handshake(p: &mut Pair) {
    p.run_until(quiclab_proto::Instant::from_millis(5_000), |p| {
        p.client_conn().is_handshake_confirmed()
            && p.server_conn().is_some_and(|s| s.is_handshake_confirmed())
    })
    .expect("handshake");
}

/// §3.4: either side abandons path 1 in the middle of a 1 MB upload: both end with
/// the path abandoned (the receiver answers with its own PATH_ABANDON), nothing more
/// is sent on it, its data in flight goes again on path 0, and the transfer completes
/// byte-exact.
#[test]
fn abandoning_a_path_mid_transfer_completes_on_the_other() {
    for (abandoner, seed) in [(Side::Client, 45), (Side::Server, 46)] {
        let mut p = two_paths(seed);
        let data = payload();
        let mut sent_at_abandon = None;
        let got = upload(&mut p, &data, |p, round| {
            if round == 6 {
                let c = conn(p, abandoner);
                c.multipath_abandon_path(1, 7).unwrap();
                assert_eq!(
                    c.multipath_abandon_path(1, 7),
                    Err(quiclab_proto::PathSendError::InvalidPathId),
                    "abandoned once"
                );
            }
            let both = [Side::Client, Side::Server]
                .into_iter()
                .all(|side| conn(p, side).multipath_path_abandoned(1));
            if both && sent_at_abandon.is_none() {
                // From here on nothing is sent on the path.
                sent_at_abandon = p.client_conn().multipath_packets(1).map(|c| c.1);
            }
        });
        assert_eq!(got.len(), data.len(), "{abandoner:?}");
        assert!(got == data, "byte-exact ({abandoner:?})");
        run_for(&mut p, DELAY * 8);
        for side in [Side::Client, Side::Server] {
            let c = conn(&mut p, side);
            assert!(!c.is_closed(), "{:?}", c.close_reason());
            assert!(c.multipath_path_abandoned(1), "{abandoner:?} -> {side:?}");
        }
        // What was in flight on path 1 when it was abandoned went again (on path 0).
        assert!(
            p.client_conn().stream_bytes_retransmitted() > 0,
            "{abandoner:?}"
        );
        let sent = p.client_conn().multipath_packets(1).map(|c| c.1);
        assert!(
            sent_at_abandon.is_some_and(|n| n > 10),
            "path 1 carried data first"
        );
        assert_eq!(
            sent, sent_at_abandon,
            "{abandoner:?}: nothing more on path 1"
        );
        assert_eq!(
            p.client_conn().multipath_ping(1),
            Err(quiclab_proto::PathSendError::InvalidPathId),
            "§3.4: an abandoned path ID is not used again"
        );
    }
}
