//! Packet and header protection (RFC 9001 §5.3-5.4), in place.

use super::CryptoError;
use rustls::quic::{HeaderProtectionKey, PacketKey};
use std::ops::Range;

/// Encrypts and header-protects one packet in place.
///
/// `packet` holds the unprotected header (whose low first-byte bits give the packet
/// number length, the packet number at `pn_offset`), the plaintext payload, and
/// `packet_key.tag_len()` spare bytes at the end for the tag. The caller must have padded
/// the payload so that a 16-byte sample exists 4 bytes after `pn_offset` (RFC 9001 §5.4.2).
pub fn seal(
    packet_key: &dyn PacketKey,
    header_key: &dyn HeaderProtectionKey,
    packet: &mut [u8],
    pn_offset: usize,
    pn: u64,
) -> Result<(), CryptoError> {
    let _ = (packet_key, header_key, packet, pn_offset, pn);
    todo!("H2")
}

/// What header-protection removal reveals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnprotectedHeader {
    /// The first byte with protection removed (key phase, pn length bits visible).
    pub first_byte: u8,
    /// Packet number length in bytes (1-4).
    pub pn_len: usize,
    /// The truncated packet number as sent.
    pub truncated_pn: u64,
}

/// Removes header protection in place (RFC 9001 §5.4.1). `packet` is exactly one packet.
pub fn unprotect_header(
    header_key: &dyn HeaderProtectionKey,
    packet: &mut [u8],
    pn_offset: usize,
) -> Result<UnprotectedHeader, CryptoError> {
    let _ = (header_key, packet, pn_offset);
    todo!("H2")
}

/// Decrypts the payload in place after [`unprotect_header`]; `header_len` is
/// `pn_offset + pn_len`. Returns the plaintext's range within `packet`.
pub fn decrypt_payload(
    packet_key: &dyn PacketKey,
    packet: &mut [u8],
    header_len: usize,
    pn: u64,
) -> Result<Range<usize>, CryptoError> {
    let _ = (packet_key, packet, header_len, pn);
    todo!("H2")
}
