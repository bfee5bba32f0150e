//! Sending DATAGRAM frames (RFC 9221) end to end in the pair harness: both ways, the
//! size limits, a peer without the transport parameter, the send queue's drop-oldest
//! bound, no retransmission, and congestion control.

use crate::common;

use common::config;
use quiclab_proto::events::{Event, FrameKind, SharedSink, VecSink};
use quiclab_proto::testing::{LinkConfig, Pair};
use quiclab_proto::{Connection, DatagramError, DatagramSendConfig, TransportConfig};
use std::time::Duration;

fn with_datagrams(max_frame: Option<u64>) -> TransportConfig {
    TransportConfig {
        max_datagram_frame_size: max_frame,
        ..config()
    }
}

fn links() -> [LinkConfig; 2] {
    [
        LinkConfig::delay(Duration::from_millis(10)),
        LinkConfig::delay(Duration::from_millis(10)),
    ]
}

/// A pair whose handshake is confirmed on both sides.
fn connected(client: TransportConfig, server: TransportConfig) -> Pair {
    let mut pair = Pair::new(client, server, links(), 1);
    let limit = pair.now + Duration::from_secs(10);
    pair.run_until(limit, |p| {
        p.client_conn().is_handshake_confirmed()
            && p.server_conn().is_some_and(|s| s.is_handshake_confirmed())
    })
    .expect("handshake");
    pair
}

/// Runs the pair for `d` of virtual time (no step past its end).
fn run_for(pair: &mut Pair, d: Duration) {
    let until = pair.now + d;
    pair.flush();
    while pair.next_event_time().is_some_and(|t| t <= until) {
        pair.step();
    }
    pair.now = until;
}

fn drain(conn: &mut Connection) -> Vec<Vec<u8>> {
    std::iter::from_fn(|| conn.recv_datagram()).collect()
}

#[test]
fn datagrams_arrive_both_ways() {
    let cfg = with_datagrams(Some(65_535));
    let mut pair = connected(cfg.clone(), cfg);
    let now = pair.now;
    for i in 0..10u8 {
        pair.client_conn().send_datagram(now, vec![i; 100]).unwrap();
        let s = pair.server_conn().unwrap();
        s.send_datagram(now, vec![100 + i; 200]).unwrap();
    }
    run_for(&mut pair, Duration::from_millis(100));
    let at_server = drain(pair.server_conn().unwrap());
    let at_client = drain(pair.client_conn());
    assert_eq!(
        at_server,
        (0..10u8).map(|i| vec![i; 100]).collect::<Vec<_>>()
    );
    assert_eq!(
        at_client,
        (0..10u8).map(|i| vec![100 + i; 200]).collect::<Vec<_>>()
    );
    assert_eq!(pair.client_conn().stats().datagram_frames_sent, 10);
    assert_eq!(pair.server_conn().unwrap().stats().datagram_frames_sent, 10);
}

#[test]
fn the_largest_payload_fits_one_packet_and_one_byte_more_is_refused() {
    let cfg = with_datagrams(Some(65_535));
    let mut pair = connected(cfg.clone(), cfg);
    let now = pair.now;
    let c = pair.client_conn();
    // 1200-byte datagrams: short header (1 + 8-byte DCID + 4-byte packet number),
    // 16-byte tag, a spare byte, then type and a 2-byte Length.
    let max = c.max_datagram_payload().unwrap();
    assert_eq!(max, 1200 - 13 - 16 - 1 - 3);
    assert_eq!(
        c.send_datagram(now, vec![0; max + 1]),
        Err(DatagramError::TooLarge { size: max + 1, max })
    );
    c.send_datagram(now, vec![7; max]).unwrap();
    run_for(&mut pair, Duration::from_millis(100));
    assert_eq!(drain(pair.server_conn().unwrap()), vec![vec![7; max]]);
    assert_eq!(pair.link_stats[0].max_datagram, 1200);
}

#[test]
fn the_peers_max_datagram_frame_size_bounds_the_payload() {
    // The server accepts frames of 60 bytes: type, 1-byte Length, 58 bytes.
    let mut pair = connected(with_datagrams(Some(65_535)), with_datagrams(Some(60)));
    let now = pair.now;
    let c = pair.client_conn();
    assert_eq!(c.max_datagram_payload(), Ok(58));
    assert!(matches!(
        c.send_datagram(now, vec![0; 59]),
        Err(DatagramError::TooLarge { size: 59, max: 58 })
    ));
    c.send_datagram(now, vec![1; 58]).unwrap();
    run_for(&mut pair, Duration::from_millis(100));
    assert_eq!(drain(pair.server_conn().unwrap()), vec![vec![1; 58]]);
    assert!(!pair.server_conn().unwrap().is_closed());
}

#[test]
fn a_peer_without_the_parameter_gets_none() {
    // The server does not offer DATAGRAM; the client does.
    let mut pair = Pair::new(with_datagrams(Some(65_535)), config(), links(), 2);
    let now = pair.now;
    assert_eq!(
        pair.client_conn().send_datagram(now, vec![1]),
        Err(DatagramError::PeerParamsUnknown)
    );
    let limit = pair.now + Duration::from_secs(10);
    pair.run_until(limit, |p| p.client_conn().is_handshake_confirmed())
        .unwrap();
    let now = pair.now;
    assert_eq!(
        pair.client_conn().send_datagram(now, vec![1]),
        Err(DatagramError::UnsupportedByPeer)
    );
    assert_eq!(
        pair.client_conn().max_datagram_payload(),
        Err(DatagramError::UnsupportedByPeer)
    );
    // The server may send: the client offered the parameter.
    let s = pair.server_conn().unwrap();
    s.send_datagram(now, vec![2; 10]).unwrap();
    run_for(&mut pair, Duration::from_millis(100));
    assert_eq!(drain(pair.client_conn()), vec![vec![2; 10]]);
    // A parameter of 0 means no support either (RFC 9221 §3).
    let mut pair = connected(with_datagrams(Some(65_535)), with_datagrams(Some(0)));
    let now = pair.now;
    assert_eq!(
        pair.client_conn().send_datagram(now, vec![1]),
        Err(DatagramError::UnsupportedByPeer)
    );
}

#[test]
fn a_full_send_queue_drops_the_oldest_and_stays_bounded() {
    let client = TransportConfig {
        datagram_send: DatagramSendConfig {
            queue_datagrams: 4,
            queue_bytes: 10_000,
        },
        ..with_datagrams(Some(65_535))
    };
    let mut pair = connected(client, with_datagrams(Some(65_535)));
    let sink = SharedSink::new(VecSink::new());
    let now = pair.now;
    pair.client_conn()
        .set_event_sink(now, Box::new(sink.clone()));
    // Ten queued before the connection may send: the four newest stay.
    for i in 0..10u8 {
        pair.client_conn().send_datagram(now, vec![i; 50]).unwrap();
    }
    assert_eq!(pair.client_conn().datagram_send_queued(), (4, 200));
    assert_eq!(pair.client_conn().stats().datagram_send_drops, 6);
    let dropped = sink
        .lock()
        .events
        .iter()
        .filter(|(_, e)| matches!(e, Event::DatagramDropped { length: 50, .. }))
        .count();
    assert_eq!(dropped, 6);
    run_for(&mut pair, Duration::from_millis(100));
    assert_eq!(
        drain(pair.server_conn().unwrap()),
        (6..10u8).map(|i| vec![i; 50]).collect::<Vec<_>>()
    );
    // The four sent frames are in the packet_sent events (qlog `datagram`).
    let in_packets: usize = sink
        .lock()
        .events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::PacketSent { frames, .. } => Some(frames),
            _ => None,
        })
        .flatten()
        .filter(|f| f.name == "datagram" && f.kind == FrameKind::Datagram { length: 50 })
        .count();
    assert_eq!(in_packets, 4);
    // The byte bound: 1000 payloads of 1000 bytes never hold more than 10 000 bytes.
    let now = pair.now;
    for i in 0..1000u32 {
        let c = pair.client_conn();
        c.send_datagram(now, vec![i as u8; 1000]).unwrap();
        assert!(c.datagram_send_queued().1 <= 10_000);
    }
    assert_eq!(pair.client_conn().datagram_send_queued(), (4, 4000));
    assert_eq!(pair.client_conn().stats().datagram_send_drops, 6 + 996);
}

#[test]
fn a_lost_datagram_is_not_retransmitted() {
    let cfg = with_datagrams(Some(65_535));
    let mut pair = connected(cfg.clone(), cfg);
    pair.links[0].loss = 1.0;
    let now = pair.now;
    pair.client_conn().send_datagram(now, vec![1; 100]).unwrap();
    pair.flush();
    pair.links[0].loss = 0.0;
    // Long enough for loss detection and probes (a few PTOs at a 20 ms RTT).
    run_for(&mut pair, Duration::from_secs(2));
    let now = pair.now;
    pair.client_conn().send_datagram(now, vec![2; 100]).unwrap();
    run_for(&mut pair, Duration::from_millis(100));
    assert_eq!(drain(pair.server_conn().unwrap()), vec![vec![2; 100]]);
    let st = pair.client_conn().stats().clone();
    assert_eq!(st.datagram_frames_sent, 2, "{st:?}");
    assert!(st.packets_lost >= 1 || st.pto_count_total >= 1, "{st:?}");
}

#[test]
fn datagram_only_packets_are_ack_eliciting_and_congestion_controlled() {
    let cfg = TransportConfig {
        pacing: false,
        datagram_send: DatagramSendConfig {
            queue_datagrams: 10_000,
            queue_bytes: 100 << 20,
        },
        ..with_datagrams(Some(65_535))
    };
    let mut pair = connected(cfg.clone(), cfg);
    run_for(&mut pair, Duration::from_millis(200));
    assert_eq!(pair.client_conn().close_reason(), None);
    assert_eq!(pair.client_conn().bytes_in_flight(), 0);
    // The server hears nothing: whatever leaves stays in flight.
    pair.links[0].loss = 1.0;
    let now = pair.now;
    let cwnd = pair.client_conn().congestion_window();
    for i in 0..1000u32 {
        pair.client_conn()
            .send_datagram(now, i.to_be_bytes().repeat(250))
            .unwrap();
    }
    let sent_before = pair.link_stats[0].sent;
    pair.flush();
    let c = pair.client_conn();
    let in_flight = c.bytes_in_flight();
    let sent = c.stats().datagram_frames_sent;
    // The window filled and stopped the sender, with most datagrams still queued.
    assert!(
        in_flight >= cwnd - 1200 && in_flight < cwnd + 1200,
        "{in_flight} / {cwnd}"
    );
    assert!(sent > 0 && sent < 1000, "{sent}");
    assert_eq!(c.datagram_send_queued().0 as u64, 1000 - sent);
    assert_eq!(pair.link_stats[0].sent - sent_before, sent);
    // Datagram-only packets elicit ACKs: once the link heals, the ACKs drain the
    // flight and the queue empties.
    pair.links[0].loss = 0.0;
    run_for(&mut pair, Duration::from_secs(5));
    let c = pair.client_conn();
    assert_eq!(c.datagram_send_queued(), (0, 0));
    assert_eq!(c.bytes_in_flight(), 0);
    assert!(c.stats().datagram_frames_sent == 1000);
    let got = drain(pair.server_conn().unwrap()).len() as u64;
    assert_eq!(got, 1000 - sent);
}
