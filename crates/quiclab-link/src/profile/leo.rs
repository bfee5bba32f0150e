//! A LEO constellation path (Starlink-like): the terminal is reassigned to a satellite
//! every `slot_s` seconds; each slot has its own round trip and capacity; the RTT jitters
//! within a slot; each reassignment (handover) adds delay and a loss burst for a moment;
//! a background loss applies otherwise (`scenarios/links/leo.toml` cites the figures).
//!
//! Draws: per slot, four values from the `slots` stream (RTT, down, up capacity,
//! handover extra RTT); per jitter interval one from the `jitter` stream.

use super::gen::uniform;
use super::{micros, nonneg, prob, range, Builder};
use quiclab_proto::DetRng;
use serde::{Deserialize, Serialize};

/// `model = "leo"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Leo {
    /// Seconds between satellite reassignments.
    pub slot_s: f64,
    /// A slot's round-trip delay, ms: uniform in [lo, hi], drawn per slot.
    pub rtt_ms: [f64; 2],
    /// Extra RTT within a slot, ms: uniform in [0, jitter_ms], redrawn every
    /// `jitter_interval_s`.
    pub jitter_ms: f64,
    pub jitter_interval_s: f64,
    /// How long a handover lasts (from each slot's start but the first), ms.
    pub handover_ms: f64,
    /// The handover's extra RTT, ms: uniform in [lo, hi], per handover.
    pub handover_rtt_ms: [f64; 2],
    /// Loss probability during a handover.
    pub handover_loss: f64,
    /// Loss probability outside handovers.
    pub loss: f64,
    /// A slot's capacity server -> client, Mbit/s: uniform in [lo, hi] per slot.
    pub down_mbps: [f64; 2],
    /// A slot's capacity client -> server, Mbit/s: uniform in [lo, hi] per slot.
    pub up_mbps: [f64; 2],
}

impl Default for Leo {
    fn default() -> Self {
        Leo {
            slot_s: 15.0,
            rtt_ms: [40.0, 60.0],
            jitter_ms: 6.7,
            jitter_interval_s: 1.0,
            handover_ms: 100.0,
            handover_rtt_ms: [30.0, 50.0],
            handover_loss: 0.5,
            loss: 0.01,
            down_mbps: [50.0, 200.0],
            up_mbps: [5.0, 20.0],
        }
    }
}

impl Leo {
    pub(crate) fn validate(&self) -> Result<(), String> {
        nonneg("slot_s", self.slot_s, true)?;
        if self.slot_s < 0.001 {
            return Err("slot_s must be at least 0.001".into());
        }
        range("rtt_ms", self.rtt_ms)?;
        nonneg("jitter_ms", self.jitter_ms, false)?;
        nonneg("jitter_interval_s", self.jitter_interval_s, true)?;
        if self.jitter_interval_s < 0.001 {
            return Err("jitter_interval_s must be at least 0.001".into());
        }
        nonneg("handover_ms", self.handover_ms, false)?;
        range("handover_rtt_ms", self.handover_rtt_ms)?;
        prob("handover_loss", self.handover_loss)?;
        prob("loss", self.loss)?;
        range("down_mbps", self.down_mbps)?;
        range("up_mbps", self.up_mbps)
    }

    pub(crate) fn realise(&self, rng: &mut DetRng, horizon_ms: u64, b: &mut Builder) {
        let mut slots = rng.fork("slots");
        let mut jitter = rng.fork("jitter");
        let slot_ms = (self.slot_s * 1000.0).round() as u64;
        let jitter_ms_every = (self.jitter_interval_s * 1000.0).round() as u64;
        let (mut rtt, mut down, mut up, mut extra, mut wobble) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for ms in 0..horizon_ms {
            let into_slot = ms % slot_ms;
            if into_slot == 0 {
                rtt = uniform(&mut slots, self.rtt_ms);
                down = uniform(&mut slots, self.down_mbps);
                up = uniform(&mut slots, self.up_mbps);
                extra = uniform(&mut slots, self.handover_rtt_ms);
            }
            if ms % jitter_ms_every == 0 {
                wobble = self.jitter_ms * jitter.next_f64();
            }
            let handover = ms >= slot_ms && (into_slot as f64) < self.handover_ms;
            let spike = if handover { extra } else { 0.0 };
            b.delay.set(ms, micros((rtt + wobble + spike) / 2.0));
            b.loss.set(
                ms,
                if handover {
                    self.handover_loss
                } else {
                    self.loss
                },
            );
            b.up.steady(ms, up);
            b.down.steady(ms, down);
        }
    }
}
