//! Statistics of one side of a connection over the measurement window
//! (`[measure] from_s`/`to_s`), always collected (unlike the traces): the time-weighted
//! mean congestion window and the RTT samples' min, mean and percentiles. They let a
//! plan read "the average window" of a response-function study (RFC 9438 §5.1) or the
//! queueing delay of a controller (the RTT above its minimum) without keeping a trace of
//! every ACK in the results. Memory is bounded: RTT samples go into a histogram of
//! [`RTT_BIN_US`]-wide bins, one entry per occupied bin.

use quiclab_link::quantile;
use serde::Serialize;
use std::collections::BTreeMap;

/// Width of an RTT histogram bin, µs: the resolution of the percentiles.
pub const RTT_BIN_US: f64 = 10.0;

/// What a plan reads: the summary over the window (`None` where there was no sample).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct WindowSummary {
    /// Time-weighted mean of the congestion window over the part of the window in which
    /// the connection reported one, bytes.
    pub cwnd_mean_bytes: Option<f64>,
    /// How long that part lasted, seconds.
    pub cwnd_span_s: f64,
    /// RTT samples (`latest_rtt` of each ACK processed) taken inside the window.
    pub rtt_samples: u64,
    /// The smallest RTT sample of the whole connection, window or not (RFC 9002 §5.2's
    /// min_rtt): the base against which a plan measures queueing delay.
    pub conn_rtt_min_ms: Option<f64>,
    /// The smallest sample inside the window (already inflated when a standing queue
    /// persists through the window).
    pub rtt_min_ms: Option<f64>,
    pub rtt_mean_ms: Option<f64>,
    /// Median and 95th percentile, to [`RTT_BIN_US`] (the bin's midpoint).
    pub rtt_p50_ms: Option<f64>,
    pub rtt_p95_ms: Option<f64>,
}

/// The running accumulator behind [`WindowSummary`]. Times are seconds since the
/// simulation start; `from < to` (an empty window gives an empty summary).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WindowStats {
    from: f64,
    to: f64,
    /// The last window reported and since when.
    last_cwnd: Option<(f64, u64)>,
    cwnd_area: f64,
    cwnd_span: f64,
    rtt_hist: BTreeMap<u64, u64>,
    rtt_n: u64,
    rtt_sum_ms: f64,
    rtt_min_ms: f64,
    conn_rtt_min_ms: f64,
}

impl WindowStats {
    /// An accumulator for the window `[from_s, to_s)`; `to_s` may be infinite (the
    /// run's end closes it, see [`WindowStats::summary`]).
    pub fn new(from_s: f64, to_s: f64) -> Self {
        WindowStats {
            from: from_s,
            to: to_s,
            rtt_min_ms: f64::INFINITY,
            conn_rtt_min_ms: f64::INFINITY,
            ..WindowStats::default()
        }
    }

    /// Adds the time the last reported window held, up to `t`, clipped to the window.
    fn integrate_to(&mut self, t: f64) {
        if let Some((t0, c)) = self.last_cwnd {
            let a = t0.max(self.from);
            let b = t.min(self.to);
            if b > a {
                self.cwnd_area += c as f64 * (b - a);
                self.cwnd_span += b - a;
            }
        }
    }

    /// The congestion window is `cwnd` bytes from `t` on (updates carry only changes).
    pub fn on_cwnd(&mut self, t: f64, cwnd: u64) {
        self.integrate_to(t);
        self.last_cwnd = Some((t, cwnd));
    }

    /// An RTT sample at `t`; counted when `t` is inside the window (and in the
    /// connection's minimum whenever it is).
    pub fn on_rtt(&mut self, t: f64, rtt_ms: f64) {
        if !(rtt_ms.is_finite() && rtt_ms >= 0.0) {
            return;
        }
        self.conn_rtt_min_ms = self.conn_rtt_min_ms.min(rtt_ms);
        if !(t >= self.from && t < self.to) {
            return;
        }
        self.rtt_n += 1;
        self.rtt_sum_ms += rtt_ms;
        self.rtt_min_ms = self.rtt_min_ms.min(rtt_ms);
        // Saturating: an absurd RTT lands in the last bin rather than wrapping.
        let bin = (rtt_ms * 1e3 / RTT_BIN_US) as u64;
        *self.rtt_hist.entry(bin).or_insert(0) += 1;
    }

    /// The q-quantile (0..=1) of the samples ([`quantile::histogram_quantile`], a
    /// sample counting as its bin's midpoint).
    fn quantile(&self, q: f64) -> Option<f64> {
        let bins = self
            .rtt_hist
            .iter()
            .map(|(&bin, &n)| ((bin as f64 + 0.5) * RTT_BIN_US / 1e3, n));
        Some(quantile::histogram_quantile(bins, q)).filter(|v| !v.is_nan())
    }

    /// The summary for a run that ended at `end_s` (the last window counts until then).
    pub fn summary(&self, end_s: f64) -> WindowSummary {
        let mut s = self.clone();
        s.integrate_to(end_s);
        let n = s.rtt_n;
        WindowSummary {
            cwnd_mean_bytes: (s.cwnd_span > 0.0).then(|| s.cwnd_area / s.cwnd_span),
            cwnd_span_s: s.cwnd_span,
            rtt_samples: n,
            conn_rtt_min_ms: s.conn_rtt_min_ms.is_finite().then_some(s.conn_rtt_min_ms),
            rtt_min_ms: (n > 0).then_some(s.rtt_min_ms),
            rtt_mean_ms: (n > 0).then(|| s.rtt_sum_ms / n as f64),
            rtt_p50_ms: s.quantile(0.5),
            rtt_p95_ms: s.quantile(0.95),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cwnd_mean_is_time_weighted_and_clipped() {
        let mut w = WindowStats::new(1.0, 4.0);
        w.on_cwnd(0.0, 1000); // held until 2.0: counts over [1, 2)
        w.on_cwnd(2.0, 4000); // held until 3.0
        w.on_cwnd(3.0, 2000); // held until the end (3.5)
        let s = w.summary(3.5);
        assert_eq!(s.cwnd_span_s, 2.5);
        let want = (1000.0 + 4000.0 + 2000.0 * 0.5) / 2.5;
        assert!((s.cwnd_mean_bytes.unwrap() - want).abs() < 1e-9);
        // A run past the window's end counts only up to it.
        let s = w.summary(10.0);
        assert_eq!(s.cwnd_span_s, 3.0);
        assert!((s.cwnd_mean_bytes.unwrap() - 7000.0 / 3.0).abs() < 1e-9);
    }

    #[test]
    fn no_window_reported_is_none() {
        let w = WindowStats::new(1.0, f64::INFINITY);
        let s = w.summary(5.0);
        assert_eq!(s.cwnd_mean_bytes, None);
        assert_eq!(s.rtt_p50_ms, None);
        assert_eq!(s.rtt_samples, 0);
        // A connection that started after the window ended has no window either.
        let mut w = WindowStats::new(0.0, 1.0);
        w.on_cwnd(2.0, 100);
        assert_eq!(w.summary(3.0).cwnd_mean_bytes, None);
    }

    #[test]
    fn rtt_statistics_inside_the_window() {
        let mut w = WindowStats::new(1.0, 2.0);
        w.on_rtt(0.5, 1.0); // before the window
        for (i, r) in [50.0, 51.0, 52.0, 53.0, 100.0].iter().enumerate() {
            w.on_rtt(1.0 + i as f64 * 0.1, *r);
        }
        w.on_rtt(2.0, 500.0); // at the (exclusive) end
        let s = w.summary(3.0);
        assert_eq!(s.rtt_samples, 5);
        assert_eq!(s.rtt_min_ms, Some(50.0));
        assert_eq!(s.conn_rtt_min_ms, Some(1.0));
        assert!((s.rtt_mean_ms.unwrap() - 61.2).abs() < 1e-9);
        // Median: the third sample, 52 ms, to the bin's midpoint (10 µs bins); p95
        // interpolates between the 4th and 5th: 53.005 + 0.8 * (100.005 - 53.005).
        assert!((s.rtt_p50_ms.unwrap() - 52.005).abs() < 1e-9);
        assert!((s.rtt_p95_ms.unwrap() - 90.605).abs() < 1e-9);
    }
}
