//! Closing a connection (RFC 9000 §10.2): entering the closing or draining state,
//! the CONNECTION_CLOSE frame we send while closing, and why the connection ended.
//!
//! [`CloseState`] holds what is to be sent and why the connection ended; the
//! [`Connection`] methods here take the state transitions (they also touch the
//! event queues and the timer table).

use super::spaces::SpaceId;
use super::timers::Timer;
use super::{CloseReason, Connection, ConnectionEvent, EndpointEvent, State};
use crate::error::{TransportError, TransportErrorCode};
use crate::events::{ConnectionState, Event, Owner};
use crate::time::Instant;
use crate::wire::{ConnectionCloseFrame, Frame};
use std::time::Duration;

/// What a closing connection sends, and why it ended.
#[derive(Clone, Debug, Default)]
pub(super) struct CloseState {
    /// A CONNECTION_CLOSE to send (set when we close).
    pub frame: Option<CloseReason>,
    /// The CONNECTION_CLOSE is to be sent (again): set when we close and, while
    /// closing, whenever a packet arrives (RFC 9000 §10.2.1).
    pub pending: bool,
    /// Why the connection ended (ours, the peer's, or the idle timeout).
    pub reason: Option<CloseReason>,
}

impl CloseState {
    /// Writes the CONNECTION_CLOSE for `space` within `max` (RFC 9000 §19.19), its
    /// reason truncated to fit (and to 256 bytes); nothing after an idle timeout.
    pub fn write_frame(&self, buf: &mut Vec<u8>, space: SpaceId, max: usize) {
        let Some(reason) = &self.frame else {
            return;
        };
        let (code, frame_type, text) = match reason {
            CloseReason::Transport { error, .. } => (
                error.code.0,
                Some(error.frame_type.unwrap_or(0)),
                error.reason.as_str(),
            ),
            // RFC 9000 §10.2.3: an application close in Initial/Handshake packets becomes
            // APPLICATION_ERROR without the reason.
            CloseReason::Application { .. } if space != SpaceId::Data => {
                (TransportErrorCode::APPLICATION_ERROR.0, Some(0), "")
            }
            CloseReason::Application { code, reason, .. } => (*code, None, reason.as_str()),
            CloseReason::IdleTimeout | CloseReason::HandshakeTimeout => return,
        };
        let room = max.saturating_sub(buf.len() + 24);
        let text = &text.as_bytes()[..text.len().min(room).min(256)];
        Frame::ConnectionClose(ConnectionCloseFrame {
            error_code: code,
            frame_type,
            reason: text,
        })
        .encode(buf);
    }
}

impl Connection {
    /// Enters the closing state (RFC 9000 §10.2.1) and queues CONNECTION_CLOSE.
    pub(super) fn start_closing(&mut self, now: Instant, reason: CloseReason) {
        if self.is_closed() {
            return;
        }
        let (code, application, text) = close_fields(&reason);
        self.emit_closed(now, Owner::Local, code, application, text);
        self.close.reason = Some(reason.clone());
        self.events
            .push_back(ConnectionEvent::Closed(reason.clone()));
        self.close.frame = Some(reason);
        self.close.pending = true;
        self.state = State::Closing;
        self.release_peer_buffers();
        self.timers.set(Timer::Close, now + self.close_period());
        self.set_state_event(now, ConnectionState::Closing);
    }

    /// The peer closed: enter draining (RFC 9000 §10.2.2).
    pub(super) fn start_draining(&mut self, now: Instant, reason: CloseReason) {
        if matches!(self.state, State::Draining | State::Drained) {
            return;
        }
        if !self.is_closed() {
            let (code, application, text) = close_fields(&reason);
            self.emit_closed(now, Owner::Remote, code, application, text);
            self.close.reason = Some(reason.clone());
            self.events.push_back(ConnectionEvent::Closed(reason));
        }
        self.close.pending = false;
        self.state = State::Draining;
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

    /// Three times the current PTO (RFC 9000 §10.2).
    fn close_period(&self) -> Duration {
        self.path.close_period(self.config.max_ack_delay())
    }

    /// Ends the connection at once without a CONNECTION_CLOSE: the idle timeout (RFC
    /// 9000 §10.1) or the handshake timeout (logged as a local close, since no packet
    /// says so).
    pub(super) fn end_silently(&mut self, now: Instant, reason: CloseReason) {
        if reason == CloseReason::HandshakeTimeout {
            let (code, application, text) = close_fields(&reason);
            self.emit_closed(now, Owner::Local, code, application, text);
        }
        self.close.reason = Some(reason.clone());
        self.events.push_back(ConnectionEvent::Closed(reason));
        self.state = State::Drained;
        self.release_peer_buffers();
        self.set_state_event(now, ConnectionState::Closed);
        self.endpoint_events.push_back(EndpointEvent::Drained);
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

/// (code, is_application, reason) of a close reason, for logs.
fn close_fields(r: &CloseReason) -> (u64, bool, String) {
    match r {
        CloseReason::Transport { error, .. } => (error.code.0, false, error.reason.clone()),
        CloseReason::Application { code, reason, .. } => (*code, true, reason.clone()),
        CloseReason::IdleTimeout => (0, false, "idle timeout".to_string()),
        CloseReason::HandshakeTimeout => (0, false, "handshake timeout".to_string()),
    }
}
