//! Closing a connection (RFC 9000 §10.2): entering the closing or draining state,
//! the CONNECTION_CLOSE frame we send while closing, and why the connection ended.
//!
//! [`Lifecycle`](super::lifecycle::Lifecycle) holds the state, what is to be sent and
//! why the connection ended; the [`Connection`] methods here take the transitions
//! (they also touch the event queues and the timer table).

use super::lifecycle::{close_fields, CloseReason, State};
use super::outbox::{ConnectionEvent, EndpointEvent};
use super::timers::Timer;
use super::Connection;
use crate::error::{TransportError, TransportErrorCode};
use crate::events::{ConnectionState, Event, Owner};
use crate::time::Instant;
use std::time::Duration;

impl Connection {
    /// Enters the closing state (RFC 9000 §10.2.1) and queues CONNECTION_CLOSE.
    pub(super) fn start_closing(&mut self, now: Instant, reason: CloseReason) {
        if self.is_closed() {
            return;
        }
        let (code, application, text) = close_fields(&reason);
        self.emit_closed(now, Owner::Local, code, application, text);
        self.outbox
            .push_event(ConnectionEvent::Closed(reason.clone()));
        self.lifecycle.close(reason);
        self.release_peer_buffers();
        self.timers.set(Timer::Close, now + self.close_period());
        self.set_state_event(now, ConnectionState::Closing);
    }

    /// The peer closed: enter draining (RFC 9000 §10.2.2).
    pub(super) fn start_draining(&mut self, now: Instant, reason: CloseReason) {
        if matches!(self.lifecycle.state(), State::Draining | State::Drained) {
            return;
        }
        if !self.is_closed() {
            let (code, application, text) = close_fields(&reason);
            self.emit_closed(now, Owner::Remote, code, application, text);
            self.outbox
                .push_event(ConnectionEvent::Closed(reason.clone()));
        }
        self.lifecycle.drain(reason);
        self.release_peer_buffers();
        self.timers.set(Timer::Close, now + self.close_period());
        self.set_state_event(now, ConnectionState::Draining);
    }

    fn emit_closed(
        &mut self,
        now: Instant,
        owner: Owner,
        code: u64,
        application: bool,
        reason: String,
    ) {
        if self.logging() {
            let code = TransportErrorCode(code);
            self.emit(
                now,
                Event::ConnectionClosed {
                    owner,
                    code,
                    application,
                    reason,
                },
            );
        }
    }

    /// Three times the current PTO (RFC 9000 §10.2); on a multipath connection three
    /// times the largest PTO among the paths (draft-ietf-quic-multipath "Connection
    /// Closure": "these states SHOULD instead persist for at least three times the
    /// largest PTO among all paths"; `multipath_pto.rs`). `max_ack_delay` is ours.
    fn close_period(&self) -> Duration {
        (self.largest_path_pto(self.config.max_ack_delay())).saturating_mul(3)
    }

    /// Ends the connection at once without a CONNECTION_CLOSE: the idle timeout (RFC
    /// 9000 §10.1), the handshake timeout or an unreachable peer (these two logged as
    /// a local close, since no packet says so).
    pub(super) fn end_silently(&mut self, now: Instant, reason: CloseReason) {
        if reason != CloseReason::IdleTimeout {
            let (code, application, text) = close_fields(&reason);
            self.emit_closed(now, Owner::Local, code, application, text);
        }
        self.outbox
            .push_event(ConnectionEvent::Closed(reason.clone()));
        self.lifecycle.end(reason);
        self.release_peer_buffers();
        self.set_state_event(now, ConnectionState::Closed);
        self.outbox.push_endpoint_event(EndpointEvent::Drained);
    }

    /// A peer violation: close with its error code.
    pub(super) fn fail(&mut self, now: Instant, error: TransportError) {
        self.stats.local_error = Some(error.code);
        self.start_closing(
            now,
            CloseReason::Transport {
                owner: Owner::Local,
                error,
            },
        );
    }
}
