//! RFC 9002 A.7 OnAckReceived as one call: the newly acknowledged packets, the RTT
//! sample, loss detection (`loss.rs`), the ACK's delivery-rate sample, one summary to
//! the controller (`cc::AckSummary`), the PTO backoff reset and the loss detection
//! timer (`pto.rs`). The connection applies the returned [`AckOutcome`] (what the
//! packets carried, statistics, events, the timer) and does not come back.
// Peer values pass through here: arithmetic is checked, saturating or wrapping
// by the rule in CONTRIBUTING.md ("Arithmetic on wire values").
#![deny(clippy::arithmetic_side_effects)]

use super::loss::{LossOutcome, MtuProbe};
use super::pto::{LossTimer, PtoContext};
use super::Recovery;
use crate::cc::{AckSummary, AckedPacket, CarefulResumeUpdate};
use crate::config::LossConfig;
use crate::events::CongestionState;
use crate::recovery::{SentPacket, SpaceId};
use crate::time::Instant;
use std::ops::RangeInclusive;
use std::time::Duration;

/// One ACK frame as recovery reads it, with what the connection knows around it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AckInput<'a> {
    pub space: SpaceId,
    /// The frame's ranges (any order) and Largest Acknowledged, which the connection
    /// checked against the packet numbers it sent (RFC 9000 §13.1).
    pub ranges: &'a [RangeInclusive<u64>],
    pub largest: u64,
    /// The decoded ACK Delay; zero outside the application data space (RFC 9002 §5.3).
    pub ack_delay: Duration,
    /// The PTO's context as the frame arrives (`handshake_confirmed` and
    /// `max_ack_delay` also serve the RTT sample, RFC 9002 §5.3), except that
    /// `peer_completed_address_validation` is its value once the ACK is applied (a
    /// client's Handshake ACK validates its address, RFC 9002 A.7).
    pub pto: PtoContext,
    /// The PMTU probe in flight, if any.
    pub mtu_probe: Option<MtuProbe>,
    /// By how much the frame's ECN-CE count exceeds the peer's last validated one
    /// (RFC 9000 §13.4.2.1; the connection validates the counts once this call
    /// returned); 0 without growth. When the ACK also raises the largest acknowledged
    /// and newly acknowledges packets, the controller gets a congestion event for the
    /// largest one's send time (RFC 9002 §7.1, B.7 ProcessECN) and the count as
    /// `AckSummary::newly_ce_marked`.
    pub ce_growth: u64,
}

/// What one ACK frame did to recovery, for the connection to apply in this order:
/// the spurious-episode count, the acknowledged packets, the losses, the state changes,
/// the loss detection timer.
#[derive(Debug)]
pub(crate) struct AckOutcome<T> {
    /// The ACK showed the last congestion episode spurious (RFC 9438 §4.9.2); the
    /// controller was told.
    pub spurious_congestion: bool,
    /// Packets newly acknowledged, ascending packet number (removed from the space).
    /// When empty nothing else happened: no RTT sample, no loss detection.
    pub newly_acked: Vec<SentPacket<T>>,
    /// The ACK raised the space's largest acknowledged (only such an ACK validates ECN
    /// counts, RFC 9000 §13.4.2.1).
    pub largest_grew: bool,
    /// An RTT sample was taken (RFC 9002 §5.1).
    pub rtt_sampled: bool,
    /// The controller was in slow start before the acknowledged packets reached it.
    pub was_slow_start: bool,
    /// Packets declared lost by this ACK (RFC 9002 A.10).
    pub loss: LossOutcome<T>,
    /// The controller's model state changes, oldest first (BBR's state machine).
    pub state_changes: Vec<CongestionState>,
    /// Careful Resume's phase changes since the last ACK that acknowledged something
    /// (on sends or on this ACK), oldest first, for qlog.
    pub careful_resume_updates: Vec<CarefulResumeUpdate>,
    /// The loss detection timer as RFC 9002 A.8 SetLossDetectionTimer sets it at the
    /// end of A.7 OnAckReceived; `None` (timer untouched) when nothing was newly
    /// acknowledged.
    pub loss_timer: Option<LossTimer>,
    /// The records of room the space's sent-packet deque keeps after this ACK (its
    /// storage for the next flight): no later list of newly acknowledged packets can
    /// hold more, so the connection keeps [`Self::newly_acked`]'s buffer up to this
    /// size (`Scratch::keep_newly_acked`).
    pub sent_storage: usize,
}

impl<T> Recovery<T> {
    /// RFC 9002 A.7 OnAckReceived: the newly acknowledged packets, the RTT sample, A.10
    /// DetectAndRemoveLostPackets, the ACK's rate sample (draft-ietf-ccwg-bbr
    /// §4.1.2.3), the controller's one summary (with the ECN-CE congestion event of
    /// [`AckInput::ce_growth`]), the PTO backoff reset and A.8 SetLossDetectionTimer.
    /// `max_ack_delay_after(acked, lost)` gives the peer's max_ack_delay once the
    /// contents of the acknowledged and then the lost packets take effect (ack-frequency
    /// requests they carried): with no lost packets for the persistent congestion
    /// duration, with both for the timer. `acked_buf` becomes
    /// [`AckOutcome::newly_acked`] (cleared first): the connection hands back the
    /// previous outcome's, so an ACK allocates no list.
    pub fn on_ack(
        &mut self,
        now: Instant,
        ack: &AckInput<'_>,
        acked_buf: Vec<SentPacket<T>>,
        loss: &LossConfig,
        max_ack_delay_after: impl Fn(&[SentPacket<T>], &[SentPacket<T>]) -> Duration,
    ) -> AckOutcome<T> {
        let largest_grew = self
            .sent(ack.space)
            .largest_acked()
            .is_none_or(|l| ack.largest > l);
        let newly_acked = self.sent_mut(ack.space).on_ack(ack.ranges, acked_buf);
        let sent_storage = self.sent(ack.space).storage();
        // RFC 9438 §4.9.2: every packet of the last congestion episode acknowledged
        // after it was declared lost: the episode was spurious.
        let spurious_congestion = ack.space == SpaceId::Data && self.spurious.on_ack(ack.ranges);
        let mut out = AckOutcome {
            spurious_congestion,
            newly_acked,
            largest_grew,
            rtt_sampled: false,
            was_slow_start: false,
            loss: LossOutcome::default(),
            state_changes: Vec::new(),
            careful_resume_updates: Vec::new(),
            loss_timer: None,
            sent_storage,
        };
        if out.newly_acked.is_empty() {
            if spurious_congestion {
                let summary = AckSummary {
                    spurious_congestion,
                    ..AckSummary::losses(now, &self.rtt, &[], None)
                };
                self.cc.on_ack(&summary);
            }
            return out;
        }
        // Only an ACK that raises the largest acknowledged carries counts that will be
        // validated (RFC 9000 §13.4.2.1); a reordered one's growth is counted when the
        // next one repeats it.
        let ce_event = (ack.ce_growth > 0 && largest_grew)
            .then(|| out.newly_acked.last().map(|p| p.time_sent))
            .flatten();
        let newly_ce_marked = if ce_event.is_some() { ack.ce_growth } else { 0 };
        out.rtt_sampled = self.sample_rtt(now, ack, &out.newly_acked);
        let mut acked = std::mem::take(&mut self.acked_scratch);
        self.acked_in_flight(now, ack, &out.newly_acked, &mut acked);
        let newly_acked = &out.newly_acked;
        let declared = self.declare_lost(now, ack.space, loss, ack.mtu_probe, || {
            max_ack_delay_after(newly_acked, &[])
        });
        // draft-ietf-ccwg-bbr §4.1.2.3 GenerateRateSample, after the losses were marked.
        let in_flight = self.bytes_in_flight();
        let rate_sample = self.delivery.generate(self.rtt.min(), in_flight);
        let response = self.cc.on_ack(&AckSummary {
            now,
            spurious_congestion,
            acked: &acked,
            app_limited: self.app_limited,
            rtt: &self.rtt,
            lost: &declared.for_controller,
            congestion: declared.congestion,
            ce_event,
            newly_ce_marked,
            rate_sample: rate_sample.as_ref(),
        });
        self.acked_scratch = acked;
        self.on_episode(ack.space, &declared.outcome, response.in_recovery_at_loss);
        if response.mark_app_limited {
            // draft-ietf-ccwg-bbr §5.3.4.4: ProbeRTT marks the connection app-limited.
            self.delivery.mark_app_limited(in_flight);
        }
        out.was_slow_start = response.was_slow_start;
        out.loss = declared.outcome;
        out.state_changes = response.state_changes;
        out.careful_resume_updates =
            std::iter::from_fn(|| self.cc.take_careful_resume_update()).collect();
        if ack.pto.peer_completed_address_validation {
            // RFC 9002 A.7: the backoff restarts unless the client is unsure the
            // server validated its address.
            self.pto_count = 0;
        }
        let timer_ctx = PtoContext {
            max_ack_delay: max_ack_delay_after(&out.newly_acked, &out.loss.lost),
            ..ack.pto
        };
        out.loss_timer = Some(self.loss_detection_timer(now, &timer_ctx));
        out
    }

    /// RFC 9002 §5.1: a sample when the largest acknowledged is newly acknowledged and
    /// the ACK covers an ack-eliciting packet.
    fn sample_rtt(&mut self, now: Instant, ack: &AckInput<'_>, acked: &[SentPacket<T>]) -> bool {
        let Some(largest) = acked.last() else {
            return false;
        };
        if largest.pn != ack.largest || !acked.iter().any(|p| p.ack_eliciting) {
            return false;
        }
        let latest_rtt = now.saturating_duration_since(largest.time_sent);
        if self.first_rtt_sample_time.is_none() {
            self.first_rtt_sample_time = Some(now);
        }
        self.rtt.update(
            latest_rtt,
            ack.ack_delay,
            ack.pto.handshake_confirmed,
            ack.pto.max_ack_delay,
        );
        true
    }

    /// RFC 9002 A.7 OnPacketAcked's recovery share: the delivery-rate estimator
    /// records each newly acknowledged in-flight packet (draft-ietf-ccwg-bbr §4.1.2.3
    /// UpdateRateSample); puts them in `acked` (cleared first; the reused scratch
    /// buffer, so an ACK allocates nothing here) as the controller reads them, the PMTU
    /// probe carrying the maximum datagram size it confirms (RFC 9002 §7.2; a probe is
    /// ack-eliciting, hence in flight).
    fn acked_in_flight(
        &mut self,
        now: Instant,
        ack: &AckInput<'_>,
        newly_acked: &[SentPacket<T>],
        acked: &mut Vec<AckedPacket>,
    ) {
        let probe = ack.mtu_probe.filter(|_| ack.space == SpaceId::Data);
        acked.clear();
        for p in newly_acked.iter().filter(|p| p.in_flight) {
            self.delivery
                .on_acked(now, p.pn, p.time_sent, p.size, &p.delivery);
            acked.push(AckedPacket {
                time_sent: p.time_sent,
                bytes: p.size,
                max_datagram_size: probe.filter(|m| m.pn == p.pn).map(|m| m.confirms),
            });
        }
    }
}
