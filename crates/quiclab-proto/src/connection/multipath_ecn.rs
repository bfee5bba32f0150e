//! ECN on the paths above 0 (RFC 9000 §13.4: "an endpoint validates the ECN counts for
//! each network path and disables the use of ECN on that path if errors are
//! detected"; draft-ietf-quic-multipath §4.1: a PATH_ACK_ECN carries the counts "received
//! on the acknowledged packet number space"). Each path keeps its own `EcnPath`
//! (`PathSpace::ecn`, the application-data slot used): the receiver counts the
//! codepoints of the packets it processed in that path's space (`multipath_recv.rs`)
//! and reports them in that path's PATH_ACK (`multipath_ack_path.rs`); the sender
//! marks the path's packets with its own state's codepoint (`multipath_send.rs`),
//! validates the peer's counts against the packets that PATH_ACK newly acknowledged,
//! and hands a CE increase to that path's controller only (RFC 9002 §7.1). A path
//! whose validation fails sends not-ECT from then on; the others keep marking. Path 0
//! keeps the connection's state (`ecn_state.rs`, through `loss.rs`).
//!
//! The per-path state changes are not logged as qlog `ecn_state_updated` (that event
//! has no path field); [`Connection::multipath_path_ecn`] reports them.
// Peer values pass through here: arithmetic is checked, saturating or wrapping
// by the rule in CONTRIBUTING.md ("Arithmetic on wire values").
#![deny(clippy::arithmetic_side_effects)]

use super::ecn_state::EcnReport;
use super::spaces::{SentRecord, SpaceId};
use super::Connection;
use crate::recovery::SentPacket;
use crate::wire::{AckFrame, PathId};

impl Connection {
    /// Path `path_id`'s ECN (path 0: the connection's, as [`Connection::ecn`]; above 0:
    /// its own state, counts in the application-data slot), `None` if the path's space
    /// is not open.
    pub fn multipath_path_ecn(&self, path_id: u32) -> Option<EcnReport> {
        if path_id == 0 {
            return Some(self.ecn.report());
        }
        let sp = self.path_spaces.get(PathId(path_id))?;
        Some(sp.ecn.report())
    }

    /// How many more CE marks `ack` (a PATH_ACK for `path`, above 0) reports than the
    /// path's last validated counts: the path's congestion signal (RFC 9002 §7.1).
    pub(super) fn path_ce_growth(&self, path: PathId, ack: &AckFrame) -> u64 {
        self.path_spaces
            .get(path)
            .map_or(0, |sp| sp.ecn.ce_growth(SpaceId::Data, ack.ecn))
    }

    /// RFC 9000 §13.4.2.1 on path `path` (above 0): the PATH_ACK's counts against the
    /// packets it newly acknowledged (`largest_grew`: it raised the path's largest
    /// acknowledged; only such an ACK validates).
    pub(super) fn validate_path_ecn(
        &mut self,
        path: PathId,
        ack: &AckFrame,
        largest_grew: bool,
        newly_acked: &[SentPacket<SentRecord>],
    ) {
        if let Some(sp) = self.path_spaces.get_mut(path) {
            let sent = newly_acked.iter().map(|p| (p.pn, p.data.ecn));
            sp.ecn.on_ack(SpaceId::Data, largest_grew, ack.ecn, sent);
            // Bounded (at most three changes ever); not logged, see the module docs.
            while sp.ecn.take_change().is_some() {}
        }
    }
}
