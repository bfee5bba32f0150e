//! Packet headers (RFC 9000 §17, RFC 8999 invariants, RFC 9369 v2 type bits).
//! Parsing happens before header protection is removed: it finds the connection IDs, the
//! token, where the packet number starts and where this packet ends in the datagram.

use super::ids::ConnectionId;

/// QUIC version 1 (RFC 9000).
pub const VERSION_1: u32 = 0x0000_0001;
/// QUIC version 2 (RFC 9369).
pub const VERSION_2: u32 = 0x6b33_43cf;

/// The packet types of QUIC v1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PacketType {
    Initial,
    ZeroRtt,
    Handshake,
    Retry,
    VersionNegotiation,
    /// Short header.
    OneRtt,
}

/// Why a datagram's header could not be parsed; the packet (and the rest of the datagram)
/// is dropped (RFC 9000 §12.2, §5.2).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    #[error("header truncated")]
    UnexpectedEnd,
    #[error("fixed bit is zero")]
    FixedBitZero,
    #[error("connection ID longer than 20 bytes")]
    ConnectionIdTooLong,
    #[error("Length field exceeds the datagram")]
    LengthExceedsDatagram,
    /// A long header for a version we do not speak: the endpoint may answer with
    /// Version Negotiation (RFC 9000 §6.1) using these IDs (up to 255 bytes each, RFC 8999).
    #[error("unsupported version {version:#x}")]
    UnsupportedVersion {
        version: u32,
        dcid: Vec<u8>,
        scid: Vec<u8>,
    },
}

/// A packet header as parsed before header protection is removed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProtectedHeader<'a> {
    pub ty: PacketType,
    /// The first byte, still protected (low bits masked) for Initial/0-RTT/Handshake/1-RTT.
    pub first_byte: u8,
    /// 0 for short headers and Version Negotiation.
    pub version: u32,
    pub dcid: ConnectionId,
    /// Empty for short headers.
    pub scid: ConnectionId,
    /// Initial: the token; Retry: the retry token (without the integrity tag); else empty.
    pub token: &'a [u8],
    /// Offset of the Packet Number field from the start of this packet
    /// (Initial, 0-RTT, Handshake, 1-RTT; 0 otherwise).
    pub pn_offset: usize,
    /// This packet's length within the datagram: `pn_offset + Length` for long headers
    /// with a Length field, the rest of the datagram otherwise.
    pub packet_len: usize,
}

/// Parses the header of the packet at the start of `datagram`. Short headers carry no
/// DCID length, so the receiver passes the length of the connection IDs it issues.
pub fn parse_header(
    datagram: &[u8],
    short_dcid_len: usize,
) -> Result<ProtectedHeader<'_>, HeaderError> {
    let _ = (datagram, short_dcid_len);
    todo!("H1")
}

/// The supported versions listed in a Version Negotiation packet (RFC 9000 §17.2.1).
pub fn parse_version_negotiation(packet: &[u8]) -> Result<Vec<u32>, HeaderError> {
    let _ = packet;
    todo!("H1")
}

/// Offsets a caller needs after writing a long header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LongHeaderOffsets {
    /// Where the 2-byte Length field starts (patch it with `varint::patch_u14`).
    pub length_offset: usize,
    /// Where the packet number starts.
    pub pn_offset: usize,
}

/// Appends an Initial, 0-RTT or Handshake long header with a 2-byte Length placeholder
/// and the packet number truncated to `pn_len` (1-4) bytes; the unprotected first byte
/// carries `pn_len - 1` in its low bits. `token` is only written for Initial packets.
pub fn write_long_header(
    buf: &mut Vec<u8>,
    ty: PacketType,
    version: u32,
    dcid: &ConnectionId,
    scid: &ConnectionId,
    token: &[u8],
    pn: u64,
    pn_len: usize,
) -> LongHeaderOffsets {
    let _ = (buf, ty, version, dcid, scid, token, pn, pn_len);
    todo!("H1")
}

/// Appends a short (1-RTT) header; returns the packet number offset (RFC 9000 §17.3.1).
pub fn write_short_header(
    buf: &mut Vec<u8>,
    dcid: &ConnectionId,
    spin: bool,
    key_phase: bool,
    pn: u64,
    pn_len: usize,
) -> usize {
    let _ = (buf, dcid, spin, key_phase, pn, pn_len);
    todo!("H1")
}

/// Appends a Version Negotiation packet (RFC 9000 §17.2.1). `unused` fills the first
/// byte's low 7 bits (randomness from the caller's seeded generator).
pub fn write_version_negotiation(
    buf: &mut Vec<u8>,
    dcid: &[u8],
    scid: &[u8],
    versions: &[u32],
    unused: u8,
) {
    let _ = (buf, dcid, scid, versions, unused);
    todo!("H1")
}

/// Appends a Retry packet without its integrity tag (RFC 9000 §17.2.5); the caller
/// appends the tag computed by `crypto::retry`.
pub fn write_retry_without_tag(
    buf: &mut Vec<u8>,
    version: u32,
    dcid: &ConnectionId,
    scid: &ConnectionId,
    token: &[u8],
    unused: u8,
) {
    let _ = (buf, version, dcid, scid, token, unused);
    todo!("H1")
}

/// Packet number length to send `pn` when the peer has acknowledged up to
/// `largest_acked` (RFC 9000 §17.1, Appendix A.2).
pub fn packet_number_len(pn: u64, largest_acked: Option<u64>) -> usize {
    let _ = (pn, largest_acked);
    todo!("H1")
}

/// Recovers a full packet number from its truncated form (RFC 9000 Appendix A.3).
pub fn decode_packet_number(largest_pn: Option<u64>, truncated: u64, pn_len: usize) -> u64 {
    let _ = (largest_pn, truncated, pn_len);
    todo!("H1")
}
