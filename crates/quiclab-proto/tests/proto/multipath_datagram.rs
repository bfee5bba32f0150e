//! DATAGRAM frames (RFC 9221) on a multipath connection
//! (`src/connection/multipath_datagram.rs`): they belong to no path
//! (draft-ietf-quic-multipath §5.5), so with no stream data they leave on the open path
//! with the lowest smoothed RTT, path 1 here (path 0 has 30 ms more one-way delay), and
//! they keep arriving once path 0 is abandoned.

use crate::misbehaving::{pair, run_for, DELAY};
use crate::multipath::{config, confirm_handshake, open_second_path, second_address};

use quiclab_proto::testing::Pair;
use quiclab_proto::TransportConfig;
use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

fn with_datagrams() -> TransportConfig {
    TransportConfig {
        max_datagram_frame_size: Some(65_535),
        ..config(Some(3))
    }
}

/// Two validated paths, path 0 slow; counts the client's datagrams sent from its
/// second address (path 1) and from its first (path 0) in the returned cells.
fn slow_path0(seed: u64) -> (Pair, Rc<Cell<u64>>, Rc<Cell<u64>>) {
    let mut p = pair(with_datagrams(), with_datagrams(), seed);
    let first = p.client_addr;
    p.address_delay.insert(first, Duration::from_millis(30));
    confirm_handshake(&mut p);
    open_second_path(&mut p, DELAY * 4, DELAY * 20);
    assert!(p.client_conn().multipath_path_validated(1));
    let (on0, on1) = (Rc::new(Cell::new(0)), Rc::new(Cell::new(0)));
    let (n0, n1) = (on0.clone(), on1.clone());
    p.drop_filter = Some(Box::new(move |_, from, _, _| {
        if from == second_address() {
            n1.set(n1.get() + 1);
        } else if from == first {
            n0.set(n0.get() + 1);
        }
        false
    }));
    (p, on0, on1)
}

/// The client sends `n` datagrams of 500 bytes numbered from `first`, 5 ms apart; the
/// server must read every one, in order.
fn send_and_receive(p: &mut Pair, first: u8, n: u8) {
    for i in first..first + n {
        let now = p.now;
        p.client_conn().send_datagram(now, vec![i; 500]).unwrap();
        run_for(p, Duration::from_millis(5));
    }
    run_for(p, DELAY * 20);
    let s = p.server_conn().unwrap();
    let got: Vec<Vec<u8>> = std::iter::from_fn(|| s.recv_datagram()).collect();
    let want: Vec<Vec<u8>> = (first..first + n).map(|i| vec![i; 500]).collect();
    assert_eq!(got, want, "every datagram arrives, once, in order");
}

#[test]
fn datagrams_take_the_lowest_rtt_path_and_survive_path_0s_abandonment() {
    let (mut p, on0, on1) = slow_path0(401);
    let srtt0 = p.client_conn().rtt().smoothed();
    let (srtt1, _) = p
        .client_conn()
        .multipath_path_rtt(1)
        .expect("path 1 sampled");
    assert!(srtt1 < srtt0, "path 1 is the faster: {srtt1:?} / {srtt0:?}");
    send_and_receive(&mut p, 0, 20);
    // Path 0 still carries the client's ACKs (ack_path "any"), but no datagram.
    assert!(
        on1.get() >= 20,
        "path 1 carried the datagrams: {}",
        on1.get()
    );
    assert!(
        on0.get() < on1.get() / 2,
        "path 0 only ACKs: {} / {}",
        on0.get(),
        on1.get()
    );
    assert_eq!(p.client_conn().stats().datagram_frames_sent, 20);
    // Path 0 abandoned: the datagrams go on path 1, nothing more on path 0.
    p.client_conn().multipath_abandon_path(0, 0).unwrap();
    run_for(&mut p, DELAY * 10);
    assert!(p.server_conn().unwrap().multipath_path_abandoned(0));
    let sent0 = on0.get();
    send_and_receive(&mut p, 20, 20);
    assert_eq!(on0.get(), sent0, "nothing on path 0 once abandoned");
    // And the other way, server to client.
    let now = p.now;
    for i in 0..10u8 {
        p.server_conn()
            .unwrap()
            .send_datagram(now, vec![i; 300])
            .unwrap();
    }
    run_for(&mut p, DELAY * 20);
    let c = p.client_conn();
    let got: Vec<Vec<u8>> = std::iter::from_fn(|| c.recv_datagram()).collect();
    assert_eq!(got, (0..10u8).map(|i| vec![i; 300]).collect::<Vec<_>>());
}
