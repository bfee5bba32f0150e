//! What one acknowledgement (or one loss detection by timer) tells the congestion
//! controller, in one value: the controller takes it in one call,
//! [`CongestionController::on_ack`](super::CongestionController::on_ack), and answers
//! with what the caller must act on ([`AckResponse`]).
//!
//! The caller (QUIC's `path_recovery::Recovery`, quiclab-tcp's connection) first does
//! its own share of the ACK (RTT sample, delivery-rate bookkeeping, loss detection,
//! the rate sample), then hands the controller the result; the controller walks the
//! packets itself, in the order they are listed.

use crate::events::CongestionState;
use crate::recovery::{LostPacket, RateSample, RttEstimator};
use crate::time::Instant;

/// One newly acknowledged in-flight packet, as a controller reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckedPacket {
    /// When it was sent.
    pub time_sent: Instant,
    /// Its size in bytes.
    pub bytes: u64,
    /// It was a PMTU probe: its acknowledgement raised the path's maximum datagram
    /// size to this (RFC 9002 §7.2), in force before the packet's own window growth.
    pub max_datagram_size: Option<u64>,
}

/// In-flight packets were declared lost (RFC 9002 §7.3.2, B.8 OnPacketsLost).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CongestionEvent {
    /// The send time of the newest lost packet (one reduction per recovery period).
    pub largest_lost_sent_time: Instant,
    /// The losses show persistent congestion (RFC 9002 §7.6).
    pub persistent: bool,
    /// Bytes of the lost packets.
    pub lost_bytes: u64,
}

/// One ACK's effect on the path, for the controller. A loss detection by timer is a
/// summary without acknowledged packets and without a rate sample.
#[derive(Clone, Copy, Debug)]
pub struct AckSummary<'a> {
    pub now: Instant,
    /// Every packet of the last congestion episode was acknowledged after being
    /// declared lost (RFC 9438 §4.9.2): the reduction may be undone.
    pub spurious_congestion: bool,
    /// The newly acknowledged in-flight packets, in the order the caller removed them
    /// (ascending packet number in QUIC).
    pub acked: &'a [AckedPacket],
    /// The sender was not using its window (RFC 9002 §7.8): the window must not grow.
    pub app_limited: bool,
    /// The RTT estimator after this ACK's sample.
    pub rtt: &'a RttEstimator,
    /// The in-flight packets declared lost, oldest first, as the delivery-rate
    /// estimator recorded them (draft-ietf-ccwg-bbr §5.5.10.2 HandleLostPacket).
    pub lost: &'a [LostPacket],
    /// The congestion event of those losses, when there were any.
    pub congestion: Option<CongestionEvent>,
    /// The ACK's ECN-CE count grew (RFC 9002 §7.1, B.7 ProcessECN): a congestion
    /// event for a packet sent at this time (the largest newly acknowledged one), one
    /// reduction per recovery period like a loss, nothing to retransmit. `None`
    /// without ECN.
    pub ce_event: Option<Instant>,
    /// Packets newly reported CE-marked by this ACK (QUIC: the growth of the ACK's
    /// ECN-CE count, RFC 9000 §13.4.2; TCP: AccECN's CE packet counter, RFC 9768, or
    /// one per ECE-flagged ACK under classic ECN, RFC 3168). 0 without ECN. Scalable
    /// controllers (Prague) estimate their fraction of marked packets from it; classic
    /// ones need only `ce_event`.
    pub newly_ce_marked: u64,
    /// The ACK's delivery-rate sample (draft-ietf-ccwg-bbr §4.1.2.3), if it made one.
    pub rate_sample: Option<&'a RateSample>,
}

impl<'a> AckSummary<'a> {
    /// A summary of losses declared without an ACK (RFC 9002 A.9: the loss detection
    /// timer fired; or TCP's RTO and reordering timers).
    pub fn losses(
        now: Instant,
        rtt: &'a RttEstimator,
        lost: &'a [LostPacket],
        congestion: Option<CongestionEvent>,
    ) -> Self {
        AckSummary {
            now,
            spurious_congestion: false,
            acked: &[],
            app_limited: false,
            rtt,
            lost,
            congestion,
            ce_event: None,
            newly_ce_marked: 0,
            rate_sample: None,
        }
    }
}

/// What the controller reports back from one [`AckSummary`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AckResponse {
    /// The controller was in slow start when the summary reached it (after a spurious
    /// episode's undo, before the acknowledged packets), for the caller's logs.
    pub was_slow_start: bool,
    /// The controller was in a recovery period when the losses reached it (after the
    /// acknowledged packets): when it was not, they begin a new congestion episode
    /// (RFC 9002 §7.3.2), which the spurious-loss detector tracks.
    pub in_recovery_at_loss: bool,
    /// The caller should mark the connection application-limited now (BBR's ProbeRTT
    /// calls MarkConnectionAppLimited, draft-ietf-ccwg-bbr §5.3.4.4). Only after a
    /// rate sample.
    pub mark_app_limited: bool,
    /// The controller's model state transitions, oldest first (BBR's state machine),
    /// drained after the rate sample.
    pub state_changes: Vec<CongestionState>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::{CongestionController, NewReno, NewRenoConfig};
    use std::time::Duration;

    const MDS: u64 = 1200;

    fn ms(n: u64) -> Instant {
        Instant::from_millis(n)
    }

    fn acked(sent: u64, max_datagram_size: Option<u64>) -> AckedPacket {
        AckedPacket {
            time_sent: ms(sent),
            bytes: MDS,
            max_datagram_size,
        }
    }

    fn summary<'a>(
        now: u64,
        rtt: &'a RttEstimator,
        acked: &'a [AckedPacket],
        congestion: Option<CongestionEvent>,
    ) -> AckSummary<'a> {
        AckSummary {
            acked,
            congestion,
            ..AckSummary::losses(ms(now), rtt, &[], None)
        }
    }

    /// NewReno in congestion avoidance (after a loss at 10 ms, out of recovery).
    fn avoiding() -> NewReno {
        let mut cc = NewReno::new(NewRenoConfig::default(), MDS);
        cc.on_congestion_event(ms(10), ms(5), false, MDS);
        assert!(!cc.in_slow_start());
        cc
    }

    #[test]
    fn the_summary_walks_packets_in_order_with_the_probe_size_before_its_growth() {
        let rtt = RttEstimator::new(Duration::from_millis(100));
        let packets = [acked(20, None), acked(21, Some(1500)), acked(22, None)];
        let mut one_call = avoiding();
        let response = one_call.on_ack(&summary(200, &rtt, &packets, None));
        // The same steps one by one, the new datagram size before the probe's growth
        // (RFC 9002 §7.3.3: the increment is counted in max_datagram_size).
        let mut steps = avoiding();
        steps.on_packet_acked(ms(200), ms(20), MDS, false, &rtt);
        steps.on_max_datagram_size(1500);
        steps.on_packet_acked(ms(200), ms(21), MDS, false, &rtt);
        steps.on_packet_acked(ms(200), ms(22), MDS, false, &rtt);
        assert_eq!(one_call.window(), steps.window());
        let mut late = avoiding();
        for p in &packets {
            late.on_packet_acked(ms(200), p.time_sent, MDS, false, &rtt);
        }
        late.on_max_datagram_size(1500);
        assert_ne!(one_call.window(), late.window(), "the order shows");
        assert!(!response.was_slow_start && !response.in_recovery_at_loss);
        assert!(!response.mark_app_limited && response.state_changes.is_empty());
    }

    #[test]
    fn the_response_tells_slow_start_and_the_recovery_period_at_the_losses() {
        let rtt = RttEstimator::new(Duration::from_millis(100));
        let loss = CongestionEvent {
            largest_lost_sent_time: ms(50),
            persistent: false,
            lost_bytes: MDS,
        };
        let mut cc = NewReno::new(NewRenoConfig::default(), MDS);
        let first = cc.on_ack(&summary(100, &rtt, &[acked(0, None)], Some(loss)));
        assert!(first.was_slow_start && !first.in_recovery_at_loss);
        assert!(
            cc.in_recovery(),
            "the loss began a recovery period at 100 ms"
        );
        // A packet sent before the period began: still in recovery at the next loss.
        let again = cc.on_ack(&summary(150, &rtt, &[acked(60, None)], Some(loss)));
        assert!(!again.was_slow_start && again.in_recovery_at_loss);
        // One sent after it ends the period before the losses reach the controller
        // (RFC 9002 §7.3.2): those begin a new episode.
        let later = CongestionEvent {
            largest_lost_sent_time: ms(120),
            ..loss
        };
        let next = cc.on_ack(&summary(300, &rtt, &[acked(110, None)], Some(later)));
        assert!(!next.in_recovery_at_loss);
    }
}
