//! The loss trace (`trace.loss`), in one of two forms told apart by the file's header:
//!
//! - `time_s,loss_p` (the header is optional): each datagram offered is lost with the
//!   probability in force (independent losses);
//! - `time_s,p_good_bad,p_bad_good,loss_good,loss_bad` (the header is required): a
//!   Gilbert-Elliott burst state whose parameters change at the given times. Per
//!   datagram the state moves first (good->bad with `p_good_bad`, bad->good with
//!   `p_bad_good`), then the datagram is lost with the new state's rate, as the
//!   `gilbert_elliott` loss model does (`impair/loss.rs`). The state carries over a row
//!   change; it starts good. In the stationary regime a fraction
//!   `p_good_bad / (p_good_bad + p_bad_good)` of datagrams find the channel bad, and a
//!   bad period lasts `1 / p_bad_good` datagrams on average (Gilbert 1960, Elliott 1963;
//!   the same two-state model as ns-3's and the interop runner's `asymmetric-p2p`
//!   Gilbert-Elliott drop model).
//!
//! Before the first row nothing is lost. Draws: the rate form takes one value per
//! datagram offered, the burst form two, from the loss trace's own stream (`mod.rs`).

use super::steps::{Column, Steps, StepsError, LOSS_P};
use crate::impair::gilbert_elliott_step;
use quiclab_proto::{DetRng, Instant};

/// The header that selects the burst form.
pub const BURST_HEADER: &str = "time_s,p_good_bad,p_bad_good,loss_good,loss_bad";

const fn prob(name: &'static str) -> Column {
    Column {
        header: BURST_HEADER,
        name,
        min: 0.0,
        max: 1.0,
        why: "must be in [0, 1]",
    }
}

const BURST_COLUMNS: [Column; 4] = [
    prob("p_good_bad"),
    prob("p_bad_good"),
    prob("loss_good"),
    prob("loss_bad"),
];

/// A parsed loss trace with its running state.
#[derive(Clone, Debug, PartialEq)]
pub enum LossTrace {
    /// `time_s,loss_p`.
    Rate(Steps),
    /// `time_s,p_good_bad,p_bad_good,loss_good,loss_bad`, and whether the channel is in
    /// the bad state.
    Burst { steps: Steps, bad: bool },
}

impl LossTrace {
    /// Parses either form (the burst form when the first non-blank line is its header).
    pub fn parse(text: &str) -> Result<LossTrace, StepsError> {
        let first = text.lines().map(str::trim).find(|l| !l.is_empty());
        if first.is_some_and(|l| l.replace(' ', "") == BURST_HEADER) {
            let steps = Steps::parse_rows(text, BURST_HEADER, &BURST_COLUMNS)?;
            return Ok(LossTrace::Burst { steps, bad: false });
        }
        Ok(LossTrace::Rate(Steps::parse(text, LOSS_P)?))
    }

    /// Whether the datagram offered at `now` is lost; draws one value from `rng` (rate
    /// form) or two (burst form), whatever the outcome.
    pub fn lose(&mut self, now: Instant, rng: &mut DetRng) -> bool {
        match self {
            LossTrace::Rate(steps) => {
                let u = rng.next_f64();
                steps.at(now).is_some_and(|p| u < p)
            }
            LossTrace::Burst { steps, bad } => {
                let (transition, decide) = (rng.next_f64(), rng.next_f64());
                let Some(r) = steps.row_at(now) else {
                    return false;
                };
                gilbert_elliott_step(bad, [r[0], r[1], r[2], r[3]], transition, decide)
            }
        }
    }
}

#[cfg(test)]
#[path = "loss_tests.rs"]
mod tests;
