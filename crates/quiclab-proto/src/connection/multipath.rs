//! Glue for the multipath extension (draft-ietf-quic-multipath, version named in
//! `wire/frame_mp.rs`): negotiation when the peer's transport parameters arrive, and
//! the received multipath frames. Path 0's packet number space is the connection's
//! application-data space (§2.3: ACK and PATH_ACK with path ID 0 acknowledge it), its
//! connection IDs the connection's. Paths above 0 have their own spaces and recovery
//! (`path_spaces.rs`), CIDs (`path_cids.rs`), receive and send glue
//! (`multipath_recv.rs`, `multipath_send.rs`, `multipath_ack.rs`,
//! `multipath_abandon.rs`); frames about them are checked against the limits here
//! and handed there.

use super::outbox::EndpointEvent;
use super::spaces::SpaceId;
use super::Connection;
use crate::config::MultipathConfig;
use crate::error::TransportError;
use crate::time::Instant;
use crate::wire::{ConnectionId, MultipathFrame, PathId, TransportParameters};

impl Connection {
    /// Whether multipath was negotiated (both sides sent initial_max_path_id).
    pub fn multipath_negotiated(&self) -> bool {
        self.multipath.is_negotiated()
    }

    /// The path ID limits once multipath is negotiated: (the largest the peer may use,
    /// the largest we may use), raised by MAX_PATH_ID frames.
    pub fn multipath_path_id_limits(&self) -> Option<(u32, u32)> {
        let m = &self.multipath;
        m.is_negotiated()
            .then(|| (m.local_max_path_id().0, m.peer_max_path_id().0))
    }

    /// The PATHS_BLOCKED frames the peer sent (§4.7): how many, and the last limit
    /// named.
    pub fn multipath_peer_blocked(&self) -> (u64, Option<u32>) {
        let (n, limit) = self.multipath.peer_blocked;
        (n, limit.map(|l| l.0))
    }

    /// The peer's latest PATH_STATUS for `path_id`: (sequence number, backup).
    pub fn multipath_peer_status(&self, path_id: u32) -> Option<(u64, bool)> {
        let s = self.multipath.peer_status(PathId(path_id))?;
        Some((s.sequence, s.backup))
    }

    /// draft-ietf-quic-multipath §2.1, on the peer's transport parameters.
    pub(super) fn negotiate_multipath(
        &mut self,
        p: &TransportParameters,
    ) -> Result<(), TransportError> {
        if p.initial_max_path_id.is_some() && self.cids.remote_cid().is_empty() {
            // §2.1: initial_max_path_id with a zero-length connection ID.
            return Err(TransportError::protocol_violation(
                "initial_max_path_id with a zero-length connection ID",
            ));
        }
        // §2.1 also forbids AEADs with nonces below 12 bytes: every TLS 1.3 suite QUIC
        // uses (AES-GCM, ChaCha20-Poly1305) has a 12-byte nonce, so none is refused.
        let local = self.params.local.initial_max_path_id;
        let local = local.map(|v| v.min(u64::from(MultipathConfig::MAX_PATH_ID_LIMIT)));
        self.multipath.negotiate(local, p.initial_max_path_id);
        Ok(())
    }

    /// A received multipath frame (§4), in a 1-RTT packet (checked by the caller).
    pub(super) fn on_multipath_frame(
        &mut self,
        now: Instant,
        dcid: &ConnectionId,
        m: MultipathFrame,
    ) -> Result<(), TransportError> {
        use MultipathFrame as M;
        if !self.multipath.is_negotiated() {
            // §2: without negotiation neither side may use the frames; a received one
            // is a PROTOCOL_VIOLATION (as RFC 9000 §12.4 treats a frame the
            // connection cannot accept).
            return Err(TransportError::protocol_violation(
                "multipath frame without multipath negotiated",
            ));
        }
        if let Some(path) = m.path_id() {
            self.multipath.check_path_id(path)?;
            if self.path_frames_ignored(path) {
                // §4, §3.4: about a path abandoned (and maybe freed): ignored.
                return Ok(());
            }
        }
        match m {
            M::PathAck { path_id, ack } if path_id == PathId::INITIAL => {
                self.on_ack_frame(now, SpaceId::Data, &ack)?
            }
            // §4.1: the path's own space and recovery (`multipath_ack.rs`).
            M::PathAck { path_id, ack } => self.on_path_ack(now, path_id, &ack)?,
            M::PathNewConnectionId { path_id, cid } if path_id == PathId::INITIAL => {
                let limit = self.params.local.active_connection_id_limit;
                self.cids.on_new_cid(&cid, limit)?;
            }
            // §3.5: per path ID, bounded by our limit (checked above) and our
            // active_connection_id_limit.
            M::PathNewConnectionId { path_id, cid } => self.on_path_new_cid(path_id, &cid)?,
            M::PathRetireConnectionId { path_id, sequence } => {
                self.on_path_retire_cid(path_id, sequence, dcid)?
            }
            M::PathCidsBlocked {
                path_id,
                next_sequence,
            } => {
                // §4.7: beyond the next sequence we would issue is PROTOCOL_VIOLATION;
                // we issued none on paths above 0.
                let next = if path_id == PathId::INITIAL {
                    self.cids.next_local_seq()
                } else {
                    self.path_cids.next_local_seq(path_id)
                };
                if next_sequence > next {
                    return Err(TransportError::protocol_violation(
                        "PATH_CIDS_BLOCKED beyond the next sequence number",
                    ));
                }
            }
            M::PathStatus {
                path_id,
                sequence,
                backup,
            } => self.multipath.on_path_status(path_id, sequence, backup),
            M::MaxPathId(max) => {
                self.multipath.on_max_path_id(max)?;
                // §3.5: IDs for the path IDs the new limit opens.
                self.issue_path_connection_ids();
            }
            M::PathsBlocked(limit) => self.multipath.on_paths_blocked(limit)?,
            // §3.4: we abandon it too (`multipath_abandon0.rs`, `multipath_abandon.rs`).
            M::PathAbandon { path_id, .. } if path_id == PathId::INITIAL => {
                self.on_path0_abandon()?
            }
            M::PathAbandon { path_id, .. } => self.on_path_abandon(path_id)?,
        }
        Ok(())
    }

    /// PATH_RETIRE_CONNECTION_ID (§4.5): RETIRE_CONNECTION_ID for path 0, the
    /// per-path rules (`multipath_cids.rs`) above.
    fn on_path_retire_cid(
        &mut self,
        path: PathId,
        sequence: u64,
        dcid: &ConnectionId,
    ) -> Result<(), TransportError> {
        if path != PathId::INITIAL {
            return self.on_path_retire_above_0(path, sequence, dcid);
        }
        if let Some(cid) = self.cids.on_retire(sequence, dcid)? {
            self.outbox
                .push_endpoint_event(EndpointEvent::RetireConnectionId(cid));
            self.issue_connection_ids();
        }
        Ok(())
    }
}
