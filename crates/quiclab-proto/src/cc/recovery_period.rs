//! The recovery period every loss-based controller keeps (RFC 9002 §7.3.2, B.2-B.6):
//! one window reduction per period, entered on a congestion event and left when a packet
//! sent after its start is acknowledged.

use crate::time::Instant;

/// RFC 9002's `congestion_recovery_start_time` and whether the period still runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RecoveryPeriod {
    /// `None` = no recovery yet, or forgotten after persistent congestion.
    start: Option<Instant>,
    /// Cleared when a packet sent after `start` is acknowledged (reporting only).
    running: bool,
}

impl RecoveryPeriod {
    /// RFC 9002 B.4 InCongestionRecovery: the packet was sent at or before the start.
    pub(crate) fn covers(&self, sent_time: Instant) -> bool {
        self.start.is_some_and(|start| sent_time <= start)
    }

    /// A congestion event for a packet sent at `largest_lost_sent_time`: starts a new
    /// period at `now` and returns true when the window should be reduced (the packet
    /// was sent after the current period began, RFC 9002 §7.3.2).
    pub(crate) fn on_congestion_event(
        &mut self,
        now: Instant,
        largest_lost_sent_time: Instant,
    ) -> bool {
        if self.covers(largest_lost_sent_time) {
            return false;
        }
        self.start = Some(now);
        self.running = true;
        true
    }

    /// An acknowledged packet sent at `sent_time`; returns false for packets sent before
    /// the period began (RFC 9002 B.5: they change nothing). Otherwise the period, if
    /// any, has ended (§7.3.2).
    pub(crate) fn on_ack(&mut self, sent_time: Instant) -> bool {
        if self.covers(sent_time) {
            return false;
        }
        self.running = false;
        true
    }

    /// Persistent congestion (RFC 9002 §7.6.2, B.8): forget the period, so the next loss
    /// reduces again.
    pub(crate) fn reset(&mut self) {
        *self = RecoveryPeriod::default();
    }

    pub(crate) fn is_running(&self) -> bool {
        self.running
    }
}

#[cfg(test)]
mod tests {
    use super::RecoveryPeriod;
    use crate::time::Instant;

    #[test]
    fn one_reduction_per_period() {
        let ms = Instant::from_millis;
        let mut r = RecoveryPeriod::default();
        assert!(!r.covers(ms(0)) && !r.is_running());
        // A loss starts a period at 100 ms: reduce.
        assert!(r.on_congestion_event(ms(100), ms(50)));
        assert!(r.is_running());
        // Another loss of a packet sent before the start: no second reduction.
        assert!(!r.on_congestion_event(ms(120), ms(90)));
        // An ACK of a packet sent before the start changes nothing; one sent after ends it.
        assert!(!r.on_ack(ms(100)) && r.is_running());
        assert!(r.on_ack(ms(101)) && !r.is_running());
        // A loss of a packet sent after the start: a new period.
        assert!(r.on_congestion_event(ms(200), ms(150)));
        r.reset();
        assert!(!r.is_running() && !r.covers(ms(0)));
    }
}
