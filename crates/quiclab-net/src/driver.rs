//! The real-UDP endpoint driver: a non-blocking event loop (mio) around one [`Socket`],
//! the wall clock, and an [`Endpoint`] driven by its call contract (handle_* in, then
//! poll_* out). Sends go out in GSO bursts ([`Endpoint::poll_transmit_burst`]); receives
//! come in GRO batches split into datagrams in place, so the steady state allocates
//! nothing per datagram. The application protocol lives above, behind [`Application`]
//! (the command line's hq-interop and HTTP/3 clients and servers).
//!
//! A server may listen on more addresses ([`EndpointDriver::add_socket`]: its preferred
//! address, RFC 9000 §9.6): datagrams arriving there reach the endpoint with that local
//! address, and datagrams whose [`Transmit::source`](quiclab_proto::Transmit::source)
//! names it leave from it. The driver then sends one datagram per `sendmsg` (a GSO
//! burst has one source).

use crate::burn::Burn;
use crate::error::{AppError, Context, NetError, Result};
use crate::monitor::{BufferPolicy, SocketLog, SocketMonitor};
use crate::stop::StopHandle;
use crate::timer::Timer;
use crate::udp::{ecn_of, is_transient, Socket, DEFAULT_BUFFER, DEFAULT_BUFFER_MAX};
use mio::{Events, Interest, Poll, Token};
use quiclab_proto::{Ecn, Endpoint, Instant};
use quinn_udp::RecvMeta;
use std::io::{ErrorKind, IoSliceMut};
use std::net::SocketAddr;
use std::time::Duration;

/// Room for one receive: a GRO batch is at most 64 KiB (the UDP length limit).
const RECV_BUF: usize = 65_536;
/// Receive calls per loop turn before timers, the application and sends run again,
/// so a flood of input cannot starve the send side (each call reads up to
/// `quinn_udp::BATCH_SIZE` batches).
const RECV_ROUNDS: usize = 4;
/// Longest sleep when the endpoint has no timer (a server with no connections), so
/// `Application::finished` is still checked now and then.
const IDLE_WAIT: Duration = Duration::from_secs(1);
/// Largest burst handed to one `sendmsg`: a GSO send is one UDP datagram to the
/// kernel, so at most IPv4's largest UDP payload (65535 - 20 - 8); this also keeps one
/// connection's turn short (fairness among connections).
const MAX_BURST_BYTES: usize = 65_507;
const SOCKET: Token = Token(0);
const TIMER: Token = Token(1);
const WAKER: Token = Token(2);
/// The first extra socket's token; the others follow.
const EXTRA_BASE: usize = 3;
/// Waits shorter than this use the timerfd (the poll's own timeout has 1 ms steps).
const PRECISE_BELOW: Duration = Duration::from_millis(5);

/// Maps the wall clock to quiclab's [`Instant`] (nanoseconds since the driver started).
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    start: std::time::Instant,
}

impl Default for Clock {
    fn default() -> Self {
        Clock::new()
    }
}

impl Clock {
    /// A clock whose zero is now.
    pub fn new() -> Self {
        Clock {
            start: std::time::Instant::now(),
        }
    }

    /// Nanoseconds since [`Clock::new`], as the endpoint's time.
    pub fn now(&self) -> Instant {
        let nanos = self.start.elapsed().as_nanos();
        Instant::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
    }
}

/// The application side of the loop: reacts to connection events and writes streams.
pub trait Application {
    /// Called after every batch of input: accept connections, drain events, read and
    /// write streams. Transmits are drained right after.
    fn drive(&mut self, endpoint: &mut Endpoint, now: Instant) -> Result<(), AppError>;
    /// Whether the loop should stop (checked after transmits were sent).
    fn finished(&self, endpoint: &Endpoint) -> bool;
    /// The process was asked to stop (SIGINT/SIGTERM): close connections gracefully;
    /// `finished` should turn true once they are closed. Default: nothing.
    fn shutdown(&mut self, _endpoint: &mut Endpoint, _now: Instant) {}
}

/// How the loop wakes for short waits (the pacer's gaps).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum WakeMode {
    /// The poll's own timeout, rounded up to whole milliseconds by epoll.
    Poll,
    /// A timerfd in the poll, to the nanosecond (Linux; falls back to [`WakeMode::Poll`]
    /// where the kernel refuses one).
    #[default]
    Timerfd,
}

impl WakeMode {
    /// `"poll"` or `"timerfd"` (the command line's `--wake`); anything else is `Poll`.
    pub fn from_name(name: &str) -> WakeMode {
        match name {
            "timerfd" => WakeMode::Timerfd,
            _ => WakeMode::Poll,
        }
    }
}

/// The driver's settings (the command line's `--socket-buffer`, `--socket-buffer-max`,
/// `--wake`).
#[derive(Clone, Copy, Debug)]
pub struct DriverConfig {
    /// Socket buffer asked for at bind, each way, bytes (the kernel may grant less;
    /// [`Socket::granted`] says what it gave).
    pub socket_buffer: usize,
    /// Largest size the driver grows the buffers to when a connection's window
    /// outgrows them ([`crate::monitor`]); at or below `socket_buffer` they never grow.
    pub socket_buffer_max: usize,
    /// How short waits wake the loop.
    pub wake: WakeMode,
    /// Send in GSO batches where the kernel offers them (false: one datagram per send).
    pub gso: bool,
    /// Extra CPU burned per datagram each way (a CPU-limited host made real;
    /// default: none).
    pub burn: Burn,
}

impl Default for DriverConfig {
    fn default() -> Self {
        DriverConfig {
            socket_buffer: DEFAULT_BUFFER,
            socket_buffer_max: DEFAULT_BUFFER_MAX,
            wake: WakeMode::Timerfd,
            gso: true,
            burn: Burn::default(),
        }
    }
}

/// Runs one [`Endpoint`] on one UDP socket with the wall clock.
///
/// # Call contract
/// Build it from a bound socket ([`EndpointDriver::new`]) or an address
/// ([`EndpointDriver::bind`]); its [`Clock`] starts then, and is the time base of every
/// `Instant` handed to the endpoint (use [`EndpointDriver::clock`] for calls made
/// before [`EndpointDriver::run`], e.g. opening a client's connections). `run` drives
/// the endpoint until the application is finished; it may be called again with another
/// application. The loop also stops gracefully once [`crate::signal::install`]'s flag
/// is set (SIGINT/SIGTERM) or its [`EndpointDriver::stop_handle`] is used: it calls
/// [`Application::shutdown`] and runs on until the application is finished.
pub struct EndpointDriver {
    socket: Socket,
    /// More local addresses the endpoint is reachable at (a server's preferred
    /// address), with their sockets.
    extra: Vec<(SocketAddr, Socket)>,
    stop: StopHandle,
    clock: Clock,
    /// Sub-millisecond wake-ups; `None`: the poll's millisecond timeout only.
    timer: Option<Timer>,
    monitor: SocketMonitor,
    burn: Burn,
}

impl EndpointDriver {
    /// Drives on `socket` (bound with `config.socket_buffer`, or the monitor's growth
    /// starts from a wrong size).
    pub fn new(mut socket: Socket, config: &DriverConfig) -> EndpointDriver {
        if !config.gso {
            socket.disable_gso();
        }
        let timer = match config.wake {
            WakeMode::Timerfd => Timer::new(),
            WakeMode::Poll => None,
        };
        let policy = BufferPolicy {
            max: config.socket_buffer_max,
        };
        EndpointDriver {
            socket,
            extra: Vec::new(),
            stop: StopHandle::default(),
            clock: Clock::new(),
            timer,
            monitor: SocketMonitor::new(policy, config.socket_buffer),
            burn: config.burn,
        }
    }

    /// Binds `addr` with `config.socket_buffer` and drives on it.
    pub fn bind(addr: SocketAddr, config: &DriverConfig) -> Result<EndpointDriver> {
        let socket = Socket::bind(addr, config.socket_buffer)?;
        Ok(EndpointDriver::new(socket, config))
    }

    /// Also listens on `addr` (a server's preferred address, RFC 9000 §9.6) with the
    /// same settings: what arrives there reaches the endpoint as
    /// [`Endpoint::handle_datagram_on`]`(Some(addr))`, and datagrams whose source is
    /// `addr` leave from it. Returns the address bound (`addr` with the kernel's port
    /// for port 0).
    pub fn add_socket(&mut self, addr: SocketAddr, config: &DriverConfig) -> Result<SocketAddr> {
        let mut socket = Socket::bind(addr, config.socket_buffer)?;
        socket.disable_gso();
        let bound = socket.local_addr().context("reading the bound address")?;
        self.extra.push((bound, socket));
        Ok(bound)
    }

    /// The socket (for its address, granted buffers and ICMP reporting).
    pub fn socket(&self) -> &Socket {
        &self.socket
    }

    /// The clock of the endpoint's time.
    pub fn clock(&self) -> Clock {
        self.clock
    }

    /// How short waits wake the loop, as chosen (a timerfd, or the poll's timeout when
    /// asked for or when the kernel refused a timerfd).
    pub fn wake(&self) -> WakeMode {
        if self.timer.is_some() {
            WakeMode::Timerfd
        } else {
            WakeMode::Poll
        }
    }

    /// A handle that stops [`EndpointDriver::run`] gracefully from another thread.
    pub fn stop_handle(&self) -> StopHandle {
        self.stop.clone()
    }

    /// A handle on the socket monitor's latest reading, for applications that remove
    /// connections before the loop ends ([`SocketLog::log_final`]).
    pub fn socket_log(&self) -> SocketLog {
        self.monitor.log()
    }

    /// Runs `endpoint` until `app` is finished; returns what the loop counted. Errors:
    /// the event loop or the socket failed (not a datagram lost), or `app` failed.
    pub fn run(&mut self, endpoint: &mut Endpoint, app: &mut dyn Application) -> Result<Counters> {
        run(
            (&mut self.socket, &mut self.extra),
            endpoint,
            self.clock,
            self.timer.as_ref(),
            &mut self.monitor,
            (&self.stop, self.burn),
            app,
        )
    }
}

impl std::fmt::Display for WakeMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            WakeMode::Poll => "poll timeout (1 ms steps)",
            WakeMode::Timerfd => "timerfd (ns)",
        })
    }
}

/// What the loop counted, for the log and the benchmarks.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counters {
    /// `sendmsg` calls (each one GSO burst).
    pub sendmsg_calls: u64,
    /// Datagrams in those bursts.
    pub datagrams_sent: u64,
    /// Datagram bytes sent (UDP payloads).
    pub bytes_sent: u64,
    /// Receive calls that returned data.
    pub recv_calls: u64,
    /// Datagrams received (GRO batches split).
    pub datagrams_received: u64,
    /// Datagram bytes received (UDP payloads).
    pub bytes_received: u64,
    /// Times the kernel send buffer was full (the loop then waits, losing nothing).
    pub send_blocked: u64,
    /// Datagrams the kernel dropped for a full receive buffer (`None`: unknown here).
    pub kernel_drops: Option<u64>,
}

/// The loop's reusable buffers and its readiness state.
struct Driver<'t> {
    poll: Poll,
    events: Events,
    recv_bufs: Vec<Vec<u8>>,
    recv_meta: Vec<RecvMeta>,
    /// A burst the kernel refused with `WouldBlock`: kept until the socket is writable.
    pending: Option<(SocketAddr, usize, Ecn)>,
    /// The pending datagram's source when the endpoint has extra sockets.
    pending_source: Option<SocketAddr>,
    /// Which extra sockets may have input.
    extra_readable: Vec<bool>,
    send_buf: Vec<u8>,
    readable: bool,
    writable_interest: bool,
    /// Sub-millisecond wake-ups; `None`: the poll's millisecond timeout only.
    timer: Option<&'t Timer>,
    /// The socket flagged an error (EPOLLERR, or a receive that failed with one): its
    /// error queue may hold ICMP port unreachables ([`crate::icmp`]).
    socket_error: bool,
    counters: Counters,
    burn: Burn,
}

/// Runs `endpoint` on `socket` until `app` is finished; returns what it counted.
/// `monitor` samples the socket's drops and buffers as the loop turns.
fn run(
    (socket, extra): (&mut Socket, &mut [(SocketAddr, Socket)]),
    endpoint: &mut Endpoint,
    clock: Clock,
    timer: Option<&Timer>,
    monitor: &mut SocketMonitor,
    (stop, burn): (&StopHandle, Burn),
    app: &mut dyn Application,
) -> Result<Counters> {
    let poll = Poll::new().context("creating the event loop")?;
    let waker = mio::Waker::new(poll.registry(), WAKER).context("creating the loop's waker")?;
    let _installed = stop.install(waker);
    poll.registry()
        .register(socket.source(), SOCKET, Interest::READABLE)?;
    if let Some(t) = &timer {
        poll.registry()
            .register(&mut mio::unix::SourceFd(&t.fd()), TIMER, Interest::READABLE)?;
    }
    for (i, (_, s)) in extra.iter_mut().enumerate() {
        let token = Token(EXTRA_BASE + i);
        poll.registry()
            .register(s.source(), token, Interest::READABLE)?;
    }
    let batch = quinn_udp::BATCH_SIZE;
    let mut d = Driver {
        poll,
        events: Events::with_capacity(8),
        recv_bufs: (0..batch).map(|_| vec![0u8; RECV_BUF]).collect(),
        recv_meta: vec![RecvMeta::default(); batch],
        pending: None,
        pending_source: None,
        extra_readable: vec![true; extra.len()],
        send_buf: Vec::with_capacity(RECV_BUF),
        // Datagrams may have arrived before registration; edge-triggered readiness
        // would not report them.
        readable: true,
        writable_interest: false,
        timer,
        socket_error: false,
        counters: Counters::default(),
        burn,
    };
    let mut shutting_down = false;
    loop {
        let now = clock.now();
        if !shutting_down && (crate::signal::stop_requested() || stop.requested()) {
            shutting_down = true;
            app.shutdown(endpoint, now);
        }
        endpoint.handle_timeout(now);
        app.drive(endpoint, now).map_err(NetError::Application)?;
        d.flush((socket, extra), endpoint, now)?;
        monitor.tick(now, socket, endpoint, d.counters.bytes_received);
        if app.finished(endpoint) && d.pending.is_none() {
            d.counters.kernel_drops = monitor.finish(clock.now(), socket, endpoint);
            return Ok(d.counters);
        }
        if !d.readable && !d.extra_readable.contains(&true) {
            let mut wait = match endpoint.poll_timeout() {
                Some(t) => t.saturating_duration_since(clock.now()).min(IDLE_WAIT),
                None => IDLE_WAIT,
            };
            if d.pending.is_some() && wait.is_zero() {
                // Due timers cannot send while the kernel buffer is full: wait for room.
                wait = Duration::from_millis(1);
            }
            if !wait.is_zero() {
                d.wait(wait)?;
            }
        }
        if d.readable {
            d.readable = d.receive(socket, None, endpoint, clock)?;
        }
        for (i, (addr, s)) in extra.iter().enumerate() {
            if d.extra_readable[i] {
                d.extra_readable[i] = d.receive(s, Some(*addr), endpoint, clock)?;
            }
        }
        if std::mem::take(&mut d.socket_error) {
            for destination in socket.take_refused() {
                endpoint.handle_port_unreachable(clock.now(), destination);
            }
        }
    }
}

impl Driver<'_> {
    /// Sleeps until the socket is ready or `wait` passes; notes what became ready.
    fn wait(&mut self, wait: Duration) -> Result<()> {
        let timeout = match &self.timer {
            Some(t) if wait < PRECISE_BELOW => {
                t.arm(wait);
                // The timerfd wakes the poll on time; this is only a backstop.
                Some(wait + Duration::from_millis(1))
            }
            _ => Some(wait),
        };
        match self.poll.poll(&mut self.events, timeout) {
            Ok(()) => {}
            // A signal (e.g. SIGINT): the loop checks the stop flag next turn.
            Err(e) if e.kind() == ErrorKind::Interrupted => return Ok(()),
            Err(e) => return Err(e).context("waiting for the socket"),
        }
        for ev in self.events.iter() {
            if ev.token() == TIMER {
                if let Some(t) = self.timer {
                    t.clear();
                }
            } else if ev.token() == WAKER {
                // A stop request: the loop checks it next turn.
            } else if let Some(r) =
                (ev.token().0.checked_sub(EXTRA_BASE)).and_then(|i| self.extra_readable.get_mut(i))
            {
                *r |= ev.is_readable();
            } else {
                self.readable |= ev.is_readable();
                self.socket_error |= ev.is_error();
            }
        }
        Ok(())
    }

    /// Sends the pending burst, then every burst the endpoint has ready, until done
    /// or the kernel buffer is full (then waits for writability, losing nothing).
    ///
    /// With extra sockets, datagram by datagram, each from the socket its source names
    /// (the default socket for `None` or an address not bound here). A `WouldBlock` on
    /// an extra socket waits on the default socket's writability or the next turn.
    fn flush(
        &mut self,
        (socket, extra): (&mut Socket, &[(SocketAddr, Socket)]),
        endpoint: &mut Endpoint,
        now: Instant,
    ) -> Result<()> {
        let max_segments = socket.granted().gso_segments;
        let routed = !extra.is_empty();
        loop {
            let (destination, segment_size, ecn) = match self.pending {
                Some(p) => p,
                None if routed => {
                    self.send_buf.clear();
                    let Some(t) = endpoint.poll_transmit(now, &mut self.send_buf) else {
                        self.set_writable_interest(socket, false)?;
                        return Ok(());
                    };
                    self.pending_source = t.source;
                    (t.destination, t.size, t.ecn)
                }
                None => {
                    self.send_buf.clear();
                    // The kernel's segment limit; MAX_BURST_BYTES ends the burst first
                    // for datagrams over 1,023 bytes (45 of 1,452 bytes, 54 of 1,200).
                    let cap = max_segments.max(1);
                    let Some(b) =
                        endpoint.poll_transmit_burst(now, &mut self.send_buf, cap, MAX_BURST_BYTES)
                    else {
                        self.set_writable_interest(socket, false)?;
                        return Ok(());
                    };
                    // A burst has one codepoint: the endpoint splits bursts where the
                    // connection's codepoint changes (`Burst::ecn`).
                    (b.destination, b.segment_size, b.ecn)
                }
            };
            let out = (self.pending_source.filter(|_| routed))
                .and_then(|src| extra.iter().find(|(a, _)| *a == src))
                .map_or(&*socket, |(_, s)| s);
            match out.send(destination, ecn, &self.send_buf, segment_size) {
                Ok(()) => {
                    self.pending = None;
                    let datagrams = self.send_buf.len().div_ceil(segment_size.max(1)) as u64;
                    self.counters.sendmsg_calls += 1;
                    self.counters.bytes_sent += self.send_buf.len() as u64;
                    self.counters.datagrams_sent += datagrams;
                    self.burn.spend(datagrams, self.send_buf.len() as u64);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    self.pending = Some((destination, segment_size, ecn));
                    self.counters.send_blocked += 1;
                    self.set_writable_interest(socket, true)?;
                    return Ok(());
                }
                Err(e) => return Err(e).with_context(|| format!("sending to {destination}")),
            }
        }
    }

    /// Asks the poll for writability only while a burst waits (edge-triggered
    /// writability on a busy socket would otherwise wake the loop for nothing).
    fn set_writable_interest(&mut self, socket: &mut Socket, on: bool) -> Result<()> {
        if on == self.writable_interest {
            return Ok(());
        }
        let interest = if on {
            Interest::READABLE | Interest::WRITABLE
        } else {
            Interest::READABLE
        };
        self.poll
            .registry()
            .reregister(socket.source(), SOCKET, interest)?;
        self.writable_interest = on;
        // The reregistration reports current readiness; be sure not to miss input.
        self.readable = true;
        Ok(())
    }

    /// Reads up to [`RECV_ROUNDS`] batches from `socket` (bound at `local`, `None` for
    /// the default socket), splitting GRO batches into datagrams in place and handing
    /// each to the endpoint. Returns whether the socket may still have input.
    fn receive(
        &mut self,
        socket: &Socket,
        local: Option<SocketAddr>,
        endpoint: &mut Endpoint,
        clock: Clock,
    ) -> Result<bool> {
        for _ in 0..RECV_ROUNDS {
            let mut slices: [IoSliceMut<'_>; quinn_udp::BATCH_SIZE] =
                std::array::from_fn(|_| IoSliceMut::new(&mut []));
            for (s, b) in slices.iter_mut().zip(self.recv_bufs.iter_mut()) {
                *s = IoSliceMut::new(b);
            }
            let n = match socket.recv(&mut slices, &mut self.recv_meta) {
                Ok(n) => n,
                Err(e) if is_transient(&e) => {
                    let readable = e.kind() != ErrorKind::WouldBlock;
                    // The default socket's error queue holds the ICMP reports.
                    self.socket_error |= readable && local.is_none();
                    return Ok(readable);
                }
                Err(e) => return Err(e).context("receiving"),
            };
            self.counters.recv_calls += 1;
            let now = clock.now();
            for (meta, buf) in self.recv_meta[..n].iter().zip(slices.iter_mut()) {
                let stride = meta.stride.max(1);
                self.counters.bytes_received += meta.len as u64;
                for datagram in buf[..meta.len].chunks_mut(stride) {
                    self.counters.datagrams_received += 1;
                    // Undeliverable datagrams (stray, unparseable) are simply dropped.
                    let ecn = ecn_of(meta.ecn);
                    let _ = endpoint.handle_datagram_on(now, local, meta.addr, ecn, datagram);
                    self.burn.spend(1, datagram.len() as u64);
                }
            }
        }
        Ok(true)
    }
}
