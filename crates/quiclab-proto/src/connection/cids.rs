//! Connection IDs of both ends (RFC 9000 §5.1): the IDs we issue (NEW_CONNECTION_ID,
//! RETIRE_CONNECTION_ID from the peer) and the peer's IDs we may use.
// Peer values pass through here: arithmetic is checked, saturating or wrapping
// by the rule in CONTRIBUTING.md ("Arithmetic on wire values").
#![deny(clippy::arithmetic_side_effects)]

use crate::error::{TransportError, TransportErrorCode};
use crate::reset_key::StatelessResetKey;
use crate::rng::DetRng;
use crate::wire::{ConnectionId, NewConnectionIdFrame};
use std::collections::{BTreeMap, VecDeque};

/// Both ends' connection IDs.
#[derive(Debug)]
pub struct CidState {
    cid_len: usize,
    /// IDs we issued and the peer has not retired: sequence -> (id, reset token).
    local: BTreeMap<u64, (ConnectionId, [u8; 16])>,
    next_local_seq: u64,
    /// The peer's IDs: sequence -> (id, reset token).
    remote: BTreeMap<u64, (ConnectionId, Option<[u8; 16]>)>,
    active_remote: u64,
    remote_retire_prior_to: u64,
    /// The Source Connection ID the peer's long-header packets carry, once its first
    /// Initial fixed it (RFC 9000 §7.2).
    peer_scid: Option<ConnectionId>,
    /// NEW_CONNECTION_ID frames to (re)send, by sequence.
    pub pending_new: VecDeque<u64>,
    /// RETIRE_CONNECTION_ID frames to (re)send, by sequence.
    pub pending_retire: VecDeque<u64>,
    /// With a key, our tokens are HMAC(key, ID) (RFC 9000 §10.3.2), not random.
    reset_key: Option<StatelessResetKey>,
}

fn random_cid(rng: &mut DetRng, len: usize) -> ConnectionId {
    let mut b = [0u8; ConnectionId::MAX_LEN];
    rng.fill(&mut b[..len]);
    ConnectionId::new(&b[..len]).expect("len <= 20")
}

impl CidState {
    /// `initial_remote`: the DCID we first send to (client: random; server: the client's SCID).
    pub fn new(rng: &mut DetRng, cid_len: usize, initial_remote: ConnectionId) -> Self {
        let mut local = BTreeMap::new();
        let mut token = [0u8; 16];
        let cid = random_cid(rng, cid_len);
        rng.fill(&mut token);
        local.insert(0, (cid, token));
        let mut remote = BTreeMap::new();
        remote.insert(0, (initial_remote, None));
        CidState {
            cid_len,
            local,
            next_local_seq: 1,
            remote,
            active_remote: 0,
            remote_retire_prior_to: 0,
            peer_scid: None,
            pending_new: VecDeque::new(),
            pending_retire: VecDeque::new(),
            reset_key: None,
        }
    }

    /// Derives our reset tokens from `key` from now on, the first ID's included
    /// (RFC 9000 §10.3.2). The random tokens are still drawn, so the generator's
    /// stream (and every later random choice) is the same with or without a key.
    pub fn with_reset_key(mut self, key: Option<StatelessResetKey>) -> Self {
        if let Some(k) = &key {
            for (cid, token) in self.local.values_mut() {
                *token = k.token(cid);
            }
        }
        self.reset_key = key;
        self
    }

    /// The ID we use as our source (the oldest we issued still active).
    pub fn local_cid(&self) -> ConnectionId {
        self.local
            .values()
            .next()
            .map(|v| v.0)
            .unwrap_or(ConnectionId::EMPTY)
    }

    /// The stateless reset token of our first ID (sent in transport parameters by a server).
    pub fn local_reset_token(&self) -> [u8; 16] {
        self.local.get(&0).map(|v| v.1).unwrap_or_default()
    }

    /// The peer ID we currently send to.
    pub fn remote_cid(&self) -> ConnectionId {
        self.remote
            .get(&self.active_remote)
            .map(|v| v.0)
            .unwrap_or(ConnectionId::EMPTY)
    }

    /// RFC 9000 §9.5: a new path gets a peer ID never used before (one issued after the
    /// active one); the one left is retired (RETIRE_CONNECTION_ID). Returns the new
    /// ID's sequence number, or `None` when the peer has issued no unused ID.
    pub fn switch_remote(&mut self) -> Option<u64> {
        let old = self.active_remote;
        let next = self
            .remote
            .range(old.saturating_add(1)..)
            .next()
            .map(|(&seq, _)| seq)?;
        self.remote.remove(&old);
        self.pending_retire.push_back(old);
        self.active_remote = next;
        Some(next)
    }

    /// The peer ID of sequence `seq`, if held.
    pub fn remote_at(&self, seq: u64) -> Option<ConnectionId> {
        self.remote.get(&seq).map(|v| v.0)
    }

    /// The peer ID a new path would take ([`CidState::switch_remote`]'s next), without
    /// taking it.
    pub fn next_unused_remote(&self) -> Option<ConnectionId> {
        let after = self.active_remote.saturating_add(1);
        self.remote.range(after..).next().map(|(_, v)| v.0)
    }

    /// Sends to the peer ID of sequence `seq` from now on, retiring the active one
    /// (RFC 9000 §9.5); `false` (nothing changes) when `seq` is not held or active.
    pub fn switch_remote_to(&mut self, seq: u64) -> bool {
        if seq == self.active_remote || !self.remote.contains_key(&seq) {
            return false;
        }
        let old = self.active_remote;
        self.remote.remove(&old);
        self.pending_retire.push_back(old);
        self.active_remote = seq;
        true
    }

    /// Server: issues the connection ID of the preferred_address transport parameter,
    /// sequence number 1 (RFC 9000 §5.1.1, §18.2), with its reset token. It travels in
    /// the transport parameters, so no NEW_CONNECTION_ID frame carries it; it counts
    /// toward the peer's active_connection_id_limit like the others.
    pub fn issue_preferred(&mut self, rng: &mut DetRng) -> (u64, ConnectionId, [u8; 16]) {
        self.new_local(rng)
    }

    /// A fresh local ID with the next sequence number and its stateless reset token
    /// (random, or the HMAC of the ID under the reset key, RFC 9000 §10.3.2), recorded.
    fn new_local(&mut self, rng: &mut DetRng) -> (u64, ConnectionId, [u8; 16]) {
        let seq = self.next_local_seq;
        self.next_local_seq = self.next_local_seq.saturating_add(1);
        let (cid, token) = self.fresh_id(rng);
        self.local.insert(seq, (cid, token));
        (seq, cid, token)
    }

    /// A fresh ID of our length and its reset token, not recorded here (path IDs
    /// above 0 keep theirs in `path_cids`, draft-ietf-quic-multipath §3.5).
    pub fn fresh_id(&self, rng: &mut DetRng) -> (ConnectionId, [u8; 16]) {
        let cid = random_cid(rng, self.cid_len);
        let mut token = [0u8; 16];
        rng.fill(&mut token);
        if let Some(k) = &self.reset_key {
            token = k.token(&cid);
        }
        (cid, token)
    }

    /// Client: adopt the server's chosen SCID from its first packet (RFC 9000 §7.2).
    pub fn set_initial_remote(&mut self, cid: ConnectionId) {
        self.remote.insert(0, (cid, None));
        self.active_remote = 0;
    }

    /// From now on the peer's long-header packets must carry `cid` as their Source
    /// Connection ID: the client's first Initial's (server), the server's first
    /// Initial's (client; a Retry's does not count, RFC 9000 §7.2).
    pub fn fix_peer_scid(&mut self, cid: ConnectionId) {
        self.peer_scid = Some(cid);
    }

    /// Whether a long header's Source Connection ID is not the one the peer fixed
    /// (RFC 9000 §7.2: such packets are discarded).
    pub fn is_foreign_scid(&self, scid: &ConnectionId) -> bool {
        self.peer_scid.is_some_and(|c| c != *scid)
    }

    /// Records the peer's stateless reset token for its first ID (server transport parameter).
    pub fn set_initial_remote_reset_token(&mut self, token: [u8; 16]) {
        if let Some(e) = self.remote.get_mut(&0) {
            e.1 = Some(token);
        }
    }

    /// Issues IDs until the peer holds `limit` of ours; returns the new IDs (to route).
    pub fn issue(&mut self, rng: &mut DetRng, limit: u64) -> Vec<ConnectionId> {
        let mut out = Vec::new();
        while (self.local.len() as u64) < limit.min(8) {
            let (seq, cid, _) = self.new_local(rng);
            self.pending_new.push_back(seq);
            out.push(cid);
        }
        out
    }

    /// The NEW_CONNECTION_ID frame for a pending sequence, if still active.
    pub fn new_cid_frame(&self, seq: u64) -> Option<NewConnectionIdFrame> {
        self.local
            .get(&seq)
            .map(|&(id, reset_token)| NewConnectionIdFrame {
                sequence: seq,
                retire_prior_to: 0,
                id,
                reset_token,
            })
    }

    /// The peer retired one of our IDs (RFC 9000 §19.16); returns it for the endpoint.
    pub fn on_retire(
        &mut self,
        seq: u64,
        packet_dcid: &ConnectionId,
    ) -> Result<Option<ConnectionId>, TransportError> {
        let next = self.next_local_seq;
        retire_issued(
            &mut self.local,
            next,
            seq,
            packet_dcid,
            "RETIRE_CONNECTION_ID",
        )
    }

    /// The peer issued an ID (RFC 9000 §19.15); `limit` is our active_connection_id_limit.
    pub fn on_new_cid(
        &mut self,
        f: &NewConnectionIdFrame,
        limit: u64,
    ) -> Result<(), TransportError> {
        if let Some((id, token)) = self.remote.get(&f.sequence) {
            if *id != f.id || token.is_some_and(|t| t != f.reset_token) {
                return Err(TransportError::protocol_violation(
                    "NEW_CONNECTION_ID reuses a sequence number",
                ));
            }
            return Ok(());
        }
        if f.sequence < self.remote_retire_prior_to {
            // Already retired: retire it again at once (RFC 9000 §19.15).
            self.pending_retire.push_back(f.sequence);
            return self.check_pending_retirements(limit);
        }
        // RFC 9000 §5.1.1: the IDs we would hold after this frame (those it leaves
        // unretired, and the new one) must fit our limit, so those it leaves must be
        // fewer than it; checked before any change, so a refused frame leaves nothing.
        let retire_to = f.retire_prior_to.max(self.remote_retire_prior_to);
        if self.remote.range(retire_to..).count() as u64 >= limit {
            return Err(TransportError::new(
                TransportErrorCode::CONNECTION_ID_LIMIT_ERROR,
                "peer exceeded active_connection_id_limit",
            ));
        }
        self.remote.insert(f.sequence, (f.id, Some(f.reset_token)));
        if f.retire_prior_to > self.remote_retire_prior_to {
            self.remote_retire_prior_to = f.retire_prior_to;
            let retired: Vec<u64> = self
                .remote
                .range(..f.retire_prior_to)
                .map(|(&s, _)| s)
                .collect();
            for s in retired {
                self.remote.remove(&s);
                self.pending_retire.push_back(s);
            }
            if self.active_remote < f.retire_prior_to {
                self.active_remote = *self.remote.keys().next().expect("the new ID remains");
            }
        }
        self.check_pending_retirements(limit)
    }

    /// How many of the peer's connection IDs we keep (at most our
    /// active_connection_id_limit, RFC 9000 §5.1.1).
    /// The sequence number our next connection ID will get.
    pub fn next_local_seq(&self) -> u64 {
        self.next_local_seq
    }

    pub fn remote_count(&self) -> usize {
        self.remote.len()
    }

    /// Whether `token` is a stateless reset token the peer gave us (RFC 9000 §10.3.1).
    /// RFC 9000 §10.3.1: compared without leaking the token through timing (every
    /// byte of every token is looked at).
    pub fn is_stateless_reset(&self, token: &[u8]) -> bool {
        let same = |t: &[u8; 16]| {
            t.len() == token.len() && t.iter().zip(token).fold(0u8, |d, (a, b)| d | (a ^ b)) == 0
        };
        self.remote
            .values()
            .fold(false, |found, (_, t)| found | t.as_ref().is_some_and(same))
    }
}

impl CidState {
    /// RFC 9000 §5.1.2: track at least twice active_connection_id_limit retirements;
    /// a peer forcing more is a CONNECTION_ID_LIMIT_ERROR, so the queue stays bounded
    /// whatever it sends.
    fn check_pending_retirements(&self, limit: u64) -> Result<(), TransportError> {
        if self.pending_retire.len() as u64 > max_pending_retirements(limit) {
            return Err(TransportError::new(
                TransportErrorCode::CONNECTION_ID_LIMIT_ERROR,
                "peer forced more connection ID retirements than can be tracked",
            ));
        }
        Ok(())
    }
}

/// How many RETIRE_CONNECTION_ID frames may wait to be sent: four times our
/// active_connection_id_limit, above RFC 9000 §5.1.2's "at least twice".
fn max_pending_retirements(limit: u64) -> u64 {
    limit.saturating_mul(4)
}

/// The peer retires our ID `seq` from `local` (IDs issued below `next_seq`) with `frame`
/// (RETIRE_CONNECTION_ID, or PATH_RETIRE_CONNECTION_ID for a path): RFC 9000 §19.16's
/// rules, shared by path 0 and the multipath paths. Returns the retired ID.
pub(super) fn retire_issued(
    local: &mut BTreeMap<u64, (ConnectionId, [u8; 16])>,
    next_seq: u64,
    seq: u64,
    packet_dcid: &ConnectionId,
    frame: &str,
) -> Result<Option<ConnectionId>, TransportError> {
    if seq >= next_seq {
        return Err(TransportError::protocol_violation(format!(
            "{frame} for an ID never issued"
        )));
    }
    match local.get(&seq) {
        Some((cid, _)) if cid == packet_dcid => Err(TransportError::protocol_violation(format!(
            "{frame} retires the packet's own DCID"
        ))),
        Some(_) => Ok(local.remove(&seq).map(|v| v.0)),
        None => Ok(None),
    }
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

    fn state() -> CidState {
        let mut rng = DetRng::new(1);
        CidState::new(&mut rng, 8, ConnectionId::new(&[9; 8]).unwrap())
    }

    #[test]
    fn a_new_path_takes_an_unused_id_and_retires_the_old_one() {
        let mut cids = state();
        assert_eq!(cids.switch_remote(), None, "only the handshake's ID");
        cids.on_new_cid(&frame(1, 0), 4).unwrap();
        cids.on_new_cid(&frame(2, 0), 4).unwrap();
        assert_eq!(cids.switch_remote(), Some(1));
        assert_eq!(cids.remote_cid(), frame(1, 0).id);
        assert_eq!(cids.pending_retire, [0]);
        assert_eq!(cids.switch_remote(), Some(2));
        assert_eq!(cids.switch_remote(), None);
        assert_eq!(cids.remote_cid(), frame(2, 0).id);
    }

    #[test]
    fn the_preferred_address_id_is_sequence_1_and_never_a_frame() {
        let mut rng = DetRng::new(2);
        let mut server = state();
        let (seq, cid, token) = server.issue_preferred(&mut rng);
        assert_eq!(seq, 1, "RFC 9000 §5.1.1");
        assert!(server.pending_new.is_empty());
        // It counts toward the limit: with a limit of 4, two more IDs go in frames.
        assert_eq!(server.issue(&mut rng, 4).len(), 2);
        assert_eq!(server.pending_new, [2, 3]);
        let mut client = state();
        let f = NewConnectionIdFrame {
            sequence: seq,
            retire_prior_to: 0,
            id: cid,
            reset_token: token,
        };
        client.on_new_cid(&f, 4).unwrap();
        assert_eq!(client.next_unused_remote(), Some(cid));
        assert!(client.switch_remote_to(1));
        assert!(!client.switch_remote_to(1), "already active");
        assert_eq!(client.remote_cid(), cid);
        assert_eq!(client.pending_retire, [0]);
    }

    /// A peer that keeps retiring everything while we never get to send
    /// RETIRE_CONNECTION_ID frames is cut off once the queue passes 4x the limit.
    #[test]
    fn forced_retirements_are_bounded() {
        let limit = 4;
        let mut cids = state();
        let mut result = Ok(());
        for seq in 1..100 {
            result = cids.on_new_cid(&frame(seq, seq), limit);
            if result.is_err() {
                break;
            }
        }
        let err = result.expect_err("an endless retirement stream must be refused");
        assert_eq!(err.code, TransportErrorCode::CONNECTION_ID_LIMIT_ERROR);
        assert!(cids.pending_retire.len() as u64 <= max_pending_retirements(limit) + 1);
    }

    /// Found by the `connection_frames` fuzz target: the ID that broke the limit was
    /// stored before the check refused it, leaving limit + 1 IDs.
    #[test]
    fn an_id_past_the_limit_is_refused_and_not_stored() {
        let mut cids = state();
        for seq in 1..4 {
            cids.on_new_cid(&frame(seq, 0), 4).unwrap();
        }
        let err = cids.on_new_cid(&frame(59_648, 0), 4).unwrap_err();
        assert_eq!(err.code, TransportErrorCode::CONNECTION_ID_LIMIT_ERROR);
        assert_eq!(cids.remote.len(), 4);
        // Retiring older IDs makes room: not an error.
        cids.on_new_cid(&frame(5, 3), 4).unwrap();
        assert_eq!(cids.remote.len(), 2);
    }

    /// Retirements the sender drains are never an error (RFC 9000 §5.1.2), and each
    /// frame retires exactly the IDs below its Retire Prior To: the new ID becomes the
    /// one we send to, and the previous one is queued for RETIRE_CONNECTION_ID.
    #[test]
    fn drained_retirements_are_fine() {
        let mut cids = state();
        for seq in 1..100 {
            let f = frame(seq, seq);
            cids.on_new_cid(&f, 4)
                .unwrap_or_else(|e| panic!("frame {seq}: {e:?}"));
            assert_eq!(
                cids.pending_retire,
                [seq - 1],
                "frame {seq} retires {}",
                seq - 1
            );
            assert_eq!(
                cids.remote_cid(),
                f.id,
                "frame {seq}: we send to the new ID"
            );
            assert_eq!(cids.remote.keys().copied().collect::<Vec<_>>(), [seq]);
            assert!(cids.is_stateless_reset(&f.reset_token));
            assert!(!cids.is_stateless_reset(&[(seq - 1) as u8; 16]));
            cids.pending_retire.clear();
        }
    }
}
