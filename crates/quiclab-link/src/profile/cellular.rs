//! A cellular (LTE/5G-like) link as a Markov-modulated Poisson process: the capacity
//! moves between levels (a birth-death chain: one level up or down, reflecting at the
//! ends) after exponential dwell times, and within a level deliveries arrive as a Poisson
//! process of that rate: a discrete stand-in for Sprout's model (Winstein et al., NSDI
//! 2013: Poisson deliveries whose rate moves as a Brownian motion, with outages); a level
//! of 0 is an outage. The uplink is a fixed fraction of the downlink's level
//! (`scenarios/links/cellular.toml` says which values are measured and which assumed).
//!
//! Draws: per level change two values from the `levels` stream (dwell, direction); per
//! millisecond, Poisson deliveries from the `down` and `up` streams.

use super::gen::exponential;
use super::{micros, nonneg, prob, Builder};
use quiclab_proto::DetRng;
use serde::{Deserialize, Serialize};

/// `model = "cellular"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Cellular {
    /// Downlink capacity of each level, Mbit/s, in increasing order (0 = an outage).
    pub levels_mbps: Vec<f64>,
    /// Uplink capacity as a fraction of the downlink's.
    pub up_fraction: f64,
    /// Mean time in a level, s (exponential).
    pub mean_dwell_s: f64,
    /// The level at time 0 (an index into `levels_mbps`).
    pub start_level: usize,
    /// One-way delay, ms.
    pub delay_ms: f64,
    /// Random loss probability, each way.
    pub loss: f64,
}

impl Default for Cellular {
    fn default() -> Self {
        Cellular {
            levels_mbps: vec![0.0, 2.0, 8.0, 20.0, 40.0],
            up_fraction: 0.25,
            mean_dwell_s: 0.5,
            start_level: 3,
            delay_ms: 25.0,
            loss: 0.0,
        }
    }
}

impl Cellular {
    pub(crate) fn validate(&self) -> Result<(), String> {
        if self.levels_mbps.is_empty() {
            return Err("levels_mbps must list at least one level".into());
        }
        for (i, &l) in self.levels_mbps.iter().enumerate() {
            nonneg(&format!("levels_mbps[{i}]"), l, false)?;
            if l > 100_000.0 {
                return Err(format!("levels_mbps[{i}] must be at most 100000"));
            }
        }
        prob("up_fraction", self.up_fraction)?;
        nonneg("mean_dwell_s", self.mean_dwell_s, true)?;
        if self.start_level >= self.levels_mbps.len() {
            return Err("start_level must index levels_mbps".into());
        }
        nonneg("delay_ms", self.delay_ms, false)?;
        prob("loss", self.loss)
    }

    pub(crate) fn realise(&self, rng: &mut DetRng, horizon_ms: u64, b: &mut Builder) {
        let mut levels = rng.fork("levels");
        let mut down_rng = rng.fork("down");
        let mut up_rng = rng.fork("up");
        b.delay.set(0, micros(self.delay_ms));
        b.loss.set(0, self.loss);
        let last = self.levels_mbps.len() - 1;
        let mut level = self.start_level;
        let mut change_at = exponential(&mut levels, self.mean_dwell_s * 1000.0);
        for ms in 0..horizon_ms {
            while (ms as f64) >= change_at {
                let up = levels.next_f64() < 0.5;
                level = match (level, up) {
                    (0, _) => 1.min(last),
                    (l, _) if l == last => l.saturating_sub(1),
                    (l, true) => l + 1,
                    (l, false) => l - 1,
                };
                change_at += exponential(&mut levels, self.mean_dwell_s * 1000.0).max(1e-3);
            }
            let mbps = self.levels_mbps[level];
            b.down.poisson(ms, mbps, &mut down_rng);
            b.up.poisson(ms, mbps * self.up_fraction, &mut up_rng);
        }
    }
}
