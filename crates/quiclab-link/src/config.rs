//! A link direction's settings and its scheduled changes, as scenario files write them
//! (`[topology.forward]`, `[[schedule]]`): serde types, so the simulator's schema embeds
//! them unchanged and the emulator reads the same keys. Bounds are checked by the
//! schema's validation (`quiclab-sim/src/scenario/validate.rs`), which names the key.

use crate::impair::{ImpairmentConfig, LossModel};
use crate::queue::QueueConfig;
use crate::trace::TraceConfig;
use serde::{Deserialize, Serialize};

/// One link direction.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct LinkConfig {
    /// Rate in Mbit/s; absent = unlimited (no serialization delay).
    pub rate_mbps: Option<f64>,
    /// One-way propagation delay, ms.
    pub delay_ms: f64,
    /// Largest IP packet (UDP payload + 28 bytes of IPv4/UDP headers); absent = 65535.
    pub mtu: Option<u32>,
    pub queue: QueueConfig,
    pub impairments: ImpairmentConfig,
    /// Delivery, delay and loss traces (`trace/mod.rs`); absent = the constant link.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceConfig>,
}

/// Which link direction a change applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LinkSide {
    Forward,
    Return,
}

/// A scheduled change of a (bottleneck) link direction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkChange {
    pub at_s: f64,
    pub link: LinkSide,
    pub rate_mbps: Option<f64>,
    pub delay_ms: Option<f64>,
    pub loss: Option<LossModel>,
    /// The link drops everything for this long.
    pub outage_s: Option<f64>,
}
