//! 1-RTT key updates from both sides and the AEAD limits (RFC 9001 §6) in the pair
//! harness.

use crate::common;

use common::{config, fetch};
use quiclab_proto::events::{Event, KeyType, SharedSink, VecSink};
use quiclab_proto::testing::{LinkConfig, Pair};
use quiclab_proto::{CloseReason, Instant, KeyUpdateConfig, TransportConfig, TransportErrorCode};
use std::time::Duration;

fn with_key_update(ku: KeyUpdateConfig) -> TransportConfig {
    TransportConfig {
        key_update: ku,
        ..config()
    }
}

fn every(n: u64) -> TransportConfig {
    with_key_update(KeyUpdateConfig {
        every_packets: Some(n),
        ..Default::default()
    })
}

fn links() -> [LinkConfig; 2] {
    let l = LinkConfig::delay(Duration::from_millis(10));
    [l.clone(), l]
}

/// Lets the last packets (which may carry the newest key phase) arrive.
fn settle(pair: &mut Pair) {
    let until = pair.now + Duration::from_secs(2);
    let _ = pair.run_until(until, |_| false);
}

#[test]
fn client_initiated_updates_during_a_download() {
    let mut pair = Pair::new(every(20), config(), links(), 1);
    let sink = SharedSink::new(VecSink::new());
    let now = pair.now;
    pair.client_conn()
        .set_event_sink(now, Box::new(sink.clone()));
    fetch(&mut pair, 1_000_000).unwrap();
    settle(&mut pair);
    let client = pair.client_conn().stats().clone();
    let server = pair.server_conn().unwrap().stats().clone();
    assert!(client.key_updates_initiated >= 3, "{client:?}");
    // The last update may have come with nothing left to send (the download over):
    // then the server has not seen it yet, and the two key phases differ.
    let unseen = pair.server_conn().unwrap().key_phase() != pair.client_conn().key_phase();
    assert_eq!(
        server.key_updates + u64::from(unseen),
        client.key_updates_initiated
    );
    assert_eq!(server.key_updates_initiated, 0);
    // qlog evidence: key_updated for both directions, 1 (TLS) + one per update.
    let one_rtt = sink
        .lock()
        .events
        .iter()
        .filter(|(_, e)| {
            matches!(
                e,
                Event::KeyUpdated {
                    key: KeyType::OneRtt,
                    ..
                }
            )
        })
        .count() as u64;
    assert_eq!(one_rtt, 2 * (1 + client.key_updates_initiated));
}

#[test]
fn server_initiated_updates_during_a_download() {
    let mut pair = Pair::new(config(), every(100), links(), 2);
    fetch(&mut pair, 1_000_000).unwrap();
    settle(&mut pair);
    let client = pair.client_conn().stats().clone();
    let server = pair.server_conn().unwrap().stats().clone();
    assert!(server.key_updates_initiated >= 3, "{server:?}");
    // The last update may have come with nothing left to send: then the client has
    // not seen it yet, and the two key phases differ.
    let unseen = pair.server_conn().unwrap().key_phase() != pair.client_conn().key_phase();
    assert_eq!(
        client.key_updates + u64::from(unseen),
        server.key_updates_initiated
    );
    assert!(client.local_error.is_none() && server.local_error.is_none());
}

#[test]
fn both_sides_initiate_over_a_lossy_path() {
    let link = LinkConfig {
        delay: Duration::from_millis(10),
        loss: 0.05,
        reorder: 0.1,
        reorder_extra: Duration::from_millis(8),
        duplicate: 0.02,
        mtu: None,
        ..LinkConfig::default()
    };
    let mut pair = Pair::new(every(15), every(40), [link.clone(), link], 3);
    fetch(&mut pair, 1_000_000).unwrap();
    let client = pair.client_conn().stats().clone();
    let server = pair.server_conn().unwrap().stats().clone();
    assert!(client.key_updates_initiated >= 2, "{client:?}");
    assert!(server.key_updates_initiated >= 2, "{server:?}");
    assert!(client.local_error.is_none() && server.local_error.is_none());
}

#[test]
fn confidentiality_limit_forces_an_update() {
    // The limit must exceed the packets in flight (the update waits for an ACK of the
    // current phase, §6.1): a 256 KB receive window keeps them near 220.
    let mut client = config();
    client.flow.initial_max_data = 256 << 10;
    client.flow.initial_max_stream_data = 256 << 10;
    client.flow.autotune = false;
    let server = with_key_update(KeyUpdateConfig {
        confidentiality_limit: Some(1000),
        ..Default::default()
    });
    let mut pair = Pair::new(client, server, links(), 4);
    fetch(&mut pair, 5_000_000).unwrap();
    let s = pair.server_conn().unwrap().stats().clone();
    // ~4300 packets: an update after 750 packets of each phase.
    assert!(s.key_updates_initiated >= 4, "{s:?}");
    assert!(s.local_error.is_none());
}

#[test]
fn confidentiality_limit_without_possible_update_closes() {
    let server = with_key_update(KeyUpdateConfig {
        confidentiality_limit: Some(12),
        ..Default::default()
    });
    let mut pair = Pair::new(config(), server, links(), 5);
    pair.run_until(Instant::from_millis(1_000), |p| {
        p.server_conn().is_some_and(|s| s.is_handshake_confirmed())
    })
    .unwrap();
    // From now on the client's ACKs are lost: no update can ever be confirmed.
    pair.links[0].loss = 1.0;
    let _ = fetch(&mut pair, 1_000_000);
    let reason = pair.server_conn().unwrap().close_reason().cloned();
    let Some(CloseReason::Transport { error, .. }) = reason else {
        panic!("{reason:?}")
    };
    assert_eq!(error.code, TransportErrorCode::AEAD_LIMIT_REACHED);
}

#[test]
fn integrity_limit_closes_after_forged_packets() {
    let client = with_key_update(KeyUpdateConfig {
        integrity_limit: Some(5),
        ..Default::default()
    });
    let mut pair = Pair::new(client, config(), links(), 6);
    fetch(&mut pair, 10_000).unwrap();
    let cid = pair.client_conn().local_cid();
    let server = pair.server_addr;
    for i in 0..6u8 {
        // A short header for the client's connection ID with a garbage payload.
        let mut d = vec![0x40];
        d.extend_from_slice(cid.as_bytes());
        d.extend((0..60).map(|j| j ^ i));
        let now = pair.now;
        let _ = pair
            .client
            .handle_datagram(now, server, quiclab_proto::Ecn::NotEct, &mut d);
        let closed = pair.client_conn().is_closed();
        assert_eq!(closed, i == 5, "forged packet {i}");
    }
    let reason = pair.client_conn().close_reason().cloned();
    let Some(CloseReason::Transport { error, .. }) = reason else {
        panic!("{reason:?}")
    };
    assert_eq!(error.code, TransportErrorCode::AEAD_LIMIT_REACHED);
}
