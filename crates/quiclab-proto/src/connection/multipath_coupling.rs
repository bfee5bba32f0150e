//! Coupled congestion control across a multipath connection's paths (issue 33 item 2):
//! with `multipath.coupled = "lia"`, before an ACK is processed on a path the
//! connection reads every active path's window and smoothed RTT, computes RFC 6356 §3's
//! alpha and cwnd_total (`cc/lia.rs`) and hands them to that path's controller, whose
//! congestion avoidance increase then is LIA's (draft-ietf-quic-multipath §5.3 leaves
//! coupling to the sender: "it is RECOMMENDED to apply a coupled congestion control
//! ... such as LIA"). *Active*: path 0 and every validated path above 0 not abandoned
//! (§3.4), the ACKed path always. Without multipath, or with `coupled = "none"`,
//! nothing here runs and each controller grows on its own.

use super::Connection;
use crate::cc::{coupling, CoupledPath};
use crate::config::CoupledCongestionControl;
use crate::wire::PathId;

impl Connection {
    /// Path `path_id`'s congestion controller (path 0's is the connection's), to read
    /// its window and state; `None` if the path's space is not open.
    pub fn multipath_path_controller(
        &self,
        path_id: u32,
    ) -> Option<&dyn crate::cc::CongestionController> {
        if path_id == 0 {
            return Some(self.path.recovery.cc());
        }
        Some(self.path_spaces.get(PathId(path_id))?.recovery.cc())
    }

    /// Sets LIA's coupling on `path`'s controller for the ACK about to be processed.
    pub(super) fn couple_before_ack(&mut self, path: PathId) {
        if !self.multipath.is_negotiated()
            || self.config.multipath.coupled != CoupledCongestionControl::Lia
        {
            return;
        }
        let state = |r: &crate::path_recovery::Recovery<_>| CoupledPath {
            cwnd: r.cc().window(),
            srtt: r.rtt().smoothed(),
        };
        let mut paths = vec![state(&self.path.recovery)];
        paths.extend(
            self.path_spaces
                .iter()
                .filter(|(id, s)| *id == path || (s.validated && !s.abandoned))
                .map(|(_, s)| state(&s.recovery)),
        );
        let c = coupling(&paths);
        if path == PathId::INITIAL {
            self.path.recovery.set_coupling(c);
        } else if let Some(sp) = self.path_spaces.get_mut(path) {
            sp.recovery.set_coupling(c);
        }
    }
}
