//! The connection's deadlines in one table (the model: quinn-proto's `TimerTable`), and
//! the idle timeout's rules (RFC 9000 §10.1).
//!
//! Each mechanism arms and stops its own [`Timer`]; [`super::Connection::poll_timeout`]
//! reports the earliest armed one (with the ACK deadlines, which the packet number
//! spaces keep), and [`super::Connection::handle_timeout`] fires the expired ones in a
//! fixed order of its own. The table only stores deadlines: no rule about what a timer
//! does lives here, so adding a mechanism means one more variant, not one more field.

use crate::time::Instant;
use std::time::Duration;

/// A connection deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Timer {
    /// No packet for the idle timeout: the connection ends silently (RFC 9000 §10.1).
    Idle,
    /// The handshake has not completed by `handshake_timeout_ms` after the connection
    /// began: it ends silently, however often the peer sends (a peer that only sends
    /// Initials cannot hold a server's handshake slot longer). Stopped on completion.
    Handshake,
    /// Loss detection's time threshold or the probe timeout (RFC 9002 §6, A.8).
    LossDetection,
    /// Data waits for the pacer until then (RFC 9002 §7.7).
    Pacing,
    /// Server: TLS sees the held ClientHello then (config `handshake`: certificate and
    /// signing delays, instant ACK). Armed exactly while the hold lasts.
    ServerHold,
    /// The closing or draining period ends (RFC 9000 §10.2): the state is dropped.
    Close,
}

impl Timer {
    const COUNT: usize = 6;
}

/// Deadlines by [`Timer`]; `None` when a timer is not armed.
#[derive(Clone, Debug, Default)]
pub(super) struct TimerTable {
    data: [Option<Instant>; Timer::COUNT],
}

impl TimerTable {
    /// Arms `timer` for `at` (replacing any earlier deadline).
    pub fn set(&mut self, timer: Timer, at: Instant) {
        self.data[timer as usize] = Some(at);
    }

    /// Arms `timer` for `at`, or stops it when `at` is `None`.
    pub fn set_or_stop(&mut self, timer: Timer, at: Option<Instant>) {
        self.data[timer as usize] = at;
    }

    pub fn stop(&mut self, timer: Timer) {
        self.data[timer as usize] = None;
    }

    pub fn get(&self, timer: Timer) -> Option<Instant> {
        self.data[timer as usize]
    }

    /// Whether `timer` is armed.
    pub fn is_set(&self, timer: Timer) -> bool {
        self.data[timer as usize].is_some()
    }

    /// Whether `timer` is armed and its time has come.
    pub fn is_expired(&self, timer: Timer, now: Instant) -> bool {
        self.data[timer as usize].is_some_and(|t| now >= t)
    }

    /// The earliest armed deadline. [`Timer::Close`] is armed only once closing, when
    /// the connection asks for nothing else.
    pub fn next_timeout(&self) -> Option<Instant> {
        self.data.iter().flatten().min().copied()
    }
}

/// The idle timeout's rules (RFC 9000 §10.1); the deadline is [`Timer::Idle`].
#[derive(Clone, Debug)]
pub(super) struct IdleTimeout {
    /// The effective timeout: ours until the peer's parameters arrive, then the
    /// smaller of the non-zero values; `None` disables it.
    timeout: Option<Duration>,
    /// Restart the idle timer on the next ack-eliciting send (RFC 9000 §10.1).
    restart_on_send: bool,
}

impl IdleTimeout {
    /// Our configured timeout (`idle_timeout_ms`, 0 = none), armed from `now`.
    pub fn new(now: Instant, idle_timeout_ms: u64, timers: &mut TimerTable) -> Self {
        let timeout = (idle_timeout_ms > 0).then(|| Duration::from_millis(idle_timeout_ms));
        timers.set_or_stop(Timer::Idle, timeout.map(|d| now + d));
        IdleTimeout {
            timeout,
            restart_on_send: false,
        }
    }

    /// RFC 9000 §10.1: the effective idle timeout is the minimum of the non-zero
    /// values; the timer restarts from `now` with it.
    pub fn negotiate(&mut self, now: Instant, peer_ms: u64, timers: &mut TimerTable) {
        let peer = (peer_ms > 0).then(|| Duration::from_millis(peer_ms));
        self.timeout = match (self.timeout, peer) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        timers.set_or_stop(Timer::Idle, self.timeout.map(|d| now + d));
    }

    /// RFC 9000 §10.1: a packet from the peer was processed: restart the timer, and
    /// again on our next ack-eliciting packet.
    pub fn on_packet_received(&mut self, now: Instant, timers: &mut TimerTable) {
        if let Some(d) = self.timeout {
            timers.set(Timer::Idle, now + d);
            self.restart_on_send = true;
        }
    }

    /// RFC 9000 §10.1: the first ack-eliciting packet sent after a receipt restarts
    /// the timer.
    pub fn on_ack_eliciting_sent(&mut self, now: Instant, timers: &mut TimerTable) {
        if self.restart_on_send {
            self.restart_on_send = false;
            if let Some(d) = self.timeout {
                timers.set(Timer::Idle, now + d);
            }
        }
    }
}

#[cfg(test)]
#[path = "timers_tests.rs"]
mod tests;
