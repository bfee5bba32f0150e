//! Abandoning a path above 0 (draft-ietf-quic-multipath §3.4, §4.2; path 0 is
//! `multipath_abandon0.rs`): PATH_ABANDON is sent on path 0, or on the path carrying
//! control frames once path 0 is abandoned (§3.4 recommends another path than the
//! abandoned one), nothing more
//! is sent on the abandoned path, and what was in flight on it is declared lost at
//! once and sent again on the remaining paths (RFC 9000 §13.3: information, not
//! packets). Receiving PATH_ABANDON abandons the path too and answers with our own
//! (§3.4: "it MUST send a corresponding PATH_ABANDON frame").
//!
//! Kept for 3 PTO, then freed (`multipath_retire.rs`): the path's receive space (its
//! PATH_ACKs for packets still in transit) and our connection IDs for it; the peer's
//! are retired at once.

use super::multipath_abandon0::only_path_abandoned;
use super::path_spaces::PathSendError;
use super::send::OpenPacket;
use super::spaces::{SentFrame, SpaceId};
use super::stats::tally;
use super::Connection;
use crate::error::TransportError;
use crate::wire::{Frame, MultipathFrame, PathId};

/// Application error code of a PATH_ABANDON we send in answer to the peer's
/// (§4.2: NO_ERROR-like; the draft leaves the value to the application).
const ABANDON_ANSWER: u64 = 0;

impl Connection {
    /// Abandons path `path_id` with `error_code` (§3.4); path 0 too once another path
    /// is validated (`multipath_abandon0.rs`). Errors: `InvalidPathId` for a path not
    /// open or already abandoned, `LastPath` when no other path could carry the
    /// connection (close it instead), `NotNegotiated` for path 0 before multipath
    /// and a confirmed handshake.
    pub fn multipath_abandon_path(
        &mut self,
        path_id: u32,
        error_code: u64,
    ) -> Result<(), PathSendError> {
        let path = PathId(path_id);
        if path == PathId::INITIAL {
            return self.abandon_path0_checked(error_code);
        }
        match self.path_spaces.get(path) {
            Some(s) if !s.abandoned => {}
            _ => return Err(PathSendError::InvalidPathId),
        }
        if !self.usable_path_besides(path) {
            return Err(PathSendError::LastPath);
        }
        self.abandon(path, error_code);
        Ok(())
    }

    /// Whether path `path_id` was abandoned, by us or the peer.
    pub fn multipath_path_abandoned(&self, path_id: u32) -> bool {
        if path_id == 0 {
            return self.multipath.path0_abandoned;
        }
        self.multipath.is_abandoned(PathId(path_id))
            || self
                .path_spaces
                .get(PathId(path_id))
                .is_some_and(|s| s.abandoned)
    }

    /// PATH_ABANDON received for `path` (above 0, within our limit); when it was the
    /// last usable path, CONNECTION_CLOSE (§3.4, `multipath_abandon0.rs`).
    pub(super) fn on_path_abandon(&mut self, path: PathId) -> Result<(), TransportError> {
        if self.path_space(path).abandoned {
            return Ok(());
        }
        if !self.open_path_besides(path) {
            return Err(only_path_abandoned());
        }
        self.abandon(path, ABANDON_ANSWER);
        Ok(())
    }

    pub(super) fn abandon(&mut self, path: PathId, error_code: u64) {
        let sp = self.path_space(path);
        sp.abandoned = true;
        sp.abandon_pending = Some(error_code);
        self.retire_abandoned_remote_ids(path);
        if self.multipath.on_abandoned(path) {
            // §4.6: the peer may open another path in its place.
            self.update_path_limit();
        }
        let sp = self.path_space(path);
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
        if path == PathId::INITIAL {
            self.multipath.path0_abandon_pending = Some(error_code);
        } else if let Some(sp) = self.path_spaces.get_mut(path) {
            sp.abandon_pending = Some(error_code);
        }
    }

    /// The pending PATH_ABANDON frames, in a packet of path 0.
    pub(super) fn write_path_abandon(&mut self, buf: &mut Vec<u8>, p: &mut OpenPacket, max: usize) {
        let path0 = self
            .multipath
            .path0_abandon_pending
            .map(|e| (PathId::INITIAL, e));
        while let Some((path_id, error_code)) = path0
            .filter(|_| self.multipath.path0_abandon_pending.is_some())
            .or_else(|| self.path_spaces.abandon_to_send())
        {
            let frame = Frame::Multipath(MultipathFrame::PathAbandon {
                path_id,
                error_code,
            });
            if buf.len().saturating_add(frame.encoded_len()) > max {
                break;
            }
            frame.encode(buf);
            if path_id == PathId::INITIAL {
                self.multipath.path0_abandon_pending = None;
            } else if let Some(sp) = self.path_spaces.get_mut(path_id) {
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
