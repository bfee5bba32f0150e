//! A server connection created in a version other than the client's first Initial
//! (compatible version negotiation, RFC 9368 §2.3; the endpoint chooses, see
//! `endpoint::compatible`): until the Initial keys are discarded it still reads the
//! client's Initials of the original version, with that version's Initial keys, while
//! everything it sends is in the negotiated version (the client switches once it sees
//! the server's first packet). Both versions share the Initial packet number space.

use super::Connection;
use crate::crypto::initial::initial_keys;
use crate::crypto::Keys;
use crate::events::Event;
use crate::time::Instant;
use crate::wire::{ConnectionId, Side};

/// The client's original version and its Initial keys (server, after an upgrade).
#[derive(Default)]
pub(super) struct OriginalVersion(Option<(u32, Keys)>);

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
        self.original_version = OriginalVersion(Some((original, keys)));
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
        self.original_version.0.as_ref().map(|(v, _)| *v)
    }

    /// Initial keys for a client Initial of `version`: the original version's while
    /// the Initial space has keys at all.
    pub(super) fn original_initial_keys(&self, version: u32) -> Option<&Keys> {
        match &self.original_version.0 {
            Some((v, keys)) if *v == version => Some(keys),
            _ => None,
        }
    }
}
