//! Time: the next deadline the driver must wake up for, and what happens when it
//! comes (the order in which expired timers are served).

use super::lifecycle::{CloseReason, State};
use super::outbox::EndpointEvent;
use super::send::MIN_PACKET_ROOM;
use super::spaces::SpaceId as Space;
use super::timers::Timer;
use super::Connection;
use crate::events::ConnectionState;
use crate::time::Instant;
use crate::wire::Side;

impl Connection {
    /// The earliest time [`Connection::handle_timeout`] must be called: the timer
    /// table's earliest deadline, or while closing or draining the end of that period.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match self.lifecycle.state() {
            State::Closing | State::Draining => self.timers.get(Timer::Close),
            State::Drained => None,
            State::Handshake | State::Established => self.timers.next_timeout(),
        }
    }

    /// Copies each space's ACK deadline into the timer table ([`Timer::ack`]): armed
    /// while the space owes an ACK and can send, unless a WFC server holds the Initial
    /// ACK for its ServerHello. The deadlines and these conditions change only when a
    /// datagram is received or sent or a timer fires (keys installed or discarded, the
    /// hold released), so those entry points call this last and `poll_timeout` reads
    /// the table alone.
    pub(super) fn arm_ack_timers(&mut self) {
        // RFC 9000 §9.3.1: a migrated path not yet validated may leave no room for an
        // ACK until more bytes come from it; the ACK waits for them.
        let blocked = self.handshake.confirmed
            && !self.path.validated
            && self.amplification_budget() < MIN_PACKET_ROOM as u64;
        for space in Space::ALL {
            let s = &self.spaces[space as usize];
            let mut due = s.acks.ack_deadline();
            if space == Space::Data {
                // draft-ietf-quic-multipath §4.1: PATH_ACKs ride on 1-RTT packets.
                due = due.into_iter().chain(self.path_spaces.ack_deadline()).min();
            }
            let at = due.filter(|_| s.can_send() && !self.initial_ack_held(space) && !blocked);
            self.timers.set_or_stop(Timer::ack(space), at);
        }
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
        self.fire_timers(now);
        self.arm_ack_timers();
    }

    /// The expired timers, in a fixed order: closing period, idle, handshake, the
    /// server's hold, loss detection, path validation, pacing, then the paths above
    /// 0's pacing and loss detection (`multipath_loss.rs`). The ACK timers are served by
    /// `poll_transmit`, which sends the ACKs due.
    fn fire_timers(&mut self, now: Instant) {
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
        if self.timers.is_expired(Timer::PathValidation, now) {
            self.on_path_validation_timer(now);
        }
        if self.timers.is_expired(Timer::Pacing, now) {
            // The pacer lets data go again; poll_transmit decides what.
            self.timers.stop(Timer::Pacing);
        }
        // draft-ietf-quic-multipath §5.7: the paths above 0, each with its own timers.
        self.on_path_timers(now);
    }
}
