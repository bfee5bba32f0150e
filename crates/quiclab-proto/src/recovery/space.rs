//! The three packet number spaces (RFC 9000 §12.3) as an index: loss recovery keeps
//! sent packets per space, the connection keeps keys, ACK state and CRYPTO streams.

use crate::events::KeyType;
use crate::wire::PacketType;

/// The three packet number spaces, in the order packets are coalesced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SpaceId {
    Initial = 0,
    Handshake = 1,
    Data = 2,
}

impl SpaceId {
    pub const ALL: [SpaceId; 3] = [SpaceId::Initial, SpaceId::Handshake, SpaceId::Data];

    pub fn packet_type(self) -> PacketType {
        match self {
            SpaceId::Initial => PacketType::Initial,
            SpaceId::Handshake => PacketType::Handshake,
            SpaceId::Data => PacketType::OneRtt,
        }
    }

    pub fn key_type(self) -> KeyType {
        match self {
            SpaceId::Initial => KeyType::Initial,
            SpaceId::Handshake => KeyType::Handshake,
            SpaceId::Data => KeyType::OneRtt,
        }
    }

    /// The space a received packet type belongs to (0-RTT shares the data space).
    pub fn of(ty: PacketType) -> Option<SpaceId> {
        match ty {
            PacketType::Initial => Some(SpaceId::Initial),
            PacketType::Handshake => Some(SpaceId::Handshake),
            PacketType::OneRtt | PacketType::ZeroRtt => Some(SpaceId::Data),
            PacketType::Retry | PacketType::VersionNegotiation => None,
        }
    }
}
