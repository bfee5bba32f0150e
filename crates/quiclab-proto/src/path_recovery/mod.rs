//! One path's loss recovery and congestion control (RFC 9002): the sent packets of its
//! three packet number spaces, the RTT estimator, the probe timeout backoff, the
//! delivery-rate and spurious-loss estimators and the congestion controller.
//!
//! Layering: the estimators live in [`crate::recovery`], the controllers in
//! [`crate::cc`] (which reads those estimators); this module composes both per path and
//! knows nothing of the connection. It is generic over `T`, what the connection
//! remembers per sent packet (the frames to retransmit or retire).
// Peer values pass through here: arithmetic is checked, saturating or wrapping
// by the rule in CONTRIBUTING.md ("Arithmetic on wire values").
#![deny(clippy::arithmetic_side_effects)]

mod ack;
mod loss;
mod pto;

pub(crate) use ack::{AckInput, AckOutcome};
pub(crate) use loss::{LossOutcome, MtuProbe};

use crate::cc::CongestionController;
use crate::recovery::{
    DeliveryRateEstimator, RttEstimator, SentPackets, SpaceId, SpuriousLossDetector,
};
use crate::time::Instant;
use std::time::Duration;

/// A path's recovery state. Fields are the connection's to read and drive until the
/// RFC 9002 appendix's procedures have moved here as methods.
pub(crate) struct Recovery<T> {
    /// Sent packets per space, indexed by [`SpaceId`].
    sent: [SentPackets<T>; 3],
    pub rtt: RttEstimator,
    pub cc: Box<dyn CongestionController>,
    /// Consecutive probe timeouts without an acknowledgement (RFC 9002 §6.2.1 backoff).
    pub pto_count: u32,
    /// When the first RTT sample was taken (RFC 9002 §7.6.2: persistent congestion
    /// counts only packets sent after it).
    pub first_rtt_sample_time: Option<Instant>,
    /// The sender ran out of data with room left in the window (RFC 9002 §7.8).
    pub app_limited: bool,
    /// Delivery-rate sampling for the controller (draft-ietf-ccwg-bbr §4.1).
    pub delivery: DeliveryRateEstimator,
    /// Lost 1-RTT packets acknowledged later (RFC 9438 §4.9.2), for controllers' undo.
    pub spurious: SpuriousLossDetector,
}

impl<T> Recovery<T> {
    /// Fresh state: nothing sent, the RTT at `initial_rtt` (RFC 9002 §6.2.2), controller `cc`.
    pub fn new(initial_rtt: Duration, cc: Box<dyn CongestionController>) -> Self {
        Recovery {
            sent: [SentPackets::new(), SentPackets::new(), SentPackets::new()],
            rtt: RttEstimator::new(initial_rtt),
            cc,
            pto_count: 0,
            first_rtt_sample_time: None,
            app_limited: false,
            delivery: DeliveryRateEstimator::new(),
            spurious: SpuriousLossDetector::new(),
        }
    }

    /// The sent packets of `space`.
    pub fn sent(&self, space: SpaceId) -> &SentPackets<T> {
        &self.sent[space as usize]
    }

    pub fn sent_mut(&mut self, space: SpaceId) -> &mut SentPackets<T> {
        &mut self.sent[space as usize]
    }

    /// Forgets everything sent in `space`, as if nothing had been (a restart in another
    /// version after Version Negotiation: the server dropped those packets).
    pub fn forget_space(&mut self, space: SpaceId) {
        self.sent[space as usize] = SentPackets::new();
    }

    /// Bytes in flight over every space (RFC 9002 §2).
    pub fn bytes_in_flight(&self) -> u64 {
        self.sent.iter().map(SentPackets::bytes_in_flight).sum()
    }

    /// RFC 9002 §6.2.1: the PTO doubles with each consecutive expiry (capped so the
    /// shift cannot overflow).
    pub fn pto_backoff(&self) -> u32 {
        1u32 << self.pto_count.min(20)
    }
}

#[cfg(test)]
mod tests;
