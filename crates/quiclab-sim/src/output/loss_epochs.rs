//! Loss epochs of one QUIC sender: how many packets its loss detection declares lost
//! within one round trip of each other (seed 003, Langley et al. SIGCOMM '17, §7.3 and
//! Fig. 13: "the number of packets lost during RTT-long loss epochs", the measure
//! behind "an FEC scheme that recovers from a single packet loss" helping in under
//! 30% of epochs).
//!
//! Definition used here (the seed gives no more detail): a loss epoch opens when the
//! sender declares a packet lost (RFC 9002 §6.1, `Event::PacketLost`, any packet number
//! space) while no epoch is open, and lasts one smoothed RTT from that moment (the
//! sender's `smoothed_rtt` at the time, RFC 9002 §5.3; before any sample, the initial
//! RTT of RFC 9002 §6.2.2, 333 ms). Every packet declared lost before the epoch ends
//! counts in it; the next loss after it opens a new epoch. Grouping is by the time
//! losses are declared, not by the time the packets were sent: packets lost in one
//! flight are declared together or within about one RTT of each other (packet and
//! time thresholds, RFC 9002 §6.1.1-6.1.2), so this keeps the sender's memory constant.
//!
//! Collected only when the scenario asks (`measure.loss_epochs = true`) and only for
//! QUIC flows, so results of every other run stay byte-identical.

use serde::Serialize;
use std::time::Duration;

/// Epoch sizes counted separately: sizes `1..SIZE_BUCKETS`, and `SIZE_BUCKETS` or more
/// losses together in the last bucket (bounded memory whatever the path does).
pub const SIZE_BUCKETS: usize = 16;

/// RFC 9002 §6.2.2: the RTT assumed before the first sample.
const INITIAL_RTT: Duration = Duration::from_millis(333);

/// One sender's loss epochs. Feed it with [`LossEpochs::on_smoothed_rtt`] and
/// [`LossEpochs::on_lost`] in time order; read the counts after the run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LossEpochs {
    /// Loss epochs (closed or still open at the end of the run).
    pub epochs: u64,
    /// Packets declared lost, over all epochs.
    pub lost: u64,
    /// Epochs with exactly one lost packet: those a one-packet FEC could repair.
    pub single: u64,
    /// The largest number of losses in one epoch.
    pub max: u64,
    /// `sizes[k]`: epochs with `k + 1` losses; the last entry counts epochs with
    /// [`SIZE_BUCKETS`] or more.
    pub sizes: [u64; SIZE_BUCKETS],
    /// The open epoch: its end and its losses so far (not part of the results).
    #[serde(skip)]
    open: Option<(Duration, u64)>,
    /// The sender's latest smoothed RTT.
    #[serde(skip)]
    srtt: Option<Duration>,
}

impl Default for LossEpochs {
    fn default() -> Self {
        LossEpochs {
            epochs: 0,
            lost: 0,
            single: 0,
            max: 0,
            sizes: [0; SIZE_BUCKETS],
            open: None,
            srtt: None,
        }
    }
}

impl LossEpochs {
    /// The sender's smoothed RTT changed (a `metrics_updated` event carrying it).
    pub fn on_smoothed_rtt(&mut self, srtt: Duration) {
        self.srtt = Some(srtt);
    }

    /// The sender declared one packet lost at `now` (time since the run's start).
    pub fn on_lost(&mut self, now: Duration) {
        self.lost += 1;
        match &mut self.open {
            Some((end, n)) if now < *end => {
                *n += 1;
                let size = *n;
                self.resize_open(size);
            }
            _ => {
                let end = now + self.srtt.unwrap_or(INITIAL_RTT);
                self.open = Some((end, 1));
                self.epochs += 1;
                self.single += 1;
                self.sizes[0] += 1;
                self.max = self.max.max(1);
            }
        }
    }

    /// The open epoch grew from `size - 1` to `size` losses: move it between the
    /// counts (the counts always describe every epoch so far, the open one included).
    fn resize_open(&mut self, size: u64) {
        let bucket = |s: u64| (s.min(SIZE_BUCKETS as u64) - 1) as usize;
        self.sizes[bucket(size - 1)] -= 1;
        self.sizes[bucket(size)] += 1;
        if size == 2 {
            self.single -= 1;
        }
        self.max = self.max.max(size);
    }

    /// The share of epochs with exactly one loss; `None` without epochs.
    pub fn single_share(&self) -> Option<f64> {
        (self.epochs > 0).then(|| self.single as f64 / self.epochs as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    #[test]
    fn losses_within_one_rtt_form_one_epoch() {
        let mut e = LossEpochs::default();
        e.on_smoothed_rtt(ms(100));
        // Epoch 1: 1000 ms, 1050 ms, 1099 ms (ends at 1100 ms).
        for t in [1000, 1050, 1099] {
            e.on_lost(ms(t));
        }
        // Epoch 2: exactly at the end of the first opens a new one; a single loss.
        e.on_lost(ms(1100));
        // The RTT grows: epoch 3 lasts 300 ms.
        e.on_smoothed_rtt(ms(300));
        e.on_lost(ms(2000));
        e.on_lost(ms(2299));
        assert_eq!(e.epochs, 3);
        assert_eq!(e.lost, 6);
        assert_eq!(e.single, 1);
        assert_eq!(e.max, 3);
        assert_eq!(e.sizes[0..4], [1, 1, 1, 0]);
        assert_eq!(e.sizes.iter().sum::<u64>(), e.epochs);
        assert_eq!(e.single_share(), Some(1.0 / 3.0));
    }

    #[test]
    fn before_any_sample_the_initial_rtt_applies_and_big_epochs_share_a_bucket() {
        let mut e = LossEpochs::default();
        assert_eq!(e.single_share(), None);
        e.on_lost(ms(0));
        e.on_lost(ms(332));
        e.on_lost(ms(333));
        assert_eq!((e.epochs, e.single, e.max), (2, 1, 2));
        // 40 losses at once: one epoch in the last bucket.
        e.on_smoothed_rtt(ms(50));
        for _ in 0..40 {
            e.on_lost(ms(5000));
        }
        assert_eq!(e.epochs, 3);
        assert_eq!(e.max, 40);
        assert_eq!(e.sizes[SIZE_BUCKETS - 1], 1);
        assert_eq!(e.sizes.iter().sum::<u64>(), 3);
        assert_eq!(e.lost, 43);
    }
}
