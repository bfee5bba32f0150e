//! The real-UDP driver: one blocking `std::net::UdpSocket`, the wall clock, and an
//! [`Endpoint`] driven by its call contract (handle_* in, then poll_* out). The
//! application protocol lives elsewhere ([`crate::hq`]) behind [`Application`].

use anyhow::{Context, Result};
use quiclab_proto::{Endpoint, Instant};
use std::io::ErrorKind;
use std::net::UdpSocket;
use std::time::Duration;

/// Largest datagram we accept from the socket (bigger than any QUIC payload we allow).
const RECV_BUF: usize = 65_536;
/// Datagrams read in one batch before the application and transmits run, so a burst
/// of ACKs does not wait behind a full send cycle, nor one send per datagram.
const RECV_BATCH: usize = 64;
/// Longest sleep when the endpoint has no timer (a server with no connections), so
/// `Application::finished` is still checked now and then.
const IDLE_WAIT: Duration = Duration::from_secs(1);

/// Maps the wall clock to quiclab's [`Instant`] (nanoseconds since the driver started).
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    start: std::time::Instant,
}

impl Clock {
    pub fn new() -> Self {
        Clock {
            start: std::time::Instant::now(),
        }
    }

    pub fn now(&self) -> Instant {
        let nanos = self.start.elapsed().as_nanos();
        Instant::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
    }
}

/// The application side of the loop: reacts to connection events and writes streams.
pub trait Application {
    /// Called after every batch of input: accept connections, drain events, read and
    /// write streams. Transmits are drained right after.
    fn drive(&mut self, endpoint: &mut Endpoint, now: Instant) -> Result<()>;
    /// Whether the loop should stop (checked after transmits were sent).
    fn finished(&self, endpoint: &Endpoint) -> bool;
}

/// Runs `endpoint` on `socket` until `app` is finished.
pub fn run(
    socket: &UdpSocket,
    endpoint: &mut Endpoint,
    clock: Clock,
    app: &mut dyn Application,
) -> Result<()> {
    let mut recv_buf = vec![0u8; RECV_BUF];
    let mut send_buf = Vec::with_capacity(RECV_BUF);
    loop {
        let now = clock.now();
        endpoint.handle_timeout(now);
        app.drive(endpoint, now)?;
        flush(socket, endpoint, now, &mut send_buf)?;
        if app.finished(endpoint) {
            return Ok(());
        }
        let wait = match endpoint.poll_timeout() {
            Some(t) => t.saturating_duration_since(clock.now()).min(IDLE_WAIT),
            None => IDLE_WAIT,
        };
        if wait.is_zero() {
            continue;
        }
        receive(socket, endpoint, clock, wait, &mut recv_buf)?;
    }
}

/// Sends every datagram the endpoint has ready.
fn flush(
    socket: &UdpSocket,
    endpoint: &mut Endpoint,
    now: Instant,
    buf: &mut Vec<u8>,
) -> Result<()> {
    loop {
        buf.clear();
        let Some(t) = endpoint.poll_transmit(now, buf) else {
            return Ok(());
        };
        let datagram = &buf[buf.len() - t.size..];
        match socket.send_to(datagram, t.destination) {
            Ok(_) => {}
            // A full socket buffer or an unreachable peer is packet loss, which QUIC
            // recovers from; only a broken socket ends the loop.
            Err(e) if is_transient(&e) => {}
            Err(e) => return Err(e).context(format!("sending to {}", t.destination)),
        }
    }
}

/// Waits up to `wait` for a datagram, then reads up to a batch more without waiting,
/// handing each to the endpoint.
fn receive(
    socket: &UdpSocket,
    endpoint: &mut Endpoint,
    clock: Clock,
    wait: Duration,
    buf: &mut [u8],
) -> Result<()> {
    socket.set_read_timeout(Some(wait))?;
    for i in 0..RECV_BATCH {
        if i == 1 {
            socket.set_nonblocking(true)?;
        }
        match socket.recv_from(buf) {
            Ok((n, from)) => {
                // Undeliverable datagrams (stray, unparseable) are simply dropped.
                let _ = endpoint.handle_datagram(clock.now(), from, &mut buf[..n]);
            }
            Err(e) if is_transient(&e) => break,
            Err(e) => return Err(e).context("receiving"),
        }
    }
    socket.set_nonblocking(false)?;
    Ok(())
}

/// Errors that mean "nothing now" or a lost packet, not a broken socket.
fn is_transient(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::WouldBlock
            | ErrorKind::TimedOut
            | ErrorKind::Interrupted
            | ErrorKind::ConnectionRefused
            | ErrorKind::ConnectionReset
    )
}
