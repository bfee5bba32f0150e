//! qlog fields of the multipath frames (draft-ietf-quic-multipath §4). No qlog draft
//! defines them yet: each is written as its RFC 9000 counterpart (ACK,
//! NEW_CONNECTION_ID, ...) plus `path_id`, the field name of
//! draft-ietf-quic-qlog-quic-events' path events.

use super::frame_fields::{write_ack, write_new_connection_id};
use super::json::Json;
use crate::wire::MultipathFrame;

/// The frame's own fields.
pub(super) fn write_multipath_frame(j: &mut Json<'_>, m: &MultipathFrame, ack_delay_exponent: u64) {
    use MultipathFrame as M;
    if let Some(p) = m.path_id() {
        j.key("path_id").u64(u64::from(p.0));
    }
    match m {
        M::PathAck { ack, .. } => {
            let ranges: Vec<(u64, u64)> =
                ack.ranges.iter().map(|r| (*r.start(), *r.end())).collect();
            write_ack(
                j,
                ack.ack_delay,
                &ranges,
                ack.ecn.as_ref(),
                ack_delay_exponent,
            );
        }
        M::PathAbandon { error_code, .. } => {
            j.key("error_code").u64(*error_code);
        }
        M::PathStatus { sequence, .. } => {
            j.key("sequence_number").u64(*sequence);
        }
        M::PathNewConnectionId { cid, .. } => {
            write_new_connection_id(
                j,
                cid.sequence,
                cid.retire_prior_to,
                &cid.id,
                &cid.reset_token,
            );
        }
        M::PathRetireConnectionId { sequence, .. } => {
            j.key("sequence_number").u64(*sequence);
        }
        M::MaxPathId(p) => {
            j.key("maximum").u64(u64::from(p.0));
        }
        M::PathsBlocked(p) => {
            j.key("limit").u64(u64::from(p.0));
        }
        M::PathCidsBlocked { next_sequence, .. } => {
            j.key("next_sequence_number").u64(*next_sequence);
        }
    }
}
