//! A received packet's parsed header, kept while its payload is decrypted in place.

use crate::ecn::Ecn;
use crate::wire::{ConnectionId, PacketType, ProtectedHeader};

/// The parts of a parsed header the receive path keeps (owned, so the packet bytes can
/// be decrypted in place). The endpoint builds one for the first packet of a datagram
/// when it routes the datagram, and hands it over so the header is parsed only once.
pub(crate) struct Parsed {
    pub ty: PacketType,
    /// 0 for short headers and Version Negotiation.
    pub version: u32,
    pub dcid: ConnectionId,
    pub scid: ConnectionId,
    pub pn_offset: usize,
    pub packet_len: usize,
    /// The ECN codepoint of the datagram that carried the packet (kept with packets
    /// buffered for later keys, RFC 9000 §13.4.1).
    pub ecn: Ecn,
}

impl Parsed {
    /// Where the packet number starts in the packet.
    pub(super) fn pn_offset(&self) -> usize {
        self.pn_offset
    }
}

impl From<&ProtectedHeader<'_>> for Parsed {
    fn from(h: &ProtectedHeader<'_>) -> Self {
        Parsed {
            ty: h.ty,
            version: h.version,
            dcid: h.dcid,
            scid: h.scid,
            pn_offset: h.pn_offset,
            packet_len: h.packet_len,
            ecn: Ecn::NotEct,
        }
    }
}
