//! Memory stays bounded whatever the peer sends: DATAGRAM payloads the application does
//! not read and PATH_CHALLENGE floods; discarded spaces keep no ACK storage. In-crate so frames can be fed to `on_frame`.

use super::*;
use crate::config::TransportConfig;
use crate::connection::path::MAX_PENDING_PATH_RESPONSES;
use crate::connection::{SpaceId, MAX_QUEUED_DATAGRAMS};
use crate::testing::{LinkConfig, Pair};
use crate::wire::{ConnectionId, Frame};
use std::time::Duration;

/// A pair whose handshake is done, both sides offering DATAGRAM frames.
fn connected() -> Pair {
    let cfg = TransportConfig {
        max_datagram_frame_size: Some(1200),
        ..TransportConfig::default()
    };
    let link = LinkConfig::delay(Duration::from_millis(10));
    let mut p = Pair::new(cfg.clone(), cfg, [link.clone(), link], 3);
    p.run_until(Instant::from_millis(2000), |p| {
        p.client_conn().is_handshake_confirmed()
    })
    .unwrap();
    p
}

#[test]
fn unread_datagrams_are_dropped_oldest_first() {
    let mut p = connected();
    let now = p.now;
    let s = p.server_conn().unwrap();
    let dcid = ConnectionId::new(&[0; 8]).unwrap();
    let total = MAX_QUEUED_DATAGRAMS as u32 + 10;
    for i in 0..total {
        let data = i.to_be_bytes();
        let frame = Frame::Datagram { data: &data };
        s.on_frame(now, SpaceId::Data, &dcid, frame, &mut false)
            .unwrap();
    }
    assert_eq!(s.stats().datagrams_dropped, 10);
    let first = s.recv_datagram().unwrap();
    assert_eq!(first, 10u32.to_be_bytes(), "the oldest ten were dropped");
    let mut rest = 1;
    while s.recv_datagram().is_some() {
        rest += 1;
    }
    assert_eq!(rest, MAX_QUEUED_DATAGRAMS);
}

#[test]
fn a_path_challenge_flood_keeps_only_the_newest() {
    let mut p = connected();
    let now = p.now;
    let s = p.server_conn().unwrap();
    let dcid = ConnectionId::new(&[0; 8]).unwrap();
    for i in 0..1000u64 {
        let frame = Frame::PathChallenge(i.to_be_bytes());
        s.on_frame(now, SpaceId::Data, &dcid, frame, &mut false)
            .unwrap();
    }
    assert_eq!(s.path.responses.len(), MAX_PENDING_PATH_RESPONSES);
    assert_eq!(s.path.responses.last(), Some(&999u64.to_be_bytes()));
    assert_eq!(
        s.path.responses.first(),
        Some(&(1000 - MAX_PENDING_PATH_RESPONSES as u64).to_be_bytes())
    );
}

/// RFC 9001 §4.9: once the Initial and Handshake spaces are discarded, neither side
/// keeps their ACK range list (it stayed allocated for the connection's lifetime).
#[test]
fn discarded_spaces_keep_no_ack_range_list() {
    let mut p = connected();
    p.run_until(Instant::from_millis(2000), |p| {
        p.server_conn().is_some_and(|s| s.handshake.confirmed)
    })
    .unwrap();
    let c = p.client_conn();
    let kept = |c: &Connection, sp: SpaceId| c.spaces[sp as usize].acks.kept_ranges_capacity();
    for sp in [SpaceId::Initial, SpaceId::Handshake] {
        assert!(c.spaces[sp as usize].discarded, "client {sp:?}");
        assert_eq!(kept(c, sp), 0, "client {sp:?}");
    }
    let s = p.server_conn().unwrap();
    for sp in [SpaceId::Initial, SpaceId::Handshake] {
        assert!(s.spaces[sp as usize].discarded, "server {sp:?}");
        assert_eq!(kept(s, sp), 0, "server {sp:?}");
    }
}
