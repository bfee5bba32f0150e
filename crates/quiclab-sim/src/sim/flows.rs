//! Building the network's endpoints from the scenario: each flow's client and server
//! nodes (QUIC endpoints with their applications, TCP ends, a PEP at the gateway) and
//! the cross-traffic sources.

use super::{make_sink, secs, App, CrossState, Ev, FlowState, Node, SimError, Simulation, Stack};
use crate::net::topology::derive_seed;
use crate::output::metrics::SideMetrics;
use crate::scenario::{ScenarioError, Transport};
use crate::workload::app::{AppMeasure, ClientApp, ServerApp};
use crate::workload::pep::PepHost;
use crate::workload::tcpflow::TcpHost;
use quiclab_proto::{DetRng, Endpoint, Instant, Side, TransportConfig};
use std::net::SocketAddrV4;
use std::sync::{Arc, Mutex};

impl Simulation {
    pub(super) fn add_flow(&mut self, i: usize) -> Result<(), SimError> {
        let f = self.scenario.flows[i].clone();
        let (ch, sh) = (2 * f.pair, 2 * f.pair + 1);
        let client_addr = SocketAddrV4::new(self.net.hosts[ch], 40000 + i as u16);
        let server_addr = SocketAddrV4::new(self.net.hosts[sh], 4433 + i as u16);
        let server_metrics = Arc::new(Mutex::new(self.side_metrics(f.transport)));
        let client_metrics = Arc::new(Mutex::new(self.side_metrics(f.transport)));
        let extra = self.extra_client_addrs(i, client_addr);
        let (client, server) = match f.transport {
            Transport::Quic => self.quic_stacks(i, &server_metrics)?,
            Transport::Tcp => self.tcp_stacks(
                i,
                (client_addr, &extra),
                server_addr,
                &client_metrics,
                &server_metrics,
            )?,
        };
        let cn = self.nodes.len();
        let [client_model, server_model] = self.host_models(i)?;
        let server = Self::with_app_delay(server, server_model.as_deref());
        self.nodes.push(Node {
            addr: client_addr,
            host: ch,
            flow: i,
            stack: client,
            route: None,
            public: None,
            local: None,
            model: client_model,
        });
        self.nodes.push(Node {
            addr: server_addr,
            host: sh,
            flow: i,
            stack: server,
            route: None,
            public: None,
            local: None,
            model: server_model,
        });
        self.node_by_addr.insert(client_addr, cn);
        for a in extra {
            self.node_by_addr.insert(a, cn);
        }
        // A QUIC client is reachable on every interface of its host (`sim/paths.rs`).
        if f.transport.is_quic() {
            for i in &self.net.interfaces {
                let a = SocketAddrV4::new(self.net.hosts[i.host], client_addr.port());
                self.node_by_addr.insert(a, cn);
            }
        }
        self.node_by_addr.insert(server_addr, cn + 1);
        let pep_node = (f.transport == Transport::Tcp)
            .then(|| self.add_pep(i, client_addr, server_addr))
            .flatten();
        self.flows.push(FlowState {
            client_node: cn,
            server_node: cn + 1,
            measure: AppMeasure::default(),
            client_metrics,
            server_metrics,
            counted_done: false,
            pep_node,
        });
        self.events.push(secs(f.start_s), Ev::FlowStart(i));
        Ok(())
    }

    /// The gateway's PEP node for TCP flow `i`, when the scenario enables one.
    fn add_pep(
        &mut self,
        i: usize,
        client_addr: SocketAddrV4,
        server_addr: SocketAddrV4,
    ) -> Option<usize> {
        let p = self.scenario.pep()?;
        let host = self.net.gateway?;
        let name = &self.scenario.flows[i].name;
        let seed = self.scenario.seed;
        let pep = PepHost::new(
            client_addr,
            server_addr,
            (p.satellite.clone(), p.terrestrial.clone()),
            (
                derive_seed(seed, &format!("pep:{name}:satellite")),
                derive_seed(seed, &format!("pep:{name}:terrestrial")),
            ),
            p.buffer_bytes,
        );
        let n = self.nodes.len();
        self.nodes.push(Node {
            addr: SocketAddrV4::new(self.net.hosts[host], 0),
            host,
            flow: i,
            stack: Stack::Pep(Box::new(pep)),
            route: None,
            public: None,
            local: None,
            model: None,
        });
        self.pep_of.insert(client_addr, n);
        self.pep_of.insert(server_addr, n);
        Some(n)
    }

    /// A QUIC flow's client and server endpoints with their applications.
    fn quic_stacks(
        &self,
        i: usize,
        server_metrics: &Arc<Mutex<SideMetrics>>,
    ) -> Result<(Stack, Stack), SimError> {
        let f = &self.scenario.flows[i];
        let seed = self.scenario.seed;
        let client_cfg: TransportConfig = self.scenario.transport(i, false, &self.file)?;
        let server_cfg: TransportConfig = self.scenario.transport(i, true, &self.file)?;
        let base = self
            .tls
            .quic_server_config(i)
            .expect("a QUIC flow's config")
            .clone();
        let server_tls = self.sessions.server_tls(i, base, server_cfg.zero_rtt);
        let mut server_ep = Endpoint::new(
            Arc::new(server_cfg),
            Some(server_tls),
            derive_seed(seed, &format!("flow:{}:server", f.name)),
        );
        let traces = self.scenario.measure.traces;
        let qlog_dir = self.qlog_dir();
        let sm = server_metrics.clone();
        let name = f.name.clone();
        let observe = self.resume.observer(i, true);
        server_ep.set_sink_factory(Box::new(move |_, _| {
            let sink = make_sink(sm.clone(), traces, qlog_dir.as_deref(), &name, Side::Server);
            Some(observe.wrap(sink))
        }));
        let client_ep = Endpoint::new(
            Arc::new(client_cfg),
            None,
            derive_seed(seed, &format!("flow:{}:client", f.name)),
        );
        let app = match crate::workload::webapp::WebClient::for_workload(&f.workload, seed, &f.name)
        {
            Some(web) => App::Web(crate::workload::webquic::WebQuicClient::new(web)),
            None => App::Client(
                ClientApp::new(f.workload.clone(), secs(f.start_s))
                    .with_h3_qlog(self.qlog_dir().as_deref(), &f.name)
                    .with_media_seed(derive_seed(seed, &format!("media:{}", f.name))),
            ),
        };
        let client = Stack::Quic {
            endpoint: client_ep,
            app,
            conn: None,
        };
        let server = Stack::Quic {
            endpoint: server_ep,
            app: App::Server(ServerApp::for_workload(
                &f.workload,
                self.qlog_dir().as_deref(),
                &f.name,
            )),
            conn: None,
        };
        Ok((client, server))
    }

    /// A TCP flow's ends (`workload/tcpflow.rs`; `workload/tcpweb.rs` for a search or video flow, whose
    /// client also uses the `extra` addresses); the server listens from the start.
    fn tcp_stacks(
        &self,
        i: usize,
        (client_addr, extra): (SocketAddrV4, &[SocketAddrV4]),
        server_addr: SocketAddrV4,
        client_metrics: &Arc<Mutex<SideMetrics>>,
        server_metrics: &Arc<Mutex<SideMetrics>>,
    ) -> Result<(Stack, Stack), SimError> {
        let f = &self.scenario.flows[i];
        let seed = self.scenario.seed;
        let cfg = self.scenario.tcp_config(i);
        let traces = self.scenario.measure.traces;
        let client = TcpHost::client(
            &f.workload,
            self.scenario.client_tcp_config(i),
            client_addr,
            derive_seed(seed, &format!("flow:{}:client", f.name)),
            client_metrics.clone(),
            traces,
        );
        let server = TcpHost::server(
            &f.workload,
            cfg,
            server_addr,
            derive_seed(seed, &format!("flow:{}:server", f.name)),
            server_metrics.clone(),
            traces,
        );
        // RFC 7413: one cookie secret per server host, one cookie cache per simulation.
        let (client, server) = if self.scenario.tcp_config(i).fast_open {
            let key = derive_seed(seed, &format!("tfo:{}", server_addr.ip()));
            (
                client.with_cookie_cache(self.tcp_cookies.clone()),
                server.with_fast_open_key(key),
            )
        } else {
            (client, server)
        };
        let resume = self
            .scenario
            .tls_chain_root(i)
            .and_then(|r| self.tls_resume.get(&r));
        let (client, server) = match &f.tls {
            None => (client, server),
            Some(tls) => {
                let bad = |e: rustls::Error| ScenarioError::Invalid {
                    file: self.file.clone(),
                    key: format!("flows[{i}].tls"),
                    why: e.to_string(),
                };
                // The QUIC runs' certificate (same type, seed and padding) and the
                // flow's TLS choices. The version was validated with the scenario.
                let version = tls.version.unwrap_or(crate::scenario::TlsVersion::Tls13);
                let (cc, sc) = self.tls.tcp(i, version, resume).map_err(bad)?;
                if f.workload.is_web() {
                    return self.web_stacks(
                        i,
                        (client_metrics, server_metrics),
                        Some((cc, sc)),
                        (client_addr, extra),
                        server_addr,
                    );
                }
                (
                    client.with_tls_client(cc, tls.records),
                    server.with_tls_server(sc, tls.records).map_err(bad)?,
                )
            }
        };
        if f.workload.is_web() {
            return self.web_stacks(
                i,
                (client_metrics, server_metrics),
                None,
                (client_addr, extra),
                server_addr,
            );
        }
        use crate::workload::tcpweb::TcpEnd::One;
        Ok((
            Stack::Tcp(Box::new(One(client))),
            Stack::Tcp(Box::new(One(server))),
        ))
    }

    pub(super) fn add_cross_traffic(&mut self) {
        for (i, c) in self.scenario.cross_traffic.iter().enumerate() {
            let (s, r) = (2 * c.pair, 2 * c.pair + 1);
            self.cross.push(CrossState {
                src: SocketAddrV4::new(self.net.hosts[s], 9),
                dst: SocketAddrV4::new(self.net.hosts[r], 9),
                route: self.net.route_of[&(s, r)],
                rng: DetRng::new(derive_seed(
                    self.scenario.seed,
                    &format!("cross:{}", c.name),
                )),
                stop: c.stop_s.map_or(Instant::MAX, secs),
                sent: 0,
            });
            self.events.push(secs(c.start_s), Ev::Cross(i));
        }
    }
}
