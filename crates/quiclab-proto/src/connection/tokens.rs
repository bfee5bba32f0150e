//! Tokens on the connection's side (RFC 9000 §8.1): how the endpoint admitted a
//! server connection, the token a client puts in its Initials, the Retry it accepted,
//! and the server's NEW_TOKEN frame. The connection drives them from `retry.rs` and
//! `new_token.rs`.
// Peer values pass through here: arithmetic is checked, saturating or wrapping
// by the rule in CONTRIBUTING.md ("Arithmetic on wire values").
#![deny(clippy::arithmetic_side_effects)]

use super::spaces::{SentFrame, SentFrames};
use crate::wire::{ConnectionId, Frame};

/// How the endpoint admitted a server connection (RFC 9000 §8.1): what its transport
/// parameters must say about Retry, and whether the client's address is validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerValidation {
    /// The Destination Connection ID of the client's first Initial: from the Retry
    /// token after a Retry, else the one of the Initial that opens the connection.
    pub original_dcid: ConnectionId,
    /// The Source Connection ID of the Retry we sent, if we sent one (RFC 9000 §7.3).
    pub retry_scid: Option<ConnectionId>,
    /// A valid token proved the client's address: no anti-amplification limit.
    pub validated: bool,
    /// A NEW_TOKEN token to send once the handshake completes (RFC 9000 §8.1.3).
    pub new_token: Option<Vec<u8>>,
}

impl ServerValidation {
    /// No token, no Retry: `original_dcid` is the DCID of the Initial at hand.
    pub fn unvalidated(original_dcid: ConnectionId) -> Self {
        ServerValidation {
            original_dcid,
            retry_scid: None,
            validated: false,
            new_token: None,
        }
    }
}

/// The connection's token state.
#[derive(Default)]
pub(super) struct TokenState {
    /// Client: the token in the Token field of its Initials (from a Retry, or a
    /// NEW_TOKEN token of an earlier connection).
    pub initial_token: Vec<u8>,
    /// Client: the SCID of the Retry it accepted (at most one, RFC 9000 §17.2.5.2).
    pub retry_scid: Option<ConnectionId>,
    /// Server: the NEW_TOKEN frame to send.
    pub new_token: NewTokenSend,
}

/// The server's NEW_TOKEN frame: the token, and whether it is (again) to be sent.
#[derive(Debug, Default)]
pub(super) struct NewTokenSend {
    /// Kept until acknowledged, so a lost frame can be resent.
    token: Option<Vec<u8>>,
    pending: bool,
}

impl NewTokenSend {
    /// `token` is sent once the handshake completes (none: nothing to send).
    pub fn new(token: Option<Vec<u8>>) -> Self {
        NewTokenSend {
            pending: token.is_some(),
            token,
        }
    }

    pub fn has_pending(&self) -> bool {
        self.pending
    }

    /// Appends the frame if it is pending and fits before `max`; returns whether it
    /// was written (and recorded in `frames`).
    pub fn write(&mut self, buf: &mut Vec<u8>, max: usize, frames: &mut SentFrames) -> bool {
        let Some(token) = self.token.as_deref().filter(|_| self.pending) else {
            return false;
        };
        let frame = Frame::NewToken { token };
        if buf.len().saturating_add(frame.encoded_len()) > max {
            return false;
        }
        frame.encode(buf);
        self.pending = false;
        frames.push(SentFrame::NewToken);
        true
    }

    pub fn on_acked(&mut self) {
        self.token = None;
        self.pending = false;
    }

    /// RFC 9000 §13.3: a lost NEW_TOKEN frame is sent again (unless acknowledged).
    pub fn on_lost(&mut self) {
        self.pending = self.token.is_some();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_token_is_sent_until_acknowledged_and_resent_if_lost() {
        let mut n = NewTokenSend::new(Some(vec![7; 20]));
        assert!(n.has_pending());
        let (mut buf, mut frames) = (Vec::new(), SentFrames::new());
        assert!(!n.write(&mut buf, 10, &mut frames), "does not fit");
        assert!(n.write(&mut buf, 100, &mut frames));
        assert_eq!(frames.as_slice(), &[SentFrame::NewToken]);
        assert!(!n.has_pending() && !n.write(&mut buf, 100, &mut frames));
        n.on_lost();
        assert!(n.has_pending(), "RFC 9000 §13.3: resent");
        n.on_acked();
        n.on_lost();
        assert!(!n.has_pending(), "acknowledged: the token is gone");
        assert!(!NewTokenSend::new(None).has_pending());
    }

    #[test]
    fn an_unvalidated_server_connection_saw_no_retry() {
        let dcid = ConnectionId::new(&[9; 8]).unwrap();
        let v = ServerValidation::unvalidated(dcid);
        assert_eq!(
            (v.original_dcid, v.retry_scid, v.validated),
            (dcid, None, false)
        );
        assert!(v.new_token.is_none());
    }
}
