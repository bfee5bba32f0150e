//! Building hosts, links and routes from a scenario's topology.

use crate::net::engine::saturating_secs;
use crate::scenario::{GatewayConfig, LinkConfig, ScenarioError, Topology};
use quiclab_link::impair::Impairments;
pub use quiclab_link::link::rate_bps;
use quiclab_link::link::{Link, Packet};
use quiclab_link::queue::{Queue, QueueConfig};
use quiclab_link::trace::TraceContext;
use quiclab_proto::DetRng;
use std::collections::BTreeMap;
use std::net::Ipv4Addr;

/// A seed for a named component: the same name gives the same stream whatever else the
/// scenario contains.
pub fn derive_seed(seed: u64, label: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in label.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    DetRng::new(seed ^ h).next_u64()
}

/// Hosts, links, and the route (list of links) between each ordered host pair.
pub struct Network {
    /// Host addresses; pair i has sender host 2i and receiver host 2i+1.
    pub hosts: Vec<Ipv4Addr>,
    pub links: Vec<Link>,
    pub routes: Vec<Vec<usize>>,
    /// (from host, to host) -> route index.
    pub route_of: BTreeMap<(usize, usize), usize>,
    /// The bottleneck (or only) link of each direction: [forward, return].
    pub bottleneck: [usize; 2],
    /// The gateway host (`[topology.gateway]`), after the pairs' hosts.
    pub gateway: Option<usize>,
    /// For each route, the hop at whose start a packet is at the gateway (1 on the
    /// client <-> server routes through it; `None` elsewhere).
    pub gateway_hop: Vec<Option<usize>>,
    /// The client host's interfaces (`[topology.client]`; empty without).
    pub interfaces: Vec<NetInterface>,
}

/// One interface of the client host.
#[derive(Clone, Debug)]
pub struct NetInterface {
    pub name: String,
    /// The host index of its address (the client host itself for the first one; an
    /// address-only host after it, so routes are looked up as for any host).
    pub host: usize,
    /// Its links: [forward (client -> network), return (network -> client)].
    pub links: [usize; 2],
}

pub(super) fn build_link(
    name: &str,
    c: &LinkConfig,
    seed: u64,
    file: &str,
    key: &str,
) -> Result<Link, ScenarioError> {
    let invalid = |why: String| ScenarioError::Invalid {
        file: file.to_string(),
        key: key.to_string(),
        why,
    };
    // The queue's own stream (DualPI2, PIE, RED and FQ-CoDel draw from it; drop-tail
    // and CoDel draw nothing), apart from the impairments' so neither shifts the other.
    let queue_rng = DetRng::new(derive_seed(seed, &format!("queue:{name}")));
    let queue =
        Queue::<Packet>::new(&c.queue, queue_rng).map_err(|w| invalid(format!("queue: {w}")))?;
    let rng = DetRng::new(derive_seed(seed, &format!("link:{name}")));
    // A link profile is realised from the scenario's seed, the same for both directions.
    let ctx = TraceContext {
        seed,
        uplink: !key.ends_with("return"),
    };
    let trace = match &c.trace {
        None => None,
        Some(t) => Some(
            quiclab_link::profile::load_link_trace(t, rng.clone(), &ctx).map_err(|e| {
                ScenarioError::Invalid {
                    file: file.to_string(),
                    key: format!("{key}.trace.{}", e.key),
                    why: format!("{:?}: {}", e.path, e.fault),
                }
            })?,
        ),
    };
    let impairments =
        Impairments::new(&c.impairments, rng).map_err(|w| invalid(format!("impairments: {w}")))?;
    let rate = c.rate_mbps.map(rate_bps);
    let delay = saturating_secs(c.delay_ms / 1000.0);
    let mtu = u64::from(c.mtu.unwrap_or(65535));
    let link = Link::new(name.to_string(), rate, delay, mtu, queue, impairments);
    Ok(match trace {
        None => link,
        Some(t) => link.with_trace(t),
    })
}

/// An ideal access link: unlimited rate, no loss, a large queue.
fn access(delay_ms: f64) -> LinkConfig {
    LinkConfig {
        delay_ms,
        queue: QueueConfig::DropTail {
            packets: Some(1 << 20),
            bytes: None,
        },
        ..LinkConfig::default()
    }
}

impl Network {
    pub fn build(t: &Topology, seed: u64, file: &str) -> Result<Network, ScenarioError> {
        let mut net = Network {
            hosts: Vec::new(),
            links: Vec::new(),
            routes: Vec::new(),
            route_of: BTreeMap::new(),
            bottleneck: [0, 1],
            gateway: None,
            gateway_hop: Vec::new(),
            interfaces: Vec::new(),
        };
        let (pairs, delays, fwd, ret) = match t {
            Topology::PointToPoint { forward, ret, .. } => (1, vec![], forward, ret),
            Topology::Dumbbell {
                pairs,
                access_delay_ms,
                forward,
                ret,
            } => (*pairs, access_delay_ms.clone(), forward, ret),
        };
        net.links
            .push(build_link("forward", fwd, seed, file, "topology.forward")?);
        net.links
            .push(build_link("return", ret, seed, file, "topology.return")?);
        for i in 0..pairs {
            net.hosts
                .push(Ipv4Addr::new(10, 0, (i / 250) as u8, (i % 250 + 1) as u8));
            net.hosts
                .push(Ipv4Addr::new(10, 1, (i / 250) as u8, (i % 250 + 1) as u8));
            let (s, r) = (2 * i, 2 * i + 1);
            let (to_r, to_s) = if matches!(t, Topology::PointToPoint { .. }) {
                (vec![0], vec![1])
            } else {
                let d = delays.get(i).copied().unwrap_or(0.0);
                let a_fwd = net.links.len();
                net.links.push(build_link(
                    &format!("access{i}_forward"),
                    &access(d),
                    seed,
                    file,
                    "topology.access_delay_ms",
                )?);
                let a_ret = net.links.len();
                net.links.push(build_link(
                    &format!("access{i}_return"),
                    &access(d),
                    seed,
                    file,
                    "topology.access_delay_ms",
                )?);
                (vec![a_fwd, 0], vec![1, a_ret])
            };
            net.route_of.insert((s, r), net.routes.len());
            net.routes.push(to_r);
            net.route_of.insert((r, s), net.routes.len());
            net.routes.push(to_s);
        }
        if let Topology::PointToPoint {
            gateway: Some(g), ..
        } = t
        {
            net.add_gateway(g, seed, file)?;
        }
        if let Topology::PointToPoint {
            client: Some(h), ..
        } = t
        {
            net.add_client_interfaces(h, seed, file)?;
        }
        net.gateway_hop.resize(net.routes.len(), None);
        Ok(net)
    }

    /// The gateway host (10.2.0.1) between the satellite links and a terrestrial link
    /// pair (`links[2]` `terrestrial_forward`, `links[3]` `terrestrial_return`): the
    /// client <-> server routes cross both; the gateway reaches each side in one hop.
    fn add_gateway(
        &mut self,
        g: &GatewayConfig,
        seed: u64,
        file: &str,
    ) -> Result<(), ScenarioError> {
        let (tf, tr) = (self.links.len(), self.links.len() + 1);
        self.links.push(build_link(
            "terrestrial_forward",
            &g.forward,
            seed,
            file,
            "topology.gateway.forward",
        )?);
        self.links.push(build_link(
            "terrestrial_return",
            &g.ret,
            seed,
            file,
            "topology.gateway.return",
        )?);
        let gw = self.hosts.len();
        self.hosts.push(Ipv4Addr::new(10, 2, 0, 1));
        self.gateway = Some(gw);
        // Client (host 0) -> server (host 1): satellite forward, then terrestrial.
        self.routes[self.route_of[&(0, 1)]] = vec![0, tf];
        self.routes[self.route_of[&(1, 0)]] = vec![tr, 1];
        self.gateway_hop = vec![Some(1); self.routes.len()];
        for (pair, links) in [((gw, 0), vec![1]), ((gw, 1), vec![tf])] {
            self.route_of.insert(pair, self.routes.len());
            self.routes.push(links);
        }
        for (pair, links) in [((0, gw), vec![0]), ((1, gw), vec![tr])] {
            self.route_of.insert(pair, self.routes.len());
            self.routes.push(links);
        }
        Ok(())
    }

    /// For each route, the route in the opposite direction.
    pub fn reverse_routes(&self) -> Vec<usize> {
        let mut rev = vec![0; self.routes.len()];
        for (&(a, b), &r) in &self.route_of {
            rev[r] = self.route_of[&(b, a)];
        }
        rev
    }
}
