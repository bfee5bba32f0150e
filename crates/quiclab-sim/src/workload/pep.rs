//! A split-connection TCP performance-enhancing proxy at the satellite gateway
//! (RFC 3135 §2.4.1 "split connections", §2.5 transparency): one [`PepHost`] per TCP
//! flow when the scenario's `[topology.gateway.pep]` is enabled (`scenario/gateway.rs`).
//!
//! The simulator hands the PEP every TCP segment that reaches the gateway between the
//! flow's client and server (`sim.rs`, `Network::gateway_hop`). The PEP terminates the
//! client's connection with its own quiclab-tcp endpoint (`satellite`, listening with the
//! server's address, so the client cannot tell) and, as soon as the client's SYN
//! arrived, opens a second connection to the server (`terrestrial`, with the client's
//! address). It relays the byte stream both ways through two buffers of at most
//! `buffer_bytes` each and reads from a connection only while the buffer toward the
//! other side has room: unread bytes stay in that connection's receive buffer, its
//! advertised window closes, and the sender waits (back-pressure). A FIN is passed on
//! once every byte before it was relayed. TLS stays end to end: the PEP sees records,
//! never plaintext. Memory per flow: the two relay buffers plus each connection's
//! configured send and receive buffers.
//!
//! Not modelled: TCP Fast Open through the PEP (refused by the scenario checks), and
//! resets: if one side's connection fails, the other is left to time out.

use crate::output::results::{PepResult, PepSideResult};
use quiclab_proto::{Ecn, Instant};
use quiclab_tcp::{State, TcpConfig, TcpConnection};
use std::collections::VecDeque;
use std::net::SocketAddrV4;

/// The PEP's state for one TCP flow.
pub(crate) struct PepHost {
    client: SocketAddrV4,
    server: SocketAddrV4,
    /// The end facing the client (over the satellite), with the server's address.
    satellite: TcpConnection,
    /// The end facing the server, opened when the client's SYN arrives.
    terrestrial: Option<TcpConnection>,
    terrestrial_config: TcpConfig,
    terrestrial_seed: u64,
    /// Client -> server bytes read from `satellite`, not yet taken by `terrestrial`.
    up: VecDeque<u8>,
    /// Server -> client bytes read from `terrestrial`, not yet taken by `satellite`.
    down: VecDeque<u8>,
    /// Most bytes each of `up` and `down` may hold.
    limit: usize,
    up_fin: bool,
    down_fin: bool,
    max_up: u64,
    max_down: u64,
    relayed_up: u64,
    relayed_down: u64,
}

/// The initial sequence number from an end's seed (as `tcpflow.rs` does for hosts).
fn iss(seed: u64) -> u32 {
    (seed ^ (seed >> 32)) as u32
}

impl PepHost {
    /// A PEP for the flow between `client` and `server`: its satellite end listens at
    /// once; `seeds` are (satellite, terrestrial) endpoint seeds; `limit` is each relay
    /// buffer's capacity in bytes (at least 1).
    pub fn new(
        client: SocketAddrV4,
        server: SocketAddrV4,
        (satellite, terrestrial): (TcpConfig, TcpConfig),
        seeds: (u64, u64),
        limit: u64,
    ) -> Self {
        PepHost {
            client,
            server,
            satellite: TcpConnection::listen(satellite, server, iss(seeds.0), seeds.0),
            terrestrial: None,
            terrestrial_config: terrestrial,
            terrestrial_seed: seeds.1,
            up: VecDeque::new(),
            down: VecDeque::new(),
            limit: usize::try_from(limit).unwrap_or(usize::MAX).max(1),
            up_fin: false,
            down_fin: false,
            max_up: 0,
            max_down: 0,
            relayed_up: 0,
            relayed_down: 0,
        }
    }

    /// A segment from `src` to `dst` reached the gateway; a malformed or unexpected one
    /// is dropped (the connection counts it).
    pub fn handle_segment(
        &mut self,
        now: Instant,
        src: SocketAddrV4,
        dst: SocketAddrV4,
        ecn: Ecn,
        seg: &[u8],
    ) {
        if dst == self.server && src == self.client {
            let _ = self.satellite.handle_segment_ecn(now, src, ecn, seg);
        } else if dst == self.client && src == self.server {
            if let Some(t) = self.terrestrial.as_mut() {
                let _ = t.handle_segment_ecn(now, src, ecn, seg);
            }
        }
    }

    pub fn handle_timeout(&mut self, now: Instant) {
        self.satellite.handle_timeout(now);
        if let Some(t) = self.terrestrial.as_mut() {
            t.handle_timeout(now);
        }
    }

    pub fn poll_timeout(&self) -> Option<Instant> {
        let t = self.terrestrial.as_ref().and_then(|t| t.poll_timeout());
        [self.satellite.poll_timeout(), t]
            .into_iter()
            .flatten()
            .min()
    }

    /// The next segment into `buf`: (source, destination, IP ECN codepoint). The
    /// satellite end's segments first, then the terrestrial end's.
    pub fn poll_transmit(
        &mut self,
        now: Instant,
        buf: &mut Vec<u8>,
    ) -> Option<(SocketAddrV4, SocketAddrV4, Ecn)> {
        if let Some(t) = self.satellite.poll_transmit(now, buf) {
            return Some((self.server, t.destination, t.ecn));
        }
        let t = self.terrestrial.as_mut()?.poll_transmit(now, buf)?;
        Some((self.client, t.destination, t.ecn))
    }

    /// Opens the terrestrial connection once the client's SYN arrived, then relays
    /// what each side allows; `scratch` is a read buffer.
    pub fn drive(&mut self, scratch: &mut [u8]) {
        while self.satellite.poll_event().is_some() {}
        if self.terrestrial.is_none() && self.satellite.state() != State::Listen {
            self.terrestrial = Some(TcpConnection::connect(
                self.terrestrial_config.clone(),
                self.client,
                self.server,
                iss(self.terrestrial_seed),
                self.terrestrial_seed,
            ));
        }
        let Some(ter) = self.terrestrial.as_mut() else {
            return;
        };
        while ter.poll_event().is_some() {}
        let sat = &mut self.satellite;
        // RFC 3135 §2.4.1: each half runs its own flow control; the relay buffers
        // carry the bytes between them.
        let limit = self.limit;
        self.relayed_up += relay(sat, ter, (&mut self.up, limit, &mut self.max_up), scratch);
        self.relayed_down += relay(
            ter,
            sat,
            (&mut self.down, limit, &mut self.max_down),
            scratch,
        );
        if !self.up_fin && sat.peer_finished() && self.up.is_empty() {
            ter.shutdown();
            self.up_fin = true;
        }
        if !self.down_fin && ter.peer_finished() && self.down.is_empty() {
            sat.shutdown();
            self.down_fin = true;
        }
    }

    /// The PEP's statistics for the results.
    pub fn result(&self) -> PepResult {
        let side = |c: Option<&TcpConnection>| {
            let s = c.map(|c| c.stats().clone()).unwrap_or_default();
            PepSideResult {
                segments_sent: s.segments_sent,
                segments_received: s.segments_received,
                retransmitted_segments: s.retransmitted_segments,
                lost_segments: s.lost_segments,
                pure_acks_sent: s.pure_acks_sent,
            }
        };
        PepResult {
            buffer_bytes: self.limit as u64,
            max_up_buffered: self.max_up,
            max_down_buffered: self.max_down,
            relayed_up_bytes: self.relayed_up,
            relayed_down_bytes: self.relayed_down,
            satellite: side(Some(&self.satellite)),
            terrestrial: side(self.terrestrial.as_ref()),
        }
    }
}

/// Moves bytes `from` -> `buffer` -> `to`: first what `to`'s send buffer takes from
/// the relay buffer, then reads from `from` while the buffer has room below `limit`
/// (and passes those on too), recording the buffer's highest fill in `peak`. Only
/// connected ends are read or written. Returns the bytes handed to `to`.
fn relay(
    from: &mut TcpConnection,
    to: &mut TcpConnection,
    (buffer, limit, peak): (&mut VecDeque<u8>, usize, &mut u64),
    scratch: &mut [u8],
) -> u64 {
    let mut moved = flush(to, buffer);
    loop {
        let room = limit.saturating_sub(buffer.len()).min(scratch.len());
        if room == 0 || from.state() == State::Listen || from.state() == State::SynSent {
            break;
        }
        let n = from.read(&mut scratch[..room]);
        if n == 0 {
            break;
        }
        buffer.extend(&scratch[..n]);
        *peak = (*peak).max(buffer.len() as u64);
        moved += flush(to, buffer);
    }
    moved
}

/// Writes the buffer's bytes into `to` as far as its send buffer allows; returns how
/// many it took.
fn flush(to: &mut TcpConnection, buffer: &mut VecDeque<u8>) -> u64 {
    if !to.is_established() {
        return 0;
    }
    let mut total = 0;
    while !buffer.is_empty() {
        let (head, _) = buffer.as_slices();
        let n = to.write(head);
        if n == 0 {
            break;
        }
        buffer.drain(..n);
        total += n as u64;
    }
    total
}
