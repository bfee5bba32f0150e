//! NEW_TOKEN (RFC 9000 §8.1.3, §19.7): the server sends one token after the handshake
//! (resent if lost, RFC 9000 §13.3); the client hands the tokens it receives to its
//! endpoint, which uses them on its next connection to the same server.
// Peer values pass through here: arithmetic is checked, saturating or wrapping
// by the rule in CONTRIBUTING.md ("Arithmetic on wire values").
#![deny(clippy::arithmetic_side_effects)]

use super::{Connection, EndpointEvent};
use crate::error::TransportError;
use crate::wire::Side;

impl Connection {
    /// A NEW_TOKEN frame: a client passes the token to its endpoint; RFC 9000 §19.7: a
    /// server receiving one closes with PROTOCOL_VIOLATION.
    pub(super) fn on_new_token_frame(&mut self, token: &[u8]) -> Result<(), TransportError> {
        if self.side == Side::Server {
            return Err(TransportError::protocol_violation(
                "NEW_TOKEN sent by a client",
            ));
        }
        self.outbox
            .push_endpoint_event(EndpointEvent::NewToken(token.to_vec()));
        Ok(())
    }
}
