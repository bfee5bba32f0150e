//! Retry and address-validation tokens on the connection's side: the client's reaction
//! to a Retry (RFC 9000 §17.2.5.2, RFC 9001 §5.8, RFC 9002 §6.3), the token a client
//! puts in its Initials (RFC 9000 §17.2.2), the transport parameters that authenticate
//! the connection IDs a Retry changed (§7.3), and how a server connection's address
//! was validated before it existed (§8.1).
//!
//! The server's decision to send Retry, and the tokens themselves, live in the
//! endpoint (`endpoint::validation`) and `crypto::token`.

use super::spaces::SpaceId;
use super::Connection;
use crate::crypto::retry;
use crate::error::TransportError;
use crate::events::{DropReason, Event, PacketHeaderInfo};
use crate::time::Instant;
use crate::wire::header::parse_header;
use crate::wire::{ConnectionId, PacketType, Side, TransportParameters};

impl Connection {
    /// Client, before its first Initial leaves: a NEW_TOKEN token from an earlier
    /// connection to the same server (RFC 9000 §8.1.3).
    pub(crate) fn set_initial_token(&mut self, token: Vec<u8>) {
        if self.side == Side::Client {
            self.tokens.initial_token = token;
        }
    }

    /// The Token field of the next long header in `space`: a client's Initials only.
    pub(super) fn header_token(&self, space: SpaceId) -> &[u8] {
        if self.side == Side::Client && space == SpaceId::Initial {
            &self.tokens.initial_token
        } else {
            &[]
        }
    }

    /// A Retry packet (RFC 9000 §17.2.5.2) from the server whose Source Connection ID
    /// is `scid`. A client accepts one Retry, before any other server packet, with a
    /// non-empty token and a valid integrity tag (RFC 9001 §5.8); anything else is
    /// dropped.
    pub(super) fn on_retry(&mut self, now: Instant, scid: ConnectionId, packet: &[u8]) -> bool {
        let size = packet.len();
        if self.side != Side::Client
            || self.handshake.received_server_packet
            || self.tokens.retry_scid.is_some()
        {
            self.drop_packet(now, Some(PacketType::Retry), size, DropReason::Other);
            return false;
        }
        let cid_len = self.config.connection_id_length as usize;
        let token = match parse_header(packet, cid_len) {
            Ok(h) if !h.token.is_empty() => h.token.to_vec(),
            _ => {
                self.drop_packet(now, Some(PacketType::Retry), size, DropReason::Other);
                return false;
            }
        };
        if !retry::verify(self.versions.current, &self.params.original_dcid, packet) {
            self.drop_packet(
                now,
                Some(PacketType::Retry),
                size,
                DropReason::DecryptionFailure,
            );
            return false;
        }
        if self.logging() {
            let header = PacketHeaderInfo {
                ty: PacketType::Retry,
                pn: None,
                dcid: self.cids.local_cid(),
                scid: Some(scid),
                path_id: None,
            };
            let frames = Vec::new();
            self.emit(
                now,
                Event::PacketReceived {
                    header,
                    size,
                    frames,
                },
            );
        }
        self.restart_after_retry(now, scid, token);
        true
    }

    /// RFC 9000 §17.2.5.2-17.2.5.3: the client sends its Initial again, to the Retry's
    /// SCID, with the Retry's token, under Initial keys of the new DCID (RFC 9001
    /// §5.2); packet numbers continue. RFC 9002 §6.3: loss recovery and its timers
    /// start over (the server kept nothing of our first Initials), as quinn does.
    fn restart_after_retry(&mut self, now: Instant, scid: ConnectionId, token: Vec<u8>) {
        self.tokens.retry_scid = Some(scid);
        self.tokens.initial_token = token;
        self.cids.set_initial_remote(scid);
        self.install_initial_keys(scid);
        let initial = &mut self.spaces[SpaceId::Initial as usize];
        initial.probes = 0;
        initial.crypto_send.requeue_unacked();
        self.path.recovery.discard_space(SpaceId::Initial);
        self.ecn.on_space_discarded(SpaceId::Initial);
        self.set_loss_detection_timer(now);
    }

    /// RFC 9000 §7.3: a client checks the server's original_destination_connection_id
    /// and, exactly when it accepted a Retry, retry_source_connection_id (these
    /// authenticate the connection IDs a Retry changed).
    pub(super) fn check_retry_params(&self, p: &TransportParameters) -> Result<(), TransportError> {
        let tp_err = TransportError::transport_parameter;
        if p.original_destination_connection_id != Some(self.params.original_dcid) {
            return Err(tp_err("original_destination_connection_id does not match"));
        }
        match (self.tokens.retry_scid, p.retry_source_connection_id) {
            (None, None) => Ok(()),
            (Some(ours), Some(theirs)) if ours == theirs => Ok(()),
            (None, Some(_)) => Err(tp_err("retry_source_connection_id without a Retry")),
            (Some(_), None) => Err(tp_err("no retry_source_connection_id after a Retry")),
            (Some(_), Some(_)) => Err(tp_err(
                "retry_source_connection_id is not the Retry's Source Connection ID",
            )),
        }
    }

    /// Whether this client accepted a Retry (tests and qlog readers).
    pub fn retry_received(&self) -> bool {
        self.tokens.retry_scid.is_some()
    }
}
