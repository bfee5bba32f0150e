//! Per-path recovery of the paths above 0 (draft-ietf-quic-multipath §5.3, §5.7; RFC
//! 9002 §6, A.8, A.9, §7.7): each path's own loss detection timer, probe timeout with
//! its own backoff, time-threshold losses and pacer, with the in-memory pair and a
//! client with a second address (path 1). Path 1's datagrams are lost by the pair's
//! drop filter, by address.

use crate::misbehaving::{conn, run_for, DELAY};
use crate::multipath::{config, payload, second_address, two_paths, two_paths_with, upload};

use quiclab_proto::testing::{drain_stream, Pair};
use quiclab_proto::{Dir, Instant, Side};
use std::cell::{Cell, RefCell};
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::Duration;

/// Drops every datagram from or to `addr` while the returned flag is set.
fn blackhole(p: &mut Pair, addr: SocketAddr) -> Rc<Cell<bool>> {
    let on = Rc::new(Cell::new(true));
    let flag = on.clone();
    p.drop_filter = Some(Box::new(move |_, from, to, _| {
        flag.get() && (from == addr || to == addr)
    }));
    on
}

/// Path 1's packets sent so far by the client.
fn sent_on_1(p: &mut Pair) -> u64 {
    p.client_conn().multipath_packets(1).map_or(0, |c| c.1)
}

/// §5.7: the last packet of a message, sent on path 1, is lost, and path 0 has nothing
/// in flight: path 1's own PTO fires and its probe carries the data again (RFC 9002
/// §6.2.4), so the message arrives; path 0's timers never fired. Before paths above 0
/// had timers, nothing would ever have resent it.
#[test]
fn tail_loss_on_path_1_is_recovered_by_path_1s_pto() {
    let mut p = two_paths(60);
    // Path 0 a backup (§3.3): the message goes on path 1, the one available path.
    crate::multipath_sched::mark_backup(&mut p, Side::Server, 0);
    run_for(&mut p, DELAY * 8);
    let pto0 = p.client_conn().stats().pto_count_total;
    let before = sent_on_1(&mut p);
    let hole = blackhole(&mut p, second_address());
    let id = p.client_conn().open_stream(Dir::Uni).unwrap();
    p.client_conn().write(id, b"the tail").unwrap();
    p.client_conn().finish(id).unwrap();
    run_for(&mut p, DELAY);
    assert_eq!(sent_on_1(&mut p), before + 1, "the message went on path 1");
    hole.set(false);
    assert_eq!(
        p.client_conn().multipath_path_loss(1).unwrap().ptos,
        0,
        "no PTO yet"
    );
    let mut got = Vec::new();
    let mut sid = None;
    let limit = p.now + Duration::from_secs(2);
    while p.now < limit {
        run_for(&mut p, DELAY);
        let s = p.server_conn().unwrap();
        sid = sid.or_else(|| s.accept_stream(Dir::Uni));
        if sid.is_some_and(|sid| drain_stream(s, sid, &mut got)) {
            break;
        }
    }
    assert_eq!(got, b"the tail");
    let c = p.client_conn();
    let loss = c.multipath_path_loss(1).unwrap();
    assert!(loss.ptos >= 1, "{loss:?}");
    assert!(sent_on_1(&mut p) >= before + 2, "the probe went on path 1");
    assert_eq!(
        p.client_conn().stats().pto_count_total,
        pto0,
        "path 0's PTO never fired"
    );
    // The probe was acknowledged: path 1's backoff is reset.
    run_for(&mut p, DELAY * 8);
    assert_eq!(p.client_conn().multipath_path_loss(1).unwrap().pto_count, 0);
}

/// RFC 9002 §6.2.1 per path: with path 1 black-holed, its PTO fires again and again,
/// each period twice the previous one (the probes' send times), its PTO count grows,
/// and path 0's PTO count does not move.
#[test]
fn path_1s_pto_backs_off_on_its_own() {
    let mut p = two_paths(61);
    run_for(&mut p, DELAY * 8);
    let pto0 = p.client_conn().stats().pto_count_total;
    blackhole(&mut p, second_address());
    let before = sent_on_1(&mut p);
    p.client_conn().multipath_ping(1).unwrap();
    p.flush();
    let mut last = sent_on_1(&mut p);
    assert_eq!(last, before + 1, "the ping left");
    let mut sends: Vec<Instant> = vec![p.now];
    let limit = p.now + Duration::from_secs(6);
    while p.now < limit && sends.len() < 5 {
        assert!(p.step());
        let n = sent_on_1(&mut p);
        if n > last {
            sends.push(p.now);
            last = n;
        }
    }
    assert_eq!(sends.len(), 5, "the ping and four PTOs' probes");
    let gaps: Vec<Duration> = sends.windows(2).map(|w| w[1] - w[0]).collect();
    for w in gaps.windows(2) {
        let (a, b) = (w[0].as_micros() as i128, w[1].as_micros() as i128);
        assert!((b - 2 * a).abs() <= 1_000, "the PTO doubles: {gaps:?}");
    }
    let loss = p.client_conn().multipath_path_loss(1).unwrap();
    assert_eq!(loss.ptos, 4, "{loss:?}");
    assert_eq!(loss.pto_count, 4);
    assert_eq!(p.client_conn().stats().pto_count_total, pto0);
    let c = conn(&mut p, Side::Client);
    assert!(!c.is_closed(), "{:?}", c.close_reason());
}

/// RFC 9002 §6.1.2 per path: of two packets sent together on path 1 the first is
/// lost; the PATH_ACK of the second cannot declare it lost yet (one packet apart, sent
/// at the same time), so path 1's loss detection timer does, 9/8 RTT after it left.
#[test]
fn a_lost_packet_on_path_1_is_found_by_time_threshold() {
    let mut p = two_paths(62);
    run_for(&mut p, DELAY * 8);
    let addr = second_address();
    let drops = Rc::new(Cell::new(1u32));
    let left = drops.clone();
    p.drop_filter = Some(Box::new(move |_, from, _, _| {
        let drop = from == addr && left.get() > 0;
        if drop {
            left.set(left.get() - 1);
        }
        drop
    }));
    let before = sent_on_1(&mut p);
    let c = p.client_conn();
    c.multipath_ping(1).unwrap();
    c.multipath_ping(1).unwrap();
    run_for(&mut p, DELAY * 10);
    assert_eq!(drops.get(), 0);
    assert!(sent_on_1(&mut p) >= before + 2);
    let loss = p.client_conn().multipath_path_loss(1).unwrap();
    assert_eq!(loss.lost_packets, 1, "{loss:?}");
    assert_eq!(loss.lost_by_timer, 1, "{loss:?}");
    assert_eq!(p.client_conn().multipath_path_rtt(1).unwrap().1, 0);
}

/// The most datagrams path 1 sent at one instant during a 1 MB upload.
fn largest_burst_on_path_1(pacing: bool, seed: u64) -> (usize, usize) {
    let mut c = config(Some(3));
    c.pacing = pacing;
    let mut p = two_paths_with(c, config(Some(3)), seed);
    let sends: Rc<RefCell<Vec<Instant>>> = Rc::default();
    let log = sends.clone();
    let addr = second_address();
    p.drop_filter = Some(Box::new(move |now, from, _, _| {
        if from == addr {
            log.borrow_mut().push(now);
        }
        false
    }));
    let data = payload();
    let got = upload(&mut p, &data, |_, _| {});
    assert!(got == data, "byte-exact");
    let sends = sends.borrow();
    let mut largest = 0;
    for run in sends.chunk_by(|a, b| a == b) {
        largest = largest.max(run.len());
    }
    (largest, sends.len())
}

/// RFC 9002 §7.7 on path 1: its own pacer spreads its packets (at most a burst of 10
/// at one instant), where without pacing whole windows leave at once.
#[test]
fn pacing_spreads_path_1s_packets() {
    let (paced, n) = largest_burst_on_path_1(true, 63);
    assert!(n > 200, "path 1 carried {n} datagrams");
    assert!(paced <= 10, "paced: {paced} datagrams at one instant");
    let (unpaced, _) = largest_burst_on_path_1(false, 63);
    assert!(unpaced > 20, "unpaced: {unpaced} datagrams at one instant");
}
