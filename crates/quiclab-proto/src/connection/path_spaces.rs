//! Per-path 1-RTT packet number spaces of path IDs above 0 (draft-ietf-quic-multipath
//! §2.3: "each path has its own packet number space"; path 0 keeps the connection's
//! application-data space). Each holds its received packet numbers (for PATH_ACK), the
//! next packet number to send, and its own loss recovery and congestion controller
//! (one `Recovery` per path, §5). Bounded: a space exists only for a path ID at or
//! below both sides' limits, opened by us or by an authenticated packet on one of our
//! path connection IDs.

use super::ecn_state::EcnPath;
use super::freed_paths::FreedPaths;
use super::key_update_state::PhaseMark;
use super::spaces::SentRecord;
use crate::ack::AckTracker;
use crate::cc::CongestionController;
use crate::ecn::EcnMode;
use crate::path_recovery::Recovery;
use crate::recovery::Pacer;
use crate::time::Instant;
use crate::wire::PathId;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

/// Why `Connection::multipath_ping` (or another multipath path call) cannot act on a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathSendError {
    /// Multipath was not negotiated, or the handshake is not confirmed yet.
    NotNegotiated,
    /// Path 0 is the connection's own path; a path ID above the peer's maximum.
    InvalidPathId,
    /// The peer gave us no connection ID for that path ID yet (§3.5).
    NoConnectionId,
    /// Abandoning the only path that could still carry the connection (§3.4): close
    /// the connection instead.
    LastPath,
    /// The path ID is above the peer's maximum path ID (§4.7): a PATHS_BLOCKED frame
    /// tells the peer (once per limit); retry once its MAX_PATH_ID raised the limit.
    PathsBlocked,
}

impl std::fmt::Display for PathSendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PathSendError::NotNegotiated => "multipath not negotiated or handshake not confirmed",
            PathSendError::InvalidPathId => "path ID 0 or above the peer's maximum",
            PathSendError::NoConnectionId => "no connection ID from the peer for that path ID",
            PathSendError::LastPath => "the only path left: close the connection instead",
            PathSendError::PathsBlocked => "path ID above the peer's maximum: PATHS_BLOCKED sent",
        })
    }
}

impl std::error::Error for PathSendError {}

/// One path's loss recovery so far (draft-ietf-quic-multipath §5.3, §5.7: each path
/// its own loss detection), as [`super::Connection::multipath_path_loss`] reports it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PathLossStats {
    /// The path's current PTO backoff count (RFC 9002 §6.2.1; reset by its PATH_ACKs).
    pub pto_count: u32,
    /// Probe timeouts that expired on the path (RFC 9002 A.9).
    pub ptos: u64,
    /// Packets sent on the path declared lost, by its PATH_ACKs or its timer.
    pub lost_packets: u64,
    /// Of those, declared lost when the path's loss detection timer fired (RFC 9002
    /// §6.1.2, time threshold).
    pub lost_by_timer: u64,
}

/// A freed path's final counts (`freed_paths.rs` keeps the last few).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct FreedPath {
    /// Its loss recovery counts (the PTO count as it was when freed).
    pub loss: PathLossStats,
    /// Packets received and sent on it, and the bytes of those received.
    pub received: u64,
    pub sent: u64,
    pub received_bytes: u64,
    /// Whether the peer had validated it.
    pub validated: bool,
}

/// One path's packet number space and recovery (path IDs above 0).
pub(super) struct PathSpace {
    /// Packet numbers received on the path, reported in PATH_ACK frames (§4.1).
    pub acks: AckTracker,
    /// The next packet number we send on the path (§2.3: starts at 0 per path).
    pub next_pn: u64,
    /// The path's sent packets, RTT estimator and congestion controller (§5).
    pub recovery: Recovery<SentRecord>,
    /// PING frames asked for on the path ([`super::Connection::multipath_ping`]).
    pub pings: u8,
    /// PTO probes owed on the path (RFC 9002 §6.2.4: one or two ack-eliciting packets).
    pub probes: u8,
    /// The path's pacer (RFC 9002 §7.7), spending tokens on every packet sent on it.
    pub pacer: Pacer,
    /// When the path's loss detection timer fires (RFC 9002 A.8 from its own
    /// recovery), and when its pacer lets the data waiting for it go; the connection's
    /// `Timer::PathLoss` and `Timer::PathPacing` are the earliest over the paths.
    pub loss_timer: Option<Instant>,
    pub pacing_at: Option<Instant>,
    /// The path's loss recovery counts (its PTO count is read from `recovery`).
    pub loss: PathLossStats,
    /// Bytes of the datagrams sent on the path (the anti-amplification limit before
    /// the peer's address on it is validated, RFC 9000 §8.1).
    pub sent_bytes: u64,
    /// Packets received and sent on the path, and the bytes of the packets received
    /// (for tests and results).
    pub received: u64,
    pub sent: u64,
    pub received_bytes: u64,
    /// Our local address on the path (`None`: the connection's), and the peer's
    /// (`None`: the active path's) as its first authenticated packet showed it.
    pub local: Option<SocketAddr>,
    pub remote: Option<SocketAddr>,
    /// Our PATH_CHALLENGE data for the path (RFC 9000 §8.2.1) and whether it is still
    /// to be sent.
    pub challenge: Option<[u8; 8]>,
    pub challenge_pending: bool,
    /// The peer answered our challenge on this path (§3.1): we send data on it.
    pub validated: bool,
    /// PTOs of the path that expired while our challenge was unanswered: each sends
    /// the challenge again; the [`VALIDATION_PTOS`]th ends the validation (RFC 9000
    /// §8.2.1, §8.2.4).
    pub validation_ptos: u8,
    /// PATH_CHALLENGE data received on the path, answered on it (RFC 9000 §8.2.2),
    /// at most [`MAX_PATH_RESPONSES`], newest kept.
    pub responses: Vec<[u8; 8]>,
    /// The path was abandoned (§3.4): nothing more is sent on it, its ID is not reused.
    pub abandoned: bool,
    /// PATH_ABANDON (with this error code) still to be sent (or resent, if lost).
    pub abandon_pending: Option<u64>,
    /// Once abandoned: when the path's state is freed (§3.4: kept 3 PTO for the
    /// peer's packets still in transit; `multipath_retire.rs`).
    pub free_at: Option<Instant>,
    /// The path's ECN (RFC 9000 §13.4 "for each network path"; draft §4.1: PATH_ACK's
    /// counts are those of the acknowledged path's space): the codepoints received in
    /// its space, what its packets are sent with, and the validation of the peer's
    /// PATH_ACK_ECN counts, in the application-data slot of `EcnPath`
    /// (`multipath_ecn.rs`).
    pub ecn: EcnPath,
    /// The path's packets in the current key phase (RFC 9001 §6 on this path's
    /// packet numbers; `key_update_paths.rs`).
    pub key_phase: PhaseMark,
}

/// The PTO expiry of a path above 0 at which an unanswered PATH_CHALLENGE on it ends
/// the validation as failed (RFC 9000 §8.2.4 abandons it after about three PTOs; the
/// two before send the challenge again, §8.2.1).
pub(super) const VALIDATION_PTOS: u8 = 3;

/// PATH_RESPONSE frames owed per path at most (RFC 9000 §8.2.2 lets the rest go).
pub(super) const MAX_PATH_RESPONSES: usize = 4;

impl PathSpace {
    /// PATH_CHALLENGE data received on the path.
    pub fn on_challenge(&mut self, data: [u8; 8]) {
        if self.responses.len() >= MAX_PATH_RESPONSES {
            self.responses.remove(0);
        }
        self.responses.push(data);
    }

    /// What we may still send on the path before the peer's address on it is
    /// validated: a server at most `factor` times what it received on it (RFC 9000
    /// §8.1, §9.3; draft-ietf-quic-multipath §3.1); without limit a client (its path
    /// goes to the server's address), a validated path, and a path to the connection's
    /// own address or to `validated`, the address path 0 validated ("unless it has
    /// previously validated the 4-tuple", §3.1).
    pub fn amplification_budget(
        &self,
        side: crate::wire::Side,
        factor: u64,
        validated: Option<SocketAddr>,
    ) -> u64 {
        let known = self.remote.is_none() || self.remote == validated;
        if self.validated || side == crate::wire::Side::Client || known {
            return u64::MAX;
        }
        self.received_bytes
            .saturating_mul(factor)
            .saturating_sub(self.sent_bytes)
    }

    /// PATH_RESPONSE data received on the path: validates it if it echoes our
    /// challenge (RFC 9000 §8.2.3), else is ignored.
    pub fn on_response(&mut self, data: [u8; 8]) {
        if self.challenge == Some(data) {
            self.validated = true;
            self.challenge = None;
            self.challenge_pending = false;
        }
    }
}

/// The spaces of path IDs above 0, by path ID.
#[derive(Default)]
pub(super) struct PathSpaces {
    paths: BTreeMap<PathId, PathSpace>,
    /// The path above 0 whose packet's frames are being processed, so that
    /// PATH_CHALLENGE and PATH_RESPONSE act on it (RFC 9000 §8.2.2).
    pub receiving: Option<PathId>,
    /// The counts of the last paths freed (`remove`).
    pub freed: FreedPaths<FreedPath>,
}

impl PathSpaces {
    /// The space of `path`, if open.
    pub fn get(&self, path: PathId) -> Option<&PathSpace> {
        self.paths.get(&path)
    }

    pub fn get_mut(&mut self, path: PathId) -> Option<&mut PathSpace> {
        self.paths.get_mut(&path)
    }

    /// The space of `path`, opened with a fresh recovery (initial RTT `rtt`, controller
    /// from `cc`) and ECN state (`ecn`, testing afresh: RFC 9000 §13.4.2 validates each
    /// path) if it was not. The caller checked `path` against the limits.
    pub fn open(
        &mut self,
        path: PathId,
        (rtt, ecn): (Duration, EcnMode),
        cc: impl FnOnce() -> Box<dyn CongestionController>,
        pacer: impl FnOnce() -> Pacer,
    ) -> &mut PathSpace {
        debug_assert!(path != PathId::INITIAL, "path 0 is the data space");
        self.paths.entry(path).or_insert_with(|| PathSpace {
            acks: AckTracker::new(),
            next_pn: 0,
            recovery: Recovery::new(rtt, cc()),
            pings: 0,
            probes: 0,
            pacer: pacer(),
            loss_timer: None,
            pacing_at: None,
            loss: PathLossStats::default(),
            sent_bytes: 0,
            received: 0,
            sent: 0,
            received_bytes: 0,
            local: None,
            remote: None,
            challenge: None,
            challenge_pending: false,
            validated: false,
            validation_ptos: 0,
            free_at: None,
            responses: Vec::new(),
            abandoned: false,
            abandon_pending: None,
            ecn: EcnPath::new(ecn),
            key_phase: PhaseMark::default(),
        })
    }

    /// Every open path's ID and space.
    pub fn iter(&self) -> impl Iterator<Item = (PathId, &PathSpace)> {
        self.paths.iter().map(|(k, v)| (*k, v))
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = (PathId, &mut PathSpace)> {
        self.paths.iter_mut().map(|(k, v)| (*k, v))
    }

    /// Frees the space of `path` (§3.4, 3 PTO after it was abandoned).
    pub fn remove(&mut self, path: PathId) {
        if let Some(s) = self.paths.remove(&path) {
            let counts = FreedPath {
                loss: PathLossStats {
                    pto_count: s.recovery.pto_count(),
                    ..s.loss
                },
                received: s.received,
                sent: s.sent,
                received_bytes: s.received_bytes,
                validated: s.validated,
            };
            self.freed.push(path, counts);
        }
    }

    /// The abandoned paths whose state is due to be freed at `now`.
    pub fn due_to_free(&self, now: Instant) -> Vec<PathId> {
        self.paths
            .iter()
            .filter(|(_, s)| s.free_at.is_some_and(|t| t <= now))
            .map(|(id, _)| *id)
            .collect()
    }

    /// How many path spaces are held.
    pub fn len(&self) -> usize {
        self.paths.len()
    }

    /// A path with a PATH_ABANDON to send, and its error code.
    pub fn abandon_to_send(&self) -> Option<(PathId, u64)> {
        self.paths
            .iter()
            .find_map(|(id, p)| p.abandon_pending.map(|e| (*id, e)))
    }

    /// The earliest loss detection deadline over the open paths, or time to free an
    /// abandoned one (`Timer::PathLoss`).
    pub fn loss_deadline(&self) -> Option<Instant> {
        let free = self.paths.values().filter_map(|p| p.free_at);
        self.paths
            .values()
            .filter_map(|p| p.loss_timer)
            .chain(free)
            .min()
    }

    /// The earliest pacing deadline over the open paths (`Timer::PathPacing`).
    pub fn pacing_deadline(&self) -> Option<Instant> {
        self.paths.values().filter_map(|p| p.pacing_at).min()
    }

    /// The earliest PATH_ACK deadline over the open paths.
    pub fn ack_deadline(&self) -> Option<Instant> {
        self.paths
            .values()
            .filter_map(|p| p.acks.ack_deadline())
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::CongestionControl;

    fn cc() -> Box<dyn CongestionController> {
        CongestionControl::default().build_seeded(1200, 1)
    }

    fn pacer() -> Pacer {
        Pacer::new(1200)
    }

    #[test]
    fn each_path_has_its_own_space_opened_once() {
        let mut s = PathSpaces::default();
        s.open(
            PathId(1),
            (Duration::from_millis(10), EcnMode::Off),
            cc,
            pacer,
        )
        .next_pn = 5;
        // Opening again keeps the state.
        assert_eq!(
            s.open(
                PathId(1),
                (Duration::from_millis(10), EcnMode::Off),
                cc,
                pacer
            )
            .next_pn,
            5
        );
        assert_eq!(
            s.open(
                PathId(2),
                (Duration::from_millis(10), EcnMode::Off),
                cc,
                pacer
            )
            .next_pn,
            0
        );
        assert_eq!(s.iter().count(), 2);
        assert!(s.get(PathId(3)).is_none());
        assert_eq!(s.ack_deadline(), None);
    }

    #[test]
    fn a_path_is_validated_by_the_echo_of_its_challenge_only() {
        let mut s = PathSpaces::default();
        let p = s.open(
            PathId(1),
            (Duration::from_millis(10), EcnMode::Off),
            cc,
            pacer,
        );
        p.challenge = Some([7; 8]);
        p.challenge_pending = true;
        p.on_response([8; 8]);
        assert!(!p.validated);
        p.on_response([7; 8]);
        assert!(p.validated && !p.challenge_pending);
        for i in 0..10 {
            p.on_challenge([i; 8]);
        }
        assert_eq!(p.responses.len(), MAX_PATH_RESPONSES);
        assert_eq!(p.responses.last(), Some(&[9; 8]));
    }

    #[test]
    fn a_server_sends_three_times_what_it_received_on_an_unvalidated_path() {
        use crate::wire::Side;
        let mut s = PathSpaces::default();
        let p = s.open(
            PathId(1),
            (Duration::from_millis(10), EcnMode::Off),
            cc,
            pacer,
        );
        let (a, b) = ("192.0.2.1:443".parse().ok(), "192.0.2.2:443".parse().ok());
        assert_eq!(
            p.amplification_budget(Side::Server, 3, a),
            u64::MAX,
            "path 0's"
        );
        p.remote = b;
        assert_eq!(
            p.amplification_budget(Side::Server, 3, b),
            u64::MAX,
            "validated"
        );
        assert_eq!(p.amplification_budget(Side::Server, 3, a), 0);
        p.received_bytes = 1200;
        p.sent_bytes = 1000;
        assert_eq!(p.amplification_budget(Side::Server, 3, a), 2600);
        p.sent_bytes = 4000;
        assert_eq!(p.amplification_budget(Side::Server, 3, a), 0);
        assert_eq!(p.amplification_budget(Side::Client, 3, a), u64::MAX);
        p.validated = true;
        assert_eq!(p.amplification_budget(Side::Server, 3, a), u64::MAX);
    }
}
