//! Delivery rate estimation (draft-ietf-ccwg-bbr §4.1, "Delivery Rate Samples"): the
//! connection snapshots its delivery counters into every sent packet, and on each ACK
//! turns the newest acknowledged packet's snapshot into one rate sample for the
//! congestion controller. Controller-independent: it runs for every connection, and only
//! model-based controllers (BBR) read its output.
//!
//! Units: bytes, and the core's nanosecond [`Instant`]s. The rate is kept as the exact
//! pair (delivered bytes, interval) and converted to bytes per second only on request,
//! so that no rounding enters the model before the controller decides how to use it.

use crate::time::Instant;
use std::time::Duration;

/// Per-packet state (draft §4.1.2.1.2 "Per-packet (P) state"), taken when the packet is
/// sent and read back when it is acknowledged or lost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeliverySnapshot {
    /// P.delivered: C.delivered when the packet was sent.
    pub delivered: u64,
    /// P.delivered_time: C.delivered_time when the packet was sent.
    pub delivered_time: Instant,
    /// P.first_send_time: C.first_send_time when the packet was sent.
    pub first_send_time: Instant,
    /// P.is_app_limited: the connection was application-limited when it was sent.
    pub is_app_limited: bool,
    /// P.tx_in_flight: bytes in flight just after the packet was sent (includes it).
    pub tx_in_flight: u64,
    /// P.lost: C.lost when the packet was sent.
    pub lost: u64,
}

/// A packet declared lost, as the controller sees it (draft §5.5.10.2 HandleLostPacket).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LostPacket {
    /// Bytes of the packet.
    pub size: u64,
    /// Its send-time snapshot.
    pub snapshot: DeliverySnapshot,
    /// C.lost after this packet was counted: `lost - snapshot.lost` is RS.lost, the data
    /// lost between its transmission and now.
    pub lost: u64,
}

/// One ACK's rate sample (draft §4.1.2.1.3 "Rate Sample (rs) Output", plus the
/// per-ACK fields of §2.4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateSample {
    /// RS.delivered: bytes delivered over the sampling interval.
    pub delivered: u64,
    /// RS.interval: the sampling interval (max of send and ACK elapsed); zero when
    /// there is no valid rate (then `delivery_rate` is `None`).
    pub interval: Duration,
    /// RS.prior_delivered: P.delivered of the newest acknowledged packet.
    pub prior_delivered: u64,
    /// RS.is_app_limited: P.is_app_limited of the newest acknowledged packet.
    pub is_app_limited: bool,
    /// RS.tx_in_flight: bytes in flight when the newest acknowledged packet was sent.
    pub tx_in_flight: u64,
    /// RS.lost: bytes declared lost between that packet's transmission and now.
    pub lost: u64,
    /// RS.newly_acked: bytes newly acknowledged by this ACK.
    pub newly_acked: u64,
    /// RS.newly_lost: bytes newly declared lost while processing this ACK.
    pub newly_lost: u64,
    /// RS.rtt: RTT of the newest acknowledged packet (send to ACK, no ack-delay
    /// correction, §4.2: the minimum among the packets this ACK covers).
    pub rtt: Option<Duration>,
    /// C.delivered after this ACK.
    pub total_delivered: u64,
    /// C.inflight after this ACK (and its losses).
    pub bytes_in_flight: u64,
    /// Whether `interval` is long enough to give a rate (§4.1.2.3: at least min_rtt).
    pub valid: bool,
}

impl RateSample {
    /// RS.delivery_rate in bytes per second; `None` when the ACK gave no valid sample.
    pub fn delivery_rate(&self) -> Option<u64> {
        if !self.valid || self.interval.is_zero() {
            return None;
        }
        let r = u128::from(self.delivered) * 1_000_000_000 / self.interval.as_nanos();
        Some(u64::try_from(r).unwrap_or(u64::MAX))
    }
}

/// The connection's delivery counters (draft §4.1.2.1.1 "Per-connection (C) state") and
/// the rate sample being built for the current ACK.
///
/// Call order per ACK: [`on_acked`](Self::on_acked) for each newly acknowledged in-flight
/// packet, [`on_lost`](Self::on_lost) for each packet declared lost, then
/// [`generate`](Self::generate) once. Per send: [`on_sent`](Self::on_sent).
#[derive(Clone, Debug, Default)]
pub struct DeliveryRateEstimator {
    /// C.delivered.
    delivered: u64,
    /// C.delivered_time.
    delivered_time: Instant,
    /// C.first_send_time.
    first_send_time: Instant,
    /// C.app_limited: the delivered count that ends the application-limited bubble;
    /// 0 = not application-limited.
    app_limited: u64,
    /// C.lost.
    lost: u64,
    /// The rate sample under construction: (newest packet's send time, pn, snapshot).
    newest: Option<(Instant, u64, DeliverySnapshot)>,
    newly_acked: u64,
    newly_lost: u64,
    rtt: Option<Duration>,
}

impl DeliveryRateEstimator {
    pub fn new() -> Self {
        Self::default()
    }

    /// C.delivered.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// Whether the connection is marked application-limited (C.app_limited != 0).
    pub fn is_app_limited(&self) -> bool {
        self.app_limited != 0
    }

    /// Draft §4.1.2.2 OnPacketSent: the snapshot to store with a packet sent at `now`;
    /// `bytes_in_flight` includes the packet.
    pub fn on_sent(&mut self, now: Instant, size: u64, bytes_in_flight: u64) -> DeliverySnapshot {
        if bytes_in_flight <= size {
            // Nothing else in flight: the interval starts now.
            self.first_send_time = now;
            self.delivered_time = now;
        }
        DeliverySnapshot {
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_send_time: self.first_send_time,
            is_app_limited: self.app_limited != 0,
            tx_in_flight: bytes_in_flight,
            lost: self.lost,
        }
    }

    /// Draft §4.1.2.4 MarkConnectionAppLimited: the sender has run out of data (or the
    /// controller wants the next samples ignored, as ProbeRTT does).
    pub fn mark_app_limited(&mut self, bytes_in_flight: u64) {
        self.app_limited = self.delivered.saturating_add(bytes_in_flight).max(1);
    }

    /// Draft §4.1.2.3 UpdateRateSample for one newly acknowledged in-flight packet.
    pub fn on_acked(
        &mut self,
        now: Instant,
        pn: u64,
        sent: Instant,
        size: u64,
        p: &DeliverySnapshot,
    ) {
        self.delivered = self.delivered.saturating_add(size);
        self.delivered_time = now;
        self.newly_acked = self.newly_acked.saturating_add(size);
        // IsNewestPacket: the most recently sent packet gives the sample.
        let newer = self
            .newest
            .is_none_or(|(t, n, _)| sent > t || (sent == t && pn > n));
        if newer {
            self.newest = Some((sent, pn, *p));
            self.first_send_time = sent;
            self.rtt = Some(now.saturating_duration_since(sent));
        }
    }

    /// A packet declared lost: counts towards C.lost and RS.newly_lost; returns what the
    /// controller's per-loss step needs.
    pub fn on_lost(&mut self, size: u64, snapshot: &DeliverySnapshot) -> LostPacket {
        self.lost = self.lost.saturating_add(size);
        self.newly_lost = self.newly_lost.saturating_add(size);
        LostPacket {
            size,
            snapshot: *snapshot,
            lost: self.lost,
        }
    }

    /// Draft §4.1.2.3 GenerateRateSample, at the end of an ACK's processing; resets the
    /// per-ACK state. `min_rtt` is the connection's minimum RTT (zero before a sample).
    /// `None` when the ACK acknowledged no in-flight packet.
    pub fn generate(&mut self, min_rtt: Duration, bytes_in_flight: u64) -> Option<RateSample> {
        // Clear the app-limited mark once the bubble is acknowledged.
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        let newly_acked = std::mem::take(&mut self.newly_acked);
        let newly_lost = std::mem::take(&mut self.newly_lost);
        let rtt = self.rtt.take();
        let (sent, _, p) = self.newest.take()?;
        let send_elapsed = sent.saturating_duration_since(p.first_send_time);
        let ack_elapsed = self
            .delivered_time
            .saturating_duration_since(p.delivered_time);
        let interval = send_elapsed.max(ack_elapsed);
        Some(RateSample {
            delivered: self.delivered - p.delivered,
            interval,
            prior_delivered: p.delivered,
            is_app_limited: p.is_app_limited,
            tx_in_flight: p.tx_in_flight,
            lost: self.lost - p.lost,
            newly_acked,
            newly_lost,
            rtt,
            total_delivered: self.delivered,
            bytes_in_flight,
            // "Normally we expect interval >= MinRTT": shorter intervals give no sample.
            valid: !interval.is_zero() && interval >= min_rtt,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Instant {
        Instant::from_millis(v)
    }

    #[test]
    fn one_flight_gives_the_send_and_ack_rate() {
        let mut d = DeliveryRateEstimator::new();
        // Ten 1000-byte packets, one per ms from t = 0, acknowledged one per ms from 100.
        let snaps: Vec<_> = (0..10)
            .map(|i| d.on_sent(ms(i), 1000, 1000 * (i + 1)))
            .collect();
        assert_eq!(snaps[0].delivered_time, ms(0));
        assert_eq!(snaps[9].first_send_time, ms(0));
        assert_eq!(snaps[9].tx_in_flight, 10_000);
        let mut last = None;
        for (i, s) in snaps.iter().enumerate() {
            let i = i as u64;
            d.on_acked(ms(100 + i), i, ms(i), 1000, s);
            last = d.generate(Duration::from_millis(50), 9_000 - 1000 * i.min(9));
        }
        let rs = last.unwrap();
        // The last packet: sent 9 ms after the first, acknowledged at 109 ms; its
        // snapshot's delivered_time is 0, so ack_elapsed is 109 ms and 10 kB arrived.
        assert_eq!(rs.delivered, 10_000);
        assert_eq!(rs.interval, Duration::from_millis(109));
        assert_eq!(rs.delivery_rate(), Some(10_000 * 1000 / 109));
        assert_eq!(rs.rtt, Some(Duration::from_millis(100)));
        assert_eq!(rs.newly_acked, 1000);
        assert!(!rs.is_app_limited);
        assert_eq!(d.delivered(), 10_000);
    }

    #[test]
    fn short_intervals_and_app_limited_bubbles() {
        let mut d = DeliveryRateEstimator::new();
        let s = d.on_sent(ms(0), 1000, 1000);
        d.on_acked(ms(10), 0, ms(0), 1000, &s);
        // 10 ms interval below a 20 ms min_rtt: no rate.
        let rs = d.generate(Duration::from_millis(20), 0).unwrap();
        assert_eq!(rs.delivery_rate(), None);
        // Nothing acknowledged: no sample.
        assert!(d.generate(Duration::ZERO, 0).is_none());
        // Marked app-limited with 2000 bytes in flight: packets sent now carry the
        // mark until delivered passes 1000 + 2000.
        d.mark_app_limited(2000);
        assert!(d.is_app_limited());
        let a = d.on_sent(ms(20), 1000, 1000);
        let b = d.on_sent(ms(21), 1000, 2000);
        assert!(a.is_app_limited && b.is_app_limited);
        d.on_acked(ms(40), 1, ms(20), 1000, &a);
        assert!(d.generate(Duration::ZERO, 1000).unwrap().is_app_limited);
        assert!(d.is_app_limited());
        d.on_acked(ms(41), 2, ms(21), 1000, &b);
        let lost = d.on_lost(500, &b);
        assert_eq!((lost.lost, lost.lost - lost.snapshot.lost), (500, 500));
        let rs = d.generate(Duration::ZERO, 0).unwrap();
        assert_eq!((rs.newly_lost, rs.lost), (500, 500));
        // delivered 3000 is not above 3000 yet: still marked.
        assert!(d.is_app_limited());
        let c = d.on_sent(ms(50), 1000, 1000);
        d.on_acked(ms(70), 3, ms(50), 1000, &c);
        d.generate(Duration::ZERO, 0);
        assert!(!d.is_app_limited());
    }
}
