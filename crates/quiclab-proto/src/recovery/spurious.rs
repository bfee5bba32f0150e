//! Spurious loss detection for QUIC (RFC 9438 §4.9.2: "a QUIC implementation can easily
//! determine a spurious loss if a QUIC packet is acknowledged after it has been marked
//! as lost"): the packets declared lost in the current congestion episode are
//! remembered, and when ACKs have covered every one of them, the episode was spurious.

use std::collections::BTreeSet;
use std::ops::RangeInclusive;

/// Lost packets remembered per episode at most; a bigger episode is never declared
/// spurious (memory stays bounded whatever the peer does).
const MAX_TRACKED: usize = 4096;

/// The lost packet numbers (application data space) of the current congestion episode.
///
/// Call order: [`on_lost`](Self::on_lost) for each packet declared lost, with
/// `new_episode` true for the first loss of an episode (the controller was not in
/// recovery); [`on_ack`](Self::on_ack) with each ACK frame's ranges, which returns true
/// once, when the episode turns out spurious.
#[derive(Clone, Debug, Default)]
pub struct SpuriousLossDetector {
    lost: BTreeSet<u64>,
    /// The episode can still be declared spurious (not overflowed, not yet reported).
    open: bool,
}

impl SpuriousLossDetector {
    pub fn new() -> Self {
        Self::default()
    }

    /// Packet `pn` was declared lost.
    pub fn on_lost(&mut self, pn: u64, new_episode: bool) {
        if new_episode {
            self.lost.clear();
            self.open = true;
        }
        if !self.open {
            return;
        }
        if self.lost.len() >= MAX_TRACKED {
            self.lost.clear();
            self.open = false;
            return;
        }
        self.lost.insert(pn);
    }

    /// Persistent congestion or anything else that must not be undone: the episode
    /// stays as it is.
    pub fn close(&mut self) {
        self.lost.clear();
        self.open = false;
    }

    /// An ACK frame's ranges; true when they acknowledged the last outstanding lost
    /// packet of the episode (reported once per episode).
    pub fn on_ack(&mut self, ranges: &[RangeInclusive<u64>]) -> bool {
        if !self.open || self.lost.is_empty() {
            return false;
        }
        for r in ranges {
            if r.start() > r.end() {
                continue;
            }
            let acked: Vec<u64> = self.lost.range(r.clone()).copied().collect();
            for pn in acked {
                self.lost.remove(&pn);
            }
        }
        if self.lost.is_empty() {
            self.open = false;
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::SpuriousLossDetector;

    #[test]
    fn all_lost_packets_acknowledged_later_is_spurious() {
        let mut d = SpuriousLossDetector::new();
        d.on_lost(5, true);
        d.on_lost(7, false);
        assert!(!d.on_ack(&[5..=5]));
        assert!(d.on_ack(&[10..=12, 7..=7]));
        // Reported once.
        assert!(!d.on_ack(&[7..=7]));
        // A new episode forgets the old one; one real loss keeps it standing.
        d.on_lost(20, true);
        d.on_lost(21, false);
        assert!(!d.on_ack(&[21..=30]));
        d.close();
        assert!(!d.on_ack(&[20..=20]));
    }

    #[test]
    fn bounded() {
        let mut d = SpuriousLossDetector::new();
        for pn in 0..5000 {
            d.on_lost(pn, pn == 0);
        }
        assert!(!d.on_ack(&[0..=5000]));
        assert!(d.lost.is_empty());
    }
}
