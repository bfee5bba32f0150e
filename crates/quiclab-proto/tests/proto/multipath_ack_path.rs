//! `multipath.ack_path` (`src/connection/multipath_ack_path.rs`; draft-ietf-quic-multipath
//! §3.1: PATH_ACK may be returned on any path; §5.4: an acknowledgment returned on another path
//! makes the RTT sample one path's forward delay plus the other's return delay) with
//! the in-memory pair: path 0 has 30 ms more one-way delay (80 ms RTT) than path 1
//! (20 ms). The client uploads 1 MB round robin over both; both sides run the mode.
//! What each path's smoothed RTT becomes shows where its acknowledgments travelled:
//! - `any` (default, as before): every acknowledgment on path 0, so path 1's samples
//!   are 10 + 40 = 50 ms and path 0's 80 ms;
//! - `same`: path 1's on path 1 (20 ms), path 0's on path 0 (80 ms);
//! - `min_rtt`: every acknowledgment on path 1, so path 1's 20 ms and path 0's
//!   40 + 10 = 50 ms.

use crate::misbehaving::pair;
use crate::multipath::{
    config, confirm_handshake, open_second_path, payload, second_address, upload,
};

use quiclab_proto::testing::Pair;
use quiclab_proto::{AckPath, MultipathScheduler};
use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

/// Two paths, path 0 slow, both sides with `mode`; path 1 validated.
fn slow_path0(mode: AckPath, seed: u64) -> Pair {
    let mut c = config(Some(3));
    c.multipath.scheduler = MultipathScheduler::RoundRobin;
    c.multipath.ack_path = mode;
    let mut s = config(Some(3));
    s.multipath.ack_path = mode;
    let mut p = pair(c, s, seed);
    let first = p.client_addr;
    p.address_delay.insert(first, Duration::from_millis(30));
    confirm_handshake(&mut p);
    open_second_path(
        &mut p,
        Duration::from_millis(200),
        Duration::from_millis(400),
    );
    assert!(p.client_conn().multipath_path_validated(1));
    p
}

#[test]
fn acknowledgments_travel_on_the_configured_path() {
    let ms = Duration::from_millis;
    // (mode, path 0's expected RTT, path 1's).
    let cases = [
        (AckPath::Any, ms(80), ms(50)),
        (AckPath::Same, ms(80), ms(20)),
        (AckPath::MinRtt, ms(50), ms(20)),
    ];
    for (i, (mode, rtt0, rtt1)) in cases.into_iter().enumerate() {
        let mut p = slow_path0(mode, 90 + i as u64);
        // The server's datagrams to the client's second address during the upload.
        let on1 = Rc::new(Cell::new(0u64));
        let n = on1.clone();
        p.drop_filter = Some(Box::new(move |_, _, to, _| {
            if to == second_address() {
                n.set(n.get() + 1);
            }
            false
        }));
        let data = payload();
        let got = upload(&mut p, &data, |_, _| {});
        assert!(got == data, "{mode:?}: byte-exact");
        let c = p.client_conn();
        let got0 = c.rtt().smoothed();
        let (got1, _) = c.multipath_path_rtt(1).expect("a sample on path 1");
        // Smoothed RTTs: at least the propagation, at most 30 ms of ACK delay and
        // queueing more.
        for (path, got, want) in [(0, got0, rtt0), (1, got1, rtt1)] {
            assert!(
                got + ms(3) >= want && got <= want + ms(30),
                "{mode:?}: path {path} srtt {got:?}, expected about {want:?}"
            );
        }
        eprintln!(
            "{mode:?}: srtt {got0:?} / {got1:?}, {} datagrams back on path 1",
            on1.get()
        );
        if mode == AckPath::Any {
            // Acknowledgments never; the server's own few packets there (a PTO probe).
            assert!(on1.get() <= 5, "{} on path 1", on1.get());
        } else {
            assert!(on1.get() > 50, "{mode:?}: {} on path 1", on1.get());
        }
        let c = p.client_conn();
        assert!(!c.is_closed(), "{mode:?}: {:?}", c.close_reason());
    }
}
