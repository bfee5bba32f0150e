//! Path control (draft-ietf-quic-multipath §3.3, §3.4) with the in-memory pair:
//! PATH_STATUS sent by our API and respected by both schedulers, abandoning path 0 (the
//! handshake's path) mid-transfer, the last path, and the handover's stall when the
//! client is told its first interface went down. Path 0 is the client's first address,
//! path 1 its second; what each path carried is counted at the link.

use crate::misbehaving::{conn, connected_with, run_for, send, DELAY};
use crate::multipath::{config, payload, second_address, two_paths, two_paths_with, upload};

use quiclab_proto::raw::{AckFrame, Frame, MultipathFrame, NewConnectionIdFrame, PathId, SpaceId};
use quiclab_proto::testing::{drain_stream, Pair};
use quiclab_proto::{
    CloseReason, ConnectionId, Dir, Instant, PathSendError, Side, TransportErrorCode,
};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

/// Datagrams of more than 300 bytes (stream data) per (path, direction) and every
/// datagram on path 0 once `watch0` is set: [client→ on 0, →client on 0, client→ on
/// 1, →client on 1], path 0 after watch.
#[derive(Default)]
struct Counts {
    stream: [u64; 4],
    path0_after: u64,
}

type Shared = Rc<RefCell<Counts>>;

/// From now on, counts datagrams per path (`Counts`); `watch0` starts the count of
/// everything on path 0; `down0` drops everything on path 0 (the interface is down).
fn count(p: &mut Pair, watch0: Rc<Cell<bool>>, down0: Rc<Cell<bool>>) -> Shared {
    let counts = Shared::default();
    let c = counts.clone();
    let (first, second) = (p.client_addr, second_address());
    p.drop_filter = Some(Box::new(move |_, from, to, size| {
        let on0 = from == first || to == first;
        let i = match (on0, from == first || from == second) {
            (true, true) => 0,
            (true, false) => 1,
            (false, true) => 2,
            (false, false) => 3,
        };
        let mut c = c.borrow_mut();
        if size > 300 {
            c.stream[i] += 1;
        }
        if on0 && watch0.get() {
            c.path0_after += 1;
        }
        on0 && down0.get()
    }));
    counts
}

/// The client asks for `data` on a new bidirectional stream and the server writes it
/// back; `step(pair, round)` runs every `tick`. Returns what the client read and
/// when each read brought new bytes.
fn download(
    p: &mut Pair,
    data: &[u8],
    tick: Duration,
    mut step: impl FnMut(&mut Pair, usize),
) -> (Vec<u8>, Vec<Instant>) {
    let id = p.client_conn().open_stream(Dir::Bi).unwrap();
    p.client_conn().write(id, b"GET").unwrap();
    p.client_conn().finish(id).unwrap();
    let (mut sid, mut written, mut got, mut at) = (None, 0, Vec::new(), Vec::new());
    for round in 0..40_000 {
        step(p, round);
        run_for(p, tick);
        let s = p.server_conn().unwrap();
        sid = sid.or_else(|| s.accept_stream(Dir::Bi));
        if let Some(sid) = sid {
            if written < data.len() {
                written += s.write(sid, &data[written..]).unwrap_or(0);
                if written == data.len() {
                    s.finish(sid).unwrap();
                }
            }
        }
        let before = got.len();
        let done = drain_stream(p.client_conn(), id, &mut got);
        if got.len() > before {
            at.push(p.now);
        }
        if done {
            break;
        }
    }
    (got, at)
}

/// §3.4: either side abandons path 0 in the middle of a 1 MB download: both end with
/// it abandoned, nothing more is sent on it by the abandoner (and by the other side
/// once it learnt it), what was in flight on it goes again on path 1, the ACKs and
/// control frames move to path 1, and the transfer completes byte-exact.
#[test]
fn abandoning_path_0_mid_download_completes_on_path_1() {
    for (abandoner, seed) in [(Side::Client, 90), (Side::Server, 91)] {
        let mut p = two_paths(seed);
        let (watch, down) = (Rc::new(Cell::new(false)), Rc::new(Cell::new(false)));
        let counts = count(&mut p, watch.clone(), down);
        let data = payload();
        let mut both_at = None;
        let (got, _) = download(&mut p, &data, DELAY / 2, |p, round| {
            if round == 10 {
                let c = conn(p, abandoner);
                c.multipath_abandon_path(0, 7).unwrap();
                assert_eq!(
                    c.multipath_abandon_path(0, 7),
                    Err(PathSendError::InvalidPathId),
                    "abandoned once"
                );
            }
            let both = [Side::Client, Side::Server]
                .into_iter()
                .all(|side| conn(p, side).multipath_path_abandoned(0));
            if both && both_at.is_none() {
                both_at = Some(round);
                watch.set(true);
            }
        });
        assert_eq!(got.len(), data.len(), "{abandoner:?}");
        assert!(got == data, "byte-exact ({abandoner:?})");
        assert!(
            both_at.is_some_and(|r| r < 20),
            "{abandoner:?}: {both_at:?}"
        );
        run_for(&mut p, DELAY * 20);
        for side in [Side::Client, Side::Server] {
            let c = conn(&mut p, side);
            assert!(!c.is_closed(), "{side:?}: {:?}", c.close_reason());
            assert!(c.multipath_path_abandoned(0), "{abandoner:?} -> {side:?}");
        }
        let c = counts.borrow();
        assert_eq!(c.path0_after, 0, "{abandoner:?}: sent on path 0 afterwards");
        // Path 1 carried the rest: most of the 1 MB (~700 datagrams of 1.2 kB).
        assert!(c.stream[3] > 400, "{abandoner:?}: {:?}", c.stream);
        assert!(
            p.server_conn().unwrap().stream_bytes_retransmitted() > 0,
            "{abandoner:?}: path 0's flight went again"
        );
    }
}

/// §3.4: the last usable path is not abandoned by the API (close the connection
/// instead); a peer's PATH_ABANDON for the only open path closes the connection
/// ("SHOULD send a CONNECTION_CLOSE frame and enter the closing state").
#[test]
fn the_last_path_is_not_abandoned() {
    let mut p = connected_with(config(Some(3)), config(Some(3)), 92);
    run_for(&mut p, DELAY * 4);
    let c = p.client_conn();
    assert_eq!(c.multipath_abandon_path(0, 0), Err(PathSendError::LastPath));
    let mut p = two_paths(93);
    p.client_conn().multipath_abandon_path(0, 0).unwrap();
    assert_eq!(
        p.client_conn().multipath_abandon_path(1, 0),
        Err(PathSendError::LastPath)
    );
    // The server abandoned path 0 too; a PATH_ABANDON for path 1 from the client
    // (forged: our API refuses it) leaves it with no path: it closes.
    run_for(&mut p, DELAY * 8);
    assert!(p.server_conn().unwrap().multipath_path_abandoned(0));
    let frame = Frame::Multipath(MultipathFrame::PathAbandon {
        path_id: PathId(1),
        error_code: 0,
    });
    send(&mut p, Side::Client, SpaceId::Data, &[frame]);
    run_for(&mut p, DELAY * 8);
    match p.server_conn().unwrap().close_reason() {
        Some(CloseReason::Transport { error, .. }) => {
            assert_eq!(error.code, TransportErrorCode::NO_ERROR, "{error}")
        }
        other => panic!("{other:?}"),
    }
}

/// §3.3, §4.3: the client marks path 1 backup: the server learns it (sequence 0), and
/// neither the server's download nor the client's upload puts stream data on path 1
/// while path 0 works (our own scheduler respects our status too).
#[test]
fn a_backup_path_carries_no_stream_data_while_the_available_one_works() {
    let mut p = two_paths(94);
    p.client_conn().multipath_set_path_status(1, true).unwrap();
    assert!(p.client_conn().multipath_local_backup(1));
    run_for(&mut p, DELAY * 4);
    assert_eq!(
        p.server_conn().unwrap().multipath_peer_status(1),
        Some((0, true))
    );
    let counts = count(&mut p, Rc::default(), Rc::default());
    let data = payload();
    let (got, _) = download(&mut p, &data, DELAY / 2, |_, _| {});
    assert!(got == data, "byte-exact");
    let got = upload(&mut p, &data, |_, _| {});
    assert!(got == data, "byte-exact");
    let c = counts.borrow().stream;
    assert!(c[1] > 400 && c[0] > 400, "path 0 carried both: {c:?}");
    assert_eq!((c[2], c[3]), (0, 0), "nothing on the backup path: {c:?}");
}

/// §3.3: mid-download the client sets path 1 available and path 0 backup (latest
/// sequence wins): the new data moves to path 1 (path 0 keeps only what was in
/// flight there, and PTO probes).
#[test]
fn swapping_the_status_moves_new_data_to_path_1() {
    let mut p = two_paths(95);
    p.client_conn().multipath_set_path_status(1, true).unwrap();
    run_for(&mut p, DELAY * 4);
    let counts = count(&mut p, Rc::default(), Rc::default());
    let data = payload();
    let (mut at_swap, mut settled) = (None, None);
    let (got, _) = download(&mut p, &data, DELAY / 2, |p, round| {
        if round == 20 {
            at_swap = Some(counts.borrow().stream);
            let c = p.client_conn();
            c.multipath_set_path_status(1, false).unwrap();
            c.multipath_set_path_status(0, true).unwrap();
        }
        if round == 30 {
            // Two RTTs later the server has both frames.
            let s = p.server_conn().unwrap();
            assert_eq!(s.multipath_peer_status(1), Some((1, false)));
            assert_eq!(s.multipath_peer_status(0), Some((0, true)));
            settled = Some(counts.borrow().stream);
        }
    });
    assert!(got == data, "byte-exact");
    let (before, settled) = (at_swap.unwrap(), settled.unwrap());
    let after = counts.borrow().stream;
    let (on0, on1) = (after[1] - settled[1], after[3] - settled[3]);
    assert!(before[1] > 20 && before[3] == 0, "before: {before:?}");
    assert!(
        on1 > 300 && on0 <= 4,
        "after the swap: path 0 {on0}, path 1 {on1}"
    );
}

/// The handover (issue 33): path 1 has the longer RTT (60 ms against 20 ms);
/// mid-download the client's first interface goes down (everything on path 0 is lost
/// from then on) and the client is told at once: it abandons path 0. The stall is the
/// time between the last delivery to the client before the outage and the first
/// after, sampled every millisecond, against path 1's RTT as the server (the data's
/// sender) measures it. (Marking path 0 backup instead is no handover when the
/// interface is really down: the client's ACKs still go on path 0 and are lost.)
#[test]
fn handover_stall_when_interface_0_goes_down() {
    let extra1 = Duration::from_millis(20);
    let mut p = two_paths(96);
    p.address_delay.insert(second_address(), extra1);
    let (watch, down) = (Rc::new(Cell::new(false)), Rc::new(Cell::new(false)));
    let _counts = count(&mut p, watch, down.clone());
    let data = payload();
    let mut down_at = None;
    let (got, at) = download(&mut p, &data, Duration::from_millis(1), |p, round| {
        if round == 150 {
            down.set(true);
            down_at = Some(p.now);
            p.client_conn().multipath_abandon_path(0, 0).unwrap();
        }
    });
    assert!(got == data, "byte-exact");
    let t = down_at.unwrap();
    let last_before = at.iter().rev().find(|x| **x <= t).copied().unwrap();
    let first_after = at.iter().find(|x| **x > t).copied().unwrap();
    let stall = first_after.saturating_duration_since(last_before);
    let (rtt1, _) = p.server_conn().unwrap().multipath_path_rtt(1).unwrap();
    eprintln!(
        "handover (abandon path 0): stall {stall:?}, path 1 srtt {rtt1:?} (server), ratio {:.2}",
        stall.as_secs_f64() / rtt1.as_secs_f64()
    );
    assert!(stall < rtt1, "stall {stall:?}, path 1 srtt {rtt1:?}");
}

/// §4.6, §4.7: with a limit of one path above 0 on both sides, the client asks for
/// path 2: refused with `PathsBlocked`, and the server hears PATHS_BLOCKED(1) once
/// however often the client asks; each path abandoned raises both limits by one
/// (MAX_PATH_ID) so the next path ID opens, again and again (once the path abandoned
/// before it was freed).
#[test]
fn max_path_id_follows_abandoned_paths_and_paths_blocked_tells_the_peer() {
    let mut p = two_paths_with(config(Some(1)), config(Some(1)), 98);
    let addr = |n: u32| -> std::net::SocketAddr { format!("10.0.0.{n}:40001").parse().unwrap() };
    for _ in 0..2 {
        let r = p.client_conn().multipath_open_path(2, addr(3));
        assert_eq!(r, Err(PathSendError::PathsBlocked));
    }
    run_for(&mut p, DELAY * 4);
    assert_eq!(
        p.server_conn().unwrap().multipath_peer_blocked(),
        (1, Some(1))
    );
    for path in 1..6u32 {
        p.client_conn().multipath_abandon_path(path, 0).unwrap();
        // Long enough for the path abandoned before to be freed (3 PTO): until then it
        // holds the limit back (at most 2 x (1 + 1) path IDs with state).
        run_for(&mut p, Duration::from_millis(400));
        let next = path + 1;
        for side in [Side::Client, Side::Server] {
            let c = conn(&mut p, side);
            assert_eq!(c.multipath_path_id_limits(), Some((next, next)), "{side:?}");
            assert!(!c.is_closed(), "{:?}", c.close_reason());
        }
        p.add_client_address(addr(next + 2));
        p.client_conn()
            .multipath_open_path(next, addr(next + 2))
            .unwrap();
        run_for(&mut p, DELAY * 8);
        assert!(p.client_conn().multipath_path_validated(next), "{next}");
        assert!(p.server_conn().unwrap().multipath_path_validated(next));
    }
    assert_eq!(p.server_conn().unwrap().multipath_peer_blocked().0, 1);
}

/// §3.4: an abandoned path's state is kept 3 PTO, then freed (its space, our IDs for
/// it; the peer's IDs at once): forty paths opened and abandoned one after another
/// leave both sides holding about what one open path needs, never growing with the
/// count (`Footprint::multipath_paths`).
#[test]
fn abandoned_paths_are_freed_and_memory_stays_bounded() {
    let mut p = two_paths_with(config(Some(2)), config(Some(2)), 99);
    let addr = |n: u32| -> std::net::SocketAddr {
        format!("10.0.{}.{}:40001", n / 200, n % 200 + 3)
            .parse()
            .unwrap()
    };
    let mut most = [0usize; 2];
    for path in 1..=40u32 {
        p.client_conn().multipath_abandon_path(path, 0).unwrap();
        run_for(&mut p, DELAY * 6);
        let next = path + 1;
        p.add_client_address(addr(next));
        p.client_conn()
            .multipath_open_path(next, addr(next))
            .unwrap();
        run_for(&mut p, DELAY * 6);
        assert!(p.client_conn().multipath_path_validated(next), "{next}");
        for (i, side) in [Side::Client, Side::Server].into_iter().enumerate() {
            let c = conn(&mut p, side);
            assert!(!c.is_closed(), "{:?}", c.close_reason());
            most[i] = most[i].max(c.footprint().multipath_paths);
        }
    }
    run_for(&mut p, Duration::from_secs(5));
    for (i, side) in [Side::Client, Side::Server].into_iter().enumerate() {
        let c = conn(&mut p, side);
        assert!(c.multipath_path_freed(40), "{side:?}: path 40 freed");
        assert!(
            c.multipath_packets(40).is_some(),
            "{side:?}: its counts kept"
        );
        assert!(!c.multipath_path_freed(41), "{side:?}");
        assert!(c.multipath_path_abandoned(40), "{side:?}");
        assert!(c.multipath_packets(41).is_some(), "{side:?}: path 41 open");
        let now = c.footprint().multipath_paths;
        eprintln!(
            "{side:?}: multipath_paths at most {}, at the end {now}",
            most[i]
        );
        // Path 41's space, the CIDs of path IDs 41 to 43, one range of abandoned IDs.
        assert!(now <= 6, "{side:?}: {now} entries at the end");
        // While abandoning: at most two more paths' worth on top.
        assert!(most[i] <= 12, "{side:?}: at most {} entries", most[i]);
    }
    // §4: frames about a freed path ID (here forged by the client) are ignored: no
    // error, nothing held again.
    let held = p.server_conn().unwrap().footprint().multipath_paths;
    let frames = [
        Frame::Multipath(MultipathFrame::PathAck {
            path_id: PathId(40),
            ack: AckFrame {
                ack_delay: 0,
                ranges: vec![0..=1_000],
                ecn: None,
            },
        }),
        Frame::Multipath(MultipathFrame::PathNewConnectionId {
            path_id: PathId(40),
            cid: NewConnectionIdFrame {
                sequence: 9,
                retire_prior_to: 0,
                id: ConnectionId::new(&[9; 8]).unwrap(),
                reset_token: [9; 16],
            },
        }),
        Frame::Multipath(MultipathFrame::PathStatus {
            path_id: PathId(40),
            sequence: 99,
            backup: true,
        }),
        Frame::Multipath(MultipathFrame::PathAbandon {
            path_id: PathId(40),
            error_code: 0,
        }),
    ];
    send(&mut p, Side::Client, SpaceId::Data, &frames);
    run_for(&mut p, DELAY * 4);
    let s = p.server_conn().unwrap();
    assert!(!s.is_closed(), "{:?}", s.close_reason());
    assert_eq!(s.footprint().multipath_paths, held);
    assert_eq!(s.multipath_peer_status(40), None);
}

/// §3.4 for path 0 (`src/connection/multipath_free0.rs`): once abandoned, what its
/// packets made the connection hold goes 3 PTO later, as for any path: the received
/// packet numbers kept for path 0's ACKs (footprint) and its sent records; late ACKs
/// for path 0 are no error, and the connection goes on over path 1 (a second upload
/// arrives whole). Before, path 0's state stayed as long as the connection.
#[test]
fn path_0_state_is_freed_three_ptos_after_its_abandonment() {
    for (abandoner, seed) in [(Side::Client, 93), (Side::Server, 94)] {
        let mut p = two_paths(seed);
        let data = payload();
        let mut abandoned_at = None;
        let got = upload(&mut p, &data, |p, round| {
            if round == 10 {
                conn(p, abandoner).multipath_abandon_path(0, 7).unwrap();
                abandoned_at = Some(p.now);
            }
        });
        assert!(got == data, "{abandoner:?}: byte-exact");
        run_for(&mut p, DELAY * 50);
        let abandoned_at = abandoned_at.unwrap();
        for side in [Side::Client, Side::Server] {
            let c = conn(&mut p, side);
            assert!(c.multipath_path_abandoned(0), "{abandoner:?} {side:?}");
            assert!(c.multipath_path_freed(0), "{abandoner:?} {side:?}");
            assert_eq!(c.footprint().path0_ack_ranges, 0, "{abandoner:?} {side:?}");
            assert!(c.stats().local_error.is_none(), "{abandoner:?} {side:?}");
        }
        // Freed no earlier than 3 of path 0's PTOs (20 ms RTT + 25 ms max_ack_delay).
        let since = p.now - abandoned_at;
        assert!(since >= Duration::from_millis(3 * 46), "{since:?}");
        let again = upload(&mut p, &data, |_, _| {});
        assert!(again == data, "{abandoner:?}: byte-exact after the freeing");
        for side in [Side::Client, Side::Server] {
            let c = conn(&mut p, side);
            assert!(
                !c.is_closed(),
                "{abandoner:?} {side:?}: {:?}",
                c.close_reason()
            );
            assert_eq!(c.footprint().path0_ack_ranges, 0, "{abandoner:?} {side:?}");
        }
    }
}

/// Path 0 not abandoned: its state stays (the freeing is no side effect of multipath).
#[test]
fn path_0_state_stays_while_path_0_is_open() {
    let mut p = two_paths(95);
    let data = payload();
    assert!(upload(&mut p, &data, |_, _| {}) == data);
    run_for(&mut p, DELAY * 100);
    for side in [Side::Client, Side::Server] {
        let c = conn(&mut p, side);
        assert!(!c.multipath_path_freed(0), "{side:?}");
        assert!(c.footprint().path0_ack_ranges > 0, "{side:?}");
    }
}
