//! Connection IDs for path IDs above 0 (draft-ietf-quic-multipath §3.5): each path ID
//! has its own sequence number space, both for the IDs we issue
//! (PATH_NEW_CONNECTION_ID, retired by the peer's PATH_RETIRE_CONNECTION_ID) and for
//! the peer's IDs we may use on that path. Path 0's IDs stay in [`super::cids`].
//!
//! Bounded whatever the peer sends: the caller refuses path IDs above our maximum
//! (§4), so at most `max path ID` paths hold state, each at most our
//! active_connection_id_limit peer IDs (RFC 9000 §5.1.1 applied per path, §4.4) and
//! four times that many retirements waiting to be sent (RFC 9000 §5.1.2).
// Peer values pass through here: arithmetic is checked, saturating or wrapping
// by the rule in CONTRIBUTING.md ("Arithmetic on wire values").
#![deny(clippy::arithmetic_side_effects)]

use super::cids::retire_issued;
use crate::error::{TransportError, TransportErrorCode};
use crate::wire::{ConnectionId, NewConnectionIdFrame, PathId};
use std::collections::{BTreeMap, VecDeque};

/// One path ID's connection IDs, both ends.
#[derive(Debug, Default)]
struct PathIds {
    /// IDs we issued for this path, not retired: sequence -> (id, reset token).
    local: BTreeMap<u64, (ConnectionId, [u8; 16])>,
    next_local_seq: u64,
    /// The peer's IDs for this path: sequence -> (id, reset token).
    remote: BTreeMap<u64, (ConnectionId, [u8; 16])>,
    remote_retire_prior_to: u64,
    /// PATH_NEW_CONNECTION_ID frames to (re)send, by sequence.
    pending_new: VecDeque<u64>,
    /// PATH_RETIRE_CONNECTION_ID frames to (re)send, by sequence.
    pending_retire: VecDeque<u64>,
}

/// Connection IDs of every path ID above 0.
#[derive(Debug, Default)]
pub struct PathCids {
    paths: BTreeMap<PathId, PathIds>,
}

/// A frame owed to the peer: issue (`new`) or retire one ID of a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PendingCidFrame {
    New(PathId, NewConnectionIdFrame),
    Retire(PathId, u64),
}

impl PathCids {
    /// Records `fresh` (an ID and its reset token, drawn by the caller) as our next ID
    /// for `path`, queued for a PATH_NEW_CONNECTION_ID frame; returns its sequence.
    pub fn issue(&mut self, path: PathId, fresh: (ConnectionId, [u8; 16])) -> u64 {
        let p = self.paths.entry(path).or_default();
        let seq = p.next_local_seq;
        p.next_local_seq = seq.saturating_add(1);
        p.local.insert(seq, fresh);
        p.pending_new.push_back(seq);
        seq
    }

    /// How many of our IDs for `path` the peer holds (not retired).
    pub fn local_count(&self, path: PathId) -> usize {
        self.paths.get(&path).map_or(0, |p| p.local.len())
    }

    /// The sequence number our next ID for `path` will get (PATH_CIDS_BLOCKED, §4.7).
    pub fn next_local_seq(&self, path: PathId) -> u64 {
        self.paths.get(&path).map_or(0, |p| p.next_local_seq)
    }

    /// The path ID of one of our IDs above path 0, if it is one (a scan over at most
    /// max path ID x active_connection_id_limit IDs).
    pub fn path_of_local(&self, cid: &ConnectionId) -> Option<PathId> {
        self.paths
            .iter()
            .find(|(_, p)| p.local.values().any(|(c, _)| c == cid))
            .map(|(&id, _)| id)
    }

    /// The peer's IDs for `path`, by sequence.
    pub fn remote_ids(&self, path: PathId) -> Vec<ConnectionId> {
        self.paths
            .get(&path)
            .map(|p| p.remote.values().map(|v| v.0).collect())
            .unwrap_or_default()
    }

    /// §3.4: the peer's IDs for an abandoned `path` are retired at once (no frame:
    /// abandoning says it), and nothing more is owed the peer about the path.
    pub fn forget_remote(&mut self, path: PathId) {
        if let Some(p) = self.paths.get_mut(&path) {
            p.remote.clear();
            p.pending_new.clear();
            p.pending_retire.clear();
        }
    }

    /// Frees everything about `path` (3 PTO after it was abandoned); returns our IDs
    /// it held, for the endpoint to stop routing.
    pub fn remove(&mut self, path: PathId) -> Vec<ConnectionId> {
        self.paths
            .remove(&path)
            .map(|p| p.local.values().map(|v| v.0).collect())
            .unwrap_or_default()
    }

    /// How many path IDs hold connection IDs (ours or the peer's).
    pub fn len(&self) -> usize {
        self.paths.len()
    }

    /// How many peer IDs are held over every path (the memory bound's measure).
    pub fn remote_count(&self) -> usize {
        self.paths.values().map(|p| p.remote.len()).sum()
    }

    /// PATH_NEW_CONNECTION_ID for `path` (§4.4: RFC 9000 §19.15's rules per path);
    /// `limit` is our active_connection_id_limit.
    pub fn on_new_cid(
        &mut self,
        path: PathId,
        f: &NewConnectionIdFrame,
        limit: u64,
    ) -> Result<(), TransportError> {
        let p = self.paths.entry(path).or_default();
        if let Some((id, token)) = p.remote.get(&f.sequence) {
            if *id != f.id || *token != f.reset_token {
                return Err(TransportError::protocol_violation(
                    "PATH_NEW_CONNECTION_ID reuses a sequence number",
                ));
            }
            return Ok(());
        }
        if f.sequence < p.remote_retire_prior_to {
            // Already retired: retire it again at once (RFC 9000 §19.15).
            p.pending_retire.push_back(f.sequence);
            return check_pending_retirements(p, limit);
        }
        // RFC 9000 §5.1.1 per path: the IDs left after this frame must fit our limit;
        // checked before any change, so a refused frame leaves nothing.
        let retire_to = f.retire_prior_to.max(p.remote_retire_prior_to);
        if p.remote.range(retire_to..).count() as u64 >= limit {
            return Err(TransportError::new(
                TransportErrorCode::CONNECTION_ID_LIMIT_ERROR,
                "peer exceeded active_connection_id_limit on a path",
            ));
        }
        p.remote.insert(f.sequence, (f.id, f.reset_token));
        if f.retire_prior_to > p.remote_retire_prior_to {
            p.remote_retire_prior_to = f.retire_prior_to;
            let retired: Vec<u64> = p.remote.range(..retire_to).map(|(&s, _)| s).collect();
            for s in retired {
                p.remote.remove(&s);
                p.pending_retire.push_back(s);
            }
        }
        check_pending_retirements(p, limit)
    }

    /// PATH_RETIRE_CONNECTION_ID for `path` (§4.5: RFC 9000 §19.16 per path). Returns
    /// the retired ID for the endpoint.
    pub fn on_retire(
        &mut self,
        path: PathId,
        seq: u64,
        packet_dcid: &ConnectionId,
    ) -> Result<Option<ConnectionId>, TransportError> {
        const FRAME: &str = "PATH_RETIRE_CONNECTION_ID";
        let Some(p) = self.paths.get_mut(&path) else {
            return Err(TransportError::protocol_violation(format!(
                "{FRAME} for an ID never issued"
            )));
        };
        retire_issued(&mut p.local, p.next_local_seq, seq, packet_dcid, FRAME)
    }

    /// Whether a frame waits to be sent.
    pub fn has_pending(&self) -> bool {
        self.paths
            .values()
            .any(|p| !p.pending_new.is_empty() || !p.pending_retire.is_empty())
    }

    /// The next frame owed, without taking it; an issued ID retired since it was
    /// queued is dropped from the queue.
    pub fn peek_pending(&mut self) -> Option<PendingCidFrame> {
        for (&path, p) in &mut self.paths {
            while let Some(&seq) = p.pending_new.front() {
                if let Some(&(id, reset_token)) = p.local.get(&seq) {
                    let f = NewConnectionIdFrame {
                        sequence: seq,
                        retire_prior_to: 0,
                        id,
                        reset_token,
                    };
                    return Some(PendingCidFrame::New(path, f));
                }
                p.pending_new.pop_front();
            }
            if let Some(&seq) = p.pending_retire.front() {
                return Some(PendingCidFrame::Retire(path, seq));
            }
        }
        None
    }

    /// Takes the frame [`PathCids::peek_pending`] returned (it was written): of
    /// `path`, a PATH_NEW_CONNECTION_ID (`new`) or a PATH_RETIRE_CONNECTION_ID.
    pub fn pop_pending(&mut self, path: PathId, new: bool) {
        if let Some(p) = self.paths.get_mut(&path) {
            if new {
                p.pending_new.pop_front();
            } else {
                p.pending_retire.pop_front();
            }
        }
    }

    /// A packet carrying PATH_NEW_CONNECTION_ID (`new`) or PATH_RETIRE_CONNECTION_ID
    /// for `path` and `seq` was lost: send it again (RFC 9000 §13.3).
    pub fn requeue(&mut self, path: PathId, seq: u64, new: bool) {
        if let Some(p) = self.paths.get_mut(&path) {
            if new {
                p.pending_new.push_back(seq);
            } else {
                p.pending_retire.push_back(seq);
            }
        }
    }

    /// Whether `token` is a reset token the peer gave us for a path above 0 (RFC 9000
    /// §10.3.1; every byte of every token is looked at).
    pub fn is_stateless_reset(&self, token: &[u8]) -> bool {
        let same = |t: &[u8; 16]| {
            t.len() == token.len() && t.iter().zip(token).fold(0u8, |d, (a, b)| d | (a ^ b)) == 0
        };
        self.paths
            .values()
            .flat_map(|p| p.remote.values())
            .fold(false, |found, (_, t)| found | same(t))
    }
}

/// RFC 9000 §5.1.2 per path: at most four times our limit retirements wait; a peer
/// forcing more is a CONNECTION_ID_LIMIT_ERROR.
fn check_pending_retirements(p: &PathIds, limit: u64) -> Result<(), TransportError> {
    if p.pending_retire.len() as u64 > limit.saturating_mul(4) {
        return Err(TransportError::new(
            TransportErrorCode::CONNECTION_ID_LIMIT_ERROR,
            "peer forced more path connection ID retirements than can be tracked",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(sequence: u64, retire_prior_to: u64) -> NewConnectionIdFrame {
        NewConnectionIdFrame {
            sequence,
            retire_prior_to,
            id: ConnectionId::new(&sequence.to_be_bytes()).unwrap(),
            reset_token: [sequence as u8; 16],
        }
    }

    #[test]
    fn sequence_numbers_are_per_path() {
        let mut c = PathCids::default();
        c.on_new_cid(PathId(1), &frame(0, 0), 2).unwrap();
        c.on_new_cid(PathId(2), &frame(0, 0), 2).unwrap();
        c.on_new_cid(PathId(1), &frame(0, 0), 2).unwrap(); // repeat: ignored
        assert_eq!(c.remote_count(), 2);
        let mut other = frame(0, 0);
        other.id = ConnectionId::new(&[7; 8]).unwrap();
        let e = c.on_new_cid(PathId(1), &other, 2).unwrap_err();
        assert_eq!(e.code, TransportErrorCode::PROTOCOL_VIOLATION);
    }

    #[test]
    fn the_limit_applies_per_path_and_retire_prior_to_frees_room() {
        let mut c = PathCids::default();
        c.on_new_cid(PathId(1), &frame(0, 0), 2).unwrap();
        c.on_new_cid(PathId(1), &frame(1, 0), 2).unwrap();
        let e = c.on_new_cid(PathId(1), &frame(2, 0), 2).unwrap_err();
        assert_eq!(e.code, TransportErrorCode::CONNECTION_ID_LIMIT_ERROR);
        c.on_new_cid(PathId(1), &frame(2, 1), 2).unwrap();
        assert_eq!(
            c.remote_ids(PathId(1)),
            [frame(1, 0).id, frame(2, 0).id],
            "sequence 0 retired"
        );
        assert_eq!(
            c.peek_pending(),
            Some(PendingCidFrame::Retire(PathId(1), 0))
        );
        // Path 2 has its own room.
        c.on_new_cid(PathId(2), &frame(0, 0), 2).unwrap();
    }

    #[test]
    fn issued_ids_are_retired_per_path_and_never_issued_ones_refused() {
        let mut c = PathCids::default();
        let a = (ConnectionId::new(&[1; 8]).unwrap(), [1; 16]);
        let b = (ConnectionId::new(&[2; 8]).unwrap(), [2; 16]);
        assert_eq!(c.issue(PathId(1), a), 0);
        assert_eq!(c.issue(PathId(1), b), 1);
        assert_eq!(c.path_of_local(&b.0), Some(PathId(1)));
        let e = c.on_retire(PathId(2), 0, &a.0).unwrap_err();
        assert_eq!(e.code, TransportErrorCode::PROTOCOL_VIOLATION);
        let e = c.on_retire(PathId(1), 1, &b.0).unwrap_err();
        assert_eq!(e.code, TransportErrorCode::PROTOCOL_VIOLATION, "own DCID");
        assert_eq!(c.on_retire(PathId(1), 1, &a.0).unwrap(), Some(b.0));
        assert_eq!(c.on_retire(PathId(1), 1, &a.0).unwrap(), None);
        assert_eq!(c.local_count(PathId(1)), 1);
        // The retired ID's pending frame is skipped.
        let Some(PendingCidFrame::New(p, f)) = c.peek_pending() else {
            panic!("a PATH_NEW_CONNECTION_ID is owed");
        };
        assert_eq!((p, f.sequence), (PathId(1), 0));
        c.pop_pending(p, true);
        assert_eq!(c.peek_pending(), None);
    }

    #[test]
    fn forced_retirements_are_bounded() {
        let mut c = PathCids::default();
        let mut result = Ok(());
        for seq in 1..100 {
            result = c.on_new_cid(PathId(1), &frame(seq, seq), 2);
            if result.is_err() {
                break;
            }
        }
        let e = result.expect_err("an endless retirement stream is refused");
        assert_eq!(e.code, TransportErrorCode::CONNECTION_ID_LIMIT_ERROR);
    }
}
