//! What a peer can make a server hold without a handshake (issue 40): CRYPTO data
//! that never becomes contiguous, packets waiting for keys, and the time a handshake
//! slot stays taken. Client Initials are built here: their keys come from the DCID
//! (RFC 9001 §5.2), so anyone can send valid ones.

use crate::common;

use common::{config, fetch};
use quiclab_proto::raw::{initial_keys, seal, write_long_header, Frame, TAG_LEN};
use quiclab_proto::testing::{LinkConfig, Pair};
use quiclab_proto::{
    varint, CloseReason, ConnectionHandle, ConnectionId, Instant, PacketType, Side,
    TransportConfig, TransportErrorCode, Unrouted, MAX_CRYPTO_BUFFER, VERSION_1,
};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

fn attacker() -> SocketAddr {
    "10.0.0.66:5555".parse().unwrap()
}

fn cid(n: u64) -> ConnectionId {
    ConnectionId::new(&n.to_be_bytes()).unwrap()
}

/// A client Initial to `dcid` with packet number `pn` carrying `frames`, padded to
/// 1200 bytes and protected with `dcid`'s client Initial keys.
fn initial(dcid: &ConnectionId, pn: u64, frames: &[Frame<'_>]) -> Vec<u8> {
    let mut p = Vec::new();
    let o = write_long_header(
        &mut p,
        PacketType::Initial,
        VERSION_1,
        dcid,
        &cid(7),
        &[],
        pn,
        4,
    );
    for f in frames {
        f.encode(&mut p);
    }
    p.resize(p.len().max(1200 - TAG_LEN), 0); // PADDING
    let length = (p.len() + TAG_LEN - o.pn_offset) as u64;
    varint::patch_u14(&mut p, o.length_offset, length);
    p.resize(p.len() + TAG_LEN, 0);
    let keys = initial_keys(VERSION_1, dcid, Side::Client);
    seal(
        &*keys.local.packet,
        &*keys.local.header,
        &mut p,
        o.pn_offset,
        pn,
    )
    .unwrap();
    p
}

/// Initials from one connection carrying CRYPTO frames that never become contiguous:
/// offset 0 stays empty, and each packet has two 500-byte frames at offsets k and
/// k + 1 (k = 1, 3, 5, ...), the whole window over.
fn gap_flood(dcid: &ConnectionId) -> impl Iterator<Item = Vec<u8>> + '_ {
    let data = [0x5a; 500];
    let last = MAX_CRYPTO_BUFFER - 501;
    (1..=last).step_by(2).enumerate().map(move |(pn, k)| {
        let frames = [
            Frame::Crypto {
                offset: k,
                data: &data,
            },
            Frame::Crypto {
                offset: k + 1,
                data: &data,
            },
        ];
        initial(dcid, pn as u64, &frames)
    })
}

fn pair(server: TransportConfig) -> Pair {
    let l = LinkConfig::delay(Duration::from_millis(5));
    Pair::new(config(), server, [l.clone(), l], 3)
}

fn send(pair: &mut Pair, mut datagram: Vec<u8>) -> Result<ConnectionHandle, Unrouted> {
    let now = pair.now;
    pair.server
        .handle_datagram(now, attacker(), quiclab_proto::Ecn::NotEct, &mut datagram)
}

/// The flood of issue 40 (79 MB grew a server by 81 MB): ~32,000 packets of shifted
/// copies (32 MB of CRYPTO data) are kept once, within the budget, and the server
/// still serves a real client.
#[test]
fn crypto_gap_flood_holds_at_most_the_budget() {
    let mut pair = pair(config());
    let dcid = cid(0x1122_3344_5566_7788);
    let mut handle = None;
    for d in gap_flood(&dcid) {
        handle = Some(send(&mut pair, d).expect("routed to the attacker's connection"));
    }
    let conn = pair.server.connection(handle.unwrap()).unwrap();
    assert!(!conn.is_closed(), "{:?}", conn.close_reason());
    assert!(conn.crypto_buffered_bytes() <= MAX_CRYPTO_BUFFER);
    assert!(conn.crypto_buffered_bytes() > MAX_CRYPTO_BUFFER - 1000);
    assert_eq!(
        pair.server.handshake_buffered_bytes(),
        conn.crypto_buffered_bytes()
    );
    fetch(&mut pair, 100_000).unwrap();
}

#[test]
fn crypto_past_the_budget_closes_and_frees() {
    let mut pair = pair(config());
    let dcid = cid(0x0102_0304_0506_0708);
    let data = [1u8; 1000];
    let first = initial(
        &dcid,
        0,
        &[Frame::Crypto {
            offset: 1,
            data: &data,
        }],
    );
    let h = send(&mut pair, first).unwrap();
    let past = [Frame::Crypto {
        offset: MAX_CRYPTO_BUFFER - 500,
        data: &data,
    }];
    send(&mut pair, initial(&dcid, 1, &past)).unwrap();
    let conn = pair.server.connection(h).unwrap();
    match conn.close_reason() {
        Some(CloseReason::Transport { error, .. }) => {
            assert_eq!(error.code, TransportErrorCode::CRYPTO_BUFFER_EXCEEDED)
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        conn.handshake_buffered_bytes(),
        0,
        "a closing connection frees it"
    );
}

/// RFC 9000 §7.5's budget covers 0-RTT packets waiting for their keys too: CRYPTO data
/// and such packets together stay within it.
#[test]
fn waiting_zero_rtt_packets_share_the_budget() {
    let mut server = config();
    server.zero_rtt = true;
    let mut pair = pair(server);
    let dcid = cid(0x0a0b_0c0d_0e0f_1011);
    let data = [1u8; 1000];
    let frames = [Frame::Crypto {
        offset: MAX_CRYPTO_BUFFER - 10_000,
        data: &data,
    }];
    let h = send(&mut pair, initial(&dcid, 0, &frames)).unwrap();
    for pn in 0..16 {
        // Unreadable before the keys: kept, if the budget allows.
        let mut p = Vec::new();
        let o = write_long_header(
            &mut p,
            PacketType::ZeroRtt,
            VERSION_1,
            &dcid,
            &cid(7),
            &[],
            pn,
            4,
        );
        p.resize(8000, 0xee);
        let length = (p.len() - o.pn_offset) as u64;
        varint::patch_u14(&mut p, o.length_offset, length);
        send(&mut pair, p).unwrap();
    }
    let conn = pair.server.connection(h).unwrap();
    let held = conn.handshake_buffered_bytes();
    assert!(held <= MAX_CRYPTO_BUFFER, "{held}");
    assert!(
        held > conn.crypto_buffered_bytes(),
        "some 0-RTT packets kept: {held}"
    );
    assert!(!conn.is_closed());
}

/// The endpoint's bound: `admission.max_handshaking` connections, each with its
/// CRYPTO window full, hold at most max_handshaking × 64 KiB; more are not admitted.
#[test]
fn handshaking_connections_hold_at_most_max_handshaking_budgets() {
    let server = config();
    let max = server.admission.max_handshaking;
    let mut pair = pair(server);
    let data = [2u8; 1100];
    let mut dropped = 0;
    for n in 0..max as u64 + 8 {
        let dcid = cid(0x4000_0000_0000_0000 + n);
        for (pn, k) in (1..MAX_CRYPTO_BUFFER - 1100).step_by(1100).enumerate() {
            let frames = [Frame::Crypto {
                offset: k,
                data: &data,
            }];
            if send(&mut pair, initial(&dcid, pn as u64, &frames)).is_err() {
                dropped += 1;
                break;
            }
        }
    }
    assert_eq!(
        dropped, 8,
        "the connections past max_handshaking were not admitted"
    );
    let held = pair.server.handshake_buffered_bytes();
    let bound = max as u64 * MAX_CRYPTO_BUFFER;
    assert!(held <= bound, "{held} > {bound}");
    assert!(held > bound * 9 / 10, "each window filled: {held}");
}

/// A peer that keeps sending Initials (a PING every 100 ms) restarts the idle timer
/// each time; the handshake timeout (default 10 s) ends its connection regardless.
#[test]
fn initials_alone_cannot_hold_a_handshake_slot() {
    let mut pair = pair(config());
    let dcid = cid(0x5555_6666_7777_8888);
    let h = send(&mut pair, initial(&dcid, 0, &[Frame::Ping])).unwrap();
    let mut out = Vec::new();
    for pn in 1..=120u64 {
        pair.now = Instant::from_millis(100 * pn);
        let now = pair.now;
        pair.server.handle_timeout(now);
        while pair.server.poll_transmit(now, &mut out).is_some() {
            out.clear();
        }
        let closed = pair.server.connection(h).unwrap().is_closed();
        assert_eq!(closed, now >= Instant::from_millis(10_000), "at {now:?}");
        if !closed {
            send(&mut pair, initial(&dcid, pn, &[Frame::Ping])).unwrap();
        }
    }
    let conn = pair.server.connection(h).unwrap();
    assert_eq!(conn.close_reason(), Some(&CloseReason::HandshakeTimeout));
    assert!(conn.is_drained());
}

/// A client without an idle timeout, to a server that never answers, gives up at the
/// handshake timeout.
#[test]
fn a_client_without_idle_timeout_gives_up() {
    let cfg = TransportConfig {
        idle_timeout_ms: 0,
        handshake_timeout_ms: 3_000,
        ..TransportConfig::default()
    };
    let mut client = quiclab_proto::Endpoint::new(Arc::new(cfg), None, 5);
    let tls = quiclab_proto::tls::client_config(
        quiclab_proto::tls::ServerVerification::Insecure,
        &[b"hq-interop".to_vec()],
        None,
    );
    let nowhere: SocketAddr = "10.0.0.9:4433".parse().unwrap();
    let h = client
        .connect(Instant::ZERO, tls, "localhost", nowhere)
        .unwrap();
    let mut out = Vec::new();
    let mut now = Instant::ZERO;
    while now < Instant::from_millis(600_000) && !client.connection(h).unwrap().is_closed() {
        while client.poll_transmit(now, &mut out).is_some() {
            out.clear();
        }
        let Some(next) = client.poll_timeout() else {
            break;
        };
        now = next.max(now);
        client.handle_timeout(now);
    }
    let conn = client.connection(h).unwrap();
    assert_eq!(conn.close_reason(), Some(&CloseReason::HandshakeTimeout));
    assert_eq!(now, Instant::from_millis(3_000));
}

/// An ICMP port unreachable ends a client that has heard nothing from its server, and
/// only such a client: once anything arrived it is ignored (ICMP can be forged).
#[test]
fn port_unreachable_ends_only_a_client_that_heard_nothing() {
    let mut client = quiclab_proto::Endpoint::new(Arc::new(config()), None, 5);
    let tls = quiclab_proto::tls::client_config(
        quiclab_proto::tls::ServerVerification::Insecure,
        &[b"hq-interop".to_vec()],
        None,
    );
    let closed: SocketAddr = "127.0.0.1:4433".parse().unwrap();
    let h = client
        .connect(Instant::ZERO, tls, "localhost", closed)
        .unwrap();
    let mut out = Vec::new();
    client.poll_transmit(Instant::ZERO, &mut out).unwrap();
    let now = Instant::from_millis(1);
    let other: SocketAddr = "127.0.0.1:4434".parse().unwrap();
    assert!(client.handle_port_unreachable(now, other).is_empty());
    assert_eq!(client.handle_port_unreachable(now, closed), vec![h]);
    let conn = client.connection(h).unwrap();
    assert_eq!(conn.close_reason(), Some(&CloseReason::PortUnreachable));
    assert!(conn.is_drained());

    // A client mid-handshake that has heard from its server carries on.
    let mut pair = pair(config());
    pair.run_until(Instant::from_millis(1000), |p| {
        p.client_conn().stats().datagrams_received.packets > 0
    })
    .unwrap();
    let (now, server) = (pair.now, pair.server_addr);
    assert!(pair.client.handle_port_unreachable(now, server).is_empty());
    assert!(!pair.client_conn().is_closed());
    fetch(&mut pair, 1000).unwrap();
    // A server never acts on it.
    let client_addr = pair.client_addr;
    assert!(pair
        .server
        .handle_port_unreachable(now, client_addr)
        .is_empty());
}
