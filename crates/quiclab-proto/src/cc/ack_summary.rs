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

/// In-flight packets were declared lost (RFC 9002 §7.3.2, A.11 OnPacketsLost).
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
