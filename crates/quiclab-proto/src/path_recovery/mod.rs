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
mod timeout;

pub(crate) use ack::{AckInput, AckOutcome};
pub(crate) use loss::{LossOutcome, MtuProbe};
pub(crate) use pto::{LossTimer, PtoContext};

pub(crate) use timeout::{Probe, TimeoutOutcome};

use crate::cc::{AckedPacket, CongestionController};
use crate::recovery::{
    DeliveryRateEstimator, DeliverySnapshot, RttEstimator, SentPacket, SentPackets, SpaceId,
    SpuriousLossDetector,
};
use crate::time::Instant;
use std::time::Duration;

/// A path's recovery state. The connection drives it through the methods below (RFC
/// 9002 Appendix A: A.5 on sending, A.7 on an ACK, A.8 the timer, A.9 its expiry,
/// A.11 on discarding a space) and applies what they return.
pub(crate) struct Recovery<T> {
    /// Sent packets per space, indexed by [`SpaceId`].
    sent: [SentPackets<T>; 3],
    rtt: RttEstimator,
    cc: Box<dyn CongestionController>,
    /// Consecutive probe timeouts without an acknowledgement (RFC 9002 §6.2.1 backoff).
    pto_count: u32,
    /// When the first RTT sample was taken (RFC 9002 §7.6.2: persistent congestion
    /// counts only packets sent after it).
    first_rtt_sample_time: Option<Instant>,
    /// The sender ran out of data with room left in the window (RFC 9002 §7.8).
    app_limited: bool,
    /// Delivery-rate sampling for the controller (draft-ietf-ccwg-bbr §4.1).
    delivery: DeliveryRateEstimator,
    /// Lost 1-RTT packets acknowledged later (RFC 9438 §4.9.2), for controllers' undo.
    spurious: SpuriousLossDetector,
    /// The buffer `on_ack` hands the controller its acknowledged packets in, kept
    /// between ACKs so that receiving one does not allocate it again.
    acked_scratch: Vec<AckedPacket>,
}

/// A packet being sent, as recovery records it (RFC 9002 A.5 OnPacketSent).
#[derive(Debug)]
pub(crate) struct Outgoing<T> {
    pub space: SpaceId,
    pub pn: u64,
    /// Bytes of the UDP payload the packet takes.
    pub size: u64,
    pub ack_eliciting: bool,
    /// It counts toward bytes in flight (ack-eliciting or padding, RFC 9002 §2).
    pub in_flight: bool,
    /// What the connection remembers of it.
    pub data: T,
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
            acked_scratch: Vec::new(),
        }
    }

    /// The sent packets of `space`.
    pub fn sent(&self, space: SpaceId) -> &SentPackets<T> {
        &self.sent[space as usize]
    }

    fn sent_mut(&mut self, space: SpaceId) -> &mut SentPackets<T> {
        &mut self.sent[space as usize]
    }

    /// The RTT estimator (RFC 9002 §5).
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }

    /// The congestion controller, to read (window, pacing rate, state for logs).
    pub fn cc(&self) -> &dyn CongestionController {
        &*self.cc
    }

    /// LIA's or OLIA's coupling for the controller's next increases (RFC 6356 §3,
    /// `cc/olia.rs`; see `CongestionController::set_coupling`).
    pub fn set_coupling(&mut self, coupling: Option<crate::cc::Coupling>) {
        self.cc.set_coupling(coupling);
    }

    /// Consecutive probe timeouts (RFC 9002 §6.2.1).
    pub fn pto_count(&self) -> u32 {
        self.pto_count
    }

    /// RFC 9000 §9.4: a new path gets its own congestion controller and RTT
    /// estimator (fresh ones, or a validated path's saved ones when the connection
    /// returns to it); the sent packets, one loss recovery context for every path
    /// (§9.4 allows it), stay. Returns the state it replaces, and restarts the PTO
    /// backoff, the persistent-congestion start and the delivery-rate sampling, all
    /// about the old path.
    pub fn replace_congestion(
        &mut self,
        rtt: RttEstimator,
        cc: Box<dyn CongestionController>,
    ) -> (RttEstimator, Box<dyn CongestionController>) {
        let old_rtt = std::mem::replace(&mut self.rtt, rtt);
        let old_cc = std::mem::replace(&mut self.cc, cc);
        self.pto_count = 0;
        self.first_rtt_sample_time = None;
        self.delivery = DeliveryRateEstimator::new();
        (old_rtt, old_cc)
    }

    /// RFC 9002 A.5 OnPacketSent: the packet is recorded in its space (with the
    /// delivery-rate snapshot, draft-ietf-ccwg-bbr §4.1.2.2, when in flight) and an
    /// in-flight packet reaches the controller.
    pub fn on_packet_sent(&mut self, now: Instant, p: Outgoing<T>) {
        let delivery = if p.in_flight {
            let in_flight = self.bytes_in_flight().saturating_add(p.size);
            self.delivery.on_sent(now, p.size, in_flight)
        } else {
            DeliverySnapshot::default()
        };
        self.sent_mut(p.space).on_sent(SentPacket {
            pn: p.pn,
            time_sent: now,
            size: p.size,
            ack_eliciting: p.ack_eliciting,
            in_flight: p.in_flight,
            delivery,
            data: p.data,
        });
        if p.in_flight {
            let in_flight = self.bytes_in_flight();
            self.cc.on_packet_number(p.pn);
            self.cc.on_packet_sent(now, p.size, in_flight);
        }
    }

    /// RFC 9002 §7.8: the sender ran out of data (`app_limited`) or not; running out
    /// marks the coming rate samples app-limited (draft-ietf-ccwg-bbr §4.1.2.4
    /// MarkConnectionAppLimited) until the bubble is delivered.
    pub fn set_app_limited(&mut self, app_limited: bool) {
        self.app_limited = app_limited;
        if app_limited {
            let in_flight = self.bytes_in_flight();
            self.delivery.mark_app_limited(in_flight);
        }
    }

    /// RFC 9002 A.11 OnPacketNumberSpaceDiscarded (keys discarded, §6.4; also the
    /// Initial space on a Retry, §6.3): the space's packets leave bytes in flight
    /// without a word to the controller, its loss and PTO times are cleared and the
    /// PTO backoff restarts. The caller re-arms the loss detection timer.
    pub fn discard_space(&mut self, space: SpaceId) {
        self.sent_mut(space).drain();
        self.pto_count = 0;
    }

    /// Forgets everything sent in `space`, as if nothing had been, and restarts the PTO
    /// backoff (a restart in another version after Version Negotiation: the server
    /// dropped those packets).
    pub fn forget_space(&mut self, space: SpaceId) {
        self.sent[space as usize] = SentPackets::new();
        self.pto_count = 0;
    }

    /// Removes every packet of `space` and returns them, without loss signals (0-RTT
    /// rejected: RFC 9001 §4.6.2, the client sends their data again in 1-RTT packets).
    pub fn take_all(&mut self, space: SpaceId) -> Vec<SentPacket<T>> {
        self.sent_mut(space).drain()
    }

    /// The path is gone for good (a multipath path 0, 3 PTO after its abandonment):
    /// frees what its packets made it hold (sent packets of every space, the lost
    /// packets of the spurious-loss episode, the ACK scratch buffer); the RTT estimate
    /// and the controller stay.
    pub fn release(&mut self) {
        for sent in &mut self.sent {
            sent.drain();
        }
        self.spurious.close();
        self.acked_scratch = Vec::new();
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
