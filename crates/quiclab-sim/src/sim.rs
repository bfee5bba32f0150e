//! The simulation: builds the network and the flows from a scenario, runs the event
//! loop in virtual time, and collects the results.
//!
//! Loop: take every event due at the current time, then let each host touched by them
//! run its application and drain its endpoint's transmits into the network, then jump
//! to the next event. Hosts settle in id order; events at one time run in scheduling
//! order; so a run is a pure function of the scenario and its seed.

use crate::excerpt::excerpt;
use crate::net::engine::{saturating_secs, DirtySet, EventQueue, Next, Slab};
use crate::net::topology::Network;
use crate::output::metrics::{MetricsSink, SideMetrics, Tee};
use crate::output::results::RunResult;
use crate::scenario::{max_events, Scenario, ScenarioError, Transport};
use crate::workload::app::{AppMeasure, ClientApp, MeasureWindow, ServerApp};
use crate::workload::pep::PepHost;
use addr_hash::AddrMap;
use quiclab_link::link::{LinkAction, Packet};
use quiclab_link::pcap::PcapWriter;
use quiclab_proto::events::EventSink;
use quiclab_proto::tls::MemoryKeyLog;
use quiclab_proto::{ConnectionHandle, DetRng, Ecn, Endpoint, Instant, QlogWriter, Side};
use std::io::BufWriter;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod addr_hash;
mod finish;
mod flows;
mod hosts;
mod multipath;
mod paths;
mod resume;
mod session;
mod settle;
mod tls;
mod web;

/// Why a run could not be completed.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    #[error("writing {}: {source}", excerpt(.path))]
    Output {
        path: String,
        source: std::io::Error,
    },
    #[error("no progress at {0}: the same instant repeated too often (a bug; please report the scenario)")]
    Stuck(Instant),
    #[error("{}: stop.max_events: the run reached {limit} events at {at} of virtual time; raise stop.max_events if you mean it", excerpt(.file))]
    EventLimit {
        file: String,
        limit: u64,
        at: Instant,
    },
    #[error("{}: flow \"{}\" starts at {at} and resumes from flow \"{}\" (careful_resume.from_flow), which has not ended by then", excerpt(.file), excerpt(.flow), excerpt(.from))]
    ResumeSource {
        file: String,
        flow: String,
        from: String,
        at: Instant,
    },
}

/// Where a run stands, for progress displays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Current virtual time.
    pub now: Instant,
    /// The scenario's stop time.
    pub stop: Instant,
    /// Events handled so far.
    pub events: u64,
}

/// Called with the run's [`Progress`] every so many events. The simulator never reads a
/// clock; a display reads wall time in the hook. A hook only observes: it cannot change
/// the run's results.
pub type ProgressHook = Box<dyn FnMut(Progress) + Send>;

enum Ev {
    /// A link finishes serializing a packet (a key into `Simulation::flying`).
    TxDone(usize, usize),
    /// A packet reaches the far end of its current link.
    Deliver(usize),
    FlowStart(usize),
    Cross(usize),
    Change(usize),
    /// A trace-driven link reaches its next delivery opportunity.
    LinkWake(usize),
    /// Flow `.0`'s client's NAT rebinding `.1`, the scenario's `.2`-th
    /// (`scenario/rebind.rs`).
    Rebind(usize, usize, usize),
    /// A scheduled action on the client host's interfaces (`sim/paths.rs`).
    Path(usize),
    /// Flow `.0`'s untold client looks whether its path went silent (`sim/paths.rs`).
    PathCheck(usize),
    /// Node `.0`'s host CPU finished a received datagram (`sim/hosts.rs`).
    HostRx(usize),
    /// Node `.0`'s host has GSO batches due to leave (`sim/hosts.rs`).
    HostTx(usize),
}

enum App {
    Client(ClientApp),
    Server(ServerApp),
    /// The client of a `search` / `video` flow (`workload/webquic.rs`).
    Web(crate::workload::webquic::WebQuicClient),
}

/// An endpoint on a host, with its application.
struct Node {
    addr: SocketAddrV4,
    host: usize,
    flow: usize,
    stack: Stack,
    /// The last source and destination sent with and their route (a node talks to
    /// one peer).
    route: Option<(SocketAddrV4, SocketAddrV4, usize)>,
    /// The source address its datagrams show after a NAT rebinding (`None`: `addr`).
    public: Option<SocketAddrV4>,
    /// The local address its connection sends from after a migration to another
    /// interface (`None`: `addr`), as its transmits say.
    local: Option<SocketAddrV4>,
    /// Its host's CPU, buffers and timers (`host/`); `None`: an ideal host.
    model: Option<Box<crate::host::HostModel>>,
}

/// A node's transport: a QUIC endpoint and its application, or a TCP flow's end
/// (`workload/tcpflow.rs`). The QUIC endpoint stays inline (it is the hot path and nodes are
/// few), so the variants differ in size.
#[allow(clippy::large_enum_variant)]
enum Stack {
    Quic {
        endpoint: Endpoint,
        app: App,
        conn: Option<ConnectionHandle>,
    },
    Tcp(Box<crate::workload::tcpweb::TcpEnd>),
    /// The gateway's PEP for one TCP flow (`workload/pep.rs`).
    Pep(Box<PepHost>),
}

impl Stack {
    fn handle_timeout(&mut self, now: Instant) {
        match self {
            Stack::Quic { endpoint, .. } => endpoint.handle_timeout(now),
            Stack::Tcp(t) => t.handle_timeout(now),
            Stack::Pep(p) => p.handle_timeout(now),
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        match self {
            Stack::Quic { endpoint, .. } => endpoint.poll_timeout(),
            Stack::Tcp(t) => t.poll_timeout(),
            Stack::Pep(p) => p.poll_timeout(),
        }
    }
}

/// Per-flow bookkeeping.
struct FlowState {
    client_node: usize,
    server_node: usize,
    measure: AppMeasure,
    client_metrics: Arc<Mutex<SideMetrics>>,
    server_metrics: Arc<Mutex<SideMetrics>>,
    /// `measure.done_at` was counted in `Simulation::flows_done`.
    counted_done: bool,
    /// The gateway's PEP node for this (TCP) flow, if any.
    pep_node: Option<usize>,
}

struct CrossState {
    src: SocketAddrV4,
    dst: SocketAddrV4,
    route: usize,
    rng: DetRng,
    stop: Instant,
    sent: u64,
}

/// A prepared simulation; [`Simulation::run`] executes it.
pub struct Simulation {
    scenario: Scenario,
    file: String,
    out: Option<PathBuf>,
    now: Instant,
    stop: Instant,
    events: EventQueue<Ev>,
    net: Network,
    reverse: Vec<usize>,
    host_index: AddrMap<Ipv4Addr, usize>,
    nodes: Vec<Node>,
    node_by_addr: AddrMap<SocketAddrV4, usize>,
    /// A PEP'd TCP flow's client and server addresses -> its PEP node: segments to
    /// them that reach the gateway go to the PEP.
    pep_of: AddrMap<SocketAddrV4, usize>,
    flows: Vec<FlowState>,
    /// Flows whose workload has finished, so the stop check is O(1) per time step.
    flows_done: usize,
    cross: Vec<CrossState>,
    dirty: DirtySet,
    window: MeasureWindow,
    /// The servers' identity and each flow's TLS configs.
    tls: tls::TlsConfigs,
    key_log: Arc<MemoryKeyLog>,
    /// `pcap/all.pcap`: every datagram once, as its sender emits it (both directions in
    /// one file, so Wireshark sees the whole handshake).
    all_pcap: Option<PcapWriter<BufWriter<std::fs::File>>>,
    /// Packets between the end of serialization and arrival at the next hop.
    flying: Slab<Packet>,
    /// Payload buffers of delivered packets, reused for new ones.
    spare: Vec<Vec<u8>>,
    read_buf: Vec<u8>,
    event_count: u64,
    /// `stop.max_events` (or its default).
    max_events: u64,
    /// The progress hook, its period in events, and the event count of its next call.
    progress: Option<(ProgressHook, u64)>,
    next_progress: u64,
    /// Flows resuming from an earlier flow's observation (`careful_resume.from_flow`).
    resume: resume::Sources,
    /// TLS session resumption between flows (`session_from`).
    sessions: session::Sessions,
    /// TCP Fast Open cookies the client hosts hold (RFC 7413 §4.1.3).
    tcp_cookies: crate::workload::tcpflow::CookieCache,
    /// TLS-over-TCP session stores, one per TCP `session_from` chain (by its
    /// first flow).
    tls_resume: std::collections::BTreeMap<usize, crate::workload::tcptls::Resumption>,
    /// The client host's interfaces, their events and the flows' path measurements.
    paths: paths::Paths,
    /// Each flow's NAT rebindings (`Scenario::flow_rebinds`).
    rebinds: Vec<Vec<crate::scenario::Rebind>>,
}

/// Seconds from the scenario as virtual time (saturating; validated values never are).
fn secs(s: f64) -> Instant {
    Instant::ZERO + saturating_secs(s)
}

impl Simulation {
    /// Builds the network and flows. `file` names the scenario in errors; `out` is where
    /// qlog and pcap files go (they are only written when the scenario asks and `out` is set).
    /// The scenario is validated again here (it may have been edited since it was loaded).
    pub fn new(scenario: Scenario, file: &str, out: Option<&Path>) -> Result<Self, SimError> {
        scenario.validate(file)?;
        let seed = scenario.seed;
        let mut net = Network::build(&scenario.topology, seed, file)?;
        let m = scenario.measure.clone();
        let window = MeasureWindow {
            from: secs(m.from_s),
            to: m.to_s.map_or(Instant::MAX, secs),
            bin: saturating_secs(m.interval_s),
        };
        for l in &mut net.links {
            l.traces = m.traces;
            l.window = (window.from, window.to);
        }
        let key_log = Arc::new(MemoryKeyLog::default());
        let kl: Option<Arc<dyn rustls::KeyLog>> = if m.pcap { Some(key_log.clone()) } else { None };
        let tls = tls::TlsConfigs::new(&scenario, file, kl)?;
        let host_index = net.hosts.iter().enumerate().map(|(i, h)| (*h, i)).collect();
        let reverse = net.reverse_routes();
        let iface_addrs = net.interfaces.iter().map(|i| net.hosts[i.host]).collect();
        let (paths, path_actions) =
            paths::Paths::new(scenario.client_host(), iface_addrs, net.link_interfaces());
        let rebinds = (0..scenario.flows.len())
            .map(|i| scenario.flow_rebinds(i))
            .collect();
        let mut sim = Simulation {
            stop: secs(scenario.stop.time_s),
            file: file.to_string(),
            out: out.map(Path::to_path_buf),
            now: Instant::ZERO,
            events: EventQueue::new(),
            reverse,
            host_index,
            nodes: Vec::new(),
            node_by_addr: AddrMap::default(),
            pep_of: AddrMap::default(),
            flows: Vec::new(),
            flows_done: 0,
            cross: Vec::new(),
            dirty: DirtySet::default(),
            window,
            tls,
            key_log,
            all_pcap: None,
            flying: Slab::default(),
            spare: Vec::new(),
            read_buf: vec![0u8; 64 * 1024],
            event_count: 0,
            max_events: max_events(&scenario),
            progress: None,
            next_progress: u64::MAX,
            resume: resume::Sources::new(&scenario, file)?,
            sessions: session::Sessions::new(&scenario, file)?,
            tcp_cookies: Default::default(),
            tls_resume: (0..scenario.flows.len())
                .filter_map(|i| scenario.tls_chain_root(i))
                .map(|r| {
                    (
                        r,
                        crate::workload::tcptls::Resumption::new(scenario.tls_chain_early_data(r)),
                    )
                })
                .collect(),
            paths,
            rebinds,
            net,
            scenario,
        };
        for i in 0..sim.scenario.flows.len() {
            sim.add_flow(i)?;
        }
        sim.add_cross_traffic();
        for (i, c) in sim.scenario.schedule.iter().enumerate() {
            sim.events.push(secs(c.at_s), Ev::Change(i));
        }
        let rebinds = (sim.rebinds.iter().enumerate())
            .flat_map(|(i, r)| (r.iter().enumerate()).map(move |(k, r)| (i, k, r.at_s)));
        let rebinds: Vec<_> = rebinds.collect();
        for (n, (i, k, at_s)) in rebinds.into_iter().enumerate() {
            sim.events.push(secs(at_s), Ev::Rebind(i, k, n));
        }
        for (at, a) in path_actions {
            sim.events.push(at, Ev::Path(a));
        }
        sim.init_path_flows();
        if m.pcap {
            sim.open_pcaps()?;
        }
        Ok(sim)
    }

    /// Empty metrics of one side of a flow, with the measurement window's statistics
    /// (and its loss epochs and ACK sizes when `measure.loss_epochs` and
    /// `measure.ack_sizes` ask, QUIC flows only).
    fn side_metrics(&self, transport: Transport) -> SideMetrics {
        let to = if self.window.to == Instant::MAX {
            f64::INFINITY
        } else {
            self.window.to.as_secs_f64()
        };
        let mut m = SideMetrics::with_window(self.window.from.as_secs_f64(), to);
        if self.scenario.measure.loss_epochs && transport.is_quic() {
            m.loss_epochs = Some(Default::default());
        }
        if self.scenario.measure.ack_sizes && transport.is_quic() {
            let interval = self.scenario.measure.interval_s;
            m.ack_sizes = Some(crate::output::ack_sizes::AckSizes::new(interval));
        }
        m
    }

    fn qlog_dir(&self) -> Option<PathBuf> {
        (self.scenario.measure.qlog)
            .then(|| self.out.as_ref().map(|o| o.join("qlog")))
            .flatten()
    }

    fn open_pcaps(&mut self) -> Result<(), SimError> {
        let Some(out) = self.out.clone() else {
            return Ok(());
        };
        let dir = out.join("pcap");
        let err = |path: &Path, source| SimError::Output {
            path: path.display().to_string(),
            source,
        };
        std::fs::create_dir_all(&dir).map_err(|e| err(&dir, e))?;
        let path = dir.join("all.pcap");
        let file = std::fs::File::create(&path).map_err(|e| err(&path, e))?;
        self.all_pcap = Some(PcapWriter::new(BufWriter::new(file)).map_err(|e| err(&path, e))?);
        for l in &mut self.net.links {
            let path = dir.join(format!("{}.pcap", l.name));
            let file = std::fs::File::create(&path).map_err(|e| err(&path, e))?;
            l.pcap = Some(PcapWriter::new(BufWriter::new(file)).map_err(|e| err(&path, e))?);
        }
        Ok(())
    }

    /// Calls `hook` every `every_events` events (at least 1) while the run goes on.
    pub fn set_progress_hook(&mut self, every_events: u64, hook: ProgressHook) {
        let every = every_events.max(1);
        self.progress = Some((hook, every));
        self.next_progress = every;
    }

    /// Calls the progress hook if it is due; enforces `stop.max_events`.
    fn on_event_count(&mut self) -> Result<(), SimError> {
        if self.event_count > self.max_events {
            return Err(SimError::EventLimit {
                file: self.file.clone(),
                limit: self.max_events,
                at: self.now,
            });
        }
        if self.event_count >= self.next_progress {
            if let Some((hook, every)) = self.progress.as_mut() {
                self.next_progress = self.event_count.saturating_add(*every);
                hook(Progress {
                    now: self.now,
                    stop: self.stop,
                    events: self.event_count,
                });
            }
        }
        Ok(())
    }

    /// Runs to the stop condition and returns the results (and writes qlog/pcap files).
    pub fn run(mut self) -> Result<RunResult, SimError> {
        let mut same_time = 0u64;
        loop {
            if let Some((_, ev)) = self.events.pop_due(self.now) {
                self.event_count += 1;
                // One comparison in the common case: neither the limit nor the
                // next progress call is due.
                if self.event_count >= self.next_progress.min(self.max_events.saturating_add(1)) {
                    self.on_event_count()?;
                }
                same_time += 1;
                if same_time > 50_000_000 {
                    return Err(SimError::Stuck(self.now));
                }
                match ev {
                    Next::Event(ev) => self.handle(ev)?,
                    Next::Timer(n) => {
                        self.host_on_timer(n);
                        self.nodes[n].stack.handle_timeout(self.now);
                        self.dirty.insert(n);
                    }
                }
                continue;
            }
            if let Some(n) = self.dirty.pop_first() {
                self.settle(n);
                continue;
            }
            if self.scenario.stop.when_flows_done && self.all_flows_done() {
                break;
            }
            match self.events.peek_time() {
                Some(t) if t <= self.stop => {
                    self.now = t;
                    same_time = 0;
                }
                // Nothing more happens before the stop time, but the run (and the
                // measurement window's default end) still lasts until it.
                _ => {
                    self.now = self.stop;
                    break;
                }
            }
        }
        self.finish()
    }

    fn all_flows_done(&self) -> bool {
        self.flows_done == self.flows.len()
    }

    fn handle(&mut self, ev: Ev) -> Result<(), SimError> {
        let now = self.now;
        match ev {
            // Not folded into the serialization start even on an idle link (issue 29):
            // this handler draws the Deliver's sequence number at the end of
            // serialization T, and equal-time events run in (time, seq) order. Pushed at
            // the start t0 instead, the Deliver would take a number below every item
            // scheduled in (t0, T] (nodes' re-armed timers, other links' Delivers and
            // TxDones, cross traffic), and a tie at its delivery time with one of them
            // would swap. Such ties happen: counted here over 29 scenarios to 10 s, 6 of
            // ~1.5 M TxDones had an event already queued at their Delivers' exact time
            // and scheduled during the serialization (`multipath_shared` 5,
            // `cpu_limited_server` 1; performance-history.md, 2026-11-29 (7)). Also
            // decided at T, not t0: the delay (a `[[schedule]]` change in between), the
            // delivered count (a stop in between) and whether a packet arrived behind it.
            Ev::TxDone(l, key) => {
                let link = &mut self.net.links[l];
                let at = link.delivery_time(now, self.flying.get(key));
                let next = link.start_next(now);
                // A link delivers in order (a reordered packet falls back to the heap).
                self.events.push_lane(l, at, Ev::Deliver(key));
                self.schedule_link(l, next);
            }
            Ev::Deliver(key) => {
                let mut pkt = self.flying.remove(key);
                // A packet that crossed an interface's link while it went down is lost.
                if self.paths.lost_on(self.net.routes[pkt.route][pkt.hop]) {
                    self.net.links[self.net.routes[pkt.route][pkt.hop]]
                        .stats
                        .outage_drops += 1;
                    self.spare.push(pkt.payload);
                    return Ok(());
                }
                pkt.hop += 1;
                if pkt.tcp && self.net.gateway_hop[pkt.route] == Some(pkt.hop) {
                    if let Some(&n) = self.pep_of.get(&pkt.dst) {
                        self.deliver_to_pep(n, pkt);
                        return Ok(());
                    }
                }
                if let Some(&l) = self.net.routes[pkt.route].get(pkt.hop) {
                    let a = self.net.links[l].arrive(now, pkt);
                    self.schedule_link(l, a);
                } else {
                    self.deliver_to_host(pkt);
                }
            }
            Ev::FlowStart(i) => {
                self.resume_before_start(i)?;
                let f = &self.flows[i];
                let (cn, sn) = (f.client_node, f.server_node);
                let server = SocketAddr::V4(self.nodes[sn].addr);
                let metrics = f.client_metrics.clone();
                let sink = make_sink(
                    metrics,
                    self.scenario.measure.traces,
                    self.qlog_dir().as_deref(),
                    &self.scenario.flows[i].name,
                    Side::Client,
                );
                let sink = self.resume.observer(i, false).wrap(sink);
                match &mut self.nodes[cn].stack {
                    // The config was validated when the scenario was loaded.
                    Stack::Quic { endpoint, conn, .. } => {
                        let zero_rtt = endpoint.config().zero_rtt;
                        let base = self
                            .tls
                            .quic_client_config(i)
                            .expect("a QUIC flow's config");
                        let tls = self.sessions.client_tls(i, base, zero_rtt);
                        if let Ok(h) = endpoint.connect(now, tls, "localhost", server) {
                            if let Some(c) = endpoint.connection_mut(h) {
                                c.set_event_sink(now, sink);
                            }
                            *conn = Some(h);
                        }
                    }
                    Stack::Tcp(t) => {
                        if let SocketAddr::V4(server) = server {
                            t.connect(server);
                        }
                    }
                    Stack::Pep(_) => {}
                }
                self.dirty.insert(cn);
            }
            Ev::Cross(i) => self.send_cross(i),
            Ev::Change(i) => self.apply_change(i),
            Ev::LinkWake(l) => {
                let next = self.net.links[l].start_next(now);
                self.schedule_link(l, next);
            }
            Ev::Rebind(i, k, n) => self.apply_rebind(i, k, n),
            Ev::Path(a) => self.apply_path_action(a),
            Ev::PathCheck(i) => self.path_check(i),
            Ev::HostRx(n) => self.host_rx_done(n),
            Ev::HostTx(n) => self.host_tx_due(n),
        }
        Ok(())
    }

    // Inlined: the `LinkAction` (a whole `Packet`) is matched where it is made rather
    // than passed through memory (callgrind, issue 29).
    #[inline(always)]
    fn schedule_link(&mut self, l: usize, action: Option<LinkAction>) {
        match action {
            Some(LinkAction::TxDone(at, pkt)) => {
                let key = self.flying.insert(pkt);
                self.events.push(at, Ev::TxDone(l, key));
            }
            Some(LinkAction::Wake(at)) => self.events.push(at, Ev::LinkWake(l)),
            None => {}
        }
    }

    fn deliver_to_host(&mut self, pkt: Packet) {
        // RFC-less bookkeeping: a delivery starts a new "flight" on the reverse path.
        for &l in &self.net.routes[self.reverse[pkt.route]] {
            self.net.links[l].impairments.on_reverse_delivery();
        }
        let node = match self.node_by_addr.get(&pkt.dst) {
            Some(&n) if !pkt.cross => n,
            _ => {
                self.spare.push(pkt.payload);
                return;
            }
        };
        if !self.paths.flows.is_empty() {
            let n = &self.nodes[node];
            if self.flows[n.flow].client_node == node {
                let flow = n.flow;
                self.paths.on_client_rx(flow, self.now, pkt.dst);
                if !self.paths.mp.is_empty() {
                    self.multipath_count(flow, pkt.dst.ip(), pkt.payload.len(), true);
                }
            }
        }
        if self.nodes[node].model.is_some() {
            self.host_arrive(node, pkt);
            return;
        }
        self.feed(node, pkt);
    }

    /// Node `node`'s endpoint gets a datagram (or TCP segment).
    fn feed(&mut self, node: usize, mut pkt: Packet) {
        if !self.paths.flows.is_empty() {
            // Which path it came on, as the receiving end sees it (`sim/paths.rs`).
            let flow = self.nodes[node].flow;
            let server = self.flows[flow].client_node != node;
            let client_addr = if server { pkt.src } else { pkt.dst };
            self.paths.on_fed(flow, self.now, server, client_addr);
        }
        match &mut self.nodes[node].stack {
            Stack::Quic { endpoint, conn, .. } if !pkt.tcp => {
                if let Ok(h) = endpoint.handle_datagram(
                    self.now,
                    SocketAddr::V4(pkt.src),
                    pkt.ecn,
                    &mut pkt.payload,
                ) {
                    conn.get_or_insert(h);
                }
            }
            Stack::Tcp(t) if pkt.tcp => t.handle_segment(self.now, pkt.src, pkt.ecn, &pkt.payload),
            // A TCP segment at a QUIC endpoint or the reverse: nothing listens.
            _ => {}
        }
        self.spare.push(pkt.payload);
        self.dirty.insert(node);
    }

    /// A TCP segment reached the gateway and its flow's PEP (`workload/pep.rs`).
    fn deliver_to_pep(&mut self, n: usize, pkt: Packet) {
        // As a delivery to a host: the reply starts a new flight on the links back
        // (the gateway's links come in forward/return pairs: 0/1, 2/3).
        for &l in &self.net.routes[pkt.route][..pkt.hop] {
            self.net.links[l ^ 1].impairments.on_reverse_delivery();
        }
        if let Stack::Pep(p) = &mut self.nodes[n].stack {
            p.handle_segment(self.now, pkt.src, pkt.dst, pkt.ecn, &pkt.payload);
        }
        self.spare.push(pkt.payload);
        self.dirty.insert(n);
    }

    /// A datagram leaves its host: captured, onto its route's first link.
    fn launch(&mut self, pkt: Packet) {
        self.capture(&pkt);
        let l = self.net.routes[pkt.route][0];
        let a = self.net.links[l].arrive(self.now, pkt);
        self.schedule_link(l, a);
    }

    fn send_cross(&mut self, i: usize) {
        let now = self.now;
        let spec = &self.scenario.cross_traffic[i];
        let c = &mut self.cross[i];
        if now >= c.stop {
            return;
        }
        let size =
            c.rng
                .range(u64::from(spec.size_min), u64::from(spec.size_max) + 1) as usize;
        let gap_ms =
            spec.interval_min_ms + (spec.interval_max_ms - spec.interval_min_ms) * c.rng.next_f64();
        c.sent += 1;
        let pkt = Packet {
            src: c.src,
            dst: c.dst,
            payload: vec![0u8; size],
            route: c.route,
            hop: 0,
            cross: true,
            extra_delay: Duration::ZERO,
            reorder: false,
            tcp: false,
            ecn: Ecn::NotEct,
        };
        self.capture(&pkt);
        let l = self.net.routes[pkt.route][0];
        self.events
            .push(now + saturating_secs(gap_ms / 1000.0), Ev::Cross(i));
        let a = self.net.links[l].arrive(now, pkt);
        self.schedule_link(l, a);
    }

    /// Records a datagram in `all.pcap` as its sender emits it.
    fn capture(&mut self, pkt: &Packet) {
        if let Some(p) = self.all_pcap.as_mut() {
            // A failed pcap write loses the capture, not the run.
            let written = if pkt.tcp {
                p.write_tcp(self.now, pkt.src, pkt.dst, pkt.ecn, &pkt.payload)
            } else {
                p.write_udp(self.now, pkt.src, pkt.dst, pkt.ecn, &pkt.payload)
            };
            if written.is_err() {
                self.all_pcap = None;
            }
        }
    }

    /// A NAT in front of flow `i`'s client maps it to a new public address (its
    /// rebinding `k`, the scenario's `n`-th): its datagrams show that source from now on,
    /// and datagrams to it reach the client, as do those to the old one unless the
    /// rebinding expires it. The client's endpoint is not told (RFC 9000 §9.3).
    fn apply_rebind(&mut self, i: usize, k: usize, n: usize) {
        let r = &self.rebinds[i][k];
        let (kind, expire_old) = (r.kind, r.expire_old);
        let node = self.flows[i].client_node;
        let old = self.nodes[node].public.unwrap_or(self.nodes[node].addr);
        let new = crate::scenario::rebound(old, kind, n);
        self.open_record(i, "rebind", None, paths::NewPath::Is(new));
        self.host_index.insert(*new.ip(), self.nodes[node].host);
        self.node_by_addr.insert(new, node);
        if expire_old {
            self.node_by_addr.remove(&old);
        }
        self.nodes[node].public = Some(new);
    }

    fn apply_change(&mut self, i: usize) {
        let c = &self.scenario.schedule[i];
        let l = self.net.bottleneck[c.link as usize];
        self.net.links[l].apply_change(self.now, c);
    }
}

fn lock<T: Clone + Default>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The event sink of one side of a flow: metrics, plus a qlog file when asked.
fn make_sink(
    metrics: Arc<Mutex<SideMetrics>>,
    traces: bool,
    qlog_dir: Option<&Path>,
    flow: &str,
    side: Side,
) -> Box<dyn EventSink> {
    let m = MetricsSink { metrics, traces };
    let Some(dir) = qlog_dir else {
        return Box::new(m);
    };
    let side_name = if side == Side::Client {
        "client"
    } else {
        "server"
    };
    let path = dir.join(format!(
        "{}_{side_name}.sqlog",
        crate::output::tables::sanitize(flow)
    ));
    let file = std::fs::create_dir_all(dir).and_then(|_| std::fs::File::create(&path));
    match file {
        Ok(f) => Box::new(Tee(vec![
            Box::new(m),
            Box::new(QlogWriter::new(BufWriter::new(f), flow, side, None)),
        ])),
        // The run goes on without this qlog; the metrics still count.
        Err(_) => Box::new(m),
    }
}
