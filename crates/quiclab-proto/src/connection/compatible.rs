//! Compatible version negotiation (RFC 9368 §2.3, between QUIC v1 and v2 in either
//! direction, RFC 9369 §4.1), both halves of a connection that changes version.
//!
//! Server: a connection created in a version other than the client's first Initial
//! (the endpoint chooses, see `endpoint::compatible`): until the Initial keys are
//! discarded it still reads the client's Initials of the original version, with that
//! version's Initial keys, while everything it sends is in the negotiated version (the
//! client switches once it sees the server's first packet). It declines 0-RTT, which
//! the client keeps sending in its original version (RFC 9368 §7.3 allows this).
//!
//! Client: it offered its other compatible versions (`version::client_information`);
//! the first server Initial in one of them, before the server sent any CRYPTO data in
//! the chosen version, moves the connection there once it authenticates with that
//! version's Initial keys (RFC 9369 §3.3.1; from the original DCID, or the Retry's).
//! From then on it sends Initial, Handshake and 1-RTT packets in the negotiated
//! version, its TLS session derives Handshake and 1-RTT keys for it
//! (`TlsSession::switch_version`), and the server's version_information must confirm
//! it (`version::check_peer_version_information`, RFC 9368 §4). Server packets in a
//! version it did not offer, or after the version settled, are dropped. Both versions
//! share the Initial packet number space.

use super::parsed::Parsed;
use super::spaces::SpaceId;
use super::Connection;
use crate::config::compatible_versions;
use crate::crypto::initial::initial_keys;
use crate::crypto::protect::{decrypt_payload, unprotect_header};
use crate::crypto::Keys;
use crate::error::TransportError;
use crate::events::{DropReason, Event};
use crate::time::Instant;
use crate::wire::header::decode_packet_number;
use crate::wire::{ConnectionId, PacketType, Side};

impl Connection {
    /// Server: this connection was created in its version, upgraded from the client's
    /// `original` whose Initials went to `client_dcid`; `client_versions` is the
    /// client's Available Versions (logged as qlog version_information).
    pub(crate) fn upgraded_from(
        &mut self,
        now: Instant,
        original: u32,
        client_dcid: &ConnectionId,
        client_versions: Vec<u32>,
    ) {
        if self.side != Side::Server {
            return;
        }
        let keys = initial_keys(original, client_dcid, Side::Server);
        self.versions.set_original(original, keys);
        // RFC 9368 §7.3: 0-RTT of the original version is not read; TLS says so.
        self.tls.reject_early_data();
        if self.logging() {
            let ev = Event::VersionInformation {
                server_versions: self.config.versions.supported_wire(),
                client_versions,
                chosen: Some(self.versions.current),
            };
            self.emit(now, ev);
        }
    }

    /// The client's original version, if this server connection was upgraded.
    pub(super) fn original_version(&self) -> Option<u32> {
        self.versions.original()
    }

    /// Initial keys for a client Initial of `version`: the original version's while
    /// the Initial space has keys at all.
    pub(super) fn original_initial_keys(&self, version: u32) -> Option<&Keys> {
        self.versions.original_initial_keys(version)
    }
}

impl Connection {
    /// Client: whether a server long header of `h`'s version may move the connection
    /// there (RFC 9368 §2.3, RFC 9369 §4.1): an Initial, in a version we offered and
    /// that is compatible with ours, before the version settled.
    pub(super) fn may_follow_upgrade(&self, h: &Parsed) -> bool {
        let offered = self.params.local.version_information.as_ref();
        self.side == Side::Client
            && h.ty == PacketType::Initial
            && !self.versions.settled
            && compatible_versions(self.versions.current, h.version)
            && offered.is_some_and(|vi| vi.available.contains(&h.version))
    }

    /// Client: the server's Initial `h` in the version it moved the connection to.
    /// Opened with that version's Initial keys (RFC 9369 §3.3.1) before anything
    /// changes, so a packet that does not authenticate is dropped and moves nothing;
    /// then the connection switches and processes it. Returns whether it was
    /// authenticated.
    pub(super) fn follow_upgrade(&mut self, now: Instant, h: Parsed, packet: &mut [u8]) -> bool {
        // RFC 9001 §5.2: from the DCID of our first Initial, or of our Initials after
        // a Retry (which RFC 9369 §4.1 keeps in the original version).
        let dcid = self.tokens.retry_scid.unwrap_or(self.params.original_dcid);
        let keys = initial_keys(h.version, &dcid, Side::Client);
        let largest = self.spaces[SpaceId::Initial as usize].acks.largest();
        let opened = unprotect_header(&*keys.remote.header, packet, h.pn_offset())
            .ok()
            .and_then(|uh| {
                let pn = decode_packet_number(largest, uh.truncated_pn, uh.pn_len);
                let header_len = h.pn_offset() + uh.pn_len;
                let range = decrypt_payload(&*keys.remote.packet, packet, header_len, pn);
                range.ok().map(|r| (pn, r))
            });
        let Some((pn, payload)) = opened else {
            self.drop_packet(now, Some(h.ty), packet.len(), DropReason::DecryptionFailure);
            return false;
        };
        if let Err(e) = self.switch_version(now, h.version, keys) {
            self.fail(now, e);
            return true;
        }
        self.process_packet(now, SpaceId::Initial, &h, pn, payload, packet)
    }

    /// Client: the connection continues in `version` with its Initial `keys`; Initials
    /// still to send or resend go in it (RFC 9369 §4.1: "SHOULD").
    fn switch_version(
        &mut self,
        now: Instant,
        version: u32,
        keys: Keys,
    ) -> Result<(), TransportError> {
        self.tls.switch_version(version)?;
        self.versions.current = version;
        self.versions.settled = true;
        self.spaces[SpaceId::Initial as usize].keys = Some(keys);
        if self.logging() {
            let offered = self.params.local.version_information.as_ref();
            let ev = Event::VersionInformation {
                server_versions: Vec::new(),
                client_versions: offered.map(|vi| vi.available.clone()).unwrap_or_default(),
                chosen: Some(version),
            };
            self.emit(now, ev);
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "compatible_tests.rs"]
mod tests;
