//! How late the relay sends each datagram against the model's due time (actual send
//! minus due), as a histogram with 1 µs buckets up to 10 ms (larger values share one
//! overflow bucket; the maximum is kept exactly): bounded memory whatever the run's
//! length, exact enough for the p50/p99 the accuracy goal is stated in. Besides the
//! run's total (emulate.json), each link direction's deliveries due inside the
//! scenario's measurement window are counted apart ([`WindowLateness`], links.json), so
//! a plan can read, beside a run's throughput, whether the relay kept the model's
//! schedule over the same window.

use crate::driver::Clock;
use quiclab_link::config::LinkSide;
use quiclab_link::duplex::{Delivery, Duplex};
use quiclab_link::quantile;
use quiclab_link::time::saturating_secs;
use quiclab_proto::Instant;
use serde::Serialize;
use std::time::Duration;

const BUCKETS: usize = 10_000;

/// A histogram of lateness values.
pub struct Lateness {
    counts: Vec<u64>,
    total: u64,
    max_ns: u64,
}

/// The summary written to emulate.json and printed at exit.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct LatenessSummary {
    pub datagrams: u64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
}

impl Default for Lateness {
    fn default() -> Self {
        Lateness {
            counts: vec![0; BUCKETS + 1],
            total: 0,
            max_ns: 0,
        }
    }
}

impl Lateness {
    pub fn record(&mut self, late: Duration) {
        let ns = u64::try_from(late.as_nanos()).unwrap_or(u64::MAX);
        let bucket = usize::try_from(ns / 1000).unwrap_or(BUCKETS).min(BUCKETS);
        self.counts[bucket] += 1;
        self.total += 1;
        self.max_ns = self.max_ns.max(ns);
    }

    /// The `q` quantile in µs ([`quantile::histogram_quantile`], a sample counting as
    /// its bucket's upper bound, the overflow bucket's as the maximum), never above the
    /// maximum (a bucket's bound can lie past it); 0 with no samples.
    fn quantile_us(&self, q: f64) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        let bins = self.counts.iter().enumerate().map(|(i, &c)| {
            let value = if i == BUCKETS {
                self.max_ns as f64 / 1e3
            } else {
                (i + 1) as f64
            };
            (value, c)
        });
        quantile::histogram_quantile(bins, q).min(self.max_ns as f64 / 1e3)
    }

    pub fn summary(&self) -> LatenessSummary {
        LatenessSummary {
            datagrams: self.total,
            p50_us: self.quantile_us(0.5),
            p99_us: self.quantile_us(0.99),
            p999_us: self.quantile_us(0.999),
            max_us: self.max_ns as f64 / 1e3,
        }
    }
}

/// Lateness per link direction of the deliveries due in `[from, to)` (the scenario's
/// measurement window; `to` = `None`: to the end).
pub struct WindowLateness {
    from: Instant,
    to: Option<Instant>,
    sides: [Lateness; 2],
}

impl Default for WindowLateness {
    /// The whole run.
    fn default() -> Self {
        WindowLateness::new(Instant::ZERO, None)
    }
}

impl WindowLateness {
    pub fn new(from: Instant, to: Option<Instant>) -> WindowLateness {
        WindowLateness {
            from,
            to,
            sides: [Lateness::default(), Lateness::default()],
        }
    }

    /// Counts a delivery on `side` due at `due` that left `late` after it, if `due` is
    /// inside the window.
    pub fn record(&mut self, side: LinkSide, due: Instant, late: Duration) {
        if due >= self.from && self.to.is_none_or(|t| due < t) {
            self.sides[index(side)].record(late);
        }
    }

    pub fn summary(&self, side: LinkSide) -> LatenessSummary {
        self.sides[index(side)].summary()
    }
}

fn index(side: LinkSide) -> usize {
    match side {
        LinkSide::Forward => 0,
        LinkSide::Return => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Samples inside one bucket: the quantiles interpolate up to the bucket's bound,
    /// but none exceeds the largest sample.
    #[test]
    fn quantiles_stay_below_the_maximum() {
        let mut l = Lateness::default();
        for ns in [27_100, 27_300, 27_666] {
            l.record(Duration::from_nanos(ns));
        }
        let s = l.summary();
        assert!(s.p999_us <= s.max_us && s.p99_us <= s.max_us, "{s:?}");
        assert!((s.max_us - 27.666).abs() < 1e-9);
    }

    /// Only deliveries due inside the window count, each on its own direction.
    #[test]
    fn window_per_direction() {
        let ms = Instant::from_millis;
        let mut w = WindowLateness::new(ms(1000), Some(ms(2000)));
        let us = Duration::from_micros;
        w.record(LinkSide::Return, ms(999), us(500)); // before
        w.record(LinkSide::Return, ms(1000), us(10));
        w.record(LinkSide::Return, ms(1999), us(20));
        w.record(LinkSide::Return, ms(2000), us(900)); // at the end: out
        w.record(LinkSide::Forward, ms(1500), us(7000));
        let r = w.summary(LinkSide::Return);
        assert_eq!((r.datagrams, r.max_us), (2, 20.0));
        let f = w.summary(LinkSide::Forward);
        assert_eq!((f.datagrams, f.max_us), (1, 7000.0));
        let mut all = WindowLateness::default();
        all.record(LinkSide::Forward, ms(1), us(3));
        assert_eq!(all.summary(LinkSide::Forward).datagrams, 1);
        assert_eq!(all.summary(LinkSide::Return).datagrams, 0);
    }

    #[test]
    fn quantiles() {
        let mut l = Lateness::default();
        assert_eq!(l.summary().p99_us, 0.0);
        for us in 0..100u64 {
            l.record(Duration::from_nanos(us * 1000 + 500));
        }
        // Bucket upper bounds 1..=100 µs, interpolated between closest ranks.
        let s = l.summary();
        assert_eq!(s.datagrams, 100);
        assert!((s.p50_us - 50.5).abs() < 1e-9, "{s:?}");
        assert!((s.p99_us - 99.01).abs() < 1e-9, "{s:?}");
        l.record(Duration::from_secs(1));
        assert_eq!(l.summary().max_us, 1e6);
        // The overflow bucket counts as the maximum: 100 + 0.9 * (1e6 - 100).
        assert!((l.summary().p999_us - 900_010.0).abs() < 1e-6);
    }
}

/// A relay's two records of its send lateness: the run's ([`Lateness`], emulate.json)
/// and the measurement window's per direction ([`WindowLateness`], links.json).
#[derive(Default)]
pub struct SendLateness {
    pub total: Lateness,
    pub window: WindowLateness,
}

impl SendLateness {
    /// The window from `from_s` to `to_s` (`None`: the end) of relay time, seconds.
    pub fn for_window(from_s: f64, to_s: Option<f64>) -> SendLateness {
        let at = |s| Instant::ZERO + saturating_secs(s);
        SendLateness {
            total: Lateness::default(),
            window: WindowLateness::new(at(from_s), to_s.map(at)),
        }
    }

    /// The next delivery of `duplex` due by `now`, its lateness (the wall clock's time
    /// at the send against its due time) recorded in both.
    pub(crate) fn pop_due(
        &mut self,
        duplex: &mut Duplex,
        now: Instant,
        clock: &Clock,
    ) -> Option<Delivery> {
        let d = duplex.poll(now)?;
        let late = clock.now().saturating_duration_since(d.due);
        self.total.record(late);
        self.window.record(d.side, d.due, late);
        Some(d)
    }
}
