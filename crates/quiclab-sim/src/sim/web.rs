//! The simulator's side of web and video flows over TCP (`workload/tcpweb.rs`): the client
//! addresses of a pooled flow's extra connections and what makes each side's
//! connections.

use super::{SimError, Simulation, Stack};
use crate::net::topology::derive_seed;
use crate::output::metrics::SideMetrics;
use crate::scenario::{Transport, EXTRA_PORTS};
use crate::workload::tcpweb::Spec;
use crate::workload::tcpweb::{TcpEnd, TcpWebClient, TcpWebServer};
use crate::workload::webapp::WebClient;
use std::net::SocketAddrV4;
use std::sync::{Arc, Mutex};

impl Simulation {
    /// Client addresses of flow `i`'s connections beyond its first (a pooled TCP web
    /// flow's): ports from [`EXTRA_PORTS`], after those of the flows before it (the
    /// scenario check keeps them within the range).
    pub(super) fn extra_client_addrs(&self, i: usize, first: SocketAddrV4) -> Vec<SocketAddrV4> {
        let extra = |j: usize| {
            let f = &self.scenario.flows[j];
            if f.transport == Transport::Tcp && f.workload.is_web() {
                self.scenario.tcp_http(j).connections() as u16 - 1
            } else {
                0
            }
        };
        let before: u16 = (0..i).map(extra).sum();
        (0..extra(i))
            .map(|k| SocketAddrV4::new(*first.ip(), EXTRA_PORTS.start + before + k))
            .collect()
    }

    /// Flow `i`'s client and server over TCP (TLS configs when the flow has
    /// `[flows.tls]`); the client's connections use `first` and then `extra`.
    pub(super) fn web_stacks(
        &self,
        i: usize,
        metrics: (&Arc<Mutex<SideMetrics>>, &Arc<Mutex<SideMetrics>>),
        tls: Option<(Arc<rustls::ClientConfig>, Arc<rustls::ServerConfig>)>,
        (first, extra): (SocketAddrV4, &[SocketAddrV4]),
        server_addr: SocketAddrV4,
    ) -> Result<(Stack, Stack), SimError> {
        let f = &self.scenario.flows[i];
        let (client, server) = self.web_specs(i, metrics, tls);
        let web = WebClient::for_workload(&f.workload, self.scenario.seed, &f.name)
            .expect("called for web workloads only");
        let locals = std::iter::once(first)
            .chain(extra.iter().copied())
            .collect();
        Ok((
            Stack::Tcp(Box::new(TcpEnd::WebClient(TcpWebClient::new(
                client, web, locals,
            )))),
            Stack::Tcp(Box::new(TcpEnd::WebServer(TcpWebServer::new(
                server,
                server_addr,
            )))),
        ))
    }

    fn web_specs(
        &self,
        i: usize,
        (client_metrics, server_metrics): (&Arc<Mutex<SideMetrics>>, &Arc<Mutex<SideMetrics>>),
        tls: Option<(Arc<rustls::ClientConfig>, Arc<rustls::ServerConfig>)>,
    ) -> (Spec, Spec) {
        let f = &self.scenario.flows[i];
        let seed = self.scenario.seed;
        let config = self.scenario.tcp_config(i);
        let mode = self.scenario.tcp_http(i);
        let traces = self.scenario.measure.traces;
        let (tls_client, tls_server) = tls.map_or((None, None), |(c, s)| (Some(c), Some(s)));
        let fast_open = config.fast_open;
        let tls_records = f.tls.as_ref().map(|t| t.records).unwrap_or_default();
        let server_ip = self.net.hosts[2 * f.pair + 1];
        let client = Spec {
            workload: f.workload.clone(),
            config: self.scenario.client_tcp_config(i),
            seed: derive_seed(seed, &format!("flow:{}:client", f.name)),
            metrics: client_metrics.clone(),
            traces,
            mode,
            cookies: fast_open.then(|| self.tcp_cookies.clone()),
            fast_open_key: None,
            tls_client,
            tls_server: None,
            tls_records,
        };
        let server = Spec {
            workload: f.workload.clone(),
            config,
            seed: derive_seed(seed, &format!("flow:{}:server", f.name)),
            metrics: server_metrics.clone(),
            traces,
            mode,
            cookies: None,
            // RFC 7413: one cookie secret per server host.
            fast_open_key: fast_open.then(|| derive_seed(seed, &format!("tfo:{server_ip}"))),
            tls_client: None,
            tls_server,
            tls_records,
        };
        (client, server)
    }
}
