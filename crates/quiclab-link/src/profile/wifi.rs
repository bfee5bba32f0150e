//! A Wi-Fi (802.11n/ac-like) link: the shared channel is won transmission opportunity
//! (TXOP) by TXOP after a contention gap; a TXOP won by the access point delivers an
//! aggregate of `aggregate` packets at once downstream, one won by the station delivers
//! upstream, the rest belong to other stations and only take airtime; occasional stalls
//! (e.g. a background scan) deliver nothing. All at Mahimahi's 1 ms resolution: a
//! burst's packets share its millisecond (`scenarios/links/wifi.toml` cites the
//! standard's values and says which are assumed).
//!
//! Draws: per TXOP two values from the `txops` stream (contention gap, owner); per stall
//! one from the `stalls` stream (the time to the next).

use super::gen::exponential;
use super::{micros, nonneg, prob, Builder};
use crate::trace::OPPORTUNITY_BYTES;
use quiclab_proto::DetRng;
use serde::{Deserialize, Serialize};

/// `model = "wifi"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Wifi {
    /// PHY rate, Mbit/s (a TXOP lasts `aggregate` packets at this rate).
    pub phy_mbps: f64,
    /// Packets per aggregate (A-MPDU), 1 to 64 (802.11n's block-ack window).
    pub aggregate: u64,
    /// Mean contention gap before a TXOP, ms (exponential).
    pub contention_ms: f64,
    /// Share of TXOPs the access point wins (deliveries server -> client).
    pub down_share: f64,
    /// Share of TXOPs the station wins (client -> server); the rest go to others.
    pub up_share: f64,
    /// Mean time between stalls, s (exponential; 0: none).
    pub stall_every_s: f64,
    /// How long a stall lasts, ms.
    pub stall_ms: f64,
    /// One-way delay besides the channel access, ms.
    pub delay_ms: f64,
    /// Residual loss probability (after link-layer retries), each way.
    pub loss: f64,
}

impl Default for Wifi {
    fn default() -> Self {
        Wifi {
            phy_mbps: 300.0,
            aggregate: 32,
            contention_ms: 0.11,
            down_share: 0.5,
            up_share: 0.2,
            stall_every_s: 10.0,
            stall_ms: 100.0,
            delay_ms: 2.0,
            loss: 0.001,
        }
    }
}

impl Wifi {
    pub(crate) fn validate(&self) -> Result<(), String> {
        nonneg("phy_mbps", self.phy_mbps, true)?;
        if self.phy_mbps > 100_000.0 {
            return Err("phy_mbps must be at most 100000".into());
        }
        if !(1..=64).contains(&self.aggregate) {
            return Err("aggregate must be in 1..=64".into());
        }
        nonneg("contention_ms", self.contention_ms, false)?;
        prob("down_share", self.down_share)?;
        prob("up_share", self.up_share)?;
        if self.down_share + self.up_share > 1.0 {
            return Err("down_share + up_share must be at most 1".into());
        }
        nonneg("stall_every_s", self.stall_every_s, false)?;
        nonneg("stall_ms", self.stall_ms, false)?;
        nonneg("delay_ms", self.delay_ms, false)?;
        prob("loss", self.loss)
    }

    pub(crate) fn realise(&self, rng: &mut DetRng, horizon_ms: u64, b: &mut Builder) {
        let mut txops = rng.fork("txops");
        let mut stalls = rng.fork("stalls");
        b.delay.set(0, micros(self.delay_ms));
        b.loss.set(0, self.loss);
        let txop_ms =
            self.aggregate as f64 * (OPPORTUNITY_BYTES * 8) as f64 / (self.phy_mbps * 1e3);
        let next_stall = |s: &mut DetRng| {
            if self.stall_every_s > 0.0 {
                exponential(s, self.stall_every_s * 1000.0)
            } else {
                f64::INFINITY
            }
        };
        let mut stall_at = next_stall(&mut stalls);
        let mut t = 0.0f64;
        while t < horizon_ms as f64 {
            t += exponential(&mut txops, self.contention_ms);
            let owner = txops.next_f64();
            if t >= stall_at {
                t = t.max(stall_at + self.stall_ms);
                stall_at = t + next_stall(&mut stalls);
            }
            let ms = t as u64;
            if owner < self.down_share {
                b.down.burst(ms, self.aggregate);
            } else if owner < self.down_share + self.up_share {
                b.up.burst(ms, self.aggregate);
            }
            t += txop_ms;
        }
    }
}
