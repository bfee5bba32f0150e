//! What the real-UDP driver watches on its socket, a few times per second: the kernel's
//! receive drops, logged into every connection's qlog when they grow (qlog
//! `quiclab:kernel_drops`, and once more when a connection's log ends), and the socket
//! buffers, grown when a connection's window outgrows them (issue 13, seed 004: the
//! default buffers were too small, and nothing showed it).
//!
//! # Call contract
//! [`SocketMonitor::new`] once; [`SocketMonitor::tick`] every loop turn (cheap until a
//! sample is due); [`SocketMonitor::finish`] when the loop ends. Applications that
//! remove connections before that call [`SocketLog::log_final`] first (a clone of
//! [`SocketMonitor::log`]).

use crate::udp::{bdp_note, Granted, Socket};
use quiclab_proto::events::{KernelDrops, KernelDropsTrigger};
use quiclab_proto::{Connection, Endpoint, Instant};
use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

/// Time between samples: /proc/net/udp lists every UDP socket of the host, so it is
/// read at most this often, and a drop shows in the qlog within this delay.
pub const SAMPLE_INTERVAL: Duration = Duration::from_millis(250);

/// The latest reading, shared with the application so a connection removed before
/// the loop ends still gets its final record.
#[derive(Clone, Debug, Default)]
pub struct SocketLog(Rc<Cell<Option<KernelDrops>>>);

impl SocketLog {
    /// Writes the latest reading (at most [`SAMPLE_INTERVAL`] old) into `conn`'s log
    /// as its final record; nothing when the drop count is unknown or nobody logs.
    pub fn log_final(&self, conn: &mut Connection, now: Instant) {
        if let Some(r) = self.0.get() {
            if conn.has_event_sink() {
                let trigger = KernelDropsTrigger::Final;
                conn.log_kernel_drops(now, KernelDrops { trigger, ..r });
            }
        }
    }
}

/// How far the driver may grow its socket buffers.
#[derive(Clone, Copy, Debug)]
pub struct BufferPolicy {
    /// Largest size asked for when growing, each way; at or below the starting size the
    /// buffers never grow.
    pub max: usize,
}

/// The sampler (see the module docs).
pub struct SocketMonitor {
    policy: BufferPolicy,
    log: SocketLog,
    next_sample: Instant,
    /// The drop count of the last record (`None`: none read yet).
    logged_drops: Option<u64>,
    /// Sizes last asked for, so a target the kernel will not grant is not asked again.
    asked_send: usize,
    asked_recv: usize,
    /// Datagram bytes received by the last sample (for the receive rate).
    bytes_received: u64,
    last_sample: Instant,
}

impl SocketMonitor {
    /// `start`: the size the socket was opened with (`--socket-buffer`).
    pub fn new(policy: BufferPolicy, start: usize) -> Self {
        SocketMonitor {
            policy,
            log: SocketLog::default(),
            next_sample: Instant::ZERO,
            logged_drops: None,
            asked_send: start,
            asked_recv: start,
            bytes_received: 0,
            last_sample: Instant::ZERO,
        }
    }

    /// A handle on the latest reading, for the application.
    pub fn log(&self) -> SocketLog {
        self.log.clone()
    }

    /// Samples when due: reads the drop count, grows the buffers if the windows or
    /// the drops ask for it, and logs a record into every logged connection when
    /// either changed. `bytes_received`: the loop's running total of datagram bytes.
    pub fn tick(
        &mut self,
        now: Instant,
        socket: &mut Socket,
        endpoint: &mut Endpoint,
        bytes_received: u64,
    ) {
        if now < self.next_sample {
            return;
        }
        self.next_sample = now.saturating_add(SAMPLE_INTERVAL);
        let elapsed = now.saturating_duration_since(self.last_sample);
        let received = bytes_received - self.bytes_received;
        (self.last_sample, self.bytes_received) = (now, bytes_received);
        let drops = socket.kernel_drops();
        let new_drops = match (drops, self.logged_drops) {
            (Some(d), Some(logged)) => d.saturating_sub(logged),
            (Some(d), None) => d,
            (None, _) => 0,
        };
        let resized = self.grow(socket, endpoint, received, elapsed, new_drops);
        let Some(drops) = drops else {
            return;
        };
        let reading = reading(drops, socket.granted(), KernelDropsTrigger::Increased);
        self.log.0.set(Some(reading));
        let trigger = match (new_drops > 0, resized) {
            (true, _) => KernelDropsTrigger::Increased,
            (false, true) => KernelDropsTrigger::BuffersResized,
            (false, false) => {
                self.logged_drops.get_or_insert(drops);
                return;
            }
        };
        self.logged_drops = Some(drops);
        log_all(endpoint, now, KernelDrops { trigger, ..reading });
    }

    /// The loop ends: a final record into every connection still logged; the count.
    pub fn finish(
        &mut self,
        now: Instant,
        socket: &Socket,
        endpoint: &mut Endpoint,
    ) -> Option<u64> {
        let drops = socket.kernel_drops()?;
        let reading = reading(drops, socket.granted(), KernelDropsTrigger::Final);
        self.log.0.set(Some(reading));
        log_all(endpoint, now, reading);
        Some(drops)
    }

    /// Grows the send buffer to twice the largest congestion window and the receive
    /// buffer to twice what arrives in the largest smoothed RTT (each a BDP estimate:
    /// the sender's window, the receiver's rate x RTT; twice, for the kernel's
    /// per-datagram overhead and bursts), and doubles the receive buffer when the
    /// kernel dropped datagrams since the last sample (it was too small, whatever the
    /// estimate: a receiver that waited for a CPU overflows it too). Powers of two, up
    /// to the policy's maximum. Reports a change on stderr; whether anything changed.
    fn grow(
        &mut self,
        socket: &mut Socket,
        endpoint: &Endpoint,
        received: u64,
        elapsed: Duration,
        new_drops: u64,
    ) -> bool {
        let (cwnd, srtt) = largest_window_and_rtt(endpoint);
        let recv_bdp = if elapsed.is_zero() {
            0
        } else {
            (received as f64 * srtt.as_secs_f64() / elapsed.as_secs_f64()) as u64
        };
        let before = socket.granted();
        let target = |need: u64| {
            let t = usize::try_from(need.saturating_mul(2)).unwrap_or(usize::MAX);
            t.checked_next_power_of_two()
                .unwrap_or(usize::MAX)
                .min(self.policy.max)
        };
        let send = target(cwnd);
        let mut recv = target(recv_bdp);
        if new_drops > 0 {
            recv = recv.max(target(before.recv_buffer as u64));
        }
        let ask_send = (send > self.asked_send && send > before.send_buffer).then_some(send);
        let ask_recv = (recv > self.asked_recv && recv > before.recv_buffer).then_some(recv);
        if ask_send.is_none() && ask_recv.is_none() {
            return false;
        }
        self.asked_send = self.asked_send.max(send);
        self.asked_recv = self.asked_recv.max(recv);
        let after = socket.resize(ask_send, ask_recv);
        let why_send = format!("largest cwnd {} KiB", cwnd >> 10);
        let mut why_recv = format!(
            "{} KiB received per smoothed RTT of {:.2} ms",
            recv_bdp >> 10,
            srtt.as_secs_f64() * 1e3
        );
        if new_drops > 0 {
            why_recv = format!("{new_drops} kernel drops since the last sample, {why_recv}");
        }
        let mut changes = Vec::new();
        for (what, asked, b, a, why) in [
            (
                "send",
                ask_send,
                before.send_buffer,
                after.send_buffer,
                why_send,
            ),
            (
                "recv",
                ask_recv,
                before.recv_buffer,
                after.recv_buffer,
                why_recv,
            ),
        ] {
            match asked {
                Some(_) if a != b => changes.push(format!(
                    "{what} {} -> {} KiB ({why}; {})",
                    b >> 10,
                    a >> 10,
                    bdp_note(a)
                )),
                Some(asked) => changes.push(format!(
                    "{what} asked {} KiB ({why}), the kernel kept {} KiB",
                    asked >> 10,
                    b >> 10
                )),
                None => {}
            }
        }
        note!("socket buffers: {}", changes.join("; "));
        (after.send_buffer, after.recv_buffer) != (before.send_buffer, before.recv_buffer)
    }
}

fn reading(drops: u64, g: Granted, trigger: KernelDropsTrigger) -> KernelDrops {
    KernelDrops {
        drops,
        recv_buffer: g.recv_buffer as u64,
        send_buffer: g.send_buffer as u64,
        trigger,
    }
}

/// The largest congestion window (ignoring unlimited ones: `none`) and the largest
/// smoothed RTT among the endpoint's connections. O(connections), at sample time only.
fn largest_window_and_rtt(endpoint: &Endpoint) -> (u64, Duration) {
    let mut cwnd = 0;
    let mut srtt = Duration::ZERO;
    for h in endpoint.handles() {
        if let Some(c) = endpoint.connection(h) {
            if c.is_closed() {
                continue;
            }
            let w = c.congestion_window();
            if w < u64::MAX / 4 {
                cwnd = cwnd.max(w);
            }
            if c.rtt().has_sample() {
                srtt = srtt.max(c.rtt().smoothed());
            }
        }
    }
    (cwnd, srtt)
}

/// Writes `reading` into the log of every connection that has one.
fn log_all(endpoint: &mut Endpoint, now: Instant, reading: KernelDrops) {
    let logged: Vec<_> = endpoint
        .handles()
        .filter(|&h| endpoint.connection(h).is_some_and(|c| c.has_event_sink()))
        .collect();
    for h in logged {
        if let Some(c) = endpoint.connection_mut(h) {
            c.log_kernel_drops(now, reading);
        }
    }
}
