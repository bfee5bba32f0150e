//! The multipath packet schedulers (draft-ietf-quic-multipath §5.5, §3.3;
//! `src/multipath_sched/`) with the in-memory pair: the client reaches the server over
//! path 0 (its first address) and path 1 (its second), each given its own RTT by the
//! pair's per-address delay. What each path carried is counted at the link: the
//! client's datagrams of more than 300 bytes (stream data; its ACK-only datagrams are
//! far smaller), by source address.

use crate::misbehaving::{conn, pair, run_for, send, DELAY};
use crate::multipath::{
    config, confirm_handshake, open_second_path, payload, second_address, upload,
};

use quiclab_proto::raw::{Frame, MultipathFrame, PathId, SpaceId};
use quiclab_proto::testing::{drain_stream, Pair};
use quiclab_proto::{Dir, MultipathScheduler, Side};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::Duration;

/// Stream datagrams the client sent from each of its addresses.
type Counts = Rc<RefCell<BTreeMap<SocketAddr, u64>>>;

/// `from` sends PATH_STATUS_BACKUP for `path` (§3.3): the other side should send on it
/// only when no available path is usable.
pub(crate) fn mark_backup(p: &mut Pair, from: Side, path: u32) {
    let frame = Frame::Multipath(MultipathFrame::PathStatus {
        path_id: PathId(path),
        sequence: 1,
        backup: true,
    });
    send(p, from, SpaceId::Data, &[frame]);
    run_for(p, DELAY * 4);
    let other = match from {
        Side::Client => Side::Server,
        Side::Server => Side::Client,
    };
    assert_eq!(conn(p, other).multipath_peer_status(path), Some((1, true)));
}

/// A pair with the client's `scheduler`, 10 ms links, `extra0` more one-way delay on
/// path 0 and `extra1` on path 1; path 1 open and validated by both sides.
pub(crate) fn two_paths_rtts(
    scheduler: MultipathScheduler,
    extra0: Duration,
    extra1: Duration,
    seed: u64,
) -> Pair {
    let mut client = config(Some(3));
    client.multipath.scheduler = scheduler;
    let mut p = pair(client, config(Some(3)), seed);
    let first = p.client_addr;
    p.address_delay.insert(first, extra0);
    p.address_delay.insert(second_address(), extra1);
    confirm_handshake(&mut p);
    open_second_path(
        &mut p,
        Duration::from_millis(200),
        Duration::from_millis(400),
    );
    assert!(p.client_conn().multipath_path_validated(1));
    assert!(p.server_conn().unwrap().multipath_path_validated(1));
    p
}

/// From now on, counts the client's stream datagrams per source address.
pub(crate) fn count_stream_datagrams(p: &mut Pair) -> Counts {
    let counts = Counts::default();
    let c = counts.clone();
    let client_addrs = [p.client_addr, second_address()];
    p.drop_filter = Some(Box::new(move |_, from, _, size| {
        if client_addrs.contains(&from) && size > 300 {
            *c.borrow_mut().entry(from).or_default() += 1;
        }
        false
    }));
    counts
}

/// (path 0, path 1) stream datagrams so far.
pub(crate) fn per_path(p: &Pair, counts: &Counts) -> (u64, u64) {
    let c = counts.borrow();
    let n = |a: &SocketAddr| c.get(a).copied().unwrap_or(0);
    (n(&p.client_addr), n(&second_address()))
}

/// The client sends `len` bytes on a new stream at once, then the pair runs 300 ms
/// and the server reads them all.
fn burst(p: &mut Pair, len: usize) {
    let id = p.client_conn().open_stream(Dir::Uni).unwrap();
    let data = vec![7u8; len];
    assert_eq!(p.client_conn().write(id, &data).unwrap(), len);
    p.client_conn().finish(id).unwrap();
    run_for(p, Duration::from_millis(300));
    let s = p.server_conn().unwrap();
    let sid = s.accept_stream(Dir::Uni).expect("the stream arrived");
    let mut got = Vec::new();
    assert!(drain_stream(s, sid, &mut got));
    assert_eq!(got, data);
}

/// min_rtt: a message that fits in a window goes whole on the lower-RTT path, whichever
/// path ID that is (path 0: 80 ms RTT and path 1 50 ms, then path 0 20 ms and path 1
/// 50 ms: its PATH_ACKs come back on path 0).
#[test]
fn min_rtt_puts_stream_data_on_the_lower_rtt_path() {
    let slow = Duration::from_millis(30);
    for (extra0, extra1, seed) in [(slow, Duration::ZERO, 70), (Duration::ZERO, slow, 71)] {
        let mut p = two_paths_rtts(MultipathScheduler::MinRtt, extra0, extra1, seed);
        let (rtt1, _) = p.client_conn().multipath_path_rtt(1).unwrap();
        // Path 1's PATH_ACKs come back on path 0 (`multipath_send.rs`, §5.4).
        let expect1 = Duration::from_millis(20) + extra0 + extra1;
        // At most max_ack_delay (25 ms) more: the server may delay the PATH_ACK.
        let late = rtt1.saturating_sub(expect1);
        assert!(
            rtt1 + Duration::from_millis(5) >= expect1 && late <= Duration::from_millis(30),
            "{rtt1:?}"
        );
        let counts = count_stream_datagrams(&mut p);
        burst(&mut p, 8_000);
        let (on0, on1) = per_path(&p, &counts);
        let (fast, slow_n) = if extra1.is_zero() {
            (on1, on0)
        } else {
            (on0, on1)
        };
        assert!(fast >= 6, "{extra0:?}/{extra1:?}: fast path {fast}");
        assert_eq!(slow_n, 0, "{extra0:?}/{extra1:?}: slow path {slow_n}");
    }
}

/// min_rtt over a 1 MB upload: once the fast path's window is full the slow one is
/// used too, and the fast path carries the larger share; byte-exact.
#[test]
fn min_rtt_fills_the_fast_path_first_then_uses_both() {
    let mut p = two_paths_rtts(
        MultipathScheduler::MinRtt,
        Duration::from_millis(30),
        Duration::ZERO,
        72,
    );
    let counts = count_stream_datagrams(&mut p);
    let data = payload();
    let got = upload(&mut p, &data, |_, _| {});
    assert!(got == data, "byte-exact");
    let (on0, on1) = per_path(&p, &counts);
    assert!(on1 > on0, "fast path 1 {on1}, slow path 0 {on0}");
    assert!(on0 > 0, "path 0 used once path 1's window was full");
}

/// round_robin: with both windows open, packets alternate between the paths whatever
/// their RTTs (counts within one of each other); a 1 MB upload completes byte-exact.
#[test]
fn round_robin_alternates_between_open_paths() {
    let mut p = two_paths_rtts(
        MultipathScheduler::RoundRobin,
        Duration::ZERO,
        Duration::from_millis(30),
        73,
    );
    let counts = count_stream_datagrams(&mut p);
    burst(&mut p, 10_000);
    let (on0, on1) = per_path(&p, &counts);
    assert!(on0 + on1 >= 8, "{on0} + {on1}");
    assert!(on0.abs_diff(on1) <= 1, "path 0 {on0}, path 1 {on1}");
    let data = payload();
    let got = upload(&mut p, &data, |_, _| {});
    assert_eq!(got.len(), data.len(), "{:?}", per_path(&p, &counts));
    assert!(got == data, "byte-exact");
    let (on0, on1) = per_path(&p, &counts);
    assert!(on0 > 50 && on1 > 50, "path 0 {on0}, path 1 {on1}");
}

/// §3.3: path 1, faster, is marked backup by the server: it carries no stream data
/// during a 1 MB upload, although path 0's window is often full (cwnd-blocked is not
/// unusable).
#[test]
fn a_backup_path_carries_no_stream_data_while_an_available_path_is_usable() {
    for scheduler in [
        MultipathScheduler::MinRtt,
        MultipathScheduler::RoundRobin,
        MultipathScheduler::Redundant,
    ] {
        let mut p = two_paths_rtts(scheduler, Duration::from_millis(30), Duration::ZERO, 74);
        mark_backup(&mut p, Side::Server, 1);
        let counts = count_stream_datagrams(&mut p);
        let data = payload();
        let got = upload(&mut p, &data, |_, _| {});
        assert!(got == data, "byte-exact ({scheduler:?})");
        let (on0, on1) = per_path(&p, &counts);
        assert_eq!(on1, 0, "{scheduler:?}: backup path 1");
        assert!(on0 > 500, "{scheduler:?}: path 0 {on0}");
    }
}

/// §3.3: path 0 is the backup, path 1 available: path 1 carries the upload until the
/// client abandons it (§3.4); then path 0, no longer behind a usable available path,
/// carries the rest (and what was in flight on path 1), and the transfer completes.
#[test]
fn a_backup_path_takes_over_once_the_available_path_is_abandoned() {
    for scheduler in [
        MultipathScheduler::MinRtt,
        MultipathScheduler::RoundRobin,
        MultipathScheduler::Redundant,
    ] {
        let mut p = two_paths_rtts(scheduler, Duration::ZERO, Duration::ZERO, 75);
        mark_backup(&mut p, Side::Server, 0);
        let counts = count_stream_datagrams(&mut p);
        let mut at_abandon = None;
        let data = payload();
        let got = upload(&mut p, &data, |p, round| {
            if round == 10 {
                at_abandon = Some(per_path(p, &counts));
                p.client_conn().multipath_abandon_path(1, 0).unwrap();
            }
        });
        assert!(got == data, "byte-exact ({scheduler:?})");
        let (before0, before1) = at_abandon.unwrap();
        assert_eq!(before0, 0, "{scheduler:?}: backup path 0 idle before");
        assert!(before1 > 20, "{scheduler:?}: path 1 {before1}");
        let (on0, _) = per_path(&p, &counts);
        assert!(on0 > 300, "{scheduler:?}: path 0 {on0} after the abandon");
    }
}
