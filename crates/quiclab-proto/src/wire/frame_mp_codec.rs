//! Encoding and decoding of the multipath frames (`frame_mp.rs`, draft-ietf-quic-multipath
//! §4). Decoding is peer input: truncation and the NEW_CONNECTION_ID checks are
//! FRAME_ENCODING_ERROR; a path ID above 2^32-1 is PROTOCOL_VIOLATION, since no
//! Maximum Path Identifier can be that large (§4 and §4.6: "greater than the announced
//! Maximum Paths value ... PROTOCOL_VIOLATION").

use super::frame_fields::{
    ack_body_len, bad, decode_ack, decode_new_cid, size, write_ack_body, Fields,
};
use super::frame_mp::{mp_type, MultipathFrame, PathId};
use super::varint;
use crate::error::TransportError;

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
            let ack = decode_ack(f, f.ty == m::PATH_ACK_ECN, Vec::new())?;
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
        _ => return Err(bad(f.ty, "unknown frame type")),
    };
    Ok(frame)
}

impl MultipathFrame {
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
