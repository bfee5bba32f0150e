//! The multipath extension's frames: types and codepoints.
//!
//! Version implemented: the QUIC WG editor's copy of draft-ietf-quic-multipath of
//! 2026-03 (after draft-19, `/work/shared/specs/draft-ietf-quic-multipath.md`), with the
//! codepoints it suggests to IANA: transport parameter `initial_max_path_id` 0x3e,
//! PATH_ACK 0x3e/0x3f, PATH_ABANDON 0x3e75, PATH_STATUS_BACKUP 0x3e76,
//! PATH_STATUS_AVAILABLE 0x3e77, PATH_NEW_CONNECTION_ID 0x3e78,
//! PATH_RETIRE_CONNECTION_ID 0x3e79, MAX_PATH_ID 0x3e7a, PATHS_BLOCKED 0x3e7b,
//! PATH_CIDS_BLOCKED 0x3e7c. Section numbers below are that copy's (§2.1 the transport
//! parameter, §2.4 the nonce, §4 the frames).
//!
//! The types live here, their codec in `frame_mp_codec.rs`.

use super::frame_parts::{AckFrame, NewConnectionIdFrame};

/// Frame type codes (draft-ietf-quic-multipath §6, suggested values).
pub mod mp_type {
    pub const PATH_ACK: u64 = 0x3e;
    pub const PATH_ACK_ECN: u64 = 0x3f;
    pub const PATH_ABANDON: u64 = 0x3e75;
    pub const PATH_STATUS_BACKUP: u64 = 0x3e76;
    pub const PATH_STATUS_AVAILABLE: u64 = 0x3e77;
    pub const PATH_NEW_CONNECTION_ID: u64 = 0x3e78;
    pub const PATH_RETIRE_CONNECTION_ID: u64 = 0x3e79;
    pub const MAX_PATH_ID: u64 = 0x3e7a;
    pub const PATHS_BLOCKED: u64 = 0x3e7b;
    pub const PATH_CIDS_BLOCKED: u64 = 0x3e7c;
}

/// PATH_ABANDON error codes (draft-ietf-quic-multipath §4.2.1), besides NO_ERROR.
/// Exported through `raw`; the connection sends them once it abandons paths.
#[allow(dead_code)]
pub mod abandon_code {
    pub const APPLICATION_ABANDON_PATH: u64 = 0x3e;
    pub const PATH_RESOURCE_LIMIT_REACHED: u64 = 0x3e75;
    pub const PATH_UNSTABLE_OR_POOR: u64 = 0x3e76;
    pub const NO_CID_AVAILABLE_FOR_PATH: u64 = 0x3e77;
}

/// A path identifier (draft-ietf-quic-multipath §1.1): 32 bits wide because it is part
/// of the AEAD nonce (§2.4). Path 0 is the handshake's path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PathId(pub u32);

impl PathId {
    /// The path of the handshake.
    pub const INITIAL: PathId = PathId(0);
}

/// A multipath frame (draft-ietf-quic-multipath §4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MultipathFrame {
    /// PATH_ACK (0x3e), or PATH_ACK_ECN (0x3f) when `ack.ecn` is set (§4.1).
    PathAck { path_id: PathId, ack: AckFrame },
    /// PATH_ABANDON (§4.2).
    PathAbandon { path_id: PathId, error_code: u64 },
    /// PATH_STATUS_BACKUP (`backup`) or PATH_STATUS_AVAILABLE (§4.3); `sequence` is
    /// the per-path Path Status Sequence Number.
    PathStatus {
        path_id: PathId,
        sequence: u64,
        backup: bool,
    },
    /// PATH_NEW_CONNECTION_ID (§4.4): NEW_CONNECTION_ID's fields for one path, with
    /// per-path sequence numbers.
    PathNewConnectionId {
        path_id: PathId,
        cid: NewConnectionIdFrame,
    },
    /// PATH_RETIRE_CONNECTION_ID (§4.5).
    PathRetireConnectionId { path_id: PathId, sequence: u64 },
    /// MAX_PATH_ID (§4.6).
    MaxPathId(PathId),
    /// PATHS_BLOCKED (§4.7): the Maximum Path Identifier the sender was held to.
    PathsBlocked(PathId),
    /// PATH_CIDS_BLOCKED (§4.7).
    PathCidsBlocked { path_id: PathId, next_sequence: u64 },
}

/// Whether `ty` is one of the multipath frame types.
pub fn is_multipath_type(ty: u64) -> bool {
    use mp_type as m;
    matches!(ty, m::PATH_ACK | m::PATH_ACK_ECN)
        || (m::PATH_ABANDON..=m::PATH_CIDS_BLOCKED).contains(&ty)
}

impl MultipathFrame {
    /// The frame's type code.
    pub fn type_code(&self) -> u64 {
        use mp_type as m;
        use MultipathFrame as M;
        match self {
            M::PathAck { ack, .. } if ack.ecn.is_some() => m::PATH_ACK_ECN,
            M::PathAck { .. } => m::PATH_ACK,
            M::PathAbandon { .. } => m::PATH_ABANDON,
            M::PathStatus { backup: true, .. } => m::PATH_STATUS_BACKUP,
            M::PathStatus { backup: false, .. } => m::PATH_STATUS_AVAILABLE,
            M::PathNewConnectionId { .. } => m::PATH_NEW_CONNECTION_ID,
            M::PathRetireConnectionId { .. } => m::PATH_RETIRE_CONNECTION_ID,
            M::MaxPathId(_) => m::MAX_PATH_ID,
            M::PathsBlocked(_) => m::PATHS_BLOCKED,
            M::PathCidsBlocked { .. } => m::PATH_CIDS_BLOCKED,
        }
    }

    /// The path the frame is about (`None` for MAX_PATH_ID and PATHS_BLOCKED, whose
    /// value is a limit).
    pub fn path_id(&self) -> Option<PathId> {
        use MultipathFrame as M;
        match self {
            M::PathAck { path_id, .. }
            | M::PathAbandon { path_id, .. }
            | M::PathStatus { path_id, .. }
            | M::PathNewConnectionId { path_id, .. }
            | M::PathRetireConnectionId { path_id, .. }
            | M::PathCidsBlocked { path_id, .. } => Some(*path_id),
            M::MaxPathId(_) | M::PathsBlocked(_) => None,
        }
    }
}
