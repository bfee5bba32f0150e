//! The real-time link emulator: a UDP relay between one client and one server that
//! puts a scenario's links between them: the link code the simulator runs
//! ([`quiclab_link::duplex::Duplex`]: rate, delay, queues, impairments, scheduled
//! changes) driven by the wall clock. What of a scenario it uses is in `config.rs`; the
//! loop is `relay.rs`, its precise sleep `wake.rs`, its outputs `output.rs`.
//!
//! # Call contract
//! [`load`] (or [`parse`]) a scenario; [`Emulator::bind`] its sockets with an
//! [`EmulatorConfig`]; optionally [`raise_priority`] and [`Emulator::capture_to`];
//! [`Emulator::run`] until a stop or an end time; then [`Emulator::finish`] writes the
//! outputs. The emulator's time (captures, `end`, links.csv) counts from `bind`.

mod batch;
mod config;
pub(crate) mod lateness;
pub(crate) mod output;
mod rebind;
pub(crate) mod relay;
mod rest;
pub(crate) mod wait;
pub(crate) mod wake;

pub use config::{load, parse, EmulateError};
pub use lateness::LatenessSummary;
pub use rebind::{Rebind, RebindKind, RebindRecord};
pub use relay::RelayCounters;
pub use wake::raise_priority;

use crate::driver::{Clock, WakeMode};
use crate::error::{NetError, Result};
use crate::udp::{Granted, Socket, DEFAULT_BUFFER};
use quiclab_link::config::LinkSide;
use quiclab_link::duplex::Duplex;
use quiclab_proto::Instant;
use quiclab_sim::Scenario;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::Path;
use std::time::Duration;

/// Where the emulator listens and forwards, and how it sleeps (the command line's
/// `emulate` flags).
#[derive(Clone, Copy, Debug)]
pub struct EmulatorConfig {
    /// Where the client sends (the relay's front socket).
    pub listen: SocketAddr,
    /// The server the relay forwards to, from its own socket (same family as `listen`).
    pub upstream: SocketAddr,
    /// Sleeps: a timerfd (to the nanosecond) or the poll's timeout (milliseconds).
    pub wake: WakeMode,
    /// How long before a deadline to stop sleeping and poll without blocking.
    pub spin: Duration,
    /// The share of wall time the relay spends blocked, so the kernel's real-time
    /// throttling never stops it (`rest.rs`; 0: spin whenever a deadline is near).
    pub rest: f64,
    /// UDP socket buffer size asked for, each way, per socket.
    pub socket_buffer: usize,
    /// Move the socket toward the server at these times (`None`: never).
    pub rebind: Option<Rebind>,
}

impl EmulatorConfig {
    /// The defaults for a relay from `listen` to `upstream`: timerfd, 50 µs of spin,
    /// 10% rest, the driver's default socket buffer.
    pub fn new(listen: SocketAddr, upstream: SocketAddr) -> EmulatorConfig {
        EmulatorConfig {
            listen,
            upstream,
            wake: WakeMode::Timerfd,
            spin: Duration::from_micros(50),
            rest: wake::DEFAULT_REST,
            socket_buffer: DEFAULT_BUFFER,
            rebind: None,
        }
    }
}

/// A scenario's links between two sockets (see the module docs for the call contract).
pub struct Emulator {
    scenario: Scenario,
    relay: relay::Relay,
}

impl Emulator {
    /// Binds the front socket on `config.listen` and the back one on an ephemeral port
    /// of `config.upstream`'s family; the emulator's clock starts. Errors: the
    /// addresses are of different families, a socket cannot be bound, or the rebind
    /// schedule does not fit the upstream ([`Rebind::check`]).
    pub fn bind(scenario: Scenario, duplex: Duplex, config: &EmulatorConfig) -> Result<Self> {
        if config.listen.is_ipv4() != config.upstream.is_ipv4() {
            return Err(NetError::MixedFamilies);
        }
        if let Some(r) = &config.rebind {
            r.check(config.upstream)?;
        }
        let front = Socket::bind(config.listen, config.socket_buffer)?;
        let any: SocketAddr = if config.upstream.is_ipv4() {
            (Ipv4Addr::UNSPECIFIED, 0).into()
        } else {
            (Ipv6Addr::UNSPECIFIED, 0).into()
        };
        let any = Rebind::initial_bind(config.rebind.map(|r| r.kind), any);
        let back = Socket::bind(any, config.socket_buffer)?;
        let waker = wake::Waker::new(config.wake, config.spin).with_rest(config.rest);
        let clock = Clock::new();
        let mut relay = relay::Relay::new(duplex, (front, back), config.upstream, clock, waker)?;
        relay.rebinder = (config.rebind).map(|r| (rebind::Rebinder::new(r), config.socket_buffer));
        let m = &scenario.measure;
        relay.lateness = lateness::SendLateness::for_window(m.from_s, m.to_s);
        Ok(Emulator { scenario, relay })
    }

    /// The scenario emulated.
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// The front socket's address (where clients send; the port the kernel chose when
    /// `config.listen` had port 0).
    pub fn listen_addr(&self) -> Result<SocketAddr> {
        Ok(self.relay.front_addr()?)
    }

    /// What the kernel granted the front socket.
    pub fn granted(&self) -> Granted {
        self.relay.front_granted()
    }

    /// How the relay sleeps, for the start-up log.
    pub fn sleep_note(&self) -> String {
        self.relay.waker_note()
    }

    /// Captures both sides into `out/pcap` (`output.rs`) from now on.
    pub fn capture_to(&mut self, out: &Path) -> Result<()> {
        self.relay.capture = Some(output::open_pcaps(out, &mut self.relay.duplex)?);
        Ok(())
    }

    /// Relays until `stop()` is true or `end` (emulator time) passes; returns the
    /// emulator time at the stop. Errors: the event loop or a socket failed (a datagram
    /// lost to a send error is counted, not an error).
    pub fn run(&mut self, end: Option<Duration>, stop: &dyn Fn() -> bool) -> Result<Instant> {
        let end = end.map(|d| Instant::ZERO + d);
        self.relay.run(end, stop)
    }

    /// The rebinds so far (at most the first 1000; `counters().rebinds` counts all).
    pub fn rebinds(&self) -> &[RebindRecord] {
        self.relay
            .rebinder
            .as_ref()
            .map_or(&[], |(r, _)| &r.records)
    }

    /// What the relay counted so far.
    pub fn counters(&self) -> RelayCounters {
        self.relay.counters
    }

    /// CE marks so far of the forward and return links' queues (`None`: it does not mark).
    pub fn ecn_marks(&self) -> [Option<u64>; 2] {
        [LinkSide::Forward, LinkSide::Return]
            .map(|s| self.relay.duplex.link(s).result(0.0).ecn_marks)
    }

    /// How late the relay sent against the model so far.
    pub fn lateness(&self) -> LatenessSummary {
        self.relay.lateness.total.summary()
    }

    /// Flushes the captures and writes links.csv, the queue traces, emulate.json and a
    /// copy of `keylog` into `out` (`output.rs`); `end` is what [`Emulator::run`]
    /// returned.
    pub fn finish(&mut self, out: &Path, end: Instant, keylog: Option<&Path>) -> Result<()> {
        let r = &mut self.relay;
        let state = output::RelayState {
            duplex: &mut r.duplex,
            capture: &mut r.capture,
            counters: &r.counters,
            lateness: &r.lateness,
            rebinds: r.rebinder.as_ref().map_or(&[], |(rb, _)| &rb.records),
        };
        output::finish(out, &self.scenario, state, end, keylog)
    }
}
