//! One node's turn after the events of an instant: its application acts, its endpoint's
//! datagrams go onto their routes, and its timer is re-armed.

use super::{App, Simulation, Stack};
use crate::workload::app::{AppMeasure, MeasureWindow};
use quiclab_link::link::Packet;
use quiclab_proto::{Connection, Instant};
use std::net::{SocketAddr, SocketAddrV4};
use std::time::Duration;

impl Simulation {
    /// Lets a node's application act, sends what its endpoint wants to send, and
    /// re-arms its timer.
    pub(super) fn settle(&mut self, n: usize) {
        let now = self.now;
        let node = &mut self.nodes[n];
        let flow = &mut self.flows[node.flow];
        let flow_done = &mut self.flows_done;
        let mut wakeup = None;
        if let Stack::Tcp(t) = &mut node.stack {
            t.drive(now, &mut flow.measure, &self.window, &mut self.read_buf);
            wakeup = t.wakeup();
        } else if let Stack::Pep(p) = &mut node.stack {
            p.drive(&mut self.read_buf);
        } else if let Stack::Quic {
            endpoint,
            app,
            conn: Some(h),
        } = &mut node.stack
        {
            if let Some(conn) = endpoint.connection_mut(*h) {
                let window = &self.window;
                let buf = &mut self.read_buf;
                wakeup = app.drive(now, conn, &mut flow.measure, window, buf);
            }
        }
        if flow.measure.done_at.is_some() && !flow.counted_done {
            flow.counted_done = true;
            *flow_done += 1;
        }
        if !self.paths.flows.is_empty() {
            // Measured where the flow's data arrives: the server for an upload.
            let server = flow.client_node != n;
            self.paths
                .on_delivered(node.flow, now, server, flow.measure.delivered);
        }
        if !self.paths.mp.is_empty() {
            self.multipath_turn(n);
        }
        let node = &self.nodes[n];
        let default_src = node.public.unwrap_or(node.addr);
        // A multipath connection's transmits name their path's interface, which is
        // no migration (`sim/multipath.rs`).
        let multipath = !self.paths.mp.is_empty() && self.flow_multipath(node.flow);
        loop {
            if !self.can_send(n) {
                break;
            }
            let mut payload = self.spare.pop().unwrap_or_default();
            payload.clear();
            let node = &mut self.nodes[n];
            let sent = match &mut node.stack {
                Stack::Quic { endpoint, .. } => {
                    endpoint.poll_transmit(now, &mut payload).map(|t| {
                        payload.truncate(t.size);
                        // A connection that migrated names its local address (an
                        // interface of the host, `sim/paths.rs`).
                        let src = match t.source {
                            Some(SocketAddr::V4(a)) => {
                                if !multipath {
                                    node.local = Some(a);
                                }
                                a
                            }
                            _ => default_src,
                        };
                        (src, t.destination, false, t.ecn)
                    })
                }
                // A TCP end with several connections sends from each one's own port.
                Stack::Tcp(t) => t.poll_transmit(now, &mut payload).map(|(d, local, ecn)| {
                    (local.unwrap_or(default_src), SocketAddr::V4(d), true, ecn)
                }),
                // The PEP sends as the server toward the client and the reverse.
                Stack::Pep(p) => p
                    .poll_transmit(now, &mut payload)
                    .map(|(s, d, ecn)| (s, SocketAddr::V4(d), true, ecn)),
            };
            let Some((src, destination, tcp, ecn)) = sent else {
                self.spare.push(payload);
                break;
            };
            let route = self.route_for(n, src, destination);
            let Some((dst, route)) = route else {
                self.spare.push(payload);
                continue;
            };
            self.nodes[n].route = Some((src, dst, route));
            if multipath {
                let i = self.nodes[n].flow;
                if self.flows[i].client_node == n {
                    self.multipath_count(i, src.ip(), payload.len(), false);
                }
            }
            let pkt = Packet {
                src,
                dst,
                payload,
                route,
                hop: 0,
                cross: false,
                extra_delay: Duration::ZERO,
                reorder: false,
                tcp,
                ecn,
            };
            self.emit(n, pkt);
        }
        self.close_batch(n);
        let node = &mut self.nodes[n];
        let next = [node.stack.poll_timeout(), wakeup]
            .into_iter()
            .flatten()
            .min()
            .map(|t| t.max(now));
        let next = self.host_timer(n, next);
        if next != self.events.timer(n) {
            self.events.set_timer(n, next);
        }
    }

    /// The route of a datagram from `src` (node `n`'s address, or an interface's after a
    /// migration) to `destination`; the node's last route when both match.
    fn route_for(
        &self,
        n: usize,
        src: SocketAddrV4,
        destination: SocketAddr,
    ) -> Option<(SocketAddrV4, usize)> {
        let node = &self.nodes[n];
        let SocketAddr::V4(dst) = destination else {
            return None;
        };
        if let Some((cached_src, cached, route)) = node.route {
            if cached == dst && cached_src == src {
                return Some((dst, route));
            }
        }
        // The route leaves from the host of the source address: an interface's own for
        // a migrated connection.
        let multipath = !self.paths.mp.is_empty() && self.flow_multipath(node.flow);
        let src_host = if node.local == Some(src) || (multipath && src != node.addr) {
            self.host_index.get(src.ip()).copied().unwrap_or(node.host)
        } else {
            node.host
        };
        self.host_index
            .get(dst.ip())
            .and_then(|&h| self.net.route_of.get(&(src_host, h)))
            .map(|&route| (dst, route))
    }
}

impl App {
    /// Lets the application act on its connection; returns when it next wants to.
    fn drive(
        &mut self,
        now: Instant,
        conn: &mut Connection,
        measure: &mut AppMeasure,
        window: &MeasureWindow,
        buf: &mut [u8],
    ) -> Option<Instant> {
        match self {
            App::Client(app) => {
                app.drive(now, conn, measure, window, buf);
                app.wakeup()
            }
            App::Server(app) => {
                app.drive(now, conn, measure, window, buf);
                app.wakeup()
            }
            App::Web(app) => {
                app.drive(now, conn, measure, window, buf);
                app.wakeup()
            }
        }
    }
}
