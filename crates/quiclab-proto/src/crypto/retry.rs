//! Retry packet integrity (RFC 9001 §5.8; RFC 9369 §3.3.3 for v2).

use crate::wire::ConnectionId;

/// The Retry Integrity Tag over the pseudo-packet (ODCID length, ODCID, Retry packet
/// without its tag).
pub fn integrity_tag(
    version: u32,
    original_dcid: &ConnectionId,
    retry_without_tag: &[u8],
) -> [u8; 16] {
    let _ = (version, original_dcid, retry_without_tag);
    todo!("H2")
}

/// Whether the last 16 bytes of `retry_packet` are a valid tag for `original_dcid`.
pub fn verify(version: u32, original_dcid: &ConnectionId, retry_packet: &[u8]) -> bool {
    let _ = (version, original_dcid, retry_packet);
    todo!("H2")
}
