//! A GEO satellite path: constant capacity each way, a constant round trip, optional
//! random loss (`scenarios/links/geo.toml` cites the figures).

use super::{nonneg, prob, Builder};
use serde::{Deserialize, Serialize};

/// `model = "geo"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Geo {
    /// Round-trip propagation delay, ms (half each way).
    pub rtt_ms: f64,
    /// Capacity server -> client, Mbit/s.
    pub down_mbps: f64,
    /// Capacity client -> server, Mbit/s.
    pub up_mbps: f64,
    /// Random loss probability, each way.
    pub loss: f64,
}

impl Default for Geo {
    fn default() -> Self {
        Geo {
            rtt_ms: 600.0,
            down_mbps: 100.0,
            up_mbps: 10.0,
            loss: 0.0,
        }
    }
}

impl Geo {
    pub(crate) fn validate(&self) -> Result<(), String> {
        nonneg("rtt_ms", self.rtt_ms, false)?;
        nonneg("down_mbps", self.down_mbps, true)?;
        nonneg("up_mbps", self.up_mbps, true)?;
        prob("loss", self.loss)
    }

    pub(crate) fn realise(&self, horizon_ms: u64, b: &mut Builder) {
        b.delay.set(0, super::micros(self.rtt_ms / 2.0));
        b.loss.set(0, self.loss);
        for ms in 0..horizon_ms {
            b.up.steady(ms, self.up_mbps);
            b.down.steady(ms, self.down_mbps);
        }
    }
}
