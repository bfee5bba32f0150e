//! Trace-driven link directions (`topology.forward.trace`, `topology.return.trace`):
//! a Mahimahi packet-delivery trace in place of the constant rate (`mahimahi.rs`), and
//! step traces of the one-way delay and the loss probability (`steps.rs`), the loss trace
//! optionally as a Gilbert-Elliott burst state (`loss.rs`). Each part is
//! optional; queues and impairments apply as on any link (the queue holds the packets
//! waiting for delivery opportunities).
//!
//! Files are read when the link is built ([`LinkTrace::load`]); the scenario loader has
//! already resolved relative paths against the scenario file's directory. Every bad
//! file is a typed [`TraceError`] naming the file and the line.
//!
//! Determinism: a loss trace draws one value (two in its burst form) per datagram offered
//! to the link (past the outage and MTU checks, before the impairments decide, whatever
//! they decide) from its
//! own stream, forked from the link's seeded generator, so adding a loss trace never
//! shifts the impairments' fates. Its drops count as `impairment_drops`.

mod loss;
mod mahimahi;
mod steps;
#[cfg(test)]
mod tests;

pub use loss::{LossTrace, BURST_HEADER};
pub use mahimahi::{DeliveryTrace, MahimahiError, Opportunities, OPPORTUNITY_BYTES};
pub use steps::{Column, Steps, StepsError, DELAY_MS, LOSS_P};

use quiclab_proto::{DetRng, Instant};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A link direction's traces, as a scenario writes them:
/// `trace = { mahimahi = "cell.up", delay = "delay.csv", loss = "loss.csv" }`, or a link
/// profile's realisation: `trace = { profile = "../links/leo.toml", seconds = 120 }`;
/// relative paths are relative to the scenario file's directory.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct TraceConfig {
    /// A Mahimahi packet-delivery trace (one integer ms timestamp per line, each an
    /// opportunity to deliver 1504 bytes; repeats with the last timestamp as period).
    /// It replaces `rate_mbps`, which must then be absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mahimahi: Option<String>,
    /// CSV `time_s,one_way_delay_ms`: the propagation delay from each time on (before
    /// the first row: `delay_ms`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay: Option<String>,
    /// CSV `time_s,loss_p`: each datagram offered is lost with the probability in
    /// force (on top of `impairments`); or, with the header
    /// `time_s,p_good_bad,p_bad_good,loss_good,loss_bad`, a Gilbert-Elliott burst state
    /// with the parameters in force (`trace/loss.rs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss: Option<String>,
    /// A link profile (`scenarios/links/*.toml`, `profile/mod.rs`) realised from the
    /// scenario's seed in place of the three files above (which must then be absent):
    /// this direction's delivery trace (`forward`: client -> server, the uplink), and
    /// the profile's delay and loss traces.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// The profile's realisation length, s (default 120; at most 3600): its delivery
    /// trace repeats after it, its delay and loss hold their last values.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
    /// Let a packet overtake earlier ones when the delay drops (default false: the
    /// direction stays FIFO, a packet waits for the one sent before it).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub reorder: bool,
}

/// What a link direction's trace needs to know of its scenario: a profile is realised
/// from the scenario's `seed` (the same realisation for both directions), and the
/// direction picks its delivery trace.
#[derive(Clone, Copy, Debug)]
pub struct TraceContext {
    pub seed: u64,
    /// Client -> server (`forward`).
    pub uplink: bool,
}

impl TraceConfig {
    /// The configured file paths, with their key names (`mahimahi`, `delay`, `loss`,
    /// `profile`).
    pub fn paths_mut(&mut self) -> [(&'static str, &mut Option<String>); 4] {
        [
            ("mahimahi", &mut self.mahimahi),
            ("delay", &mut self.delay),
            ("loss", &mut self.loss),
            ("profile", &mut self.profile),
        ]
    }
}

/// What is wrong in a trace file.
#[derive(Debug, thiserror::Error)]
pub enum TraceFault {
    #[error(transparent)]
    Mahimahi(#[from] MahimahiError),
    #[error(transparent)]
    Steps(#[from] StepsError),
    #[error("cannot read: {0}")]
    Io(#[from] std::io::Error),
    #[error("a trace table needs `mahimahi`, `delay`, `loss` or `profile`")]
    NothingSet,
    /// A profile file that does not parse or check, or a realisation refused.
    #[error("{0}")]
    Profile(String),
}

/// A trace that cannot be used: the key (`mahimahi`, `delay`, `loss`), the file and why.
#[derive(Debug, thiserror::Error)]
#[error("{key} = {path:?}: {fault}")]
pub struct TraceError {
    pub key: &'static str,
    pub path: String,
    pub fault: TraceFault,
}

/// Reads the file at `path` (named `key` in errors) and parses it.
pub(crate) fn read<T>(
    path: &str,
    key: &'static str,
    parse: impl FnOnce(&str) -> Result<T, TraceFault>,
) -> Result<T, TraceError> {
    std::fs::read_to_string(path)
        .map_err(TraceFault::from)
        .and_then(|text| parse(&text))
        .map_err(|fault| TraceError {
            key,
            path: path.to_string(),
            fault,
        })
}

/// A direction's loaded traces and their running state.
#[derive(Clone, Debug)]
pub struct LinkTrace {
    /// Delivery opportunities (`None`: the link's rate serializes).
    pub opportunities: Option<Opportunities>,
    delay: Option<Steps>,
    loss: Option<LossTrace>,
    loss_rng: DetRng,
    reorder: bool,
}

impl LinkTrace {
    /// Reads and parses the configured files (paths as given: the caller resolves
    /// relative ones). `rng` is the link's generator; the loss trace forks its stream.
    /// A `profile` is not read here: [`crate::profile::load_link_trace`] realises it
    /// (and falls back to this for files), so this module does not depend on profiles.
    pub fn load(config: &TraceConfig, rng: DetRng) -> Result<LinkTrace, TraceError> {
        if config.mahimahi.is_none() && config.delay.is_none() && config.loss.is_none() {
            return Err(TraceError {
                key: "mahimahi",
                path: String::new(),
                fault: TraceFault::NothingSet,
            });
        }
        let mut trace = LinkTrace::new(None, None, None, config.reorder, rng);
        if let Some(path) = &config.mahimahi {
            let t = read(path, "mahimahi", |t| Ok(DeliveryTrace::parse(t)?))?;
            trace.opportunities = Some(Opportunities::new(t));
        }
        if let Some(path) = &config.delay {
            trace.delay = Some(read(path, "delay", |t| Ok(Steps::parse(t, DELAY_MS)?))?);
        }
        if let Some(path) = &config.loss {
            trace.loss = Some(read(path, "loss", |t| Ok(LossTrace::parse(t)?))?);
        }
        Ok(trace)
    }

    /// From parsed parts (tests, generated traces).
    pub fn new(
        delivery: Option<DeliveryTrace>,
        delay: Option<Steps>,
        loss: Option<LossTrace>,
        reorder: bool,
        rng: DetRng,
    ) -> LinkTrace {
        let mut rng = rng;
        LinkTrace {
            opportunities: delivery.map(Opportunities::new),
            delay,
            loss,
            loss_rng: rng.fork("trace_loss"),
            reorder,
        }
    }

    /// Whether the datagram offered at `now` is lost to the loss trace (one draw per
    /// call, two in the burst form, when a loss trace is set; none otherwise).
    pub fn lose(&mut self, now: Instant) -> bool {
        let Some(loss) = &mut self.loss else {
            return false;
        };
        loss.lose(now, &mut self.loss_rng)
    }

    /// The propagation delay of a packet that finishes transmission at `now` (the
    /// delay trace's, else `base`), and whether it must stay behind earlier packets
    /// (FIFO unless `reorder` or the packet's own jitter may reorder it).
    pub fn delivery_rule(&self, now: Instant, base: Duration, reorder: bool) -> (Duration, bool) {
        let delay = self
            .delay
            .as_ref()
            .and_then(|d| d.at(now))
            .map_or(base, |ms| crate::time::saturating_secs(ms / 1000.0));
        (delay, !(reorder || self.reorder))
    }
}
