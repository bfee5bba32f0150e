//! The endpoint's O(active) scheduling (src/endpoint/schedule.rs): its deadline index
//! agrees with a scan of every connection after every step, an application that
//! visits only `take_touched` connections misses no event and completes a transfer,
//! and idle connections are visited only for their own timers while another transfers.

use quiclab_proto::{ConnectionHandle, Dir, Endpoint, Instant, TransportConfig};
use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::time::Duration;

/// The one connection that transfers.
const ACTIVE: usize = 3;
const SIZE: usize = 2_000_000;

/// The index's earliest deadline is the earliest of all connections' deadlines, and the
/// flags kept beside each connection agree with the indexes.
fn check_deadline(ep: &Endpoint) {
    if let Err(e) = ep.check_schedule() {
        panic!("schedule: {e}");
    }
    let scan = ep
        .handles()
        .filter_map(|h| ep.connection(h).and_then(|c| c.poll_timeout()))
        .min();
    assert_eq!(ep.poll_timeout(), scan);
}

/// Every connection left out of `touched` has no event waiting.
fn check_untouched(ep: &Endpoint, touched: &BTreeSet<ConnectionHandle>) {
    for h in ep.handles().filter(|h| !touched.contains(h)) {
        assert!(!ep.connection(h).unwrap().has_events(), "{h:?} has events");
    }
}

/// Delivers everything `from` sends to `to`.
fn flush(from: &mut Endpoint, to: &mut Endpoint, src: SocketAddr, now: Instant) {
    let mut buf = Vec::new();
    while let Some(t) = from.poll_transmit(now, &mut buf) {
        let _ = to.handle_datagram(now, src, quiclab_proto::Ecn::NotEct, &mut buf[..t.size]);
        buf.clear();
    }
}

#[test]
fn touched_connections_are_enough_and_idle_ones_stay_out() {
    transfer_among(8);
}

/// The same with 40 connections: past the 32 entries up to which the endpoint's indexes
/// are sorted `Vec`s (src/endpoint/small_map.rs), so they are B-trees while every
/// connection handshakes and `Vec`s again once all but one are idle.
#[test]
fn touched_connections_are_enough_with_indexes_as_b_trees() {
    transfer_among(40);
}

/// `conns` connections from one client endpoint to one server endpoint, one of which
/// transfers `SIZE` bytes, with the deadline index checked against a scan every turn.
fn transfer_among(conns_n: usize) {
    let server_addr: SocketAddr = "10.0.0.1:443".parse().unwrap();
    let client_addr: SocketAddr = "10.0.0.2:5000".parse().unwrap();
    let (mut server, mut client, ctls) = crate::common::endpoint_pair(TransportConfig::default());
    let mut now = Instant::ZERO;
    let conns: Vec<_> = (0..conns_n)
        .map(|_| {
            client
                .connect(now, ctls.clone(), "localhost", server_addr)
                .unwrap()
        })
        .collect();
    let mut stream = None;
    let mut written = 0;
    let mut received = 0;
    let mut server_active: Option<ConnectionHandle> = None;
    let mut server_stream = None;
    // Turns in the transfer's steady state in which an idle connection was visited.
    let (mut steady_turns, mut idle_visits) = (0, 0);
    for _ in 0..50_000 {
        now += Duration::from_micros(500);
        client.handle_timeout(now);
        server.handle_timeout(now);
        check_deadline(&client);
        check_deadline(&server);
        let c = client.connection_mut(conns[ACTIVE]).unwrap();
        if stream.is_none() && c.is_handshake_complete() {
            stream = c.open_stream(Dir::Uni);
        }
        if let Some(s) = stream {
            if written < SIZE {
                // Application-limited, so the transfer spans many turns.
                let n = (SIZE - written).min(20_000);
                written += c.write(s, &vec![7u8; n]).unwrap_or(0);
                if written == SIZE {
                    c.finish(s).unwrap();
                }
            }
        }
        flush(&mut client, &mut server, client_addr, now);
        while server.accept().is_some() {}
        let touched = server.take_touched();
        check_untouched(&server, &touched);
        let steady = received > SIZE / 4 && received < SIZE * 3 / 4;
        steady_turns += usize::from(steady);
        for &h in &touched {
            let c = server.connection_mut(h).unwrap();
            while c.poll_event().is_some() {}
            if let Some(s) = c.accept_stream(Dir::Uni) {
                server_active = Some(h);
                server_stream = Some(s);
            }
            if Some(h) != server_active {
                idle_visits += usize::from(steady);
                continue;
            }
            let Some(s) = server_stream else {
                continue;
            };
            let mut chunk = [0u8; 16384];
            while let Ok(r) = c.read(s, &mut chunk) {
                received += r.bytes;
                if r.bytes == 0 || r.fin {
                    break;
                }
            }
        }
        flush(&mut server, &mut client, server_addr, now);
        check_deadline(&client);
        check_deadline(&server);
        if received == SIZE {
            break;
        }
    }
    assert_eq!(
        received, SIZE,
        "the transfer completes visiting touched connections only"
    );
    assert!(
        steady_turns > 40,
        "the transfer took {steady_turns} steady turns"
    );
    // An idle connection comes back only for its own timers (a few times), not every
    // turn as in a scan of all connections ((conns_n - 1) * steady_turns visits).
    assert!(
        idle_visits <= 2 * (conns_n - 1),
        "{idle_visits} visits of idle connections in {steady_turns} turns"
    );
}

/// A connection that settled keeps its entry in the ready set until the round robin
/// meets it (src/endpoint/schedule.rs, `Schedule::skip_settled`); a datagram alone must
/// make it ready again. The server here never calls `connection_mut` (which would mark
/// it stale, and so ready, anyway): after the handshake it goes quiet, then two
/// ack-eliciting packets must be answered by an ACK at once (RFC 9000 §13.2.2).
#[test]
fn a_settled_connection_woken_by_a_datagram_sends() {
    let server_addr: SocketAddr = "10.0.0.1:443".parse().unwrap();
    let client_addr: SocketAddr = "10.0.0.2:5000".parse().unwrap();
    let (mut server, mut client, ctls) = crate::common::endpoint_pair(TransportConfig::default());
    let mut now = Instant::ZERO;
    let h = client.connect(now, ctls, "localhost", server_addr).unwrap();
    // The handshake, then long enough for every delayed ACK to go out.
    for _ in 0..200 {
        now += Duration::from_millis(5);
        client.handle_timeout(now);
        server.handle_timeout(now);
        flush(&mut client, &mut server, client_addr, now);
        while server.accept().is_some() {}
        flush(&mut server, &mut client, server_addr, now);
        check_deadline(&server);
    }
    assert!(client.connection(h).unwrap().is_handshake_complete());
    let mut buf = Vec::new();
    assert!(
        server.poll_transmit(now, &mut buf).is_none(),
        "the server is quiet"
    );
    let c = client.connection_mut(h).unwrap();
    let s = c.open_stream(Dir::Uni).unwrap();
    c.write(s, &[7u8; 5_000]).unwrap();
    flush(&mut client, &mut server, client_addr, now);
    check_deadline(&server);
    assert!(
        server.poll_transmit(now, &mut buf).is_some(),
        "the woken server acknowledges at once"
    );
}
