//! Packet number spaces (RFC 9000 §12.3): each has its own keys, packet numbers, ACK
//! state, sent packets and CRYPTO stream.

use super::crypto_stream::{CryptoRecv, CryptoSend};
use crate::ack::AckTracker;
use crate::crypto::Keys;
use crate::ecn::Ecn;
use crate::recovery::SentPackets;
use crate::streams::StreamFrameRecord;

pub use crate::recovery::SpaceId;

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
    /// PATH_NEW_CONNECTION_ID (`new`) or PATH_RETIRE_CONNECTION_ID for a path ID
    /// above 0 (draft-ietf-quic-multipath §4.4, §4.5): resent if lost.
    PathCid {
        path_id: u32,
        sequence: u64,
        new: bool,
    },
    /// PATH_ABANDON (draft-ietf-quic-multipath §4.2): resent if lost.
    PathAbandon {
        path_id: u32,
        error_code: u64,
    },
    /// PATH_STATUS_BACKUP / PATH_STATUS_AVAILABLE (draft-ietf-quic-multipath §4.3):
    /// resent if lost while still the latest for its path.
    PathStatus {
        path_id: u32,
        sequence: u64,
    },
    /// MAX_PATH_ID (draft-ietf-quic-multipath §4.6): resent if lost unless a higher
    /// one was sent since.
    MaxPathId {
        value: u32,
    },
    /// PATHS_BLOCKED (§4.7): resent if lost while still blocked at that limit.
    PathsBlocked {
        limit: u32,
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

/// The stream data of the two oldest ack-eliciting packets in `sent`: what a PTO probe
/// carries when no new data waits (RFC 9002 §6.2.4, "previously sent data MAY be
/// sent"), to queue again without declaring the packets lost.
pub fn oldest_stream_data(sent: &SentPackets<SentRecord>) -> Vec<StreamFrameRecord> {
    sent.iter()
        .filter(|p| p.ack_eliciting)
        .take(2)
        .flat_map(|p| p.data.frames.iter())
        .filter_map(|f| match f {
            SentFrame::Stream(r @ StreamFrameRecord::Stream { .. }) => Some(r.clone()),
            _ => None,
        })
        .collect()
}

/// The connection's record of a sent packet.
#[derive(Clone, Debug, Default)]
pub struct SentRecord {
    pub frames: SentFrames,
    /// Largest Acknowledged of the ACK frame this packet carried, if any
    /// (RFC 9000 §13.2.4: once acknowledged, older ranges need not be repeated).
    pub ack_largest: Option<u64>,
    /// The ECN codepoint the packet was sent with (RFC 9000 §13.4.2: validation
    /// compares the peer's counts with the newly acknowledged ECT-marked packets).
    pub ecn: Ecn,
}

/// One packet number space's state.
pub struct PacketSpace {
    pub keys: Option<Keys>,
    pub crypto_send: CryptoSend,
    pub crypto_recv: CryptoRecv,
    pub acks: AckTracker,
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
            next_pn: 0,
            probes: 0,
            discarded: false,
        }
    }

    pub fn can_send(&self) -> bool {
        self.keys.is_some() && !self.discarded
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::initial::initial_keys;
    use crate::wire::{ConnectionId, Side, VERSION_1};

    #[test]
    fn a_space_sends_only_with_keys_until_they_are_discarded() {
        let mut s = PacketSpace::new();
        assert!(!s.can_send());
        s.keys = Some(initial_keys(
            VERSION_1,
            &ConnectionId::new(&[1; 8]).unwrap(),
            Side::Client,
        ));
        assert!(s.can_send());
        s.discarded = true;
        assert!(!s.can_send());
    }
}
