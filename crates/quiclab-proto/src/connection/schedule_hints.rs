//! What the endpoint's scheduler (crates/quiclab-proto/src/endpoint/schedule.rs) asks
//! a connection: whether one that has nothing to send stays that way until something
//! happens to it (so the endpoint polls only connections that may send, without
//! changing what is sent), and whether the application has events to collect.

use super::lifecycle::State;
use super::timers::Timer;
use super::Connection;

impl Connection {
    /// Call right after [`Connection::poll_transmit`] returned `None`. True when every
    /// later `prepare_transmit` + `poll_transmit` would also return `None` and change
    /// nothing, until one of: a datagram for this connection, its
    /// [`Connection::poll_timeout`] passing, or an application call on it. False when
    /// the answer depends on the clock alone, so the caller must keep polling:
    /// - a pacing deadline is armed, path 0's or a path above 0's (data waits on the
    ///   pacer; each poll recomputes the deadline from the current token count,
    ///   RFC 9002 §7.7);
    /// - the ack-frequency Cwnd policy waits out its once-per-RTT limit
    ///   (draft-ietf-quic-ack-frequency §8.1).
    ///
    /// Every other reason to send (ACK deadlines, loss and PTO timers, the server's
    /// handshake hold, the closing period) is a deadline in `poll_timeout`, and the
    /// remaining checks read only state that inputs change.
    pub fn send_settled(&self) -> bool {
        match self.lifecycle.state() {
            State::Draining | State::Drained | State::Closing => return true,
            _ => {}
        }
        !self.timers.is_set(Timer::Pacing)
            && !self.timers.is_set(Timer::PathPacing)
            && !self.ack_frequency_waits_on_clock()
    }

    /// Whether [`Connection::poll_event`] has an event to give.
    pub fn has_events(&self) -> bool {
        self.outbox.pending_events() > 0 || self.streams.has_events()
    }
}
