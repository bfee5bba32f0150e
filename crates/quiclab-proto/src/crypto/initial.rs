//! Initial secrets and keys (RFC 9001 §5.2; RFC 9369 §3.3.1 for v2).

use crate::wire::{ConnectionId, Side};
use rustls::quic::Keys;

/// The client and server Initial secrets derived from the client's first Destination
/// Connection ID (exposed for the RFC 9001 Appendix A vectors).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InitialSecrets {
    pub client: [u8; 32],
    pub server: [u8; 32],
}

/// RFC 9001 §5.2: HKDF-Extract(initial_salt, cid), then "client in" / "server in".
pub fn initial_secrets(version: u32, client_dcid: &ConnectionId) -> InitialSecrets {
    let _ = (version, client_dcid);
    todo!("H2")
}

/// Initial packet protection keys for `side` (AES-128-GCM): `local` seals what `side`
/// sends, `remote` opens what it receives.
pub fn initial_keys(version: u32, client_dcid: &ConnectionId, side: Side) -> Keys {
    let _ = (version, client_dcid, side);
    todo!("H2")
}
