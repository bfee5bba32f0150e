//! `poll_path_packet`'s one-path shortcut against the general path it stands for.

use super::*;
use crate::config::TransportConfig;
use crate::testing::{LinkConfig, Pair};
use std::time::Duration;

/// A one-path pair past its handshake (same seed: two calls give the same state).
fn connected() -> Pair {
    let link = LinkConfig::delay(Duration::from_millis(10));
    let cfg = TransportConfig::default();
    let mut p = Pair::new(cfg.clone(), cfg, [link.clone(), link], 7);
    p.run_until(Instant::from_millis(2_000), |p| {
        p.client_conn().is_handshake_complete()
            && p.server_conn().is_some_and(|s| s.is_handshake_complete())
    })
    .expect("handshake");
    p
}

#[test]
fn one_path_shortcut_leaves_what_the_general_path_leaves() {
    let (mut a, mut b) = (connected(), connected());
    let now = a.now;
    assert_eq!(now, b.now);
    for p in [&mut a, &mut b] {
        let c = p.client_conn();
        assert_eq!(c.path_spaces.len(), 0);
        assert!(!c.multipath.path0_abandoned);
        // Stale deadlines: the general path recomputes them from no path (stopped).
        c.timers.set(
            Timer::PathLoss,
            now.saturating_add(Duration::from_millis(1)),
        );
        c.timers.set(
            Timer::PathPacing,
            now.saturating_add(Duration::from_millis(2)),
        );
    }
    let (mut buf_a, mut buf_b) = (Vec::new(), Vec::new());
    let fast = a.client_conn().poll_path_packet(now, &mut buf_a);
    let general = b.client_conn().poll_path_packet_general(now, &mut buf_b);
    assert!(fast.is_none());
    assert!(general.is_none());
    assert_eq!(buf_a, buf_b);
    for t in [Timer::PathLoss, Timer::PathPacing] {
        let (ta, tb) = (a.client_conn().timers.get(t), b.client_conn().timers.get(t));
        assert_eq!(ta, tb);
        assert_eq!(ta, None);
    }
}
