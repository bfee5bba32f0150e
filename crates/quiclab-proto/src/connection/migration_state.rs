//! The connection's paths besides the active one (RFC 9000 §9): the last validated
//! path to return to (§9.3.2), the check of the previously active path (§9.3.3), and
//! the other peer addresses heard from, each with its anti-amplification counts and
//! the PATH_RESPONSE data owed to it (§8.2.2). The active path is `path.rs`'s.
//!
//! Memory stays bounded whatever a peer sends: at most [`MAX_OTHER_ADDRESSES`] other
//! addresses (the least recently heard one goes), each owing at most
//! [`MAX_RESPONSES_PER_ADDRESS`] responses.
// Peer values pass through here: arithmetic is checked, saturating or wrapping
// by the rule in CONTRIBUTING.md ("Arithmetic on wire values").
#![deny(clippy::arithmetic_side_effects)]

use super::path_validation::Validation;
use crate::cc::CongestionController;
use crate::recovery::RttEstimator;
use crate::time::Instant;
use crate::wire::ConnectionId;
use std::net::SocketAddr;

/// Peer addresses other than the active one whose state is kept at most.
pub const MAX_OTHER_ADDRESSES: usize = 4;
/// PATH_RESPONSE data owed to one other address at most (the newest kept, §8.2.2: the
/// peer sends more challenges as needed).
pub const MAX_RESPONSES_PER_ADDRESS: usize = 4;

/// A peer address we received from that is not the active path's.
#[derive(Clone, Debug)]
pub struct OtherAddress {
    pub remote: SocketAddr,
    /// Bytes received from and sent to it, for the anti-amplification limit (§8.1, §9.3.1).
    pub received: u64,
    pub sent: u64,
    /// PATH_CHALLENGE data to echo on this path (§8.2.2), newest last.
    pub responses: Vec<[u8; 8]>,
}

impl OtherAddress {
    /// A path to `remote` nothing came from yet.
    pub fn new_for(remote: SocketAddr) -> Self {
        OtherAddress {
            remote,
            received: 0,
            sent: 0,
            responses: Vec::new(),
        }
    }

    /// What may still be sent to this unvalidated address: `factor` times what came
    /// from it, less what went (RFC 9000 §8.1).
    pub fn budget(&self, factor: u64) -> u64 {
        self.received
            .saturating_mul(factor)
            .saturating_sub(self.sent)
    }
}

/// The congestion controller and RTT estimator of a path the connection left.
pub type Congestion = (RttEstimator, Box<dyn CongestionController>);

/// The last validated path, to return to if the new one fails validation (§9.3.2).
pub struct PreviousPath {
    pub remote: SocketAddr,
    /// Our address on it, when we chose one ([`MigrationState::local`]).
    pub local: Option<SocketAddr>,
    /// Its congestion state, when the move replaced it (§9.4: kept on a port-only
    /// change, so nothing to restore then).
    pub congestion: Option<Congestion>,
}

/// Client: the server's preferred address being validated before the move (RFC 9000
/// §9.6.1): probes go there with the connection ID of `cid_seq` while data stays on
/// the handshake's address.
pub struct PreferredProbe {
    pub remote: SocketAddr,
    /// The sequence number of the peer ID the probes carry (1: the one in the
    /// preferred_address transport parameter, §5.1.1).
    pub cid_seq: u64,
    pub validation: Validation,
}

/// Server: the path from another of our local addresses (the preferred address) to
/// `remote`, heard from but not yet the active one (RFC 9000 §9.6.2): validated from
/// there before non-probing packets leave from there, with the PATH_RESPONSE data owed
/// from there (§8.2.2).
pub struct LocalPath {
    pub local: Option<SocketAddr>,
    pub remote: SocketAddr,
    /// `None` once the path answered.
    pub validation: Option<Validation>,
    pub validated: bool,
    /// A non-probing packet with a new largest packet number arrived there: move once
    /// validated; `switch_cid`: it carried a connection ID new to us, so ours changes
    /// too (§9.5).
    pub move_wanted: bool,
    pub switch_cid: bool,
    /// Newest last, at most [`MAX_RESPONSES_PER_ADDRESS`].
    pub responses: Vec<[u8; 8]>,
}

impl LocalPath {
    pub fn new(local: Option<SocketAddr>, remote: SocketAddr) -> Self {
        LocalPath {
            local,
            remote,
            validation: None,
            validated: false,
            move_wanted: false,
            switch_cid: false,
            responses: Vec::new(),
        }
    }

    /// Owes a PATH_RESPONSE with `data`; returns whether an older one was dropped.
    pub fn owe_response(&mut self, data: [u8; 8]) -> bool {
        let dropped = self.responses.len() >= MAX_RESPONSES_PER_ADDRESS;
        if dropped {
            self.responses.remove(0);
        }
        self.responses.push(data);
        dropped
    }
}

/// Why [`crate::Connection::migrate`] refused (RFC 9000 §9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MigrateError {
    #[error("only a client migrates actively")]
    NotClient,
    #[error("the handshake is not confirmed yet (RFC 9000 §9)")]
    HandshakeNotConfirmed,
    #[error("the connection is closed")]
    Closed,
    #[error("the peer sent disable_active_migration (RFC 9000 §18.2)")]
    DisabledByPeer,
    #[error("the peer issued no unused connection ID (RFC 9000 §9.5)")]
    NoConnectionId,
    #[error("already on that local address")]
    SameAddress,
    #[error("the server's preferred address is being validated (RFC 9000 §9.6.3)")]
    PreferredAddressPending,
}

/// What the connection did about paths, for tests and tools.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MigrationStats {
    /// Times the active path moved to a peer address (including returns).
    pub migrations: u64,
    /// Returns to the last validated path after a failed validation (§9.3.2).
    pub reverts: u64,
    /// Path validations that succeeded / were abandoned (§8.2.3, §8.2.4).
    pub validations_succeeded: u64,
    pub validations_failed: u64,
    /// PATH_CHALLENGE frames sent, PATH_RESPONSE frames sent.
    pub challenges_sent: u64,
    pub responses_sent: u64,
    /// PATH_CHALLENGE data dropped unanswered: the bounds, or the amplification limit.
    pub responses_dropped: u64,
    /// Other peer addresses whose state is kept now (at most [`MAX_OTHER_ADDRESSES`]).
    pub other_addresses: usize,
}

/// Paths besides the active one and the validations in progress.
#[derive(Default)]
pub struct MigrationState {
    /// The source address of the datagram being processed.
    pub incoming: Option<SocketAddr>,
    /// The active path's validation, while its peer address is unproven (§9.3).
    pub validation: Option<Validation>,
    /// The last validated path, while the active one is not (§9.3.2).
    pub previous: Option<PreviousPath>,
    /// The previously active path's check after an apparent migration (§9.3.3).
    pub old_path_check: Option<(SocketAddr, Validation)>,
    /// Other addresses heard from, least recently heard first.
    others: Vec<OtherAddress>,
    /// Our address on the active path when the connection moved to one (client
    /// migration, RFC 9000 §9.2); `None`: the driver's default.
    pub local: Option<SocketAddr>,
    /// The Destination Connection ID of the peer's highest-numbered non-probing packet
    /// (server): a move with another one is an active migration, which gets a new
    /// connection ID in return (§9.5).
    pub peer_dcid: Option<ConnectionId>,
    /// The qlog tuple ID of the active path ("" for the handshake's, then 1, 2, ...).
    pub tuple_seq: u64,
    pub stats: MigrationStats,
    /// The local address the datagram being processed arrived on (`None`: the
    /// driver's default socket).
    pub incoming_local: Option<SocketAddr>,
    /// Client: the server's preferred address under validation (RFC 9000 §9.6.1).
    pub preferred: Option<PreferredProbe>,
    /// Client: the connection moved to the server's preferred address (§18.2:
    /// disable_active_migration no longer applies).
    pub on_preferred: bool,
    /// Server: a path from another local address of ours (§9.6.2); one at a time.
    pub local_path: Option<LocalPath>,
}

impl MigrationState {
    /// A datagram of `len` bytes came from `remote`, not the active path's address.
    pub fn on_datagram_from_other(&mut self, remote: SocketAddr, len: usize) {
        let other = self.touch(remote);
        other.received = other.received.saturating_add(len as u64);
    }

    /// The state of `remote`, created (evicting the least recently heard address at
    /// the bound) and made the most recently heard.
    fn touch(&mut self, remote: SocketAddr) -> &mut OtherAddress {
        let entry = match self.others.iter().position(|o| o.remote == remote) {
            Some(i) => self.others.remove(i),
            None => {
                if self.others.len() >= MAX_OTHER_ADDRESSES {
                    let evicted = self.others.remove(0);
                    let owed = evicted.responses.len() as u64;
                    self.stats.responses_dropped =
                        self.stats.responses_dropped.saturating_add(owed);
                }
                OtherAddress::new_for(remote)
            }
        };
        self.others.push(entry);
        self.others.last_mut().expect("just pushed")
    }

    /// A PATH_CHALLENGE arrived from `remote` (not the active path): its response goes
    /// back there (§8.2.2).
    pub fn on_path_challenge_from_other(&mut self, remote: SocketAddr, data: [u8; 8]) {
        let other = self.touch(remote);
        let dropped = other.responses.len() >= MAX_RESPONSES_PER_ADDRESS;
        if dropped {
            other.responses.remove(0);
        }
        other.responses.push(data);
        if dropped {
            self.stats.responses_dropped = self.stats.responses_dropped.saturating_add(1);
        }
    }

    /// Removes and returns the state of `remote` (it becomes the active path).
    pub fn take_other(&mut self, remote: SocketAddr) -> Option<OtherAddress> {
        let i = self.others.iter().position(|o| o.remote == remote)?;
        Some(self.others.remove(i))
    }

    /// Keeps `other` (the path the connection left, unvalidated) as an other address.
    pub fn put_other(&mut self, other: OtherAddress) {
        let remote = other.remote;
        *self.touch(remote) = other;
    }

    /// The first other address owing a response.
    pub fn other_owing_response(&mut self) -> Option<&mut OtherAddress> {
        self.others.iter_mut().find(|o| !o.responses.is_empty())
    }

    /// The state of `remote`, if kept.
    pub fn other_mut(&mut self, remote: SocketAddr) -> Option<&mut OtherAddress> {
        self.others.iter_mut().find(|o| o.remote == remote)
    }

    /// Other addresses kept (at most [`MAX_OTHER_ADDRESSES`]).
    pub fn others_len(&self) -> usize {
        self.others.len()
    }

    /// The earliest time a validation needs attention.
    pub fn next_deadline(&self) -> Option<Instant> {
        let active = self.validation.as_ref().map(Validation::next_deadline);
        let old = self.old_path_check.as_ref().map(|(_, v)| v.next_deadline());
        let preferred = self
            .preferred
            .as_ref()
            .map(|p| p.validation.next_deadline());
        let local = (self.local_path.as_ref())
            .and_then(|l| l.validation.as_ref())
            .map(Validation::next_deadline);
        [active, old, preferred, local].into_iter().flatten().min()
    }
}

#[cfg(test)]
#[allow(clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    fn addr(port: u16) -> SocketAddr {
        SocketAddr::from(([192, 0, 2, 1], port))
    }

    #[test]
    fn other_addresses_are_bounded_and_the_least_recent_goes() {
        let mut m = MigrationState::default();
        for port in 0..100u16 {
            m.on_datagram_from_other(addr(port), 100);
            m.on_path_challenge_from_other(addr(port), [port as u8; 8]);
        }
        assert_eq!(m.others_len(), MAX_OTHER_ADDRESSES);
        assert!(m.other_mut(addr(99)).is_some());
        assert!(m.other_mut(addr(95)).is_none());
        assert_eq!(m.stats.responses_dropped, 100 - MAX_OTHER_ADDRESSES as u64);
    }

    #[test]
    fn responses_owed_from_another_local_address_are_bounded() {
        let mut l = LocalPath::new(Some(addr(2)), addr(1));
        let dropped = (0..50u8).filter(|&i| l.owe_response([i; 8])).count();
        assert_eq!(l.responses.len(), MAX_RESPONSES_PER_ADDRESS);
        assert_eq!(dropped, 50 - MAX_RESPONSES_PER_ADDRESS);
        assert_eq!(*l.responses.last().unwrap(), [49; 8]);
    }

    #[test]
    fn responses_per_address_are_bounded() {
        let mut m = MigrationState::default();
        for i in 0..50u8 {
            m.on_path_challenge_from_other(addr(1), [i; 8]);
        }
        let o = m.other_mut(addr(1)).unwrap();
        assert_eq!(o.responses.len(), MAX_RESPONSES_PER_ADDRESS);
        assert_eq!(*o.responses.last().unwrap(), [49; 8]);
    }

    #[test]
    fn an_unvalidated_address_gets_three_times_what_it_sent() {
        let mut m = MigrationState::default();
        m.on_datagram_from_other(addr(1), 50);
        let o = m.other_mut(addr(1)).unwrap();
        assert_eq!(o.budget(3), 150);
        o.sent = 140;
        assert_eq!(o.budget(3), 10);
        o.sent = 200;
        assert_eq!(o.budget(3), 0);
    }
}
