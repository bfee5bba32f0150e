//! Packet headers (RFC 9000 §17, RFC 8999 invariants, RFC 9369 v2 type bits).
//! Parsing happens before header protection is removed: it finds the connection IDs, the
//! token, where the packet number starts and where this packet ends in the datagram.

use super::ids::ConnectionId;
use super::varint::{self, Reader, UnexpectedEnd};

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
    /// `parse_version_negotiation` was given another kind of packet.
    #[error("not a Version Negotiation packet")]
    NotVersionNegotiation,
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

/// Length of a Retry packet's Retry Integrity Tag field (RFC 9000 §17.2.5). The tag is
/// an AEAD_AES_128_GCM tag (RFC 9001 §5.8), so this is the AEAD tag length
/// `crypto::TAG_LEN`; the wire layer sits below crypto and cannot name it, so
/// `crypto::retry` asserts at compile time that the two agree.
pub const RETRY_TAG_LEN: usize = 16;

impl From<UnexpectedEnd> for HeaderError {
    fn from(_: UnexpectedEnd) -> Self {
        HeaderError::UnexpectedEnd
    }
}

/// RFC 9000 §17.2 (v1) and RFC 9369 §3.2 (v2): the long header type bits differ.
fn long_type(version: u32, bits: u8) -> PacketType {
    let bits = if version == VERSION_2 {
        // v2: Initial 0b01, 0-RTT 0b10, Handshake 0b11, Retry 0b00.
        bits.wrapping_sub(1) & 0b11
    } else {
        bits
    };
    match bits {
        0 => PacketType::Initial,
        1 => PacketType::ZeroRtt,
        2 => PacketType::Handshake,
        _ => PacketType::Retry,
    }
}

/// Inverse of [`long_type`].
///
/// # Panics
/// For packet types that have no long header type bits.
fn long_type_bits(version: u32, ty: PacketType) -> u8 {
    let v1: u8 = match ty {
        PacketType::Initial => 0,
        PacketType::ZeroRtt => 1,
        PacketType::Handshake => 2,
        PacketType::Retry => 3,
        _ => panic!("{ty:?} has no long header type bits"),
    };
    if version == VERSION_2 {
        // RFC 9369 §3.2: each type is the v1 type plus one, modulo 4.
        v1.wrapping_add(1) & 0b11
    } else {
        v1
    }
}

/// A connection ID of at most 255 bytes (RFC 8999 §5.1).
fn raw_cid<'a>(r: &mut Reader<'a>) -> Result<&'a [u8], UnexpectedEnd> {
    let len = r.u8()?;
    r.bytes(usize::from(len))
}

fn cid(bytes: &[u8]) -> Result<ConnectionId, HeaderError> {
    ConnectionId::new(bytes).ok_or(HeaderError::ConnectionIdTooLong)
}

/// Parses the header of the packet at the start of `datagram`. Short headers carry no
/// DCID length, so the receiver passes the length of the connection IDs it issues.
///
/// The Length field is only checked against the datagram; whether it leaves room for the
/// packet number and the header protection sample is the packet protection layer's job.
pub fn parse_header(
    datagram: &[u8],
    short_dcid_len: usize,
) -> Result<ProtectedHeader<'_>, HeaderError> {
    let mut r = Reader::new(datagram);
    let first_byte = r.u8()?;
    if first_byte & 0x80 == 0 {
        // RFC 9000 §17.3.1: 0 | fixed bit | spin | reserved | key phase | pn length.
        if first_byte & 0x40 == 0 {
            return Err(HeaderError::FixedBitZero);
        }
        if short_dcid_len > ConnectionId::MAX_LEN {
            return Err(HeaderError::ConnectionIdTooLong);
        }
        let dcid = cid(r.bytes(short_dcid_len)?)?;
        return Ok(ProtectedHeader {
            ty: PacketType::OneRtt,
            first_byte,
            version: 0,
            dcid,
            scid: ConnectionId::EMPTY,
            token: &[],
            pn_offset: r.position(),
            packet_len: datagram.len(),
        });
    }
    // RFC 8999 §5.1: the version-independent part of a long header.
    let version = r.u32()?;
    let dcid = raw_cid(&mut r)?;
    let scid = raw_cid(&mut r)?;
    if version == 0 {
        // RFC 9000 §17.2.1: Version Negotiation; the fixed bit is unused.
        return Ok(ProtectedHeader {
            ty: PacketType::VersionNegotiation,
            first_byte,
            version,
            dcid: cid(dcid)?,
            scid: cid(scid)?,
            token: &[],
            pn_offset: 0,
            packet_len: datagram.len(),
        });
    }
    if version != VERSION_1 && version != VERSION_2 {
        return Err(HeaderError::UnsupportedVersion {
            version,
            dcid: dcid.to_vec(),
            scid: scid.to_vec(),
        });
    }
    // RFC 9000 §17.2: the fixed bit must be set.
    if first_byte & 0x40 == 0 {
        return Err(HeaderError::FixedBitZero);
    }
    let (dcid, scid) = (cid(dcid)?, cid(scid)?);
    let ty = long_type(version, (first_byte >> 4) & 0b11);
    let mut token: &[u8] = &[];
    match ty {
        PacketType::Retry => {
            // RFC 9000 §17.2.5: the token is everything before the integrity tag.
            let len = r
                .remaining()
                .checked_sub(RETRY_TAG_LEN)
                .ok_or(HeaderError::UnexpectedEnd)?;
            token = r.bytes(len)?;
            return Ok(ProtectedHeader {
                ty,
                first_byte,
                version,
                dcid,
                scid,
                token,
                pn_offset: 0,
                packet_len: datagram.len(),
            });
        }
        PacketType::Initial => {
            // RFC 9000 §17.2.2: Token Length (i), Token.
            let len = r.varint()?;
            let len = usize::try_from(len).map_err(|_| HeaderError::UnexpectedEnd)?;
            token = r.bytes(len)?;
        }
        _ => {}
    }
    // RFC 9000 §17.2: Length covers the packet number and the payload.
    let length = r.varint()?;
    let pn_offset = r.position();
    let packet_len = usize::try_from(length)
        .ok()
        .and_then(|l| l.checked_add(pn_offset))
        .filter(|&end| end <= datagram.len())
        .ok_or(HeaderError::LengthExceedsDatagram)?;
    Ok(ProtectedHeader {
        ty,
        first_byte,
        version,
        dcid,
        scid,
        token,
        pn_offset,
        packet_len,
    })
}

/// The supported versions listed in a Version Negotiation packet (RFC 9000 §17.2.1).
/// Connection IDs may be up to 255 bytes here (RFC 8999 §6); a list that is not a whole
/// number of 32-bit versions is malformed.
pub fn parse_version_negotiation(packet: &[u8]) -> Result<Vec<u32>, HeaderError> {
    let mut r = Reader::new(packet);
    let first = r.u8()?;
    if first & 0x80 == 0 || r.u32()? != 0 {
        return Err(HeaderError::NotVersionNegotiation);
    }
    raw_cid(&mut r)?;
    raw_cid(&mut r)?;
    let rest = r.rest();
    if !rest.len().is_multiple_of(4) {
        return Err(HeaderError::UnexpectedEnd);
    }
    Ok(rest
        .chunks_exact(4)
        .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// Offsets a caller needs after writing a long header. Both are indices into the
/// caller's `buf` (so they stay valid when packets are coalesced into one buffer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LongHeaderOffsets {
    /// Where the 2-byte Length field starts (patch it with `varint::patch_u14`).
    pub length_offset: usize,
    /// Where the packet number starts.
    pub pn_offset: usize,
}

/// Appends the low `pn_len` bytes of `pn` (RFC 9000 §17.1).
fn write_pn(buf: &mut Vec<u8>, pn: u64, pn_len: usize) {
    assert!((1..=4).contains(&pn_len), "packet number length {pn_len}");
    buf.extend_from_slice(&pn.to_be_bytes()[8usize.saturating_sub(pn_len)..]);
}

fn write_cid(buf: &mut Vec<u8>, cid: &[u8]) {
    let len = u8::try_from(cid.len()).expect("connection ID longer than 255 bytes");
    buf.push(len);
    buf.extend_from_slice(cid);
}

/// Appends an Initial, 0-RTT or Handshake long header with a 2-byte Length placeholder
/// and the packet number truncated to `pn_len` (1-4) bytes; the unprotected first byte
/// carries `pn_len - 1` in its low bits. `token` is only written for Initial packets.
/// Offsets are indices into `buf`.
///
/// # Panics
/// If `ty` is not Initial, 0-RTT or Handshake, or `pn_len` is not 1-4.
#[allow(clippy::too_many_arguments)]
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
    assert!(
        matches!(
            ty,
            PacketType::Initial | PacketType::ZeroRtt | PacketType::Handshake
        ),
        "{ty:?} is not a long header packet with a packet number"
    );
    assert!((1..=4).contains(&pn_len), "packet number length {pn_len}");
    // RFC 9000 §17.2: 1 | fixed bit | type (2) | reserved (2) | pn length (2).
    buf.push(0xc0 | long_type_bits(version, ty) << 4 | (pn_len as u8).saturating_sub(1));
    buf.extend_from_slice(&version.to_be_bytes());
    write_cid(buf, dcid.as_bytes());
    write_cid(buf, scid.as_bytes());
    if ty == PacketType::Initial {
        // RFC 9000 §17.2.2.
        varint::write(buf, token.len() as u64);
        buf.extend_from_slice(token);
    }
    let length_offset = buf.len();
    varint::write_with_len(buf, 0, 2);
    let pn_offset = buf.len();
    write_pn(buf, pn, pn_len);
    LongHeaderOffsets {
        length_offset,
        pn_offset,
    }
}

/// Appends a short (1-RTT) header; returns the packet number offset (RFC 9000 §17.3.1)
/// as an index into `buf`.
///
/// # Panics
/// If `pn_len` is not 1-4.
pub fn write_short_header(
    buf: &mut Vec<u8>,
    dcid: &ConnectionId,
    spin: bool,
    key_phase: bool,
    pn: u64,
    pn_len: usize,
) -> usize {
    assert!((1..=4).contains(&pn_len), "packet number length {pn_len}");
    // 0 | fixed bit | spin | reserved (2) = 0 | key phase | pn length (2).
    buf.push(
        0x40 | u8::from(spin) << 5 | u8::from(key_phase) << 2 | (pn_len as u8).saturating_sub(1),
    );
    buf.extend_from_slice(dcid.as_bytes());
    let pn_offset = buf.len();
    write_pn(buf, pn, pn_len);
    pn_offset
}

/// Appends a Version Negotiation packet (RFC 9000 §17.2.1). `unused` fills the first
/// byte's low 7 bits (randomness from the caller's seeded generator). The IDs echo the
/// client's, so they may be up to 255 bytes (RFC 8999 §6).
///
/// # Panics
/// If a connection ID is longer than 255 bytes.
pub fn write_version_negotiation(
    buf: &mut Vec<u8>,
    dcid: &[u8],
    scid: &[u8],
    versions: &[u32],
    unused: u8,
) {
    buf.push(0x80 | (unused & 0x7f));
    buf.extend_from_slice(&0u32.to_be_bytes());
    write_cid(buf, dcid);
    write_cid(buf, scid);
    for v in versions {
        buf.extend_from_slice(&v.to_be_bytes());
    }
}

/// Appends a Retry packet without its integrity tag (RFC 9000 §17.2.5); the caller
/// appends the tag computed by `crypto::retry`. `unused` fills the low 4 bits.
pub fn write_retry_without_tag(
    buf: &mut Vec<u8>,
    version: u32,
    dcid: &ConnectionId,
    scid: &ConnectionId,
    token: &[u8],
    unused: u8,
) {
    buf.push(0xc0 | long_type_bits(version, PacketType::Retry) << 4 | (unused & 0x0f));
    buf.extend_from_slice(&version.to_be_bytes());
    write_cid(buf, dcid.as_bytes());
    write_cid(buf, scid.as_bytes());
    buf.extend_from_slice(token);
}

/// Packet number length to send `pn` when the peer has acknowledged up to
/// `largest_acked` (RFC 9000 §17.1, Appendix A.2): enough bytes to represent more than
/// twice the number of unacknowledged packets, at most 4.
pub fn packet_number_len(pn: u64, largest_acked: Option<u64>) -> usize {
    let unacked = match largest_acked {
        Some(la) => pn.saturating_sub(la),
        None => pn.saturating_add(1),
    }
    .max(1);
    // A.2: min_bits = log2(unacked) + 1, i.e. 2 * unacked <= 2^(8 * bytes).
    let twice = u128::from(unacked).saturating_mul(2);
    [(1, 1 << 8), (2, 1 << 16), (3, 1 << 24)]
        .into_iter()
        .find(|&(_, range)| twice <= range)
        .map_or(4, |(bytes, _)| bytes)
}

/// Recovers a full packet number from its truncated form (RFC 9000 Appendix A.3):
/// the candidate closest to `largest_pn + 1`. `pn_len` is 1-4 (clamped otherwise).
pub fn decode_packet_number(largest_pn: Option<u64>, truncated: u64, pn_len: usize) -> u64 {
    let win: u64 = match pn_len {
        0 | 1 => 1 << 8,
        2 => 1 << 16,
        3 => 1 << 24,
        _ => 1 << 32,
    };
    let expected = largest_pn.map_or(0, |l| l.saturating_add(1));
    let hwin = win / 2;
    let mask = win.saturating_sub(1);
    let candidate = (expected & !mask) | (truncated & mask);
    // Each step is guarded by the comparison before it, so nothing saturates.
    if expected >= hwin
        && candidate <= expected.saturating_sub(hwin)
        && candidate < (1u64 << 62).saturating_sub(win)
    {
        candidate.saturating_add(win)
    } else if candidate > expected.saturating_add(hwin) && candidate >= win {
        candidate.saturating_sub(win)
    } else {
        candidate
    }
}

#[cfg(test)]
#[allow(clippy::arithmetic_side_effects)] // tests compute expected values freely
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn c(b: &[u8]) -> ConnectionId {
        ConnectionId::new(b).unwrap()
    }

    /// Writes a long header packet with `payload_len` bytes after the packet number.
    fn long_packet(
        ty: PacketType,
        version: u32,
        token: &[u8],
        pn_len: usize,
        payload_len: usize,
    ) -> (Vec<u8>, LongHeaderOffsets) {
        let mut buf = Vec::new();
        let off = write_long_header(
            &mut buf,
            ty,
            version,
            &c(&[1, 2, 3, 4, 5, 6, 7, 8]),
            &c(&[9, 9]),
            token,
            0x1234_5678,
            pn_len,
        );
        buf.resize(buf.len() + payload_len, 0xee);
        let len = (buf.len() - off.pn_offset) as u64;
        varint::patch_u14(&mut buf, off.length_offset, len);
        (buf, off)
    }

    #[test]
    fn long_header_roundtrip_v1_v2() {
        for version in [VERSION_1, VERSION_2] {
            for ty in [
                PacketType::Initial,
                PacketType::ZeroRtt,
                PacketType::Handshake,
            ] {
                for pn_len in 1..=4 {
                    let (mut buf, off) = long_packet(ty, version, b"tok", pn_len, 30);
                    let packet_len = buf.len();
                    // A coalesced packet after it must not be counted.
                    buf.extend_from_slice(&[0x40; 25]);
                    let h = parse_header(&buf, 0).unwrap();
                    assert_eq!(h.ty, ty);
                    assert_eq!(h.version, version);
                    assert_eq!(h.dcid, c(&[1, 2, 3, 4, 5, 6, 7, 8]));
                    assert_eq!(h.scid, c(&[9, 9]));
                    let want_token: &[u8] = if ty == PacketType::Initial {
                        b"tok"
                    } else {
                        b""
                    };
                    assert_eq!(h.token, want_token);
                    assert_eq!(h.pn_offset, off.pn_offset);
                    assert_eq!(h.packet_len, packet_len);
                    assert_eq!(usize::from(h.first_byte & 3) + 1, pn_len);
                    let pn = &buf[off.pn_offset..off.pn_offset + pn_len];
                    assert_eq!(pn, &0x1234_5678u32.to_be_bytes()[4 - pn_len..]);
                }
            }
        }
    }

    #[test]
    fn v2_type_bits() {
        // RFC 9369 §3.2: Initial 0b01, 0-RTT 0b10, Handshake 0b11, Retry 0b00.
        let (buf, _) = long_packet(PacketType::Initial, VERSION_2, b"", 1, 20);
        assert_eq!((buf[0] >> 4) & 3, 0b01);
        let (buf, _) = long_packet(PacketType::Handshake, VERSION_2, b"", 1, 20);
        assert_eq!((buf[0] >> 4) & 3, 0b11);
        let (buf, _) = long_packet(PacketType::Handshake, VERSION_1, b"", 1, 20);
        assert_eq!((buf[0] >> 4) & 3, 0b10);
        let mut buf = Vec::new();
        write_retry_without_tag(&mut buf, VERSION_2, &c(&[1]), &c(&[2]), b"t", 0xff);
        assert_eq!(buf[0], 0xcf);
    }

    #[test]
    fn short_header_roundtrip() {
        for (spin, kp) in [(false, false), (true, false), (false, true), (true, true)] {
            let mut buf = Vec::new();
            let dcid = c(&[7; 12]);
            let pn_off = write_short_header(&mut buf, &dcid, spin, kp, 0xabcdef, 3);
            buf.extend_from_slice(&[0; 20]);
            assert_eq!(pn_off, 13);
            assert_eq!(buf[0] & 0xc0, 0x40);
            assert_eq!(buf[0] & 0x20 != 0, spin);
            assert_eq!(buf[0] & 0x04 != 0, kp);
            assert_eq!(buf[0] & 0x18, 0);
            assert_eq!(buf[0] & 3, 2);
            assert_eq!(&buf[13..16], &[0xab, 0xcd, 0xef]);
            let h = parse_header(&buf, 12).unwrap();
            assert_eq!(h.ty, PacketType::OneRtt);
            assert_eq!(h.dcid, dcid);
            assert_eq!(h.scid, ConnectionId::EMPTY);
            assert_eq!((h.pn_offset, h.packet_len), (13, buf.len()));
        }
        assert_eq!(
            parse_header(&[0x40, 1, 2], 4),
            Err(HeaderError::UnexpectedEnd)
        );
        assert_eq!(parse_header(&[0x00; 30], 8), Err(HeaderError::FixedBitZero));
        assert_eq!(
            parse_header(&[0x40; 30], 21),
            Err(HeaderError::ConnectionIdTooLong)
        );
    }

    #[test]
    fn retry_roundtrip() {
        let mut buf = Vec::new();
        write_retry_without_tag(&mut buf, VERSION_1, &c(&[1, 2]), &c(&[3; 20]), b"retry!", 5);
        buf.extend_from_slice(&[0xaa; RETRY_TAG_LEN]);
        let h = parse_header(&buf, 0).unwrap();
        assert_eq!(h.ty, PacketType::Retry);
        assert_eq!(buf[0], 0xf5);
        assert_eq!(h.token, b"retry!");
        assert_eq!((h.dcid, h.scid), (c(&[1, 2]), c(&[3; 20])));
        assert_eq!(h.packet_len, buf.len());
        // Shorter than the tag.
        let short = &buf[..buf.len() - RETRY_TAG_LEN - 7];
        assert_eq!(parse_header(short, 0), Err(HeaderError::UnexpectedEnd));
    }

    #[test]
    fn version_negotiation_roundtrip() {
        let long_dcid = [5u8; 200];
        let mut buf = Vec::new();
        write_version_negotiation(&mut buf, &[1, 2, 3], &[4], &[VERSION_1, VERSION_2], 0x3f);
        assert_eq!(buf[0], 0xbf);
        let h = parse_header(&buf, 0).unwrap();
        assert_eq!(h.ty, PacketType::VersionNegotiation);
        assert_eq!((h.dcid, h.scid), (c(&[1, 2, 3]), c(&[4])));
        assert_eq!(
            parse_version_negotiation(&buf).unwrap(),
            vec![VERSION_1, VERSION_2]
        );
        // The fixed bit is not checked for Version Negotiation.
        buf[0] = 0x80;
        assert!(parse_header(&buf, 0).is_ok());
        // RFC 8999: VN may echo IDs up to 255 bytes.
        let mut buf = Vec::new();
        write_version_negotiation(&mut buf, &long_dcid, &[], &[7], 0);
        assert_eq!(parse_version_negotiation(&buf).unwrap(), vec![7]);
        assert_eq!(parse_header(&buf, 0), Err(HeaderError::ConnectionIdTooLong));
        // Malformed version list and non-VN packets.
        buf.push(0);
        assert_eq!(
            parse_version_negotiation(&buf),
            Err(HeaderError::UnexpectedEnd)
        );
        let (initial, _) = long_packet(PacketType::Initial, VERSION_1, b"", 1, 20);
        assert_eq!(
            parse_version_negotiation(&initial),
            Err(HeaderError::NotVersionNegotiation)
        );
    }

    #[test]
    fn unsupported_version_keeps_raw_ids() {
        let mut buf = vec![0x80, 0x0a, 0x0a, 0x0a, 0x0a, 25];
        buf.extend_from_slice(&[1; 25]);
        buf.push(0);
        buf.extend_from_slice(&[0; 1200]);
        assert_eq!(
            parse_header(&buf, 0),
            Err(HeaderError::UnsupportedVersion {
                version: 0x0a0a_0a0a,
                dcid: vec![1; 25],
                scid: vec![],
            })
        );
    }

    #[test]
    fn long_header_errors() {
        let (buf, off) = long_packet(PacketType::Handshake, VERSION_1, b"", 2, 20);
        // Fixed bit cleared.
        let mut bad = buf.clone();
        bad[0] &= !0x40;
        assert_eq!(parse_header(&bad, 0), Err(HeaderError::FixedBitZero));
        // Length one beyond the datagram.
        let mut bad = buf.clone();
        let len = (buf.len() - off.pn_offset + 1) as u64;
        varint::patch_u14(&mut bad, off.length_offset, len);
        assert_eq!(
            parse_header(&bad, 0),
            Err(HeaderError::LengthExceedsDatagram)
        );
        // DCID length 21.
        let mut bad = vec![0xe0, 0, 0, 0, 1, 21];
        bad.extend_from_slice(&[0; 21 + 1 + 1 + 20]);
        assert_eq!(parse_header(&bad, 0), Err(HeaderError::ConnectionIdTooLong));
        bad[5] = 20;
        assert!(parse_header(&bad, 0).is_ok());
        // Every truncation of the header is an error, never a panic.
        for cut in 0..off.pn_offset {
            assert!(parse_header(&buf[..cut], 0).is_err(), "cut {cut}");
        }
        // Initial whose token length runs past the end.
        let (mut init, _) = long_packet(PacketType::Initial, VERSION_1, b"", 1, 20);
        let tok_at = 1 + 4 + 1 + 8 + 1 + 2;
        init[tok_at] = 0x3f;
        init.truncate(tok_at + 10);
        assert_eq!(parse_header(&init, 0), Err(HeaderError::UnexpectedEnd));
    }

    #[test]
    fn rfc_a2_packet_number_length() {
        // RFC 9000 §A.2 examples.
        assert_eq!(packet_number_len(0xac5c02, Some(0xabe8b3)), 2);
        assert_eq!(packet_number_len(0xace8fe, Some(0xabe8b3)), 3);
        assert_eq!(packet_number_len(0, None), 1);
        assert_eq!(packet_number_len(127, None), 1);
        assert_eq!(packet_number_len(128, None), 2);
        assert_eq!(packet_number_len(228, Some(100)), 1);
        assert_eq!(packet_number_len(229, Some(100)), 2);
        assert_eq!(packet_number_len(u64::MAX, None), 4);
        assert_eq!(packet_number_len(5, Some(10)), 1);
    }

    #[test]
    fn rfc_a3_packet_number_decoding() {
        // RFC 9000 §A.3 example.
        assert_eq!(
            decode_packet_number(Some(0xa82f30ea), 0x9b32, 2),
            0xa82f9b32
        );
        assert_eq!(decode_packet_number(None, 0, 1), 0);
        assert_eq!(decode_packet_number(None, 0xff, 1), 0xff);
        // Wrap forwards and backwards around the window.
        assert_eq!(decode_packet_number(Some(0xfe), 0x01, 1), 0x101);
        assert_eq!(decode_packet_number(Some(0x101), 0xff, 1), 0xff);
        // Edges: no overflow near 2^62 and u64::MAX, no underflow near 0.
        let max = varint::MAX;
        assert_eq!(decode_packet_number(Some(max - 1), max & 0xff, 1), max);
        let _ = decode_packet_number(Some(max), 0, 4);
        let _ = decode_packet_number(Some(u64::MAX), 0xffff_ffff, 4);
        let _ = decode_packet_number(Some(u64::MAX - 1), 0, 1);
        assert_eq!(decode_packet_number(Some(0), 0xff, 1), 0xff);
    }

    proptest! {
        #[test]
        fn prop_pn_roundtrip(largest in proptest::option::of(0u64..1 << 61), delta in 1u64..1 << 20) {
            // Whatever length the sender picks, the receiver recovers the number when it
            // has seen everything up to `largest` (the sender's largest acked).
            let pn = largest.map_or(delta - 1, |l| l + delta);
            let len = packet_number_len(pn, largest);
            let truncated = pn & ((1u64 << (8 * len)) - 1);
            prop_assert_eq!(decode_packet_number(largest, truncated, len), pn);
        }

        #[test]
        fn prop_long_header_roundtrip(
            v2 in any::<bool>(),
            ty in 0u8..3,
            dcid in proptest::collection::vec(any::<u8>(), 0..=20),
            scid in proptest::collection::vec(any::<u8>(), 0..=20),
            token in proptest::collection::vec(any::<u8>(), 0..100),
            pn in any::<u32>(),
            pn_len in 1usize..=4,
            payload in 0usize..200,
        ) {
            let version = if v2 { VERSION_2 } else { VERSION_1 };
            let ty = [PacketType::Initial, PacketType::ZeroRtt, PacketType::Handshake][ty as usize];
            let mut buf = Vec::new();
            let off = write_long_header(&mut buf, ty, version, &c(&dcid), &c(&scid), &token, u64::from(pn), pn_len);
            buf.resize(buf.len() + payload, 0);
            let len = (buf.len() - off.pn_offset) as u64;
            varint::patch_u14(&mut buf, off.length_offset, len);
            let h = parse_header(&buf, 0).unwrap();
            prop_assert_eq!(h.ty, ty);
            prop_assert_eq!(h.dcid, c(&dcid));
            prop_assert_eq!(h.scid, c(&scid));
            prop_assert_eq!(h.pn_offset, off.pn_offset);
            prop_assert_eq!(h.packet_len, buf.len());
            if ty == PacketType::Initial {
                prop_assert_eq!(h.token, &token[..]);
            }
        }

        #[test]
        fn prop_arbitrary_bytes_never_panic(buf in proptest::collection::vec(any::<u8>(), 0..300), cid_len in 0usize..25) {
            if let Ok(h) = parse_header(&buf, cid_len) {
                prop_assert!(h.packet_len <= buf.len());
                prop_assert!(h.pn_offset <= h.packet_len);
            }
            let _ = parse_version_negotiation(&buf);
        }
    }
}
