//! Multipath QUIC on the client host's interfaces (draft-ietf-quic-multipath; the
//! version `quiclab_proto::wire::frame_mp` names). A QUIC flow whose client host has
//! several interfaces and whose connection negotiated multipath (`transport.multipath
//! = { enabled = true }` on both ends) keeps path 0 on the first interface and, once
//! the handshake is confirmed, opens one path per further interface that is up (path
//! IDs 1, 2, ... in interface order, §3.1), from that interface's address; an
//! interface that comes up later gets a path then (a new path ID: §3.4 never reuses
//! one). An interface configured `backup = true` has its path marked backup with
//! PATH_STATUS_BACKUP (§3.3). A told client abandons the path of an interface that
//! went down (§3.4; path 0 included, once another path is validated) instead of
//! migrating; an untold one does nothing (each path's own loss recovery copes, and the
//! server's PTO probes on the dead path go nowhere). Each path's datagrams are counted
//! as they cross its interface (`FlowResult::paths`).

use super::{Simulation, Stack};
use crate::output::results::FlowPathResult;
use quiclab_proto::Connection;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};

/// Application error code of the PATH_ABANDON sent when an interface goes down (the
/// draft leaves the value to the application, §3.4).
const ABANDON_INTERFACE_DOWN: u64 = 0;

/// One path the client opened, with its counters.
#[derive(Clone, Debug)]
struct MpPath {
    id: u32,
    iface: usize,
    backup: bool,
    rx: (u64, u64),
    tx: (u64, u64),
}

/// One flow's multipath state.
#[derive(Clone, Debug, Default)]
pub(super) struct MpFlow {
    /// Whether the connection negotiated multipath (`None`: handshake not confirmed).
    negotiated: Option<bool>,
    /// Each interface's open path, if any (the first interface starts with path 0).
    path_of: Vec<Option<u32>>,
    /// Paths opened, in order.
    paths: Vec<MpPath>,
    next_id: u32,
    /// Something to do at the client's next turn (open paths, set statuses).
    pending: bool,
}

impl MpFlow {
    /// A flow on a host with `interfaces` interfaces (the first carries path 0).
    pub(super) fn new(interfaces: usize, backup0: bool) -> MpFlow {
        let mut path_of = vec![None; interfaces];
        path_of[0] = Some(0);
        MpFlow {
            negotiated: None,
            path_of,
            paths: vec![MpPath {
                id: 0,
                iface: 0,
                backup: backup0,
                rx: (0, 0),
                tx: (0, 0),
            }],
            next_id: 1,
            pending: true,
        }
    }

    /// Multipath was negotiated: paths above 0 may send from other interfaces.
    pub(super) fn is_on(&self) -> bool {
        self.negotiated == Some(true)
    }

    fn path_mut(&mut self, iface: usize) -> Option<&mut MpPath> {
        let id = self.path_of.get(iface).copied().flatten()?;
        self.paths.iter_mut().rev().find(|p| p.id == id)
    }

    /// A datagram of `bytes` received (`rx`) or sent on interface `iface`.
    pub(super) fn count(&mut self, iface: usize, bytes: usize, rx: bool) {
        if !self.is_on() {
            return;
        }
        if let Some(p) = self.path_mut(iface) {
            let c = if rx { &mut p.rx } else { &mut p.tx };
            c.0 = c.0.saturating_add(bytes as u64);
            c.1 = c.1.saturating_add(1);
        }
    }
}

impl Simulation {
    /// Whether flow `i`'s connection negotiated multipath (its transmits' sources are
    /// its paths' interfaces, not a migration).
    pub(super) fn flow_multipath(&self, i: usize) -> bool {
        self.paths.mp.get(&i).is_some_and(MpFlow::is_on)
    }

    /// Node `n`'s turn (a client with multipath to set up): once its handshake is
    /// confirmed, notes whether multipath was negotiated, then opens a path on every
    /// interface that is up (believed up) without one, marking backup ones (§3.1,
    /// §3.3). A refused open (no connection ID for the path ID yet, the peer's path ID
    /// limit) is tried again at the next turn.
    pub(super) fn multipath_turn(&mut self, n: usize) {
        let node = &mut self.nodes[n];
        let i = node.flow;
        if self.flows[i].client_node != n {
            return;
        }
        let Some(mp) = self.paths.mp.get_mut(&i) else {
            return;
        };
        if !mp.pending {
            return;
        }
        let Stack::Quic {
            endpoint,
            conn: Some(h),
            ..
        } = &mut node.stack
        else {
            return;
        };
        let Some(c) = endpoint.connection_mut(*h) else {
            return;
        };
        if !c.is_handshake_confirmed() {
            return;
        }
        if mp.negotiated.is_none() {
            mp.negotiated = Some(c.multipath_negotiated());
            if c.multipath_negotiated() && mp.paths[0].backup {
                // §3.3: the first interface is the backup one.
                let _ = c.multipath_set_path_status(0, true);
            }
        }
        if !mp.is_on() {
            mp.pending = false;
            return;
        }
        let port = node.addr.port();
        let mut done = true;
        for k in 0..mp.path_of.len() {
            if mp.path_of[k].is_some() || !self.paths.believed_up[k] {
                continue;
            }
            let local = SocketAddrV4::new(self.paths.addrs[k], port);
            let id = mp.next_id;
            if c.multipath_open_path(id, SocketAddr::V4(local)).is_err() {
                done = false;
                continue;
            }
            let backup = self.paths.backup[k];
            if backup {
                let _ = c.multipath_set_path_status(id, true);
            }
            mp.next_id = id.saturating_add(1);
            mp.path_of[k] = Some(id);
            mp.paths.push(MpPath {
                id,
                iface: k,
                backup,
                rx: (0, 0),
                tx: (0, 0),
            });
        }
        // The caller (`settle`) polls the new paths' challenges right after.
        mp.pending = !done;
    }

    /// Interface `iface` came up: the multipath flows open a path on it at their
    /// client's next turn.
    pub(super) fn multipath_on_up(&mut self, iface: usize) {
        for (&i, mp) in self.paths.mp.iter_mut() {
            if mp.is_on() && mp.path_of.get(iface).is_some_and(Option::is_none) {
                mp.pending = true;
                self.dirty.insert(self.flows[i].client_node);
            }
        }
    }

    /// A told multipath client hears that interface `iface` went down: it abandons
    /// that interface's path (§3.4). Returns false when it could not (the last usable
    /// path, or no path there), so the caller may migrate instead.
    pub(super) fn multipath_on_down(&mut self, i: usize, iface: usize) -> bool {
        let cn = self.flows[i].client_node;
        let Some(mp) = self.paths.mp.get_mut(&i) else {
            return false;
        };
        let Some(id) = mp.path_of.get(iface).copied().flatten() else {
            return true;
        };
        let Stack::Quic {
            endpoint,
            conn: Some(h),
            ..
        } = &mut self.nodes[cn].stack
        else {
            return false;
        };
        let Some(c) = endpoint.connection_mut(*h) else {
            return false;
        };
        if c.multipath_abandon_path(id, ABANDON_INTERFACE_DOWN)
            .is_err()
        {
            return false;
        }
        mp.path_of[iface] = None;
        self.dirty.insert(cn);
        true
    }

    /// Flow `i`'s client sent (`rx` false) or received a datagram of `bytes` on the
    /// interface whose address is `ip`.
    pub(super) fn multipath_count(&mut self, i: usize, ip: &Ipv4Addr, bytes: usize, rx: bool) {
        let Some(k) = self.paths.addrs.iter().position(|a| a == ip) else {
            return;
        };
        if let Some(mp) = self.paths.mp.get_mut(&i) {
            mp.count(k, bytes, rx);
        }
    }

    /// Flow `i`'s paths for its results (empty without multipath).
    pub(super) fn multipath_results(&self, i: usize) -> Vec<FlowPathResult> {
        let Some(mp) = self.paths.mp.get(&i).filter(|m| m.is_on()) else {
            return Vec::new();
        };
        let conn = match &self.nodes[self.flows[i].client_node].stack {
            Stack::Quic {
                endpoint,
                conn: Some(h),
                ..
            } => endpoint.connection(*h),
            _ => None,
        };
        mp.paths
            .iter()
            .map(|p| FlowPathResult {
                path_id: p.id,
                interface: self.paths.names.get(p.iface).cloned().unwrap_or_default(),
                backup: p.backup,
                bytes_rx: p.rx.0,
                datagrams_rx: p.rx.1,
                bytes_tx: p.tx.0,
                datagrams_tx: p.tx.1,
                abandoned: conn.is_some_and(|c| c.multipath_path_abandoned(p.id)),
                srtt_s: conn
                    .and_then(|c: &Connection| c.multipath_path_rtt(p.id))
                    .map(|(rtt, _)| rtt.as_secs_f64()),
            })
            .collect()
    }
}
