//! NEW_TOKEN (RFC 9000 §8.1.3, §19.7): the server sends one token after the handshake
//! (resent if lost, RFC 9000 §13.3); the client hands the tokens it receives to its
//! endpoint, which uses them on its next connection to the same server.
// Peer values pass through here: arithmetic is checked, saturating or wrapping
// by the rule in CONTRIBUTING.md ("Arithmetic on wire values").
#![deny(clippy::arithmetic_side_effects)]

use super::spaces::{SentFrame, SentFrames};
use super::{Connection, EndpointEvent};
use crate::error::TransportError;
use crate::wire::{Frame, Side};

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

impl Connection {
    /// A NEW_TOKEN frame: a client passes the token to its endpoint; RFC 9000 §19.7: a
    /// server receiving one closes with PROTOCOL_VIOLATION.
    pub(super) fn on_new_token_frame(&mut self, token: &[u8]) -> Result<(), TransportError> {
        if self.side == Side::Server {
            return Err(TransportError::protocol_violation(
                "NEW_TOKEN sent by a client",
            ));
        }
        self.endpoint_events
            .push_back(EndpointEvent::NewToken(token.to_vec()));
        Ok(())
    }
}
