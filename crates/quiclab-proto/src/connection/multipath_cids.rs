//! Glue for path IDs above 0's connection IDs (draft-ietf-quic-multipath §3.5):
//! issuing ours, writing PATH_NEW_CONNECTION_ID / PATH_RETIRE_CONNECTION_ID frames,
//! and the peer's frames about them. The state is `path_cids.rs`.

use super::lifecycle::State;
use super::outbox::EndpointEvent;
use super::path_cids::PendingCidFrame;
use super::send::OpenPacket;
use super::spaces::SentFrame;
use super::Connection;
use crate::error::TransportError;
use crate::wire::{ConnectionId, MultipathFrame, NewConnectionIdFrame, PathId};

impl Connection {
    /// §3.5 "Issuing New Connection IDs": IDs for every path ID from 1 up to the
    /// smaller of both maxima (never above the peer's, §3.5: "MUST NOT issue new
    /// connection IDs with path IDs greater than" its limit), each up to the smaller of
    /// both active_connection_id_limits (RFC 9000 §5.1.1, per path). Nothing without
    /// multipath, so a single-path connection draws no random bytes for it.
    pub(super) fn issue_path_connection_ids(&mut self) {
        if !self.multipath.is_negotiated() || self.lifecycle.state() != State::Established {
            return;
        }
        let limit = self.params.peer_active_connection_id_limit();
        let limit = limit.min(self.config.active_connection_id_limit).min(8);
        let top = self
            .multipath
            .local_max_path_id()
            .min(self.multipath.peer_max_path_id());
        // §3.4: never for an abandoned path ID.
        let open: Vec<_> = self.multipath.open_ids(top).collect();
        for path in open
            .into_iter()
            .flatten()
            .map(|p| PathId(u32::try_from(p).unwrap_or(u32::MAX)))
        {
            while (self.path_cids.local_count(path) as u64) < limit {
                let fresh = self.cids.fresh_id(&mut self.rng);
                self.path_cids.issue(path, fresh);
                self.outbox
                    .push_endpoint_event(EndpointEvent::NewConnectionId(fresh.0));
            }
        }
    }

    /// Writes the PATH_NEW_CONNECTION_ID and PATH_RETIRE_CONNECTION_ID frames owed,
    /// as many as fit below `max`.
    pub(super) fn write_path_cid_frames(
        &mut self,
        buf: &mut Vec<u8>,
        p: &mut OpenPacket,
        max: usize,
    ) {
        while let Some(pending) = self.path_cids.peek_pending() {
            let (frame, path_id, sequence, new) = match pending {
                PendingCidFrame::New(path_id, cid) => {
                    let seq = cid.sequence;
                    let f = MultipathFrame::PathNewConnectionId { path_id, cid };
                    (f, path_id, seq, true)
                }
                PendingCidFrame::Retire(path_id, sequence) => {
                    let f = MultipathFrame::PathRetireConnectionId { path_id, sequence };
                    (f, path_id, sequence, false)
                }
            };
            if buf.len() + frame.encoded_len() > max {
                break;
            }
            frame.encode(buf);
            self.path_cids.pop_pending(path_id, new);
            p.record.frames.push(SentFrame::PathCid {
                path_id: path_id.0,
                sequence,
                new,
            });
            p.ack_eliciting = true;
        }
    }

    /// PATH_NEW_CONNECTION_ID for a path ID above 0 (checked against our maximum by
    /// the caller, §4).
    pub(super) fn on_path_new_cid(
        &mut self,
        path: PathId,
        f: &NewConnectionIdFrame,
    ) -> Result<(), TransportError> {
        let limit = self.params.local.active_connection_id_limit;
        self.path_cids.on_new_cid(path, f, limit)
    }

    /// PATH_RETIRE_CONNECTION_ID for a path ID above 0 (§4.5): the ID leaves the
    /// endpoint's routing and a replacement is issued (§3.5.2).
    pub(super) fn on_path_retire_above_0(
        &mut self,
        path: PathId,
        sequence: u64,
        dcid: &ConnectionId,
    ) -> Result<(), TransportError> {
        if let Some(cid) = self.path_cids.on_retire(path, sequence, dcid)? {
            self.outbox
                .push_endpoint_event(EndpointEvent::RetireConnectionId(cid));
            self.issue_path_connection_ids();
        }
        Ok(())
    }

    /// The peer's connection IDs for `path_id` (above 0), by sequence number.
    pub fn multipath_peer_cids(&self, path_id: u32) -> Vec<ConnectionId> {
        self.path_cids.remote_ids(PathId(path_id))
    }

    /// How many of our connection IDs for `path_id` (above 0) the peer may use.
    pub fn multipath_local_cid_count(&self, path_id: u32) -> usize {
        self.path_cids.local_count(PathId(path_id))
    }

    /// Peer connection IDs held over every path ID above 0 (bounded by our maximum
    /// path ID times our active_connection_id_limit).
    pub fn multipath_peer_cid_total(&self) -> usize {
        self.path_cids.remote_count()
    }
}
