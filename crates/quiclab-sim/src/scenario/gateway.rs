//! The satellite gateway of a `point_to_point` topology and its split-connection TCP
//! performance-enhancing proxy (PEP, RFC 3135 §2.4.1 / §2.5).
//!
//! ```toml
//! [topology]
//! kind = "point_to_point"
//! [topology.forward]            # client -> gateway: the satellite return channel
//! rate_mbps = 5.0
//! delay_ms = 295.0
//! [topology.return]             # gateway -> client: the satellite download
//! rate_mbps = 50.0
//! delay_ms = 295.0
//!
//! [topology.gateway.forward]    # gateway -> server: the terrestrial segment
//! rate_mbps = 1000.0
//! delay_ms = 5.0
//! [topology.gateway.return]     # server -> gateway
//! rate_mbps = 1000.0
//! delay_ms = 5.0
//!
//! [topology.gateway.pep]        # absent (or enabled = false): no PEP
//! enabled = true
//! buffer_bytes = 1048576        # each relay direction's buffer (default 1 MiB)
//! satellite = { congestion_control = { algorithm = "new_reno", initial_window_packets = 32 } }
//! terrestrial = {}              # quiclab_tcp::TcpConfig keys of each of the PEP's ends
//! ```
//!
//! With `[topology.gateway]` every packet between the client and the server crosses
//! the satellite link and the terrestrial link (`gateway.forward` / `gateway.return`,
//! LinkConfig keys like `topology.forward`): the path is client -- satellite -- gateway
//! -- terrestrial -- server. Links are numbered `links[0]` forward, `links[1]` return
//! (the satellite, as without a gateway), `links[2]` `terrestrial_forward`, `links[3]`
//! `terrestrial_return`; a `[[schedule]]` change applies to the satellite links.
//!
//! With an enabled `pep`, each TCP flow is split at the gateway: the PEP answers the
//! client's SYN itself (taking the server's address, as a transparent PEP does), opens
//! its own connection to the server at the same moment (taking the client's address),
//! and relays the byte stream both ways through two buffers of at most `buffer_bytes`
//! each; when a buffer is full it stops reading from that side, so its receive window
//! closes and the sender waits (back-pressure). TLS stays end to end: the PEP relays
//! the TLS records. QUIC flows (UDP) pass the gateway untouched. The PEP's ends run
//! their own TCP settings: `satellite` faces the client (e.g. a larger initial window,
//! `ack_every` for ACK thinning of what it acknowledges), `terrestrial` faces the
//! server. TCP Fast Open through the PEP is not modelled (an error).

use super::validate::Check;
use super::{LinkConfig, Scenario, ScenarioError, Topology, Transport};
use quiclab_tcp::TcpConfig;
use serde::{Deserialize, Serialize};

/// Most bytes a PEP relay buffer may hold (per direction and flow): 1 GiB.
pub const MAX_PEP_BUFFER: u64 = 1 << 30;

/// `[topology.gateway]`: the terrestrial segment behind the satellite gateway.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GatewayConfig {
    /// Gateway -> server.
    pub forward: LinkConfig,
    /// Server -> gateway.
    #[serde(rename = "return")]
    pub ret: LinkConfig,
    /// The split-connection TCP proxy at the gateway; absent = none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pep: Option<PepConfig>,
}

/// `[topology.gateway.pep]`: the PEP's settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PepConfig {
    /// Split TCP flows (default true when the table is present; `false` keeps the
    /// table's settings for a plan to switch on).
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Bytes each relay direction may hold (client -> server and server -> client),
    /// per flow; 1 to [`MAX_PEP_BUFFER`] (default 1 MiB).
    #[serde(default = "default_buffer")]
    pub buffer_bytes: u64,
    /// TCP settings of the PEP's end facing the client (over the satellite).
    #[serde(default)]
    pub satellite: TcpConfig,
    /// TCP settings of the PEP's end facing the server (over the terrestrial links).
    #[serde(default)]
    pub terrestrial: TcpConfig,
    /// ACK thinning on the satellite return channel: of the ACKs the client's TCP would
    /// send for the PEP's segments, one in `ack_thinning` crosses the satellite (1 to
    /// [`MAX_ACK_THINNING`]; default 1 = none, and then not serialized). See
    /// [`Scenario::client_tcp_config`].
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub ack_thinning: u32,
}

/// Largest `ack_thinning`: the client's ACK ratio times it stays within quiclab-tcp's
/// 64-segment `ack_every` bound.
pub const MAX_ACK_THINNING: u32 = 32;

fn one() -> u32 {
    1
}

fn is_one(k: &u32) -> bool {
    *k == 1
}

fn yes() -> bool {
    true
}

fn default_buffer() -> u64 {
    1 << 20
}

impl Scenario {
    /// The gateway, when the topology has one.
    pub fn gateway(&self) -> Option<&GatewayConfig> {
        match &self.topology {
            Topology::PointToPoint { gateway, .. } => gateway.as_deref(),
            Topology::Dumbbell { .. } => None,
        }
    }

    /// The PEP, when the gateway has an enabled one.
    pub fn pep(&self) -> Option<&PepConfig> {
        self.gateway()?.pep.as_ref().filter(|p| p.enabled)
    }

    /// The gateway's links and PEP settings (after the satellite links' checks).
    pub(super) fn check_gateway(&self, c: Check) -> Result<(), ScenarioError> {
        let Some(g) = self.gateway() else {
            return Ok(());
        };
        super::validate::check_link(c, &g.forward, "topology.gateway.forward")?;
        super::validate::check_link(c, &g.ret, "topology.gateway.return")?;
        let Some(p) = &g.pep else {
            return Ok(());
        };
        let key = "topology.gateway.pep";
        if !(1..=MAX_PEP_BUFFER).contains(&p.buffer_bytes) {
            return c.bad(
                format!("{key}.buffer_bytes"),
                format!("must be 1 to {MAX_PEP_BUFFER} bytes"),
            );
        }
        if !(1..=MAX_ACK_THINNING).contains(&p.ack_thinning) {
            return c.bad(
                format!("{key}.ack_thinning"),
                format!("must be 1 to {MAX_ACK_THINNING}"),
            );
        }
        let (sat, ter) = self.links();
        for (side, cfg, links) in [
            ("satellite", &p.satellite, [sat, ter]),
            ("terrestrial", &p.terrestrial, [&g.forward, &g.ret]),
        ] {
            cfg.validate().map_err(|e| ScenarioError::Invalid {
                file: c.file.to_string(),
                key: format!("{key}.{side}.{}", e.key),
                why: e.why,
            })?;
            if cfg.fast_open {
                return c.bad(
                    format!("{key}.{side}.fast_open"),
                    "TCP Fast Open at the PEP is not modelled",
                );
            }
            let mtu = links
                .iter()
                .map(|l| l.mtu.unwrap_or(65535))
                .min()
                .unwrap_or(65535);
            if u32::from(cfg.mss) + 40 > mtu {
                return c.bad(
                    format!("{key}.{side}.mss"),
                    format!(
                        "{} + 40 bytes of IPv4/TCP headers exceeds the link mtu {mtu}",
                        cfg.mss
                    ),
                );
            }
        }
        Ok(())
    }

    /// The TCP settings of flow `i`'s client. With an enabled PEP whose `ack_thinning` is
    /// K, a split flow's client acknowledges once per K × `ack_every` full segments (its
    /// delayed-ACK timer still bounds the wait): a distributed split PEP has an agent at
    /// the satellite terminal that acknowledges the client's data locally and sends the
    /// gateway only few ACKs over the satellite (ISAE's "PEP TCP" survey: the connection
    /// split in three sections, the satellite isolated between two PEP agents;
    /// draft-fairhurst-quic-ack-scaling, seed 001's authors: TCP's ACKs on asymmetric
    /// satellite paths are thinned). The terminal sits on the client's LAN, so its ACK
    /// policy over the satellite is modelled as the client's.
    pub fn client_tcp_config(&self, i: usize) -> TcpConfig {
        let mut cfg = self.tcp_config(i);
        if let Some(p) = self.pep() {
            if self.flows[i].transport == Transport::Tcp {
                cfg.ack_every = cfg.ack_every.saturating_mul(p.ack_thinning);
            }
        }
        cfg
    }

    /// A TCP flow split by the PEP cannot use TCP Fast Open (the PEP answers the SYN),
    /// and its ACK ratio thinned by the PEP stays within quiclab-tcp's bound.
    pub(super) fn check_pep_flow(&self, c: Check, i: usize) -> Result<(), ScenarioError> {
        let f = &self.flows[i];
        if f.transport == Transport::Tcp {
            if let Err(e) = self.client_tcp_config(i).validate() {
                return c.bad(
                    "topology.gateway.pep.ack_thinning",
                    format!("times flows[{i}].tcp.{}: {}", e.key, e.why),
                );
            }
        }
        if self.pep().is_some() && f.transport == Transport::Tcp && self.tcp_config(i).fast_open {
            return c.bad(
                format!("flows[{i}].tcp.fast_open"),
                "TCP Fast Open through the gateway's PEP is not modelled",
            );
        }
        Ok(())
    }
}
