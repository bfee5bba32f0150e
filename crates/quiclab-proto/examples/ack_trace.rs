//! One received ACK, isolated so a debugger can follow it through the core:
//! `scripts/ack_trace.py` runs this under gdb, single-steps [`deliver`] and reports
//! which source file handles each step (docs/ARCHITECTURE.md shows its output).
//!
//! The setup: a client and a server 10 ms apart finish the handshake and go quiet;
//! the client sends one short stream frame, the server acknowledges it in a datagram
//! of its own, and that datagram is handed to the client's endpoint by `deliver`
//! (1-RTT, no loss, logging off).

use quiclab_proto::testing::{LinkConfig, Pair};
use quiclab_proto::Dir;
use quiclab_proto::{Endpoint, Instant, TransportConfig};
use std::net::SocketAddr;
use std::time::Duration;

/// The call the trace follows: one datagram into the client's endpoint.
#[inline(never)]
fn deliver(endpoint: &mut Endpoint, now: Instant, from: SocketAddr, datagram: &mut [u8]) {
    let _ = endpoint.handle_datagram(now, from, quiclab_proto::Ecn::NotEct, datagram);
}

/// Everything `endpoint` wants to send at `now`.
fn transmit_all(endpoint: &mut Endpoint, now: Instant) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut buf = Vec::with_capacity(2048);
    loop {
        buf.clear();
        let Some(t) = endpoint.poll_transmit(now, &mut buf) else {
            return out;
        };
        out.push(buf[..t.size].to_vec());
    }
}

fn main() {
    let delay = Duration::from_millis(10);
    let mut pair = Pair::new(
        TransportConfig::default(),
        TransportConfig::default(),
        [LinkConfig::delay(delay), LinkConfig::delay(delay)],
        1,
    );
    let quiet = Instant::from_millis(100);
    pair.flush();
    while pair.next_event_time().is_some_and(|t| t <= quiet) {
        pair.step();
    }
    assert!(pair.client_conn().is_handshake_confirmed());

    let id = pair.client_conn().open_stream(Dir::Bi).expect("a stream");
    pair.client_conn().write(id, b"one packet").expect("write");
    let mut now = pair.now;
    let to_server = transmit_all(&mut pair.client, now);
    now += delay;
    for mut datagram in to_server {
        let _ = pair.server.handle_datagram(
            now,
            pair.client_addr,
            quiclab_proto::Ecn::NotEct,
            &mut datagram,
        );
    }
    // The server acknowledges one ack-eliciting packet after its ACK delay.
    let mut acks = transmit_all(&mut pair.server, now);
    while acks.is_empty() {
        now = pair.server.poll_timeout().expect("an ACK deadline");
        pair.server.handle_timeout(now);
        acks = transmit_all(&mut pair.server, now);
    }
    assert_eq!(acks.len(), 1, "one datagram carries the ACK");
    now += delay;
    deliver(&mut pair.client, now, pair.server_addr, &mut acks[0]);
    let stats = pair.client_conn().stats();
    println!(
        "delivered one ACK datagram of {} bytes at {:?}",
        acks[0].len(),
        now
    );
    println!("client stats after it: {stats:?}");
}
