//! `Endpoint::poll_transmit_burst`, the GSO contract a real-UDP driver relies on:
//! every burst is one destination, full-size segments but the last, at most the
//! asked-for count; connections take turns burst by burst; and the datagrams, split
//! at the segment size, carry a transfer to completion.

use quiclab_proto::raw::parse_header;
use quiclab_proto::{Burst, ConnectionId, Dir, Ecn, EcnMode, Instant, TransportConfig};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

const MAX: usize = 8;
/// The longest burst seen: bulk data must come in multi-segment bursts.
static LONGEST: AtomicUsize = AtomicUsize::new(0);

/// Splits a burst into its datagrams, checking the segment contract.
fn segments(b: &Burst, buf: &[u8]) -> Vec<Vec<u8>> {
    let out: Vec<Vec<u8>> = buf.chunks(b.segment_size).map(<[u8]>::to_vec).collect();
    assert_eq!(out.len(), b.segments, "{b:?} over {} bytes", buf.len());
    assert!(b.segments <= MAX);
    LONGEST.fetch_max(b.segments, Ordering::Relaxed);
    out
}

/// The destination connection ID of a datagram's first packet.
fn dcid(d: &[u8]) -> ConnectionId {
    parse_header(d, 8).expect("a QUIC packet").dcid
}

#[test]
fn bursts_are_gso_shaped_fair_and_deliver_everything() {
    let codepoints = transfer(TransportConfig::default());
    assert!(codepoints.iter().all(|&e| e == Ecn::NotEct));
}

/// With ECN on, every burst carries ECT(0), including one that starts with a datagram
/// that could not join the previous burst (it keeps its codepoint), and the peer's
/// validation, fed each burst's codepoint, never turns ECN off.
#[test]
fn bursts_keep_the_connections_codepoint() {
    let config = TransportConfig {
        ecn: EcnMode::Ect0,
        ..TransportConfig::default()
    };
    let codepoints = transfer(config);
    assert!(codepoints.len() > 20, "{} bursts", codepoints.len());
    let not_ect0 = codepoints.iter().filter(|&&e| e != Ecn::Ect0).count();
    assert_eq!(not_ect0, 0, "of {} bursts", codepoints.len());
}

/// Two connections upload 300 kB each in bursts of at most MAX datagrams (checking the
/// contract and the turns); returns every burst's codepoint, both ways.
fn transfer(config: TransportConfig) -> Vec<Ecn> {
    let mut codepoints = Vec::new();
    let server_addr: SocketAddr = "10.0.0.1:443".parse().unwrap();
    let client_addr: SocketAddr = "10.0.0.2:5000".parse().unwrap();
    let (mut server, mut client, ctls) = crate::common::endpoint_pair(config);
    let mut now = Instant::ZERO;
    let conns: Vec<_> = (0..2)
        .map(|_| {
            client
                .connect(now, ctls.clone(), "localhost", server_addr)
                .unwrap()
        })
        .collect();
    const SIZE: usize = 300_000;
    let mut streams = [None; 2];
    let mut written = [0usize; 2];
    let mut server_streams = Vec::new();
    let mut received = 0usize;
    let mut turns: Vec<ConnectionId> = Vec::new();
    for _ in 0..20_000 {
        now += Duration::from_micros(200);
        client.handle_timeout(now);
        server.handle_timeout(now);
        for (i, &h) in conns.iter().enumerate() {
            let c = client.connection_mut(h).unwrap();
            if streams[i].is_none() && c.is_handshake_complete() {
                streams[i] = c.open_stream(Dir::Uni);
            }
            if let Some(s) = streams[i] {
                if written[i] < SIZE {
                    written[i] += c.write(s, &vec![7u8; SIZE - written[i]]).unwrap_or(0);
                    if written[i] == SIZE {
                        c.finish(s).unwrap();
                    }
                }
            }
        }
        let mut buf = Vec::new();
        while let Some(b) = client.poll_transmit_burst(now, &mut buf, MAX, usize::MAX) {
            assert_eq!(b.destination, server_addr);
            codepoints.push(b.ecn);
            for mut d in segments(&b, &buf) {
                // Early in the transfer, while both connections have data queued.
                if streams.iter().all(Option::is_some) && turns.len() < 64 {
                    turns.push(dcid(&d));
                }
                let _ = server.handle_datagram(now, client_addr, b.ecn, &mut d);
            }
            buf.clear();
        }
        while server.accept().is_some() {}
        let handles: Vec<_> = server.handles().collect();
        for h in handles {
            let c = server.connection_mut(h).unwrap();
            while let Some(s) = c.accept_stream(Dir::Uni) {
                server_streams.push((h, s));
            }
            while c.poll_event().is_some() {}
            for &(_, s) in server_streams.iter().filter(|(sh, _)| *sh == h) {
                let mut chunk = [0u8; 4096];
                while let Ok(r) = c.read(s, &mut chunk) {
                    received += r.bytes;
                    if r.bytes == 0 || r.fin {
                        break;
                    }
                }
            }
        }
        while let Some(b) = server.poll_transmit_burst(now, &mut buf, MAX, usize::MAX) {
            assert_eq!(b.destination, client_addr);
            codepoints.push(b.ecn);
            for mut d in segments(&b, &buf) {
                let _ = client.handle_datagram(now, server_addr, b.ecn, &mut d);
            }
            buf.clear();
        }
        if received == 2 * SIZE {
            break;
        }
    }
    assert_eq!(received, 2 * SIZE, "both transfers complete");
    // While both connections had data, neither sent more than one burst in a row:
    // the turn changes at least once per MAX datagrams.
    let mut run = 1;
    for w in turns.windows(2) {
        run = if w[0] == w[1] { run + 1 } else { 1 };
        assert!(run <= MAX, "one connection sent {run} datagrams in a row");
    }
    assert!(turns.windows(2).any(|w| w[0] != w[1]));
    assert_eq!(
        LONGEST.load(Ordering::Relaxed),
        MAX,
        "full bursts during the transfer"
    );
    codepoints
}
