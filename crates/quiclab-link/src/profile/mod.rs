//! Link profiles (`scenarios/links/*.toml`): generative models of the links
//! researchers study (a LEO constellation's 15 s reconfigurations, a GEO path, a
//! Markov-modulated cellular link, Wi-Fi's aggregation and contention), each file a
//! model name and its parameters (`model = "leo"`, ...; the files cite the published
//! measurements behind their values).
//!
//! A profile is used through a link direction's trace (`trace = { profile = "...",
//! seconds = 120 }`): it is realised, from a seed, as the text of a Mahimahi delivery
//! trace per direction (uplink = client -> server = `forward`, downlink = `return`), a
//! one-way delay step trace and a loss step trace shared by both directions, which are
//! then parsed by the trace module like files. `quiclab link export` writes the same
//! text to files, so a realisation replays anywhere (mm-link, the emulator, another
//! simulator) and, in quiclab, to the same results as the profile itself.
//!
//! Determinism and length: a realisation depends only on the profile, the seed and its
//! length; each process draws from its own stream in time order, so a longer realisation
//! begins with the shorter one. The delivery trace ends with an opportunity at its last
//! millisecond, so it repeats with the realisation's length as period (Mahimahi's rule);
//! the delay and loss hold their last values after it.

mod cellular;
mod gen;
mod geo;
mod leo;
#[cfg(test)]
mod tests;
mod wifi;

pub use cellular::Cellular;
pub use geo::Geo;
pub use leo::Leo;
pub use wifi::Wifi;

use crate::trace::{
    DeliveryTrace, LinkTrace, LossTrace, Steps, TraceConfig, TraceContext, TraceError, TraceFault,
    DELAY_MS,
};
use quiclab_proto::DetRng;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The longest realisation, s (an hour of 100 Mbit/s is 30 million opportunities).
pub const MAX_SECONDS: f64 = 3600.0;
/// A realisation's length when the trace does not say (`trace.seconds`).
pub const DEFAULT_SECONDS: f64 = 120.0;
/// The most delivery opportunities (per direction) or channel accesses a realisation
/// may hold: 20 million (160 MB of timestamps; 5.5 minutes of 700 Mbit/s).
pub const MAX_EVENTS: f64 = 20e6;

/// A profile file: the model and its parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "model", rename_all = "snake_case")]
pub enum Profile {
    Leo(Leo),
    Geo(Geo),
    Cellular(Cellular),
    Wifi(Wifi),
}

/// A realisation as the trace formats' text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Realisation {
    /// Mahimahi delivery trace, client -> server (`forward`).
    pub up: String,
    /// Mahimahi delivery trace, server -> client (`return`).
    pub down: String,
    /// `time_s,one_way_delay_ms`, both directions.
    pub delay: String,
    /// `time_s,loss_p`, both directions (each draws its own losses).
    pub loss: String,
}

/// The four series a model writes.
pub(crate) struct Builder {
    pub up: gen::Deliveries,
    pub down: gen::Deliveries,
    pub delay: gen::Series,
    pub loss: gen::Series,
}

/// Milliseconds to µs precision (readable delay files that parse back exactly).
pub(crate) fn micros(ms: f64) -> f64 {
    (ms * 1000.0).round() / 1000.0
}

/// A probability field's check.
pub(crate) fn prob(key: &str, p: f64) -> Result<(), String> {
    if (0.0..=1.0).contains(&p) {
        Ok(())
    } else {
        Err(format!("{key} must be in [0, 1]"))
    }
}

/// A finite, non-negative field's check (`positive`: also > 0).
pub(crate) fn nonneg(key: &str, v: f64, positive: bool) -> Result<(), String> {
    if v.is_finite() && v >= 0.0 && (!positive || v > 0.0) {
        Ok(())
    } else if positive {
        Err(format!("{key} must be finite and > 0"))
    } else {
        Err(format!("{key} must be finite and >= 0"))
    }
}

/// A `[lo, hi]` range's check (finite, 0 <= lo <= hi).
pub(crate) fn range(key: &str, [lo, hi]: [f64; 2]) -> Result<(), String> {
    if lo.is_finite() && hi.is_finite() && 0.0 <= lo && lo <= hi {
        Ok(())
    } else {
        Err(format!("{key} must be [lo, hi] with 0 <= lo <= hi, finite"))
    }
}

impl Profile {
    /// Parses and checks a profile file's text; the error names the key.
    pub fn parse(text: &str) -> Result<Profile, String> {
        let p: Profile = toml::from_str(text).map_err(|e| e.to_string())?;
        p.validate()?;
        Ok(p)
    }

    /// Reads and parses a profile file.
    pub fn load(path: &Path) -> Result<Profile, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
        Self::parse(&text)
    }

    /// Checks the parameters; the error names the offending key.
    pub fn validate(&self) -> Result<(), String> {
        match self {
            Profile::Leo(m) => m.validate(),
            Profile::Geo(m) => m.validate(),
            Profile::Cellular(m) => m.validate(),
            Profile::Wifi(m) => m.validate(),
        }
    }

    /// The most events per millisecond the model can produce (delivery opportunities in
    /// one direction at its top rate, or Wi-Fi channel accesses).
    fn events_per_ms(&self) -> f64 {
        let opp = |mbps: f64| mbps * 1e3 / (crate::trace::OPPORTUNITY_BYTES * 8) as f64;
        match self {
            Profile::Leo(m) => opp(m.down_mbps[1].max(m.up_mbps[1])),
            Profile::Geo(m) => opp(m.down_mbps.max(m.up_mbps)),
            Profile::Cellular(m) => opp(m.levels_mbps.iter().copied().fold(0.0, f64::max)),
            Profile::Wifi(m) => opp(m.phy_mbps).max(1.0 / m.contention_ms.max(1e-6)),
        }
    }

    /// The realisation of `seconds` (in (0, [`MAX_SECONDS`]]) from `seed`; refused when
    /// it would hold more than [`MAX_EVENTS`] events.
    pub fn realise(&self, seed: u64, seconds: f64) -> Result<Realisation, String> {
        if !(seconds > 0.0 && seconds <= MAX_SECONDS) {
            return Err(format!(
                "seconds must be in (0, {MAX_SECONDS}], got {seconds}"
            ));
        }
        let horizon_ms = ((seconds * 1000.0).round() as u64).max(1);
        let events = self.events_per_ms() * horizon_ms as f64;
        if events > MAX_EVENTS {
            return Err(format!(
                "{seconds} s of this profile is up to {events:.0} delivery opportunities or \
                 channel accesses, more than {MAX_EVENTS:.0}: realise a shorter time or lower \
                 the rates"
            ));
        }
        let mut b = Builder {
            up: gen::Deliveries::default(),
            down: gen::Deliveries::default(),
            delay: gen::Series::new(DELAY_MS.header),
            loss: gen::Series::new("time_s,loss_p"),
        };
        let mut rng = DetRng::new(seed);
        match self {
            Profile::Leo(m) => m.realise(&mut rng, horizon_ms, &mut b),
            Profile::Geo(m) => m.realise(horizon_ms, &mut b),
            Profile::Cellular(m) => m.realise(&mut rng, horizon_ms, &mut b),
            Profile::Wifi(m) => m.realise(&mut rng, horizon_ms, &mut b),
        }
        Ok(Realisation {
            up: b.up.text(horizon_ms),
            down: b.down.text(horizon_ms),
            delay: b.delay.text(),
            loss: b.loss.text(),
        })
    }
}

/// A link direction's trace from its `trace` table: the profile realised from the
/// scenario's seed when `profile` is set, else the trace files ([`LinkTrace::load`]).
pub fn load_link_trace(
    config: &TraceConfig,
    rng: DetRng,
    ctx: &TraceContext,
) -> Result<LinkTrace, TraceError> {
    let Some(path) = &config.profile else {
        return LinkTrace::load(config, rng);
    };
    let seconds = config.seconds.unwrap_or(DEFAULT_SECONDS);
    let realisation = crate::trace::read(path, "profile", |t| {
        Profile::parse(t)
            .and_then(|p| p.realise(ctx.seed, seconds))
            .map_err(TraceFault::Profile)
    })?;
    realisation
        .link_trace(ctx.uplink, config.reorder, rng)
        .map_err(|fault| TraceError {
            key: "profile",
            path: path.clone(),
            fault,
        })
}

impl Realisation {
    /// One direction's trace (`uplink`: client -> server), parsed as the files would
    /// be; `rng` is the link's generator (the loss trace forks its stream).
    pub fn link_trace(
        &self,
        uplink: bool,
        reorder: bool,
        rng: DetRng,
    ) -> Result<LinkTrace, TraceFault> {
        let deliveries = DeliveryTrace::parse(if uplink { &self.up } else { &self.down })?;
        let delay = Steps::parse(&self.delay, DELAY_MS)?;
        let loss = LossTrace::parse(&self.loss)?;
        Ok(LinkTrace::new(
            Some(deliveries),
            Some(delay),
            Some(loss),
            reorder,
            rng,
        ))
    }

    /// Writes `PREFIX.up.mahimahi`, `PREFIX.down.mahimahi`, `PREFIX.delay.csv` and
    /// `PREFIX.loss.csv`; returns their paths in that order.
    pub fn write(&self, prefix: &Path) -> std::io::Result<[PathBuf; 4]> {
        let name = prefix
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let at = |suffix: &str| prefix.with_file_name(format!("{name}.{suffix}"));
        let paths = [
            at("up.mahimahi"),
            at("down.mahimahi"),
            at("delay.csv"),
            at("loss.csv"),
        ];
        for (path, text) in paths
            .iter()
            .zip([&self.up, &self.down, &self.delay, &self.loss])
        {
            std::fs::write(path, text)?;
        }
        Ok(paths)
    }
}
