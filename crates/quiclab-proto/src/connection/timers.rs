//! The connection's deadlines in one table (the model: quinn-proto's `TimerTable`), and
//! the idle timeout's rules (RFC 9000 §10.1).
//!
//! Each mechanism arms and stops its own [`Timer`]; the packet number spaces' ACK
//! deadlines are copied in after every call that can change them
//! (`Connection::arm_ack_timers`). [`super::Connection::poll_timeout`] is the table's
//! earliest deadline, and [`super::Connection::handle_timeout`] fires the expired ones
//! in a fixed order of its own. Besides the deadlines the table keeps only the idle
//! timeout's rule, which is about time alone; no other rule about what a timer does
//! lives here, so adding a mechanism means one more variant, not one more field.

use super::spaces::SpaceId;
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
    /// An ACK is due in the Initial space (RFC 9000 §13.2.1); see [`Timer::ack`].
    AckInitial,
    /// An ACK is due in the Handshake space.
    AckHandshake,
    /// An ACK is due in the application data space (max_ack_delay, RFC 9000 §13.2.1).
    AckData,
    /// A path validation's next challenge or its end (RFC 9000 §8.2.1, §8.2.4).
    PathValidation,
    /// The earliest loss detection deadline of the paths above 0, each from its own
    /// recovery (draft-ietf-quic-multipath §5.7, RFC 9002 A.8); the paths keep their
    /// own deadlines (`PathSpace::loss_timer`), so the table stays one entry long
    /// whatever the number of paths.
    PathLoss,
    /// The earliest time a path above 0's pacer lets its waiting data go (RFC 9002
    /// §7.7; `PathSpace::pacing_at`).
    PathPacing,
}

impl Timer {
    const COUNT: usize = 12;

    /// The ACK deadline of `space`: armed while the space owes an ACK, can send, and
    /// (Initial) the ACK is not held for the ServerHello. `poll_transmit` sends it.
    pub fn ack(space: SpaceId) -> Self {
        match space {
            SpaceId::Initial => Timer::AckInitial,
            SpaceId::Handshake => Timer::AckHandshake,
            SpaceId::Data => Timer::AckData,
        }
    }
}

/// Deadlines by [`Timer`] (`None` when a timer is not armed), and the idle rule.
#[derive(Clone, Debug, Default)]
pub(super) struct TimerTable {
    data: [Option<Instant>; Timer::COUNT],
    idle: IdleTimeout,
}

impl TimerTable {
    /// A table with only the idle timer armed: `idle_timeout_ms` (0 = none) from `now`.
    pub fn new(now: Instant, idle_timeout_ms: u64) -> Self {
        let mut table = TimerTable {
            idle: IdleTimeout::new(idle_timeout_ms),
            ..TimerTable::default()
        };
        table.set_or_stop(Timer::Idle, table.idle.timeout.map(|d| now + d));
        table
    }

    /// RFC 9000 §10.1: the peer's max_idle_timeout arrived; the idle timer restarts
    /// from `now` with the effective value.
    pub fn negotiate_idle(&mut self, now: Instant, peer_ms: u64) {
        let timeout = self.idle.negotiate(peer_ms);
        self.set_or_stop(Timer::Idle, timeout.map(|d| now + d));
    }

    /// RFC 9000 §10.1: a packet from the peer was processed.
    pub fn on_packet_received(&mut self, now: Instant) {
        if let Some(d) = self.idle.on_packet_received() {
            self.set(Timer::Idle, now + d);
        }
    }

    /// RFC 9000 §10.1: an ack-eliciting packet was sent.
    pub fn on_ack_eliciting_sent(&mut self, now: Instant) {
        if let Some(d) = self.idle.on_ack_eliciting_sent() {
            self.set(Timer::Idle, now + d);
        }
    }

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
    /// the connection asks for nothing else (`poll_timeout` then reads it alone).
    pub fn next_timeout(&self) -> Option<Instant> {
        self.data.iter().flatten().min().copied()
    }
}

/// The idle timeout's rules (RFC 9000 §10.1); the deadline is [`Timer::Idle`].
#[derive(Clone, Debug, Default)]
struct IdleTimeout {
    /// The effective timeout: ours until the peer's parameters arrive, then the
    /// smaller of the non-zero values; `None` disables it.
    timeout: Option<Duration>,
    /// Restart the idle timer on the next ack-eliciting send (RFC 9000 §10.1).
    restart_on_send: bool,
}

impl IdleTimeout {
    /// Our configured timeout (`idle_timeout_ms`, 0 = none).
    fn new(idle_timeout_ms: u64) -> Self {
        IdleTimeout {
            timeout: (idle_timeout_ms > 0).then(|| Duration::from_millis(idle_timeout_ms)),
            restart_on_send: false,
        }
    }

    /// RFC 9000 §10.1: the effective idle timeout is the minimum of the non-zero
    /// values. Returns it.
    fn negotiate(&mut self, peer_ms: u64) -> Option<Duration> {
        let peer = (peer_ms > 0).then(|| Duration::from_millis(peer_ms));
        self.timeout = match (self.timeout, peer) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.timeout
    }

    /// RFC 9000 §10.1: a packet from the peer restarts the timer, and so will our
    /// next ack-eliciting packet. Returns the timeout to restart with.
    fn on_packet_received(&mut self) -> Option<Duration> {
        self.restart_on_send = self.timeout.is_some() || self.restart_on_send;
        self.timeout
    }

    /// RFC 9000 §10.1: the first ack-eliciting packet sent after a receipt restarts
    /// the timer. Returns the timeout to restart with, if it restarts.
    fn on_ack_eliciting_sent(&mut self) -> Option<Duration> {
        std::mem::take(&mut self.restart_on_send)
            .then_some(self.timeout)
            .flatten()
    }
}

#[cfg(test)]
#[path = "timers_tests.rs"]
mod tests;
