//! Coupled congestion control across a multipath connection's paths (issue 33 item 2):
//! with `multipath.coupled = "lia"` or `"olia"`, before an ACK is processed on a path
//! the connection reads every active path's window and smoothed RTT (and, for OLIA,
//! its bytes between losses), computes RFC 6356 §3's alpha and cwnd_total (`cc/lia.rs`)
//! or OLIA's increase (`cc/olia.rs`) and hands it to that path's controller, whose
//! congestion avoidance increase then is the coupled one (draft-ietf-quic-multipath
//! §5.3: LIA "can immediately be adapted to Multipath QUIC" for paths sharing a
//! bottleneck; OLIA is defined on the same Reno increase).
//! *Active*: path 0 unless abandoned, and every validated path above 0 not abandoned
//! (§3.4), the ACKed path always. Without multipath, or with `coupled = "none"`,
//! nothing here runs and each controller grows on its own.

use super::Connection;
use crate::cc::{coupling, olia_increase, CoupledPath, Coupling, OliaPath};
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

    /// Sets LIA's or OLIA's coupling on `path`'s controller for the ACK about to be
    /// processed.
    pub(super) fn couple_before_ack(&mut self, path: PathId) {
        let kind = self.config.multipath.coupled;
        if !self.multipath.is_negotiated() || !kind.is_coupled() {
            return;
        }
        let state = |r: &crate::path_recovery::Recovery<_>| OliaPath {
            cwnd: r.cc().window(),
            srtt: r.rtt().smoothed(),
            inter_loss: r.cc().inter_loss_bytes(),
        };
        // The active paths, and where the ACKed one sits among them.
        let mut paths = Vec::with_capacity(self.path_spaces.len().saturating_add(1));
        let mut me = 0;
        if !self.multipath.path0_abandoned || path == PathId::INITIAL {
            paths.push(state(&self.path.recovery));
        }
        for (id, s) in self.path_spaces.iter() {
            if id == path || (s.validated && !s.abandoned) {
                if id == path {
                    me = paths.len();
                }
                paths.push(state(&s.recovery));
            }
        }
        let c = if kind == CoupledCongestionControl::Olia {
            let mss = self.max_datagram_size() as u64;
            olia_increase(&paths, me, mss).map(Coupling::Olia)
        } else {
            let lia: Vec<CoupledPath> = paths
                .iter()
                .map(|p| CoupledPath {
                    cwnd: p.cwnd,
                    srtt: p.srtt,
                })
                .collect();
            coupling(&lia).map(Coupling::Lia)
        };
        if path == PathId::INITIAL {
            self.path.recovery.set_coupling(c);
        } else if let Some(sp) = self.path_spaces.get_mut(path) {
            sp.recovery.set_coupling(c);
        }
    }
}
