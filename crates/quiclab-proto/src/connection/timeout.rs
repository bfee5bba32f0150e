//! Time: the next deadline the driver must wake up for, and what happens when it
//! comes (the order in which expired timers are served).

use super::lifecycle::{CloseReason, State};
use super::outbox::EndpointEvent;
use super::spaces::SpaceId as Space;
use super::timers::Timer;
use super::Connection;
use crate::events::ConnectionState;
use crate::time::Instant;
use crate::wire::Side;

impl Connection {
    /// The earliest time [`Connection::handle_timeout`] must be called.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match self.lifecycle.state() {
            State::Closing | State::Draining => return self.timers.get(Timer::Close),
            State::Drained => return None,
            _ => {}
        }
        let ack = self
            .spaces
            .iter()
            .zip(Space::ALL)
            .filter(|(s, id)| s.can_send() && !self.initial_ack_held(*id))
            .filter_map(|(s, _)| s.acks.ack_deadline())
            .min();
        [self.timers.next_timeout(), ack]
            .into_iter()
            .flatten()
            .min()
    }

    /// The driver read an ICMP port unreachable for a datagram sent to this
    /// connection's peer. A client that has received nothing from the peer yet ends at
    /// once ([`CloseReason::PortUnreachable`]) instead of retrying until a timeout.
    /// Otherwise the message is ignored: ICMP is unauthenticated and can be forged
    /// (RFC 9000 §21.2: an established connection accepts almost nothing
    /// unauthenticated), and a server does not act on it. Returns whether it ended.
    pub fn handle_port_unreachable(&mut self, now: Instant) -> bool {
        let untouched = self.side == Side::Client
            && self.lifecycle.state() == State::Handshake
            && self.stats.datagrams_received.packets == 0;
        if untouched {
            self.end_silently(now, CloseReason::PortUnreachable);
        }
        untouched
    }

    /// Fires every timer whose time has come.
    pub fn handle_timeout(&mut self, now: Instant) {
        match self.lifecycle.state() {
            State::Closing | State::Draining => {
                if self.timers.is_expired(Timer::Close, now) {
                    self.lifecycle.on_drained();
                    self.set_state_event(now, ConnectionState::Closed);
                    self.outbox.push_endpoint_event(EndpointEvent::Drained);
                }
                return;
            }
            State::Drained => return,
            _ => {}
        }
        if self.timers.is_expired(Timer::Idle, now) {
            self.stats.idle_timeout = true;
            self.end_silently(now, CloseReason::IdleTimeout);
            return;
        }
        if self.timers.is_expired(Timer::Handshake, now) {
            self.end_silently(now, CloseReason::HandshakeTimeout);
            return;
        }
        if let Err(e) = self.release_handshake_hold(now) {
            self.fail(now, e);
            return;
        }
        if self.timers.is_expired(Timer::LossDetection, now) {
            self.on_loss_detection_timeout(now);
        }
        if self.timers.is_expired(Timer::Pacing, now) {
            // The pacer lets data go again; poll_transmit decides what.
            self.timers.stop(Timer::Pacing);
        }
        // ACK deadlines are served by poll_transmit.
    }
}
