//! The shell's event loop: the two TUN devices (inside: what the command sends; host:
//! what the host sends back), the scenario's links ([`Duplex`], quiclab-link's code,
//! which the simulator and the UDP emulator run too) and the wall clock ([`Clock`]).
//!
//! Each turn, as in the emulator's relay (`emulate/relay.rs`): send every delivery
//! that is due, sleep until the next one is (the emulator's [`Waker`]) or a device is
//! readable, then read packets and offer each to its link at its arrival time. The
//! forward link carries what the command inside sends (its uplink), the return link
//! what comes back from the host. A delivery is written as one IPv4 packet
//! ([`super::ip::build`]) into the far side's device.
//!
//! Packets the relay does not carry ([`super::ip::Refused`]) and write errors (a full
//! device queue) are counted, never an error: the stacks at either end recover as from
//! a loss.

use super::ip::{self, Refused};
use super::tun::Tun;
use crate::driver::Clock;
use crate::emulate::lateness::SendLateness;
use crate::emulate::relay::Capture;
use crate::emulate::wait::{Ready, SIDES};
use crate::emulate::wake::Waker;
use crate::error::{Context, Result};
use mio::unix::SourceFd;
use mio::Interest;
use quiclab_link::config::LinkSide;
use quiclab_link::duplex::{Delivery, Duplex};
use quiclab_proto::{Ecn, Instant};
use serde::Serialize;
use std::time::Duration;

/// Room for one packet: a TUN device's MTU is at most 64 KiB.
const PACKET_BUF: usize = 65_536;
/// Packets read per device per turn, so a flood cannot hold back due deliveries.
const READS_PER_TURN: usize = 64;
/// Longest sleep with nothing scheduled, so the stop check runs.
const IDLE_WAIT: Duration = Duration::from_millis(20);

/// What the relay counted, emulate.json's `relay` for a shell.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct ShellCounters {
    /// IPv4 packets read from inside / from the host.
    pub from_inside: u64,
    pub from_host: u64,
    /// Deliveries written to the host / inside.
    pub to_host: u64,
    pub to_inside: u64,
    /// Deliveries lost to write errors.
    pub write_errors: u64,
    /// Packets not carried: not IPv4 (IPv6 neighbour discovery...), malformed,
    /// fragments, with IP options.
    pub not_ipv4: u64,
    pub malformed: u64,
    pub fragments: u64,
    pub ip_options: u64,
    /// Packets read with an ECN-capable codepoint (ECT(0), ECT(1) or CE).
    pub ect_received: u64,
    /// Deliveries written CE-marked.
    pub ce_sent: u64,
}

/// The relay: devices, links, clock, counters.
pub struct IpRelay {
    pub duplex: Duplex,
    /// Indexed by side: 0 inside, 1 host.
    tuns: [Tun; 2],
    clock: Clock,
    ready: Ready,
    buf: Vec<u8>,
    /// The next IPv4 identification per direction.
    ids: [u16; 2],
    pub capture: Option<Capture>,
    pub counters: ShellCounters,
    /// How late each delivery left against its due time.
    pub lateness: SendLateness,
}

impl IpRelay {
    /// Registers both devices with a new poll; the relay's time starts at `clock`'s.
    pub fn new(duplex: Duplex, tuns: [Tun; 2], clock: Clock, waker: Waker) -> Result<IpRelay> {
        // Side 0 inside, side 1 host.
        let ready = Ready::new(waker, |r| {
            r.register(&mut SourceFd(&tuns[0].fd()), SIDES[0], Interest::READABLE)?;
            r.register(&mut SourceFd(&tuns[1].fd()), SIDES[1], Interest::READABLE)
        })?;
        Ok(IpRelay {
            duplex,
            tuns,
            clock,
            ready,
            buf: vec![0; PACKET_BUF],
            ids: [0, 0],
            capture: None,
            counters: ShellCounters::default(),
            lateness: SendLateness::default(),
        })
    }

    /// Runs until `done()` is true (asked every turn); returns the relay time then.
    pub fn run(&mut self, done: &mut dyn FnMut() -> bool) -> Result<Instant> {
        loop {
            let now = self.clock.now();
            if done() {
                return Ok(now);
            }
            self.send_due(now);
            self.ready.rest();
            if !self.ready.readable.contains(&true) {
                let (now, next) = (self.clock.now(), self.duplex.next_due());
                self.ready.wait(now, next, IDLE_WAIT, "TUN devices")?;
            }
            for side in [0, 1] {
                if self.ready.readable[side] {
                    self.receive(side)?;
                }
            }
        }
    }

    fn send_due(&mut self, now: Instant) {
        while let Some(d) = self.lateness.pop_due(&mut self.duplex, now, &self.clock) {
            self.send(d);
        }
    }

    /// Writes a delivery into the far side's device, with the codepoint the link left
    /// it (RFC 3168 §5: a CE mark made by the emulated queue reaches the stack).
    fn send(&mut self, d: Delivery) {
        let to = match d.side {
            LinkSide::Forward => 1,
            LinkSide::Return => 0,
        };
        let packet = ip::build(&d.packet, self.ids[to]);
        self.ids[to] = self.ids[to].wrapping_add(1);
        if self.tuns[to].write(&packet).is_err() {
            self.counters.write_errors += 1;
            return;
        }
        if to == 1 {
            self.counters.to_host += 1;
        } else {
            self.counters.to_inside += 1;
        }
        if d.packet.ecn == Ecn::Ce {
            self.counters.ce_sent += 1;
        }
    }

    /// Reads up to [`READS_PER_TURN`] packets from one device (0: inside, 1: host).
    fn receive(&mut self, side: usize) -> Result<()> {
        for _ in 0..READS_PER_TURN {
            let n = match self.tuns[side].read(&mut self.buf) {
                Ok(Some(n)) => n,
                Ok(None) => {
                    self.ready.readable[side] = false;
                    return Ok(());
                }
                Err(e) => {
                    let name = &self.tuns[side].name;
                    return Err(e).with_context(|| format!("reading TUN device {name}"));
                }
            };
            let now = self.clock.now();
            self.arrive(now, side, n);
        }
        Ok(())
    }

    /// The packet in `buf[..len]`, read at `now` from `side`.
    fn arrive(&mut self, now: Instant, side: usize, len: usize) {
        let bytes = &self.buf[..len];
        let packet = match ip::parse(bytes) {
            Ok(p) => p,
            Err(why) => {
                let c = &mut self.counters;
                *match why {
                    Refused::NotIpv4 => &mut c.not_ipv4,
                    Refused::Malformed => &mut c.malformed,
                    Refused::Fragment => &mut c.fragments,
                    Refused::Options => &mut c.ip_options,
                } += 1;
                return;
            }
        };
        if let Some(c) = self.capture.as_mut() {
            // A failed write loses the capture, not the relay.
            if c.write_ip(now, bytes).is_err() {
                self.capture = None;
            }
        }
        if packet.ecn.is_ect() {
            self.counters.ect_received += 1;
        }
        let link = if side == 0 {
            self.counters.from_inside += 1;
            LinkSide::Forward
        } else {
            self.counters.from_host += 1;
            LinkSide::Return
        };
        self.duplex.arrive(now, link, packet);
    }
}
