//! Where the connection is in its life (RFC 9000 §10: handshake, established,
//! closing, draining) and, once it ends, why, and the CONNECTION_CLOSE it sends.

use super::spaces::SpaceId;
use crate::error::{TransportError, TransportErrorCode};
use crate::events::Owner;
use crate::wire::{ConnectionCloseFrame, Frame};

/// Why a connection ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CloseReason {
    /// A transport error (ours or the peer's, per `owner`).
    Transport {
        owner: Owner,
        error: TransportError,
    },
    /// An application close (CONNECTION_CLOSE 0x1d).
    Application {
        owner: Owner,
        code: u64,
        reason: String,
    },
    IdleTimeout,
    /// The handshake did not complete within `handshake_timeout_ms`.
    HandshakeTimeout,
    /// Client: the network said nothing listens at the server's address and port (an
    /// ICMP port unreachable, [`Connection::handle_port_unreachable`]) before anything
    /// arrived from it.
    PortUnreachable,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum State {
    Handshake,
    Established,
    /// We sent CONNECTION_CLOSE; we answer packets with it until the closing period
    /// ends.
    Closing,
    /// The peer closed; we send nothing until the draining period ends.
    Draining,
    Drained,
}

/// Where the connection is in its life, why it ended, and the CONNECTION_CLOSE a
/// closing connection sends.
#[derive(Clone, Debug)]
pub(super) struct Lifecycle {
    state: State,
    /// A CONNECTION_CLOSE to send (set when we close).
    frame: Option<CloseReason>,
    /// The CONNECTION_CLOSE is to be sent (again): set when we close and, while
    /// closing, whenever a packet arrives (RFC 9000 §10.2.1).
    pending: bool,
    /// Why the connection ended (ours, the peer's, or the idle timeout).
    reason: Option<CloseReason>,
}

impl Default for Lifecycle {
    fn default() -> Self {
        Lifecycle {
            state: State::Handshake,
            frame: None,
            pending: false,
            reason: None,
        }
    }
}

impl Lifecycle {
    pub fn state(&self) -> State {
        self.state
    }

    /// True once CONNECTION_CLOSE was sent or received (or the connection ended
    /// silently).
    pub fn is_closed(&self) -> bool {
        !matches!(self.state, State::Handshake | State::Established)
    }

    /// Why the connection ended, once it did.
    pub fn reason(&self) -> Option<&CloseReason> {
        self.reason.as_ref()
    }

    /// The handshake completed (RFC 9001 §4.1.1).
    pub fn on_established(&mut self) {
        self.state = State::Established;
    }

    /// We close (RFC 9000 §10.2.1): enter closing and send CONNECTION_CLOSE.
    pub fn close(&mut self, reason: CloseReason) {
        self.reason = Some(reason.clone());
        self.frame = Some(reason);
        self.pending = true;
        self.state = State::Closing;
    }

    /// The peer closed (RFC 9000 §10.2.2): enter draining; `reason` is why the
    /// connection ended unless it was already closing.
    pub fn drain(&mut self, reason: CloseReason) {
        if !self.is_closed() {
            self.reason = Some(reason);
        }
        self.pending = false;
        self.state = State::Draining;
    }

    /// The connection ends at once, without a closing or draining period.
    pub fn end(&mut self, reason: CloseReason) {
        self.reason = Some(reason);
        self.state = State::Drained;
    }

    /// The closing or draining period is over (or there was none): the state can go.
    pub fn on_drained(&mut self) {
        self.state = State::Drained;
    }

    /// Whether a CONNECTION_CLOSE is to be sent now.
    pub fn close_pending(&self) -> bool {
        self.pending
    }

    /// RFC 9000 §10.2.1: a closing connection answers packets with CONNECTION_CLOSE.
    pub fn on_packet_while_closing(&mut self) {
        if self.state == State::Closing {
            self.pending = true;
        }
    }

    /// The CONNECTION_CLOSE left.
    pub fn on_close_sent(&mut self) {
        self.pending = false;
    }

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
            CloseReason::IdleTimeout
            | CloseReason::HandshakeTimeout
            | CloseReason::PortUnreachable => return,
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

/// (code, is_application, reason) of a close reason, for logs.
pub(super) fn close_fields(r: &CloseReason) -> (u64, bool, String) {
    match r {
        CloseReason::Transport { error, .. } => (error.code.0, false, error.reason.clone()),
        CloseReason::Application { code, reason, .. } => (*code, true, reason.clone()),
        CloseReason::IdleTimeout => (0, false, "idle timeout".to_string()),
        CloseReason::HandshakeTimeout => (0, false, "handshake timeout".to_string()),
        CloseReason::PortUnreachable => (0, false, "ICMP port unreachable".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::TransportError;

    fn app(code: u64) -> CloseReason {
        CloseReason::Application {
            owner: Owner::Local,
            code,
            reason: "bye".into(),
        }
    }

    #[test]
    fn closing_sends_the_frame_and_answers_packets_with_it_again() {
        let mut l = Lifecycle::default();
        assert!(!l.is_closed());
        l.on_established();
        l.close(app(7));
        assert_eq!((l.state(), l.close_pending()), (State::Closing, true));
        assert_eq!(l.reason(), Some(&app(7)));
        let mut buf = Vec::new();
        l.write_frame(&mut buf, SpaceId::Data, 1200);
        assert!(!buf.is_empty());
        l.on_close_sent();
        assert!(!l.close_pending());
        l.on_packet_while_closing();
        assert!(l.close_pending());
    }

    #[test]
    fn draining_keeps_the_first_reason_and_sends_nothing() {
        let mut l = Lifecycle::default();
        l.close(app(1));
        let peer = CloseReason::Transport {
            owner: Owner::Remote,
            error: TransportError::protocol_violation("x"),
        };
        l.drain(peer.clone());
        assert_eq!((l.state(), l.close_pending()), (State::Draining, false));
        assert_eq!(l.reason(), Some(&app(1)));
        l.on_packet_while_closing();
        assert!(!l.close_pending(), "a draining connection sends nothing");
        let mut fresh = Lifecycle::default();
        fresh.drain(peer.clone());
        assert_eq!(fresh.reason(), Some(&peer));
    }

    #[test]
    fn an_idle_timeout_ends_without_a_frame() {
        let mut l = Lifecycle::default();
        l.end(CloseReason::IdleTimeout);
        assert_eq!(l.state(), State::Drained);
        let mut buf = Vec::new();
        l.write_frame(&mut buf, SpaceId::Data, 1200);
        assert!(buf.is_empty());
    }

    #[test]
    fn an_application_close_before_1rtt_hides_its_reason() {
        let mut l = Lifecycle::default();
        l.close(app(9));
        let (mut initial, mut data) = (Vec::new(), Vec::new());
        l.write_frame(&mut initial, SpaceId::Initial, 1200);
        l.write_frame(&mut data, SpaceId::Data, 1200);
        assert!(
            initial.len() < data.len(),
            "RFC 9000 §10.2.3: no reason phrase"
        );
    }
}
