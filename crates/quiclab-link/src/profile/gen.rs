//! Building blocks of a profile's realisation, all at Mahimahi's millisecond
//! resolution: delivery opportunities at a steady or Poisson rate, and step series
//! written as the trace formats' text (so a realisation and its export are parsed by the
//! same code and replay identically).

use crate::trace::OPPORTUNITY_BYTES;
use quiclab_proto::DetRng;
use std::fmt::Write;

/// Bits one delivery opportunity carries.
const OPPORTUNITY_BITS: f64 = (OPPORTUNITY_BYTES * 8) as f64;

/// One direction's delivery opportunities, in milliseconds, in time order.
#[derive(Debug, Default)]
pub(crate) struct Deliveries {
    times_ms: Vec<u64>,
    /// Capacity carried over between milliseconds of a steady rate, in opportunities.
    credit: f64,
}

impl Deliveries {
    /// Opportunities during millisecond `ms` at a steady `mbps` (the fraction left is
    /// carried to the next millisecond).
    pub(crate) fn steady(&mut self, ms: u64, mbps: f64) {
        self.credit += mbps * 1e6 / 1000.0 / OPPORTUNITY_BITS;
        while self.credit >= 1.0 {
            self.times_ms.push(ms);
            self.credit -= 1.0;
        }
    }

    /// Poisson-many opportunities (mean `mbps` worth) during millisecond `ms`: one
    /// uniform draw per opportunity plus one (inversion of the Poisson distribution).
    pub(crate) fn poisson(&mut self, ms: u64, mbps: f64, rng: &mut DetRng) {
        let mean = mbps * 1e6 / 1000.0 / OPPORTUNITY_BITS;
        let (mut k, mut p, limit) = (0u64, 1.0f64, (-mean).exp());
        loop {
            p *= rng.next_f64();
            if p <= limit {
                break;
            }
            k += 1;
        }
        for _ in 0..k {
            self.times_ms.push(ms);
        }
    }

    /// `n` opportunities at millisecond `ms` (an aggregate burst).
    pub(crate) fn burst(&mut self, ms: u64, n: u64) {
        for _ in 0..n {
            self.times_ms.push(ms);
        }
    }

    /// The Mahimahi text: one timestamp per line, ending with one opportunity at
    /// `horizon_ms` so that the trace's period is the realisation's length.
    pub(crate) fn text(&self, horizon_ms: u64) -> String {
        let mut out = String::with_capacity(self.times_ms.len() * 7 + 8);
        for &t in self.times_ms.iter().filter(|&&t| t < horizon_ms) {
            let _ = writeln!(out, "{t}");
        }
        let _ = writeln!(out, "{horizon_ms}");
        out
    }
}

/// A step series (`time_s,value`), one row per change.
#[derive(Debug)]
pub(crate) struct Series {
    text: String,
    last: Option<f64>,
}

impl Series {
    pub(crate) fn new(header: &str) -> Series {
        Series {
            text: format!("{header}\n"),
            last: None,
        }
    }

    /// `value` holds from millisecond `ms` on (no row when it does not change).
    pub(crate) fn set(&mut self, ms: u64, value: f64) {
        if self.last == Some(value) {
            return;
        }
        self.last = Some(value);
        let _ = writeln!(self.text, "{}.{:03},{value}", ms / 1000, ms % 1000);
    }

    pub(crate) fn text(self) -> String {
        self.text
    }
}

/// Uniform in `[lo, hi]` from one draw.
pub(crate) fn uniform(rng: &mut DetRng, [lo, hi]: [f64; 2]) -> f64 {
    lo + (hi - lo) * rng.next_f64()
}

/// Exponential with mean `mean` from one draw.
pub(crate) fn exponential(rng: &mut DetRng, mean: f64) -> f64 {
    -mean * (1.0 - rng.next_f64()).ln()
}
