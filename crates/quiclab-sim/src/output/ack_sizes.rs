//! The ACK frames one QUIC endpoint sent, over time (`measure.ack_sizes = true`):
//! seed 001 says that "after loss, size of QUIC ACKs can grow unlimited" and that
//! "varint encoding means ACKs grow for longer connections". An ACK frame's size is
//! its encoded bytes (RFC 9000 §19.3: type, Largest Acknowledged, ACK Delay, range
//! count, first range, then a Gap and a length per further range, all varints, and the
//! ECN counts when present); its ranges are what loss adds to it.
//!
//! Binned like the goodput series (`measure.interval_s`): per bin the frames sent, their
//! bytes and their ranges, summed, so a plan's windowed metrics
//! (`flows[0].client.ack_sizes.bytes_series@a:b` over `...frames_series@a:b`) give the
//! mean frame size over any window. Collected only when asked, and only for QUIC
//! flows: results without it have no `ack_sizes` entry.

use serde::Serialize;

/// A side's ACK frames: binned sums and the largest single frame.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct AckSizes {
    /// ACK frames sent in all.
    pub frames: u64,
    /// The largest ACK frame sent, bytes, and the most ranges one frame reported.
    pub max_bytes: u64,
    pub max_ranges: u64,
    /// (bin start s, ACK frames sent in the bin).
    pub frames_series: Vec<(f64, f64)>,
    /// (bin start s, their bytes).
    pub bytes_series: Vec<(f64, f64)>,
    /// (bin start s, their ranges, summed).
    pub ranges_series: Vec<(f64, f64)>,
    /// The bin width, seconds.
    #[serde(skip)]
    interval_s: f64,
}

impl AckSizes {
    /// Bins of `interval_s` seconds (the scenario checks it is positive).
    pub fn new(interval_s: f64) -> Self {
        AckSizes {
            interval_s,
            ..AckSizes::default()
        }
    }

    /// An ACK frame of `bytes` reporting `ranges` ranges was sent at `t_s`.
    pub fn on_ack_sent(&mut self, t_s: f64, bytes: usize, ranges: usize) {
        let (bytes, ranges) = (bytes as u64, ranges as u64);
        self.frames += 1;
        self.max_bytes = self.max_bytes.max(bytes);
        self.max_ranges = self.max_ranges.max(ranges);
        let bin = if self.interval_s > 0.0 {
            (t_s / self.interval_s).floor() * self.interval_s
        } else {
            0.0
        };
        for (series, v) in [
            (&mut self.frames_series, 1.0),
            (&mut self.bytes_series, bytes as f64),
            (&mut self.ranges_series, ranges as f64),
        ] {
            match series.last_mut() {
                Some((start, sum)) if *start == bin => *sum += v,
                _ => series.push((bin, v)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_summed_per_bin() {
        let mut a = AckSizes::new(0.5);
        a.on_ack_sent(0.1, 7, 1);
        a.on_ack_sent(0.4, 11, 3);
        a.on_ack_sent(1.2, 9, 2);
        assert_eq!(a.frames, 3);
        assert_eq!((a.max_bytes, a.max_ranges), (11, 3));
        assert_eq!(a.frames_series, vec![(0.0, 2.0), (1.0, 1.0)]);
        assert_eq!(a.bytes_series, vec![(0.0, 18.0), (1.0, 9.0)]);
        assert_eq!(a.ranges_series, vec![(0.0, 4.0), (1.0, 2.0)]);
        // The lab's windowed mean of bytes over frames is the mean frame size.
        let mean = |s: &[(f64, f64)]| crate::results::window_mean(s, 0.5, 0.0, 1.5).unwrap();
        assert_eq!(mean(&a.bytes_series) / mean(&a.frames_series), 9.0);
    }
}
