//! Packet number spaces (RFC 9000 §12.3): each has its own keys, packet numbers, ACK
//! state, sent packets and CRYPTO stream.

use super::crypto_stream::{CryptoRecv, CryptoSend};
use crate::ack::AckTracker;
use crate::crypto::Keys;
use crate::events::KeyType;
use crate::recovery::SentPackets;
use crate::streams::StreamFrameRecord;
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

/// Something a sent packet carried that matters when it is acknowledged or lost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SentFrame {
    Crypto {
        offset: u64,
        len: u64,
    },
    Stream(StreamFrameRecord),
    HandshakeDone,
    /// RFC 9000 §13.3: resent if lost (the token is kept by `NewTokenSend`).
    NewToken,
    NewConnectionId {
        sequence: u64,
    },
    RetireConnectionId {
        sequence: u64,
    },
    /// ack-frequency §4: resent if lost (unless superseded); its Requested Max Ack
    /// Delay counts for the PTO until acknowledged (§6).
    AckFrequency {
        sequence: u64,
        max_ack_delay_us: u64,
    },
}

/// A sent packet's frames to act on when it is acknowledged or lost. Most packets carry
/// one or two (a STREAM frame, maybe a control frame), kept inline so that sending a
/// packet allocates nothing.
pub type SentFrames = smallvec::SmallVec<[SentFrame; 2]>;

/// The connection's record of a sent packet.
#[derive(Clone, Debug, Default)]
pub struct SentRecord {
    pub frames: SentFrames,
    /// Largest Acknowledged of the ACK frame this packet carried, if any
    /// (RFC 9000 §13.2.4: once acknowledged, older ranges need not be repeated).
    pub ack_largest: Option<u64>,
}

/// One packet number space's state.
pub struct PacketSpace {
    pub keys: Option<Keys>,
    pub crypto_send: CryptoSend,
    pub crypto_recv: CryptoRecv,
    pub acks: AckTracker,
    pub sent: SentPackets<SentRecord>,
    pub next_pn: u64,
    /// PTO probe packets still owed (RFC 9002 §6.2.4).
    pub probes: u8,
    /// Keys were discarded: nothing more is sent or accepted here.
    pub discarded: bool,
}

impl PacketSpace {
    pub fn new() -> Self {
        PacketSpace {
            keys: None,
            crypto_send: CryptoSend::default(),
            crypto_recv: CryptoRecv::default(),
            acks: AckTracker::new(),
            sent: SentPackets::new(),
            next_pn: 0,
            probes: 0,
            discarded: false,
        }
    }

    pub fn can_send(&self) -> bool {
        self.keys.is_some() && !self.discarded
    }
}
