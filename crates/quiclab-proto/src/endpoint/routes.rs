//! The endpoint's map from destination connection ID to connection (RFC 9000 §5.2:
//! packets are routed by the Destination Connection ID).
//!
//! Two maps, by who chose the key:
//! - Our own connection IDs (every connection's SCID, the IDs it issues in
//!   NEW_CONNECTION_ID and PATH_NEW_CONNECTION_ID frames, a preferred address's ID) are
//!   random bytes from our seeded generator (RFC 9000 §5.1.1 asks for IDs with no
//!   exploitable pattern). A peer cannot choose them, so it cannot make them collide in
//!   a table: the map hashes them with the first 8 bytes times a constant instead of
//!   SipHash (1-2% of the simulator's instructions per datagram, one lookup per
//!   received datagram). A peer does choose the keys it *looks up*, but a lookup costs
//!   at most the entries sharing its hash, and those are ours, i.e. few.
//! - The client's original Destination Connection ID, under which a server keeps a new
//!   connection reachable until the client switches to our ID (RFC 9000 §7.2), is
//!   chosen by the peer: a peer opening many connections with colliding IDs could
//!   otherwise make every lookup in the table linear. These keep std's keyed SipHash.
//!
//! Both maps are only looked up, never iterated in an order that reaches the output
//! (`retain` removes a connection's entries, whatever their order), so hash order
//! cannot change a run (determinism).

use super::ConnectionHandle;
use crate::wire::ConnectionId;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};

/// Connection ID -> connection, for every ID a packet may carry to reach it.
#[derive(Default)]
pub(super) struct Routes {
    own: HashMap<OwnCid, ConnectionHandle, BuildHasherDefault<OwnCidHasher>>,
    peer_chosen: HashMap<ConnectionId, ConnectionHandle>,
}

impl Routes {
    /// The connection a packet with destination connection ID `dcid` belongs to.
    pub fn get(&self, dcid: &ConnectionId) -> Option<ConnectionHandle> {
        if let Some(&h) = self.own.get(&OwnCid(*dcid)) {
            return Some(h);
        }
        if self.peer_chosen.is_empty() {
            return None;
        }
        self.peer_chosen.get(dcid).copied()
    }

    /// Routes `cid`, a connection ID this endpoint generated, to `h`.
    pub fn insert_own(&mut self, cid: ConnectionId, h: ConnectionHandle) {
        self.own.insert(OwnCid(cid), h);
    }

    /// Routes `cid`, a connection ID the peer chose (a client's original DCID), to `h`.
    pub fn insert_peer_chosen(&mut self, cid: ConnectionId, h: ConnectionHandle) {
        self.peer_chosen.insert(cid, h);
    }

    /// Forgets one of our connection IDs (retired by the peer, RFC 9000 §19.16).
    pub fn remove_own(&mut self, cid: &ConnectionId) {
        self.own.remove(&OwnCid(*cid));
    }

    /// Forgets every ID routed to `h`.
    pub fn forget(&mut self, h: ConnectionHandle) {
        self.own.retain(|_, v| *v != h);
        self.peer_chosen.retain(|_, v| *v != h);
    }
}

/// A connection ID this endpoint generated: hashed by [`OwnCidHasher`].
#[derive(Clone, Copy, PartialEq, Eq)]
struct OwnCid(ConnectionId);

impl Hash for OwnCid {
    fn hash<H: Hasher>(&self, state: &mut H) {
        // Our IDs are 4-20 bytes (`connection_id_length`); the first 8 (fewer for a
        // shorter ID, zero-filled) are random enough to spread them.
        let b = self.0.as_bytes();
        let mut word = [0u8; 8];
        let n = b.len().min(8);
        word[..n].copy_from_slice(&b[..n]);
        state.write_u64(u64::from_le_bytes(word));
    }
}

/// Multiplies the word [`OwnCid`] writes by an odd constant (the 64-bit golden ratio),
/// so an ID shorter than 8 bytes fills the high bits too (the table takes its bucket
/// from the low bits and a tag from the top 7).
#[derive(Default)]
struct OwnCidHasher(u64);

const SPREAD: u64 = 0x9e37_79b9_7f4a_7c15;

impl Hasher for OwnCidHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write_u64(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(SPREAD);
    }

    /// Not used by [`OwnCid`]; any other bytes still hash (8 at a time).
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cid(bytes: &[u8]) -> ConnectionId {
        ConnectionId::new(bytes).unwrap()
    }

    #[test]
    fn own_and_peer_chosen_ids_route_and_are_forgotten() {
        let mut r = Routes::default();
        let (a, b) = (ConnectionHandle(1), ConnectionHandle(2));
        r.insert_own(cid(&[1, 2, 3, 4, 5, 6, 7, 8]), a);
        r.insert_peer_chosen(cid(&[9; 8]), a);
        // Same first 8 bytes, other length: a different ID (equal hash, unequal key).
        r.insert_own(cid(&[1, 2, 3, 4, 5, 6, 7, 8, 9]), b);
        r.insert_own(cid(&[1, 2, 3, 4]), b);
        assert_eq!(r.get(&cid(&[1, 2, 3, 4, 5, 6, 7, 8])), Some(a));
        assert_eq!(r.get(&cid(&[9; 8])), Some(a));
        assert_eq!(r.get(&cid(&[1, 2, 3, 4, 5, 6, 7, 8, 9])), Some(b));
        assert_eq!(r.get(&cid(&[1, 2, 3, 4])), Some(b));
        assert_eq!(r.get(&cid(&[1, 2, 3])), None);
        r.remove_own(&cid(&[1, 2, 3, 4]));
        assert_eq!(r.get(&cid(&[1, 2, 3, 4])), None);
        r.forget(a);
        assert_eq!(r.get(&cid(&[1, 2, 3, 4, 5, 6, 7, 8])), None);
        assert_eq!(r.get(&cid(&[9; 8])), None);
        assert_eq!(r.get(&cid(&[1, 2, 3, 4, 5, 6, 7, 8, 9])), Some(b));
    }

    #[test]
    fn short_ids_spread_into_the_high_bits() {
        let hash = |c: &ConnectionId| {
            let mut h = OwnCidHasher::default();
            OwnCid(*c).hash(&mut h);
            h.finish()
        };
        // 4-byte IDs leave the word's top half zero; the tags (top 7 bits) must differ.
        let tags: std::collections::BTreeSet<u64> = (0u32..64)
            .map(|i| hash(&cid(&i.wrapping_mul(0x01f3_5a27).to_le_bytes())) >> 57)
            .collect();
        assert!(tags.len() > 16, "{} distinct tags", tags.len());
    }
}
