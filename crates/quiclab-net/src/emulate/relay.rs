//! The relay's event loop: two sockets (the front one the client sends to, the back one
//! that talks to the server), the emulated links ([`Duplex`], quiclab-link's code, which the simulator runs too)
//! and the wall clock ([`Clock`], nanoseconds since start, the links' time base).
//!
//! Each turn: send every delivery that is due, sleep until the next one is (see
//! [`super::wake`]) or a socket is readable, then read batches (GRO split into
//! datagrams) and offer each datagram to its link at its arrival time. A delivery is
//! sent on the socket of its far side: forward deliveries from the back socket to
//! `--upstream`, return deliveries from the front socket to the client; deliveries due
//! together go as one GSO batch (`batch.rs`).
//!
//! One client at a time: the client is whoever last sent to the front socket. A
//! datagram from a new address takes over (a restarted client, or a NAT rebinding),
//! and return deliveries, including those already on the link, go to it.
//! Datagrams on the back socket from anyone but the upstream are dropped and counted.
//! With a rebind schedule (`rebind.rs`) the back socket is replaced at its times.
//! Send errors (a peer that vanished: ECONNREFUSED from an ICMP port unreachable, a
//! full socket buffer) lose that datagram, are counted, and never end the relay.

use super::batch::Batch;
use super::lateness::SendLateness;
use super::rebind::Rebinder;
use super::wait::{Ready, SIDES};
use super::wake::Waker;
use crate::driver::Clock;
use crate::error::{Context, Result};
use crate::udp::{ecn_of, is_transient, Granted, Socket};
use mio::Interest;
use quiclab_link::config::LinkSide;
use quiclab_link::duplex::Duplex;
use quiclab_link::link::Packet;
use quiclab_link::pcap::PcapWriter;
use quiclab_proto::{Ecn, Instant};
use quinn_udp::RecvMeta;
use serde::Serialize;
use std::io::{BufWriter, ErrorKind, IoSliceMut};
use std::net::{SocketAddr, SocketAddrV4};
use std::time::Duration;

/// Room for one receive: a GRO batch is at most 64 KiB.
const RECV_BUF: usize = 65_536;
/// Receive calls per socket per turn, so a flood cannot hold back due deliveries.
const RECV_ROUNDS: usize = 2;
/// Longest sleep with nothing scheduled, so the stop flag and `--duration` are seen.
const IDLE_WAIT: Duration = Duration::from_millis(100);

/// A capture file (classic pcap).
pub type Capture = PcapWriter<BufWriter<std::fs::File>>;

/// What the relay counted, written to emulate.json.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct RelayCounters {
    /// Datagrams read from the client / from the server.
    pub from_client: u64,
    pub from_server: u64,
    /// Deliveries sent to the server / to the client.
    pub to_server: u64,
    pub to_client: u64,
    /// Deliveries lost to send errors (a vanished peer, a full socket buffer).
    pub send_errors: u64,
    /// Return deliveries with no client to send to.
    pub no_client: u64,
    /// Datagrams on the back socket not from the upstream address.
    pub stray: u64,
    /// Times a new client address took over.
    pub client_changes: u64,
    /// Times the back socket moved (`--rebind`), and rebinds that failed to bind.
    #[serde(skip_serializing_if = "is_zero")]
    pub rebinds: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub rebind_failures: u64,
    /// Datagrams read with an ECN-capable codepoint (ECT(0), ECT(1) or CE).
    pub ect_received: u64,
    /// Deliveries sent CE-marked (by the link's queue, an `ecn` impairment, or the peer).
    pub ce_sent: u64,
}

/// Keeps emulate.json as it was when a counter that is new does not apply.
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The relay: sockets, links, clock, counters.
pub struct Relay {
    pub duplex: Duplex,
    front: Socket,
    back: Socket,
    upstream: SocketAddr,
    client: Option<SocketAddr>,
    clock: Clock,
    ready: Ready,
    bufs: Vec<Vec<u8>>,
    meta: Vec<RecvMeta>,
    /// Deliveries due together, sent as one GSO batch.
    batch: Batch,
    /// Every datagram as it reaches the relay (both directions), if capturing.
    pub capture: Option<Capture>,
    pub counters: RelayCounters,
    /// How late each delivery left against its due time.
    pub lateness: SendLateness,
    /// The rebind schedule, if any, and the buffer size its new sockets ask for.
    pub(super) rebinder: Option<(Rebinder, usize)>,
}

/// An address as IPv4 for the pcap (which writes IPv4 headers): IPv4 and IPv4-mapped
/// addresses as they are, other IPv6 addresses as `fallback` with their port.
pub fn pcap_addr(a: SocketAddr, fallback: [u8; 4]) -> SocketAddrV4 {
    match a {
        SocketAddr::V4(v4) => v4,
        SocketAddr::V6(v6) => {
            let ip = v6.ip().to_ipv4_mapped().unwrap_or(fallback.into());
            SocketAddrV4::new(ip, v6.port())
        }
    }
}

impl Relay {
    /// Registers both sockets with a new poll; `waker` sleeps precisely.
    pub fn new(
        duplex: Duplex,
        (mut front, mut back): (Socket, Socket),
        upstream: SocketAddr,
        clock: Clock,
        waker: Waker,
    ) -> Result<Relay> {
        let ready = Ready::new(waker, |r| {
            r.register(front.source(), SIDES[0], Interest::READABLE)?;
            r.register(back.source(), SIDES[1], Interest::READABLE)
        })?;
        let batch = quinn_udp::BATCH_SIZE;
        Ok(Relay {
            duplex,
            front,
            back,
            upstream,
            client: None,
            clock,
            ready,
            bufs: (0..batch).map(|_| vec![0u8; RECV_BUF]).collect(),
            meta: vec![RecvMeta::default(); batch],
            batch: Batch::default(),
            capture: None,
            counters: RelayCounters::default(),
            lateness: SendLateness::default(),
            rebinder: None,
        })
    }

    /// The front socket's address.
    pub fn front_addr(&self) -> std::io::Result<SocketAddr> {
        self.front.local_addr()
    }

    /// What the kernel granted the front socket.
    pub fn front_granted(&self) -> Granted {
        self.front.granted()
    }

    /// How the relay sleeps, for the start-up log.
    pub fn waker_note(&self) -> String {
        self.ready.note()
    }

    /// Runs until `stop()` is true or `end` (emulator time) passes; returns the end time.
    pub fn run(&mut self, end: Option<Instant>, stop: &dyn Fn() -> bool) -> Result<Instant> {
        loop {
            let now = self.clock.now();
            if stop() || end.is_some_and(|e| now >= e) {
                return Ok(now);
            }
            self.send_due(now);
            self.ready.rest();
            self.rebind_if_due(now)?;
            if !self.ready.readable.contains(&true) {
                let rebind = self.rebinder.as_ref().and_then(|(r, _)| r.due());
                let next = [self.duplex.next_due(), end, rebind];
                let next = next.into_iter().flatten().min();
                self.ready
                    .wait(self.clock.now(), next, IDLE_WAIT, "sockets")?;
            }
            for side in [0, 1] {
                if self.ready.readable[side] {
                    self.receive(side)?;
                }
            }
        }
    }

    /// Moves the back socket if a rebind is due: binds the new one first (so its port
    /// differs from the old one's), then drops the old one and what it still held.
    /// A bind that fails is counted and leaves the old socket in place.
    fn rebind_if_due(&mut self, now: Instant) -> Result<()> {
        let Some((rebinder, buffer)) = self.rebinder.as_mut() else {
            return Ok(());
        };
        if rebinder.due().is_none_or(|due| now < due) {
            return Ok(());
        }
        let old = self.back.local_addr().context("the relay's address")?;
        let moved = match Socket::bind(rebinder.next_bind(old), *buffer) {
            Ok(mut socket) => {
                let registry = self.ready.registry();
                registry.register(socket.source(), SIDES[1], Interest::READABLE)?;
                registry.deregister(self.back.source())?;
                self.back = socket;
                self.ready.readable[1] = true;
                let new = self.back.local_addr().context("the relay's address")?;
                note!("quiclab emulate: rebound toward the server: {old} -> {new}");
                Some((old, new))
            }
            Err(e) => {
                note!("quiclab emulate: rebind failed, keeping {old}: {e}");
                None
            }
        };
        rebinder.finish(now, moved);
        self.counters.rebinds = rebinder.done;
        self.counters.rebind_failures = rebinder.failed;
        Ok(())
    }

    /// Sends every delivery due by now: consecutive ones that go the same way with the
    /// same codepoint leave as one GSO batch (`batch.rs`; one by one when the relay is
    /// on time, since then only one is due at a time).
    fn send_due(&mut self, now: Instant) {
        while let Some(d) = self.lateness.pop_due(&mut self.duplex, now, &self.clock) {
            let (payload, ecn) = (&d.packet.payload, d.packet.ecn);
            let max = match d.side {
                LinkSide::Forward => self.back.granted().gso_segments,
                LinkSide::Return => self.front.granted().gso_segments,
            };
            if !self.batch.fits(d.side, ecn, payload.len(), max) {
                self.flush();
            }
            self.batch.push(d.side, ecn, payload);
        }
        self.flush();
    }

    /// Sends the batch with the codepoint the link left it (RFC 3168 §5: a CE mark
    /// made by the emulated queue reaches the peer's stack).
    fn flush(&mut self) {
        let Some(b) = self.batch.take() else {
            return;
        };
        let sent = match b.side {
            LinkSide::Forward => {
                self.counters.to_server += b.count as u64;
                self.back.send(self.upstream, b.ecn, b.contents, b.segment)
            }
            LinkSide::Return => match self.client {
                None => {
                    self.counters.no_client += b.count as u64;
                    Ok(())
                }
                Some(client) => {
                    self.counters.to_client += b.count as u64;
                    self.front.send(client, b.ecn, b.contents, b.segment)
                }
            },
        };
        // The datagrams are lost, as on a real path; the peer's transport recovers.
        if sent.is_err() {
            self.counters.send_errors += b.count as u64;
        } else if b.side == LinkSide::Forward || self.client.is_some() {
            self.counters.ce_sent += b.ce as u64;
        }
        self.batch.clear();
    }

    /// Reads up to [`RECV_ROUNDS`] batches from one socket (0: front, 1: back).
    fn receive(&mut self, side: usize) -> Result<()> {
        // Taken out for the loop, so the datagrams can go to `arrive` (`&mut self`).
        let mut bufs = std::mem::take(&mut self.bufs);
        let r = self.receive_into(side, &mut bufs);
        self.bufs = bufs;
        r
    }

    fn receive_into(&mut self, side: usize, bufs: &mut [Vec<u8>]) -> Result<()> {
        for _ in 0..RECV_ROUNDS {
            let mut slices: [IoSliceMut<'_>; quinn_udp::BATCH_SIZE] =
                std::array::from_fn(|_| IoSliceMut::new(&mut []));
            for (s, b) in slices.iter_mut().zip(bufs.iter_mut()) {
                *s = IoSliceMut::new(b);
            }
            let socket = if side == 0 { &self.front } else { &self.back };
            let n = match socket.recv(&mut slices, &mut self.meta) {
                Ok(n) => n,
                Err(e) if is_transient(&e) => {
                    // WouldBlock: drained. ECONNREFUSED & co (a peer vanished): more
                    // may be queued behind it.
                    self.ready.readable[side] = e.kind() != ErrorKind::WouldBlock;
                    return Ok(());
                }
                Err(e) => return Err(e).context("receiving"),
            };
            let now = self.clock.now();
            for (i, slice) in slices.iter().enumerate().take(n) {
                let meta = self.meta[i];
                let stride = meta.stride.max(1);
                // A GRO batch shares one IP header's codepoint (the kernel only
                // coalesces datagrams whose TOS bytes match).
                let ecn = ecn_of(meta.ecn);
                for start in (0..meta.len).step_by(stride) {
                    let end = (start + stride).min(meta.len);
                    let payload = slice[start..end].to_vec();
                    self.arrive(now, side, (meta.addr, ecn), payload);
                }
            }
        }
        Ok(())
    }

    /// One datagram read at `now` from `from` on socket `side`, with the codepoint
    /// `ecn` it arrived with (which the link may then mark or rewrite).
    fn arrive(
        &mut self,
        now: Instant,
        side: usize,
        (from, ecn): (SocketAddr, Ecn),
        payload: Vec<u8>,
    ) {
        let (link, src, dst) = if side == 0 {
            if self.client != Some(from) {
                if self.client.is_some() {
                    self.counters.client_changes += 1;
                    note!("quiclab emulate: new client {from} takes over");
                }
                self.client = Some(from);
            }
            self.counters.from_client += 1;
            (LinkSide::Forward, from, self.upstream)
        } else {
            if from != self.upstream {
                self.counters.stray += 1;
                return;
            }
            self.counters.from_server += 1;
            let client = self.client.unwrap_or(from);
            (LinkSide::Return, from, client)
        };
        let (src, dst) = if side == 0 {
            (pcap_addr(src, [10, 0, 0, 1]), pcap_addr(dst, [10, 1, 0, 1]))
        } else {
            (pcap_addr(src, [10, 1, 0, 1]), pcap_addr(dst, [10, 0, 0, 1]))
        };
        if let Some(c) = self.capture.as_mut() {
            // A failed write loses the capture, not the relay.
            if c.write_udp(now, src, dst, ecn, &payload).is_err() {
                self.capture = None;
            }
        }
        if ecn.is_ect() {
            self.counters.ect_received += 1;
        }
        let packet = Packet {
            ecn,
            ..Packet::datagram(src, dst, payload)
        };
        self.duplex.arrive(now, link, packet);
    }
}
