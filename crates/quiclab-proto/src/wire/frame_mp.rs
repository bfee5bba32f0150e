//! The multipath extension's frames: types, encoding and decoding.
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
//! Decoding is peer input: truncation and the NEW_CONNECTION_ID checks are
//! FRAME_ENCODING_ERROR; a path ID above 2^32-1 is PROTOCOL_VIOLATION, since no
//! Maximum Path Identifier can be that large (§4 and §4.6: "greater than the announced
//! Maximum Paths value ... PROTOCOL_VIOLATION").

use super::frame::{AckFrame, NewConnectionIdFrame};
use super::frame_decode::{decode_ack, decode_new_cid, Fields};
use super::frame_encode::{ack_body_len, size, write_ack_body};
use super::varint;
use crate::error::TransportError;

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

/// A path ID field: above 2^32-1 it exceeds any Maximum Path Identifier (§4).
fn path_id(f: &mut Fields<'_, '_>) -> Result<PathId, TransportError> {
    let v = f.varint()?;
    u32::try_from(v)
        .map(PathId)
        .map_err(|_| TransportError::protocol_violation("path ID above 2^32-1").with_frame(f.ty))
}

/// Decodes the frame of type `f.ty` (one for which [`is_multipath_type`] holds).
pub(super) fn decode(f: &mut Fields<'_, '_>) -> Result<MultipathFrame, TransportError> {
    use mp_type as m;
    use MultipathFrame as M;
    let frame = match f.ty {
        m::PATH_ACK | m::PATH_ACK_ECN => {
            let path_id = path_id(f)?;
            let ack = decode_ack(f, f.ty == m::PATH_ACK_ECN)?;
            M::PathAck { path_id, ack }
        }
        m::PATH_ABANDON => M::PathAbandon {
            path_id: path_id(f)?,
            error_code: f.varint()?,
        },
        m::PATH_STATUS_BACKUP | m::PATH_STATUS_AVAILABLE => M::PathStatus {
            path_id: path_id(f)?,
            sequence: f.varint()?,
            backup: f.ty == m::PATH_STATUS_BACKUP,
        },
        m::PATH_NEW_CONNECTION_ID => {
            let path_id = path_id(f)?;
            // §4.4: the same field checks as NEW_CONNECTION_ID (RFC 9000 §19.15).
            let cid = decode_new_cid(f)?;
            M::PathNewConnectionId { path_id, cid }
        }
        m::PATH_RETIRE_CONNECTION_ID => M::PathRetireConnectionId {
            path_id: path_id(f)?,
            sequence: f.varint()?,
        },
        // §4.6: a Maximum Path Identifier above 2^32-1 is PROTOCOL_VIOLATION.
        m::MAX_PATH_ID => M::MaxPathId(path_id(f)?),
        m::PATHS_BLOCKED => M::PathsBlocked(path_id(f)?),
        m::PATH_CIDS_BLOCKED => M::PathCidsBlocked {
            path_id: path_id(f)?,
            next_sequence: f.varint()?,
        },
        // The caller dispatches only multipath types; anything else is still an error.
        _ => return Err(super::frame_decode::bad(f.ty, "unknown frame type")),
    };
    Ok(frame)
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

    /// Appends the frame.
    pub fn encode(&self, buf: &mut Vec<u8>) {
        use MultipathFrame as M;
        let w = |buf: &mut Vec<u8>, v: u64| varint::write(buf, v);
        w(buf, self.type_code());
        match self {
            M::PathAck { path_id, ack } => {
                w(buf, u64::from(path_id.0));
                write_ack_body(buf, ack);
            }
            M::PathAbandon {
                path_id,
                error_code: a,
            }
            | M::PathStatus {
                path_id,
                sequence: a,
                ..
            }
            | M::PathRetireConnectionId {
                path_id,
                sequence: a,
            }
            | M::PathCidsBlocked {
                path_id,
                next_sequence: a,
            } => {
                w(buf, u64::from(path_id.0));
                w(buf, *a);
            }
            M::PathNewConnectionId { path_id, cid } => {
                w(buf, u64::from(path_id.0));
                w(buf, cid.sequence);
                w(buf, cid.retire_prior_to);
                buf.push(cid.id.len() as u8);
                buf.extend_from_slice(cid.id.as_bytes());
                buf.extend_from_slice(&cid.reset_token);
            }
            M::MaxPathId(p) | M::PathsBlocked(p) => w(buf, u64::from(p.0)),
        }
    }

    /// The number of bytes [`MultipathFrame::encode`] appends.
    pub fn encoded_len(&self) -> usize {
        use MultipathFrame as M;
        let l = varint::len;
        let head = l(self.type_code());
        match self {
            M::PathAck { path_id, ack } => {
                size(&[head, l(u64::from(path_id.0)), ack_body_len(ack)])
            }
            M::PathAbandon {
                path_id,
                error_code: a,
            }
            | M::PathStatus {
                path_id,
                sequence: a,
                ..
            }
            | M::PathRetireConnectionId {
                path_id,
                sequence: a,
            }
            | M::PathCidsBlocked {
                path_id,
                next_sequence: a,
            } => size(&[head, l(u64::from(path_id.0)), l(*a)]),
            M::PathNewConnectionId { path_id, cid } => size(&[
                head,
                l(u64::from(path_id.0)),
                l(cid.sequence),
                l(cid.retire_prior_to),
                1,
                cid.id.len(),
                16,
            ]),
            M::MaxPathId(p) | M::PathsBlocked(p) => size(&[head, l(u64::from(p.0))]),
        }
    }
}

#[cfg(test)]
#[path = "frame_mp_tests.rs"]
mod tests;
