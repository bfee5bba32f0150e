//! The version in use (RFC 9000 §15, RFC 9368, RFC 9369): what a client learned from
//! Version Negotiation, whether the version is settled, and (server) the client's
//! original version after a compatible upgrade. The connection drives it from
//! `version.rs` and `compatible.rs`.

use crate::config::TransportConfig;
use crate::crypto::Keys;
use crate::wire::VersionInformation;

/// The version in use, what a client learned from Version Negotiation, and a server's
/// original version after a compatible upgrade.
pub(super) struct VersionState {
    /// The QUIC version of our long headers (RFC 9000 §15, RFC 9369).
    pub current: u32,
    /// The client's Chosen Version: its first flight's in this connection attempt (RFC
    /// 9368 §1.2). Its 0-RTT packets keep it after an upgrade (RFC 9369 §4.1).
    pub chosen: u32,
    /// The versions a Version Negotiation packet offered, once the client acted on
    /// one (it then ignores any later one, RFC 9368 §4).
    pub offered: Option<Vec<u32>>,
    /// Client: the negotiated version is known (RFC 9369 §4.1): it followed a
    /// server's upgrade, or the server sent CRYPTO data in the chosen version. Server
    /// packets of any other version are dropped from then on.
    pub settled: bool,
    /// Server, after a compatible upgrade (RFC 9368 §2.3): the client's original
    /// version and its Initial keys, for the client's Initials still in that version.
    original: Option<(u32, Keys)>,
}

/// Our version_information (RFC 9368 §3) for a connection in `version`: sent only when
/// the version config is not the default v1-only one.
pub(super) fn local_information(
    config: &TransportConfig,
    version: u32,
) -> Option<VersionInformation> {
    config.versions.announce().then(|| VersionInformation {
        chosen: version,
        available: config.versions.supported_wire(),
    })
}

/// A client's version_information (RFC 9368 §3): its Chosen Version and, as Available
/// Versions, every supported version this first flight is compatible with, most
/// preferred first: those a server may move the connection to (§2.3), which the client
/// then follows (`compatible.rs`). A single-version client offers just its own.
pub(super) fn client_information(
    config: &TransportConfig,
    version: u32,
) -> Option<VersionInformation> {
    config.versions.announce().then(|| VersionInformation {
        chosen: version,
        available: config.versions.compatible_with(version),
    })
}

impl VersionState {
    /// A connection starting in `version`, no Version Negotiation seen.
    pub fn new(version: u32) -> Self {
        VersionState {
            current: version,
            chosen: version,
            offered: None,
            settled: false,
            original: None,
        }
    }

    /// Server: the connection was upgraded from the client's `version`, whose
    /// Initials are protected with `keys`.
    pub fn set_original(&mut self, version: u32, keys: Keys) {
        self.original = Some((version, keys));
    }

    /// The client's original version, if this server connection was upgraded.
    pub fn original(&self) -> Option<u32> {
        self.original.as_ref().map(|(v, _)| *v)
    }

    /// Initial keys for a client Initial of `version`: the original version's, if
    /// that is the one.
    pub fn original_initial_keys(&self, version: u32) -> Option<&Keys> {
        match &self.original {
            Some((v, keys)) if *v == version => Some(keys),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::initial::initial_keys;
    use crate::wire::header::VERSION_2 as V2;
    use crate::wire::{ConnectionId, Side, VERSION_1};

    #[test]
    fn a_fresh_connection_has_no_original_version() {
        let v = VersionState::new(VERSION_1);
        assert_eq!(
            (v.current, v.chosen, v.settled),
            (VERSION_1, VERSION_1, false)
        );
        assert!(v.offered.is_none());
        assert_eq!(v.original(), None);
        assert!(v.original_initial_keys(VERSION_1).is_none());
    }

    #[test]
    fn original_keys_serve_only_the_original_version() {
        let mut v = VersionState::new(V2);
        let dcid = ConnectionId::new(&[7; 8]).unwrap();
        v.set_original(VERSION_1, initial_keys(VERSION_1, &dcid, Side::Server));
        assert_eq!(v.original(), Some(VERSION_1));
        assert!(v.original_initial_keys(VERSION_1).is_some());
        assert!(v.original_initial_keys(V2).is_none());
    }
}
