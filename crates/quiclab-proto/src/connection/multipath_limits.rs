//! Sending the path ID limits (draft-ietf-quic-multipath §4.6, §4.7): MAX_PATH_ID when
//! abandoned paths raised our limit (`MultipathState::on_abandoned`: the peer may
//! hold our initial number of path IDs open again), and PATHS_BLOCKED when the
//! application asks to open a path beyond the peer's limit
//! ([`Connection::multipath_open_path`] fails with `PathSendError::PathsBlocked`), once
//! per limit. Both are resent when lost only while still current.

use super::send::OpenPacket;
use super::spaces::SentFrame;
use super::Connection;
use crate::wire::{Frame, MultipathFrame};

impl Connection {
    /// Raises our path ID limit as abandoned paths allow (`MultipathState::raise_limit`)
    /// and issues connection IDs for the path IDs it opens.
    pub(super) fn update_path_limit(&mut self) {
        let held = self.path_spaces.iter().filter(|(_, s)| s.abandoned).count();
        if self.multipath.raise_limit(held) {
            self.issue_path_connection_ids();
        }
    }

    /// The pending MAX_PATH_ID and PATHS_BLOCKED frames, in a 1-RTT packet.
    pub(super) fn write_path_limits(&mut self, buf: &mut Vec<u8>, p: &mut OpenPacket, max: usize) {
        if p.zero_rtt {
            return; // §4: multipath frames only in 1-RTT packets
        }
        if let Some(value) = self.multipath.max_path_id_to_send() {
            let frame = Frame::Multipath(MultipathFrame::MaxPathId(value));
            if buf.len().saturating_add(frame.encoded_len()) <= max {
                frame.encode(buf);
                self.multipath.on_max_path_id_sent();
                p.record
                    .frames
                    .push(SentFrame::MaxPathId { value: value.0 });
                p.ack_eliciting = true;
            }
        }
        if let Some(limit) = self.multipath.paths_blocked_to_send() {
            let frame = Frame::Multipath(MultipathFrame::PathsBlocked(limit));
            if buf.len().saturating_add(frame.encoded_len()) <= max {
                frame.encode(buf);
                self.multipath.on_paths_blocked_sent();
                p.record
                    .frames
                    .push(SentFrame::PathsBlocked { limit: limit.0 });
                p.ack_eliciting = true;
            }
        }
    }
}
