//! Abandoning a path above 0 (draft-ietf-quic-multipath §3.4, §4.2): PATH_ABANDON is
//! sent on path 0 (§3.4 recommends another path than the abandoned one), nothing more
//! is sent on the abandoned path, and what was in flight on it is declared lost at
//! once and sent again on the remaining paths (RFC 9000 §13.3: information, not
//! packets). Receiving PATH_ABANDON abandons the path too and answers with our own
//! (§3.4: "it MUST send a corresponding PATH_ABANDON frame").
//!
//! Kept: the path's receive space (its PATH_ACKs for packets still in transit, §3.4's
//! 3 PTO are not timed yet) and its connection IDs (not retired yet).

use super::path_spaces::PathSendError;
use super::send::OpenPacket;
use super::spaces::{SentFrame, SpaceId};
use super::stats::tally;
use super::Connection;
use crate::wire::{Frame, MultipathFrame, PathId};

/// Application error code of a PATH_ABANDON we send in answer to the peer's
/// (§4.2: NO_ERROR-like; the draft leaves the value to the application).
const ABANDON_ANSWER: u64 = 0;

impl Connection {
    /// Abandons path `path_id` (above 0) with `error_code` (§3.4).
    pub fn multipath_abandon_path(
        &mut self,
        path_id: u32,
        error_code: u64,
    ) -> Result<(), PathSendError> {
        let path = PathId(path_id);
        match self.path_spaces.get(path) {
            Some(s) if !s.abandoned => {}
            _ => return Err(PathSendError::InvalidPathId),
        }
        self.abandon(path, error_code);
        Ok(())
    }

    /// Whether path `path_id` (above 0) was abandoned, by us or the peer.
    pub fn multipath_path_abandoned(&self, path_id: u32) -> bool {
        self.path_spaces
            .get(PathId(path_id))
            .is_some_and(|s| s.abandoned)
    }

    /// PATH_ABANDON received for `path` (above 0, within our limit).
    pub(super) fn on_path_abandon(&mut self, path: PathId) {
        if !self.path_space(path).abandoned {
            self.abandon(path, ABANDON_ANSWER);
        }
    }

    pub(super) fn abandon(&mut self, path: PathId, error_code: u64) {
        let sp = self.path_space(path);
        sp.abandoned = true;
        sp.abandon_pending = Some(error_code);
        sp.challenge_pending = false;
        sp.pings = 0;
        sp.probes = 0;
        sp.responses.clear();
        // No loss detection or pacing on it any more (its timers stop).
        sp.loss_timer = None;
        sp.pacing_at = None;
        // Its packets in flight will not be acknowledged on it any more: their
        // contents go again on the other paths (RFC 9000 §13.3).
        let lost = sp.recovery.take_all(SpaceId::Data);
        for p in &lost {
            tally(&mut self.stats.packets_lost, 1);
            self.requeue_lost(SpaceId::Data, &p.data);
        }
        self.refresh_path_timers();
    }

    /// A lost PATH_ABANDON is sent again.
    pub(super) fn requeue_path_abandon(&mut self, path: PathId, error_code: u64) {
        if let Some(sp) = self.path_spaces.get_mut(path) {
            sp.abandon_pending = Some(error_code);
        }
    }

    /// The pending PATH_ABANDON frames, in a packet of path 0.
    pub(super) fn write_path_abandon(&mut self, buf: &mut Vec<u8>, p: &mut OpenPacket, max: usize) {
        while let Some((path_id, error_code)) = self.path_spaces.abandon_to_send() {
            let frame = Frame::Multipath(MultipathFrame::PathAbandon {
                path_id,
                error_code,
            });
            if buf.len().saturating_add(frame.encoded_len()) > max {
                break;
            }
            frame.encode(buf);
            if let Some(sp) = self.path_spaces.get_mut(path_id) {
                sp.abandon_pending = None;
            }
            p.record.frames.push(SentFrame::PathAbandon {
                path_id: path_id.0,
                error_code,
            });
            p.ack_eliciting = true;
        }
    }
}
