//! A client host with several network interfaces (`[topology.client]` of a
//! `point_to_point` topology) and scripted path events on them: an interface goes
//! down or up, degrades, or hands over to another (one degrades while the other comes
//! up, then the first goes down).
//!
//! ```toml
//! [topology]
//! kind = "point_to_point"
//! forward = { delay_ms = 5.0 }      # access networks -> server (shared by every interface)
//! return = { delay_ms = 5.0 }       # server -> access networks
//!
//! [topology.client]
//! told = true                       # the client hears that an interface went down
//! interfaces = [
//!   { name = "wifi", forward = { rate_mbps = 20.0, delay_ms = 10.0 }, return = { rate_mbps = 20.0, delay_ms = 10.0 } },
//!   { name = "cell", up = false, forward = { rate_mbps = 10.0, delay_ms = 30.0 }, return = { rate_mbps = 10.0, delay_ms = 30.0 } },
//! ]
//! events = [
//!   { at_s = 2.0, kind = "handover", from = "wifi", to = "cell", over_s = 0.5, loss = { model = "bernoulli", p = 0.2 } },
//!   { at_s = 9.0, kind = "up", interface = "wifi" },
//! ]
//! ```
//!
//! Each interface has its own address (the first keeps the client host's, 10.0.0.1;
//! interface k >= 1 is 10.4.0.k) and its own link pair, `forward` (client -> network)
//! and `return` (network -> client), with every link key; a packet crosses the
//! interface's link and then the topology's `forward`/`return`, which join the access
//! networks to the server (give them a delay and no rate for access-limited paths).
//! Links are numbered after the topology's: `links[2 + 2k]` is interface k's forward
//! link, named `<name>_forward`, `links[3 + 2k]` its return link. `[[schedule]]`
//! changes still apply to the topology's own links.
//!
//! Events (`kind`):
//! - `down`: the interface's links lose everything from `at_s` on, including packets
//!   queued or in flight on them (a radio gone out of range);
//! - `up`: the interface carries packets again, over its configured links (a
//!   degradation ends);
//! - `degrade`: its links (both directions) take the given `rate_mbps`, `delay_ms`
//!   and `loss` (each optional), as a `[[schedule]]` change does;
//! - `handover`: at `at_s` the interface `to` comes up and `from` degrades by the
//!   given values; at `at_s + over_s` `from` goes down.
//!
//! What the client's QUIC connections do (the simulator acts for the client's OS and
//! application): every flow's client starts on the first interface. With `told = true`
//! (a real OS tells applications that an interface went down) a client on an
//! interface that goes down migrates at once to the first interface that is up, with
//! `Connection::migrate` (RFC 9000 §9.2: new local address, a fresh connection ID
//! §9.5, path validation §8.2, congestion state reset §9.4); with none up it waits and
//! migrates when one comes up. With `told = false` the client learns nothing of a
//! down interface (a Wi-Fi still associated but no longer forwarding): it only notices
//! that nothing arrives. RFC 9000 leaves the detection to the endpoint (§9: "an
//! endpoint capable of connection migration MAY wait for a new path to become
//! available"; §9.1: it MAY probe a new path first); the model's client treats
//! `silence_ptos` of its PTO periods (RFC 9002 §6.2.1, from its own RTT estimate and
//! the peer's max_ack_delay) without any datagram received, while its workload is
//! unfinished, as its path's failure, and migrates to the next interface it believes
//! up (one that was up at the start or came up since: a client hears of new
//! interfaces; declaration order after its current one). A server that sent
//! `disable_active_migration` refuses every move (RFC 9000 §9), so the client stays.
//! NAT rebindings (`flows.rebinds`) are not combined with interfaces (an error).

use super::validate::{check_link, Check};
use super::{LinkConfig, Scenario, ScenarioError, Topology};
use quiclab_link::config::{LinkChange, LinkSide};
use quiclab_link::impair::LossModel;
use serde::{Deserialize, Serialize};
use std::net::Ipv4Addr;

/// Interfaces a host may have (addresses 10.4.0.1 to 10.4.0.15 after the first).
pub const MAX_INTERFACES: usize = 16;
/// Path events a host may script.
pub const MAX_PATH_EVENTS: usize = 10_000;
/// The largest `silence_ptos`.
pub const MAX_SILENCE_PTOS: f64 = 1000.0;

/// `[topology.client]`: the client host's interfaces and path events.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClientHost {
    /// One to [`MAX_INTERFACES`] interfaces; every flow's client starts on the first,
    /// which must be up at the start.
    pub interfaces: Vec<Interface>,
    /// Scripted events, in any order (at most [`MAX_PATH_EVENTS`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<PathEvent>,
    /// The clients hear that an interface went down and migrate at once (default
    /// true); false: they notice only by silence (`silence_ptos`).
    #[serde(default = "yes")]
    pub told: bool,
    /// With `told = false`: PTO periods without a received datagram after which a
    /// client deems its path dead and migrates (default 3; > 0, at most
    /// [`MAX_SILENCE_PTOS`]).
    #[serde(default = "three")]
    pub silence_ptos: f64,
}

/// One network interface of the client host and its link pair.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Interface {
    /// Unique among the host's interfaces; names its links (`<name>_forward`).
    pub name: String,
    /// Up at the start (default true).
    #[serde(default = "yes")]
    pub up: bool,
    /// With multipath negotiated (`transport.multipath`): the client marks this
    /// interface's path backup with PATH_STATUS_BACKUP (draft-ietf-quic-multipath
    /// §3.3), so it carries stream data only when no available path can (default
    /// false; not serialized then).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub backup: bool,
    /// Client -> network.
    pub forward: LinkConfig,
    /// Network -> client.
    #[serde(rename = "return")]
    pub ret: LinkConfig,
}

/// A scripted event on the client host's interfaces.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum PathEvent {
    /// The interface stops carrying packets (those queued or in flight on its links
    /// are lost).
    Down { at_s: f64, interface: String },
    /// The interface carries packets again, over its configured links.
    Up { at_s: f64, interface: String },
    /// The interface's links (both directions) take the given rate, delay and loss
    /// (each optional; absent = unchanged).
    Degrade {
        at_s: f64,
        interface: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rate_mbps: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        delay_ms: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        loss: Option<LossModel>,
    },
    /// `to` comes up and `from` degrades (as `degrade` does) at `at_s`; `from` goes
    /// down `over_s` later.
    Handover {
        at_s: f64,
        from: String,
        to: String,
        /// Seconds the old interface degrades before it goes down (default 0).
        #[serde(default)]
        over_s: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rate_mbps: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        delay_ms: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        loss: Option<LossModel>,
    },
}

/// How an interface's links degrade (a `degrade` or `handover` event's values).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Degradation {
    pub rate_mbps: Option<f64>,
    pub delay_ms: Option<f64>,
    pub loss: Option<LossModel>,
}

impl Degradation {
    /// The change as a link schedule entry (its `at_s` and `link` are not used).
    pub fn link_change(&self) -> LinkChange {
        LinkChange {
            at_s: 0.0,
            link: LinkSide::Forward,
            rate_mbps: self.rate_mbps,
            delay_ms: self.delay_ms,
            loss: self.loss.clone(),
            outage_s: None,
        }
    }
}

fn yes() -> bool {
    true
}

fn three() -> f64 {
    3.0
}

/// The address of interface `k`: the host's own for the first, 10.4.0.k after it.
pub fn interface_addr(host: Ipv4Addr, k: usize) -> Ipv4Addr {
    if k == 0 {
        host
    } else {
        Ipv4Addr::new(10, 4, 0, k as u8)
    }
}

impl PathEvent {
    pub fn at_s(&self) -> f64 {
        match self {
            PathEvent::Down { at_s, .. }
            | PathEvent::Up { at_s, .. }
            | PathEvent::Degrade { at_s, .. }
            | PathEvent::Handover { at_s, .. } => *at_s,
        }
    }

    /// `"down"`, `"up"`, `"degrade"`, `"handover"`.
    pub fn kind(&self) -> &'static str {
        match self {
            PathEvent::Down { .. } => "down",
            PathEvent::Up { .. } => "up",
            PathEvent::Degrade { .. } => "degrade",
            PathEvent::Handover { .. } => "handover",
        }
    }

    /// The interface the event is about (a handover's old one).
    pub fn interface(&self) -> &str {
        match self {
            PathEvent::Down { interface, .. }
            | PathEvent::Up { interface, .. }
            | PathEvent::Degrade { interface, .. } => interface,
            PathEvent::Handover { from, .. } => from,
        }
    }

    /// A `degrade` or `handover` event's change of links.
    pub fn degradation(&self) -> Option<Degradation> {
        match self {
            PathEvent::Degrade {
                rate_mbps,
                delay_ms,
                loss,
                ..
            }
            | PathEvent::Handover {
                rate_mbps,
                delay_ms,
                loss,
                ..
            } => Some(Degradation {
                rate_mbps: *rate_mbps,
                delay_ms: *delay_ms,
                loss: loss.clone(),
            }),
            _ => None,
        }
    }

    /// When the event's effect on delivery is measured (`FlowResult::path_events`):
    /// a handover's old interface going down, else `at_s`.
    pub fn measured_at_s(&self) -> f64 {
        match self {
            PathEvent::Handover { at_s, over_s, .. } => at_s + over_s,
            _ => self.at_s(),
        }
    }
}

impl ClientHost {
    /// The index of the interface called `name`.
    pub fn interface(&self, name: &str) -> Option<usize> {
        self.interfaces.iter().position(|i| i.name == name)
    }
}

impl Scenario {
    /// The client host's interfaces, when the topology gives it some.
    pub fn client_host(&self) -> Option<&ClientHost> {
        match &self.topology {
            Topology::PointToPoint { client, .. } => client.as_deref(),
            Topology::Dumbbell { .. } => None,
        }
    }

    /// Checks `[topology.client]`: interfaces, their links and names, events naming
    /// known interfaces at valid times, the knobs, and what it cannot be combined with.
    pub(super) fn check_client_host(&self, c: Check) -> Result<(), ScenarioError> {
        let Some(h) = self.client_host() else {
            return Ok(());
        };
        let key = "topology.client";
        if h.interfaces.is_empty() || h.interfaces.len() > MAX_INTERFACES {
            return c.bad(
                format!("{key}.interfaces"),
                format!("needs 1 to {MAX_INTERFACES} interfaces"),
            );
        }
        if self.gateway().is_some() {
            return c.bad(
                format!("{key}.interfaces"),
                "not with topology.gateway (the gateway joins one client link pair)",
            );
        }
        for (k, i) in h.interfaces.iter().enumerate() {
            let ik = format!("{key}.interfaces[{k}]");
            if i.name.is_empty() || h.interface(&i.name) != Some(k) {
                return c.bad(
                    format!("{ik}.name"),
                    "interface names must be unique and not empty",
                );
            }
            check_link(c, &i.forward, &format!("{ik}.forward"))?;
            check_link(c, &i.ret, &format!("{ik}.return"))?;
        }
        if !h.interfaces[0].up {
            return c.bad(
                format!("{key}.interfaces[0].up"),
                "every client starts on the first interface, which must be up",
            );
        }
        let s = h.silence_ptos;
        if !(s.is_finite() && s > 0.0 && s <= MAX_SILENCE_PTOS) {
            return c.bad(
                format!("{key}.silence_ptos"),
                format!("must be above 0 and at most {MAX_SILENCE_PTOS}"),
            );
        }
        if h.events.len() > MAX_PATH_EVENTS {
            return c.bad(
                format!("{key}.events"),
                format!("at most {MAX_PATH_EVENTS} events"),
            );
        }
        for (k, e) in h.events.iter().enumerate() {
            check_event(c, h, &format!("{key}.events[{k}]"), e)?;
        }
        if let Some(i) = self.flows.iter().position(|f| f.has_rebinds()) {
            return c.bad(
                format!("flows[{i}].rebinds"),
                "NAT rebindings are not modelled on a client host with interfaces",
            );
        }
        Ok(())
    }
}

fn check_event(c: Check, h: &ClientHost, key: &str, e: &PathEvent) -> Result<(), ScenarioError> {
    c.seconds(format!("{key}.at_s"), e.at_s(), false)?;
    let known = |field: &str, name: &str| {
        if h.interface(name).is_some() {
            Ok(())
        } else {
            c.bad(format!("{key}.{field}"), "no interface of that name")
        }
    };
    let degradation = |d: &Degradation| {
        if let Some(r) = d.rate_mbps {
            c.rate(format!("{key}.rate_mbps"), r)?;
        }
        if let Some(ms) = d.delay_ms {
            c.millis(format!("{key}.delay_ms"), ms)?;
        }
        if let Some(Err(why)) = d
            .loss
            .as_ref()
            .map(quiclab_link::impair::LossModel::validate)
        {
            return c.bad(format!("{key}.loss"), why);
        }
        Ok(())
    };
    match e {
        PathEvent::Down { interface, .. }
        | PathEvent::Up { interface, .. }
        | PathEvent::Degrade { interface, .. } => known("interface", interface)?,
        PathEvent::Handover {
            from, to, over_s, ..
        } => {
            known("from", from)?;
            known("to", to)?;
            if from == to {
                return c.bad(format!("{key}.to"), "a handover goes to another interface");
            }
            c.seconds(format!("{key}.over_s"), *over_s, false)?;
            c.seconds(format!("{key}.over_s"), e.measured_at_s(), false)?;
        }
    }
    match e.degradation() {
        Some(d) => degradation(&d),
        None => Ok(()),
    }
}
