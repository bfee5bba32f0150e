//! Path events in a run: the client host's interfaces going down and up, degrading and
//! handing over (`scenario/interfaces.rs`), what the clients' connections do about them
//! (told: migrate at once; untold: migrate after `silence_ptos` PTO periods without a
//! received datagram), and each event's effect on its flows, measured per flow
//! (`FlowResult::path_events`), NAT rebindings (`scenario/rebind.rs`) included.

use super::{secs, Ev, Simulation, Stack};
use crate::net::engine::saturating_secs;
use crate::net::topology::rate_bps;
use crate::output::results::PathEventResult;
use crate::scenario::{ClientHost, LinkChange, LinkConfig};
use quiclab_proto::{Connection, Instant};
use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::time::Duration;

/// The longest an untold client's silence check waits before it looks again.
const CHECK_EVERY: Duration = Duration::from_millis(50);

/// What happens to an interface at a scheduled time.
#[derive(Clone, Debug)]
enum Action {
    Down,
    Up,
    Degrade(LinkChange),
}

/// One scheduled action on interface `iface`; `record` is the scenario event whose
/// effect is measured at this action (a handover's is measured when its old interface
/// goes down).
#[derive(Clone, Debug)]
struct PathAction {
    iface: usize,
    action: Action,
    record: Option<usize>,
}

/// The client's address on an event's new path.
#[derive(Clone, Copy, Debug)]
pub(super) enum NewPath {
    /// Any but the one it used at the event (its interface then).
    Not(SocketAddrV4),
    /// This one (the public address a NAT rebinding gave it).
    Is(SocketAddrV4),
}

impl NewPath {
    fn contains(self, a: SocketAddrV4) -> bool {
        match self {
            NewPath::Not(old) => a != old,
            NewPath::Is(new) => a == new,
        }
    }
}

/// One event's measurement for one flow, while the run goes on.
#[derive(Clone, Debug)]
struct Record {
    event: &'static str,
    interface: Option<String>,
    at: Instant,
    /// The receiving application's last delivery at or before `at`.
    last_delivery: Option<Instant>,
    /// Its first delivery after `at`.
    resumed: Option<Instant>,
    /// Its first delivery after `at` at an instant its endpoint got a datagram on the
    /// new path (data on the new path let it resume), and its last delivery before
    /// that one (datagrams already past the old path's interface may still arrive
    /// after `at`: an upload's, whose old interface is its first hop).
    resumed_new: Option<Instant>,
    before_new: Option<Instant>,
    /// When each end (client, server) last got a datagram on the new path.
    fed_new: [Option<Instant>; 2],
    /// Which datagrams to the client are on the new path.
    new_rx: NewPath,
    new_path: Option<Instant>,
    /// The client's first move (`Connection::migrate`) after `at`.
    moved: Option<Instant>,
    /// Both ends' retransmitted stream bytes at `at`, and at the flow's next record (or
    /// the end of the run).
    retx_at: u64,
    retx_until: Option<u64>,
}

/// One flow's path bookkeeping.
#[derive(Clone, Debug, Default)]
pub(super) struct FlowPaths {
    /// Application bytes delivered as last seen, and when they last grew.
    delivered: u64,
    last_delivery: Option<Instant>,
    /// The last datagram the client received, or its last move: the untold client's
    /// silence counts from there.
    quiet_since: Instant,
    records: Vec<Record>,
    /// Records still waiting for a resumption, a new path or a move.
    open: usize,
}

/// The run's path state: the client host's interfaces and the flows it measures.
#[derive(Default)]
pub(super) struct Paths {
    /// Each interface's address, whether it carries packets, and whether the clients
    /// believe it does (told of every up; of downs only when `told`).
    pub(super) addrs: Vec<Ipv4Addr>,
    up: Vec<bool>,
    pub(super) believed_up: Vec<bool>,
    /// Each interface's name, and whether its multipath path is a backup one.
    pub(super) names: Vec<String>,
    pub(super) backup: Vec<bool>,
    told: bool,
    silence_ptos: f64,
    /// For each link, its interface (empty without interfaces).
    link_iface: Vec<Option<usize>>,
    /// Each interface's configured links [forward, return], which `up` restores.
    configs: Vec<[LinkConfig; 2]>,
    actions: Vec<PathAction>,
    /// Flows measured (those with rebindings, and every QUIC flow on a host with
    /// interfaces), by index.
    pub(super) flows: BTreeMap<usize, FlowPaths>,
    /// The QUIC flows that may use multipath (`sim/multipath.rs`), by index.
    pub(super) mp: BTreeMap<usize, super::multipath::MpFlow>,
}

impl Paths {
    /// The interfaces of `host` (whose links `link_iface` maps) and their actions, in
    /// the order they are scheduled (returned with their times).
    pub(super) fn new(
        host: Option<&ClientHost>,
        addrs: Vec<Ipv4Addr>,
        link_iface: Vec<Option<usize>>,
    ) -> (Paths, Vec<(Instant, usize)>) {
        let Some(h) = host else {
            return (Paths::default(), Vec::new());
        };
        let up: Vec<bool> = h.interfaces.iter().map(|i| i.up).collect();
        let mut p = Paths {
            addrs,
            believed_up: up.clone(),
            up,
            names: h.interfaces.iter().map(|i| i.name.clone()).collect(),
            backup: h.interfaces.iter().map(|i| i.backup).collect(),
            told: h.told,
            silence_ptos: h.silence_ptos,
            link_iface,
            configs: (h.interfaces.iter())
                .map(|i| [i.forward.clone(), i.ret.clone()])
                .collect(),
            ..Paths::default()
        };
        let mut at = Vec::new();
        let mut push = |p: &mut Paths, t: f64, a: PathAction| {
            at.push((secs(t), p.actions.len()));
            p.actions.push(a);
        };
        for (k, e) in h.events.iter().enumerate() {
            let iface = h.interface(e.interface()).unwrap_or(0);
            let change = e.degradation().map(|d| d.link_change());
            match e {
                crate::scenario::PathEvent::Down { .. } => {
                    push(&mut p, e.at_s(), PathAction::new(iface, Action::Down, k))
                }
                crate::scenario::PathEvent::Up { .. } => {
                    push(&mut p, e.at_s(), PathAction::new(iface, Action::Up, k))
                }
                crate::scenario::PathEvent::Degrade { .. } => {
                    let a = Action::Degrade(change.unwrap_or_else(no_change));
                    push(&mut p, e.at_s(), PathAction::new(iface, a, k))
                }
                crate::scenario::PathEvent::Handover { to, .. } => {
                    let to = h.interface(to).unwrap_or(0);
                    let up = PathAction {
                        iface: to,
                        action: Action::Up,
                        record: None,
                    };
                    push(&mut p, e.at_s(), up);
                    let degrade = PathAction {
                        iface,
                        action: Action::Degrade(change.unwrap_or_else(no_change)),
                        record: None,
                    };
                    push(&mut p, e.at_s(), degrade);
                    let down = PathAction::new(iface, Action::Down, k);
                    push(&mut p, e.measured_at_s(), down);
                }
            }
        }
        (p, at)
    }

    /// Whether a packet that crossed link `l` is lost because its interface is down.
    pub(super) fn lost_on(&self, l: usize) -> bool {
        matches!(self.link_iface.get(l), Some(Some(k)) if !self.up[*k])
    }

    /// Whether the clients have interfaces (and the untold ones watch for silence).
    pub(super) fn watches_silence(&self) -> bool {
        !self.addrs.is_empty() && !self.told
    }

    /// The interface whose address is `ip`.
    fn interface_of(&self, ip: &Ipv4Addr) -> Option<usize> {
        self.addrs.iter().position(|a| a == ip)
    }

    /// A flow's client received a datagram at `dst`.
    pub(super) fn on_client_rx(&mut self, flow: usize, now: Instant, dst: SocketAddrV4) {
        let Some(f) = self.flows.get_mut(&flow) else {
            return;
        };
        f.quiet_since = now;
        if f.open == 0 {
            return;
        }
        for r in &mut f.records {
            if r.new_path.is_none() && r.new_rx.contains(dst) {
                r.new_path = Some(now);
                f.open -= usize::from(r.is_closed());
            }
        }
    }

    /// A flow's end (`server` or the client) got a datagram whose client-side address
    /// (the client's source, or its destination) is `client_addr`.
    pub(super) fn on_fed(
        &mut self,
        flow: usize,
        now: Instant,
        server: bool,
        client_addr: SocketAddrV4,
    ) {
        let Some(f) = self.flows.get_mut(&flow) else {
            return;
        };
        if f.open == 0 {
            return;
        }
        for r in &mut f.records {
            if r.resumed_new.is_none() && r.new_rx.contains(client_addr) {
                r.fed_new[usize::from(server)] = Some(now);
            }
        }
    }

    /// A flow's receiving application, at its `server` end or the client, has
    /// `delivered` bytes now.
    pub(super) fn on_delivered(&mut self, flow: usize, now: Instant, server: bool, delivered: u64) {
        let Some(f) = self.flows.get_mut(&flow) else {
            return;
        };
        if delivered == f.delivered {
            return;
        }
        f.delivered = delivered;
        f.last_delivery = Some(now);
        if f.open == 0 {
            return;
        }
        for r in &mut f.records {
            if r.resumed.is_none() && now > r.at {
                r.resumed = Some(now);
                f.open -= usize::from(r.is_closed());
            }
            if r.resumed_new.is_some() || now <= r.at {
                continue;
            }
            if r.fed_new[usize::from(server)] == Some(now) {
                r.resumed_new = Some(now);
                f.open -= usize::from(r.is_closed());
            } else {
                r.before_new = Some(now);
            }
        }
    }

    /// A flow's client moved to another local address.
    fn on_moved(&mut self, flow: usize, now: Instant) {
        let Some(f) = self.flows.get_mut(&flow) else {
            return;
        };
        f.quiet_since = now;
        for r in &mut f.records {
            if r.moved.is_none() {
                r.moved = Some(now);
                f.open -= usize::from(r.is_closed());
            }
        }
    }
}

impl PathAction {
    fn new(iface: usize, action: Action, record: usize) -> Self {
        PathAction {
            iface,
            action,
            record: Some(record),
        }
    }
}

fn no_change() -> LinkChange {
    crate::scenario::Degradation::default().link_change()
}

impl Record {
    /// Nothing more to wait for (a move only counts until then).
    fn is_closed(&self) -> bool {
        self.resumed.is_some()
            && self.resumed_new.is_some()
            && self.new_path.is_some()
            && self.moved.is_some()
    }

    fn result(&self, retx_end: u64) -> PathEventResult {
        let since =
            |t: Option<Instant>| t.map(|t| t.saturating_duration_since(self.at).as_secs_f64());
        PathEventResult {
            event: self.event.to_string(),
            interface: self.interface.clone(),
            at_s: self.at.as_secs_f64(),
            stall_s: self.resumed.map(|r| {
                let from = self.last_delivery.unwrap_or(self.at);
                r.saturating_duration_since(from).as_secs_f64()
            }),
            resume_s: since(self.resumed),
            new_path_stall_s: self.resumed_new.map(|r| {
                let from = self.before_new.unwrap_or(self.at);
                r.saturating_duration_since(from).as_secs_f64()
            }),
            new_path_resume_s: since(self.resumed_new),
            new_path_s: since(self.new_path),
            moved_s: since(self.moved),
            retransmitted_bytes: self
                .retx_until
                .unwrap_or(retx_end)
                .saturating_sub(self.retx_at),
        }
    }
}

impl Simulation {
    /// The flows whose path events are measured, and the untold clients' first check.
    pub(super) fn init_path_flows(&mut self) {
        let interfaces = !self.paths.addrs.is_empty();
        for (i, f) in self.scenario.flows.iter().enumerate() {
            if f.has_rebinds() || (interfaces && f.transport.is_quic()) {
                let fp = FlowPaths {
                    quiet_since: secs(f.start_s),
                    ..FlowPaths::default()
                };
                self.paths.flows.insert(i, fp);
                if self.paths.addrs.len() > 1 && f.transport.is_quic() {
                    let backup0 = self.paths.backup[0];
                    let mp = super::multipath::MpFlow::new(self.paths.addrs.len(), backup0);
                    self.paths.mp.insert(i, mp);
                }
                if interfaces && self.paths.watches_silence() && f.transport.is_quic() {
                    self.events.push(secs(f.start_s), Ev::PathCheck(i));
                }
            }
        }
    }

    /// Both ends' retransmitted stream bytes of flow `i` so far.
    fn flow_retransmitted(&self, i: usize) -> u64 {
        let f = &self.flows[i];
        [f.client_node, f.server_node]
            .into_iter()
            .filter_map(|n| match &self.nodes[n].stack {
                Stack::Quic {
                    endpoint,
                    conn: Some(h),
                    ..
                } => endpoint
                    .connection(*h)
                    .map(Connection::stream_bytes_retransmitted),
                _ => None,
            })
            .sum()
    }

    /// Opens flow `i`'s record of an event now, whose new path `new_rx` names.
    pub(super) fn open_record(
        &mut self,
        i: usize,
        event: &'static str,
        interface: Option<String>,
        new_rx: NewPath,
    ) {
        let retx = self.flow_retransmitted(i);
        let now = self.now;
        let Some(f) = self.paths.flows.get_mut(&i) else {
            return;
        };
        if let Some(prev) = f.records.last_mut() {
            prev.retx_until.get_or_insert(retx);
        }
        f.records.push(Record {
            event,
            interface,
            at: now,
            last_delivery: f.last_delivery,
            resumed: None,
            resumed_new: None,
            before_new: f.last_delivery,
            fed_new: [None; 2],
            new_rx,
            new_path: None,
            moved: None,
            retx_at: retx,
            retx_until: None,
        });
        f.open += 1;
    }

    /// Flow `i`'s measured events, for its results.
    pub(super) fn path_event_results(&self, i: usize) -> Vec<PathEventResult> {
        let Some(f) = self.paths.flows.get(&i) else {
            return Vec::new();
        };
        let end = self.flow_retransmitted(i);
        f.records.iter().map(|r| r.result(end)).collect()
    }

    /// The address flow `i`'s client sends from and receives on now.
    fn client_local(&self, i: usize) -> SocketAddrV4 {
        let node = &self.nodes[self.flows[i].client_node];
        node.local.unwrap_or(node.addr)
    }

    /// Runs scheduled path action `a`, then what the told clients do about it.
    pub(super) fn apply_path_action(&mut self, a: usize) {
        let PathAction {
            iface,
            action,
            record,
        } = self.paths.actions[a].clone();
        let now = self.now;
        let links = self.net.interfaces[iface].links;
        match &action {
            Action::Down => {
                self.paths.up[iface] = false;
                for l in links {
                    self.net.links[l].down_until = Some(Instant::MAX);
                }
            }
            Action::Up => {
                self.multipath_on_up(iface);
                self.paths.up[iface] = true;
                self.paths.believed_up[iface] = true;
                // Back with its configured links: a degradation ends.
                for (l, c) in links.into_iter().zip(&self.paths.configs[iface]) {
                    let link = &mut self.net.links[l];
                    link.down_until = None;
                    link.rate_bps = c.rate_mbps.map(rate_bps);
                    link.delay = saturating_secs(c.delay_ms / 1000.0);
                    link.impairments.set_loss(c.impairments.loss.clone());
                }
            }
            Action::Degrade(change) => {
                for l in links {
                    self.net.links[l].apply_change(now, change);
                }
            }
        }
        let flows: Vec<usize> = self.paths.flows.keys().copied().collect();
        if let Some(k) = record {
            let event = self.scenario.client_host().map(|h| &h.events[k]);
            let (kind, name) = event.map_or(("down", String::new()), |e| {
                (e.kind(), e.interface().to_string())
            });
            for &i in &flows {
                let rx = NewPath::Not(self.client_local(i));
                self.open_record(i, kind, Some(name.clone()), rx);
            }
        }
        if !self.paths.told {
            return;
        }
        if matches!(action, Action::Down) {
            self.paths.believed_up[iface] = false;
        }
        // RFC 9000 §9.2: a client told that its interface went down moves to one that
        // is up (or waits for one).
        for i in flows {
            // A multipath client abandons the interface's path instead (§3.4 of
            // draft-ietf-quic-multipath), unless it is its last.
            if self.flow_multipath(i)
                && (!matches!(action, Action::Down) || self.multipath_on_down(i, iface))
            {
                continue;
            }
            let current = self.paths.interface_of(self.client_local(i).ip());
            if current.is_some_and(|c| self.paths.up[c]) {
                continue;
            }
            if let Some(k) = (0..self.paths.up.len()).find(|&k| self.paths.up[k]) {
                self.migrate_client(i, k);
            }
        }
    }

    /// An untold client's check (RFC 9000 §9 leaves detection to the endpoint): after
    /// `silence_ptos` PTO periods (RFC 9002 §6.2.1) without a received datagram while
    /// its workload runs, it deems its path dead and moves to the next interface it
    /// believes up.
    pub(super) fn path_check(&mut self, i: usize) {
        if self.flows[i].measure.done_at.is_some() || self.flow_multipath(i) {
            // A multipath client keeps its paths (`sim/multipath.rs`).
            return;
        }
        let now = self.now;
        let node = &self.nodes[self.flows[i].client_node];
        let Stack::Quic {
            endpoint,
            conn: Some(h),
            ..
        } = &node.stack
        else {
            // Not connecting yet: look again in a while.
            self.events
                .push(now + Duration::from_millis(100), Ev::PathCheck(i));
            return;
        };
        let Some(c) = endpoint.connection(*h) else {
            return;
        };
        if c.is_closed() {
            return;
        }
        let ack_delay = c
            .peer_params()
            .map_or(Duration::ZERO, |p| Duration::from_millis(p.max_ack_delay));
        let period = (c.rtt().pto_base() + ack_delay).mul_f64(self.paths.silence_ptos);
        let confirmed = c.is_handshake_confirmed();
        let quiet = self.paths.flows.get(&i).map_or(now, |f| f.quiet_since);
        if !confirmed || now < quiet + period {
            // Looked at again by `CHECK_EVERY` at the latest: the period shrinks with
            // the first RTT samples (from the initial 333 ms, RFC 9002 §6.2.2).
            let next = if confirmed {
                (quiet + period).min(now + CHECK_EVERY)
            } else {
                now + CHECK_EVERY
            };
            self.events.push(next, Ev::PathCheck(i));
            return;
        }
        let n = self.paths.addrs.len();
        let current = self
            .paths
            .interface_of(self.client_local(i).ip())
            .unwrap_or(0);
        let next = (1..n)
            .map(|d| (current + d) % n)
            .find(|&k| self.paths.believed_up[k]);
        match next {
            Some(k) => {
                self.migrate_client(i, k);
            }
            None => {
                if let Some(f) = self.paths.flows.get_mut(&i) {
                    f.quiet_since = now;
                }
            }
        }
        self.events.push(now + period, Ev::PathCheck(i));
    }

    /// Flow `i`'s client migrates to interface `k` (`Connection::migrate`, RFC 9000
    /// §9.2); refused moves (a server's disable_active_migration, an unconfirmed
    /// handshake) leave it where it is.
    fn migrate_client(&mut self, i: usize, k: usize) -> bool {
        let now = self.now;
        let cn = self.flows[i].client_node;
        let node = &mut self.nodes[cn];
        let new = SocketAddrV4::new(self.paths.addrs[k], node.addr.port());
        let Stack::Quic {
            endpoint,
            conn: Some(h),
            ..
        } = &mut node.stack
        else {
            return false;
        };
        let Some(c) = endpoint.connection_mut(*h) else {
            return false;
        };
        if c.migrate(now, SocketAddr::V4(node.addr), SocketAddr::V4(new))
            .is_err()
        {
            return false;
        }
        node.local = Some(new);
        self.dirty.insert(cn);
        self.paths.on_moved(i, now);
        true
    }
}
