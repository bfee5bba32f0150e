//! Sending PATH_STATUS_BACKUP / PATH_STATUS_AVAILABLE (draft-ietf-quic-multipath
//! §3.3, §4.3) and what our own status means for our scheduler.
//!
//! The application sets a status for any path ID up to the peer's limit, path 0
//! included ([`Connection::multipath_set_path_status`]); each change takes the path's
//! next sequence number and goes in the next 1-RTT packet that carries control frames
//! (on path 0, or on the path that carries them once path 0 is abandoned,
//! `multipath_carrier.rs`). A lost frame is sent again only while it is still the
//! latest for its path (§4.3).
//!
//! Our scheduler respects our own status too: §3.3 makes the status advice to the
//! peer ("inform the peer that it should send packets on the paths with the
//! preference expressed"), but a path we call backup is one we expect to be worse or
//! dearer (a metered interface, one reported going down), so we hold ourselves to the
//! same rule §3.3 asks of the peer: a path marked backup by either side carries new
//! stream data only when no available path is usable (`multipath_sched::eligible`);
//! when every path is backup, §3.3's "no guidance" holds.

use super::path_spaces::PathSendError;
use super::send::OpenPacket;
use super::spaces::SentFrame;
use super::Connection;
use crate::wire::{Frame, MultipathFrame, PathId};

impl Connection {
    /// Announces path `path_id` (0 included, at most the peer's maximum path ID) as
    /// backup (`true`: PATH_STATUS_BACKUP) or available (PATH_STATUS_AVAILABLE), §3.3.
    /// Setting the status the path already has sends nothing. Errors: multipath not
    /// negotiated; the path ID above the peer's limit or abandoned.
    pub fn multipath_set_path_status(
        &mut self,
        path_id: u32,
        backup: bool,
    ) -> Result<(), PathSendError> {
        if !self.multipath.is_negotiated() {
            return Err(PathSendError::NotNegotiated);
        }
        let path = PathId(path_id);
        if path > self.multipath.peer_max_path_id() || self.multipath_path_abandoned(path_id) {
            return Err(PathSendError::InvalidPathId);
        }
        self.multipath.local_status.set(path, backup);
        Ok(())
    }

    /// Whether we marked path `path_id` backup (§3.3).
    pub fn multipath_local_backup(&self, path_id: u32) -> bool {
        self.multipath.local_status.is_backup(PathId(path_id))
    }

    /// Whether either side marked `path` backup: the scheduler's `backup` (§3.3).
    pub(super) fn path_is_backup(&self, path: PathId) -> bool {
        self.multipath.local_status.is_backup(path)
            || self.multipath.peer_status(path).is_some_and(|s| s.backup)
    }

    /// The pending PATH_STATUS frames, in a 1-RTT packet.
    pub(super) fn write_path_status(&mut self, buf: &mut Vec<u8>, p: &mut OpenPacket, max: usize) {
        if p.zero_rtt {
            return; // §4: multipath frames only in 1-RTT packets
        }
        while let Some((path_id, sequence, backup)) = self.multipath.local_status.to_send() {
            let frame = Frame::Multipath(MultipathFrame::PathStatus {
                path_id,
                sequence,
                backup,
            });
            if buf.len().saturating_add(frame.encoded_len()) > max {
                break;
            }
            frame.encode(buf);
            self.multipath.local_status.on_sent(path_id);
            p.record.frames.push(SentFrame::PathStatus {
                path_id: path_id.0,
                sequence,
            });
            p.ack_eliciting = true;
        }
    }
}
