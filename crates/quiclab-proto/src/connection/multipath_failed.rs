//! Abandoning a failed path on our own (`multipath.abandon_after_ptos`, off by default;
//! draft-ietf-quic-multipath §3.4: an endpoint "MUST explicitly close the path by
//! sending a PATH_ABANDON frame ... whether the decision to close the path results from
//! implicit signals such as an idle time-out ... or packet losses"). At each probe
//! timeout of a path (path 0's in `loss.rs`, the others' in `multipath_loss.rs`), once
//! its PTO count reached the configured number and another path is usable and has not
//! failed itself (PTO count below the schedulers' `FAILED_AFTER_PTOS`), the path is
//! abandoned with PATH_UNSTABLE_OR_POOR, path 0 as `multipath_abandon0.rs` does (its
//! flight re-sent on the others, the carrier taking its frames). An endpoint that is not
//! told its interface went down otherwise keeps probing a dead path 0 for as long as
//! the connection lives, and its ACKs and control frames with it.

use super::Connection;
use crate::multipath_sched::FAILED_AFTER_PTOS;
use crate::wire::frame_mp::abandon_code;
use crate::wire::PathId;

// The config's least `abandon_after_ptos` is the schedulers' failed PTO count.
const _: () = assert!(crate::config::MultipathConfig::MIN_ABANDON_AFTER_PTOS == FAILED_AFTER_PTOS);

impl Connection {
    /// A probe timeout expired on `path`: abandons it if it failed (see the module).
    pub(super) fn abandon_if_failed(&mut self, path: PathId) {
        let Some(limit) = self.config.multipath.abandon_after_ptos else {
            return;
        };
        if !self.multipath.is_negotiated() || !self.handshake.confirmed {
            return;
        }
        let pto_count = if path == PathId::INITIAL {
            if self.multipath.path0_abandoned {
                return;
            }
            self.path.recovery.pto_count()
        } else {
            match self.path_spaces.get(path) {
                Some(s) if !s.abandoned && s.validated => s.recovery.pto_count(),
                _ => return,
            }
        };
        if pto_count < limit || !self.healthy_path_besides(path) {
            return;
        }
        if path == PathId::INITIAL {
            self.abandon_path0(abandon_code::PATH_UNSTABLE_OR_POOR);
        } else {
            self.abandon(path, abandon_code::PATH_UNSTABLE_OR_POOR);
        }
    }

    /// Whether a path other than `except` can carry the connection and has not failed,
    /// or has failed only as far as `except` carries its acknowledgments
    /// (`multipath_ack_path.rs`: with `ack_path = "any"` every path's PATH_ACKs ride on
    /// path 0, so a dead path 0 makes every path look failed; the path that carries the
    /// others' ACKs is the one to give up, never one on its account).
    fn healthy_path_besides(&self, except: PathId) -> bool {
        let fine = |id: PathId, pto_count: u32| {
            pto_count < FAILED_AFTER_PTOS || self.ack_carrier(id) == except
        };
        let path0 = except != PathId::INITIAL
            && !self.multipath.path0_abandoned
            && fine(PathId::INITIAL, self.path.recovery.pto_count());
        path0
            || self.path_spaces.iter().any(|(id, s)| {
                id != except
                    && !s.abandoned
                    && s.validated
                    && !self.path_cids.remote_ids(id).is_empty()
                    && fine(id, s.recovery.pto_count())
            })
    }
}
