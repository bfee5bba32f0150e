//! RFC 9002 A.10 DetectAndRemoveLostPackets and B.8 OnPacketsLost: the lost packets
//! leave the space and reach the delivery-rate sampler, the controller (in the ACK's
//! or the timeout's one summary) and the spurious-loss detector; the connection
//! applies the returned [`LossOutcome`] (retransmission of what they carried,
//! statistics, events).
// Peer values pass through here: arithmetic is checked, saturating or wrapping
// by the rule in CONTRIBUTING.md ("Arithmetic on wire values").
#![deny(clippy::arithmetic_side_effects)]

use super::Recovery;
use crate::cc::{AckSummary, CongestionEvent};
use crate::config::LossConfig;
use crate::recovery::sent::is_persistent_congestion;
use crate::recovery::{LostPacket, SentPacket, SpaceId};
use crate::time::Instant;
use std::time::Duration;

/// A PMTU probe in flight (RFC 9000 §14.4): its acknowledgement raises the controller's
/// max_datagram_size, its loss is no congestion signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MtuProbe {
    /// Its packet number (application data space).
    pub pn: u64,
    /// The maximum datagram size in force once it is acknowledged.
    pub confirms: u64,
}

/// What one loss detection declared.
#[derive(Debug)]
pub(crate) struct LossOutcome<T> {
    /// Packets declared lost, ascending packet number, without the PMTU probe.
    pub lost: Vec<SentPacket<T>>,
    /// The PMTU probe was among them: a probe size failure, no congestion signal
    /// (RFC 9000 §14.4).
    pub mtu_probe_lost: Option<u64>,
    /// Bytes of the in-flight packets among `lost`.
    pub lost_bytes: u64,
    /// The controller saw a congestion event (in-flight packets were lost) ...
    pub congestion_event: bool,
    /// ... showing persistent congestion (RFC 9002 §7.6).
    pub persistent: bool,
}

impl<T> Default for LossOutcome<T> {
    fn default() -> Self {
        LossOutcome {
            lost: Vec::new(),
            mtu_probe_lost: None,
            lost_bytes: 0,
            congestion_event: false,
            persistent: false,
        }
    }
}

/// Losses declared in one space, before the controller hears of them: the outcome for
/// the connection and the controller's share of it.
pub(super) struct DeclaredLosses<T> {
    pub outcome: LossOutcome<T>,
    /// The in-flight lost packets as the delivery-rate estimator recorded them.
    pub for_controller: Vec<LostPacket>,
    pub congestion: Option<CongestionEvent>,
}

impl<T> Recovery<T> {
    /// RFC 9002 A.10 DetectAndRemoveLostPackets in `space` by the loss detection timer,
    /// then B.8 OnPacketsLost (an ACK runs the same steps inside `on_ack`).
    /// `max_ack_delay` (the peer's) is asked only when packets are lost, for the
    /// persistent congestion duration.
    pub(super) fn detect_lost(
        &mut self,
        now: Instant,
        space: SpaceId,
        config: &LossConfig,
        mtu_probe: Option<MtuProbe>,
        max_ack_delay: impl FnOnce() -> Duration,
    ) -> LossOutcome<T> {
        let declared = self.declare_lost(now, space, config, mtu_probe, max_ack_delay);
        if declared.outcome.lost.is_empty() {
            return declared.outcome;
        }
        let summary = AckSummary::losses(
            now,
            &self.rtt,
            &declared.for_controller,
            declared.congestion,
        );
        let response = self.cc.on_ack(&summary);
        self.on_episode(space, &declared.outcome, response.in_recovery_at_loss);
        declared.outcome
    }

    /// RFC 9002 A.10 DetectAndRemoveLostPackets: the lost packets leave `space`; the
    /// delivery-rate estimator records the in-flight ones (draft-ietf-ccwg-bbr
    /// §5.5.10.2); the congestion event is computed (A.11, §7.6 persistent congestion)
    /// for the controller, which the caller tells next.
    pub(super) fn declare_lost(
        &mut self,
        now: Instant,
        space: SpaceId,
        config: &LossConfig,
        mtu_probe: Option<MtuProbe>,
        max_ack_delay: impl FnOnce() -> Duration,
    ) -> DeclaredLosses<T> {
        let loss_delay = self.rtt.loss_delay(config.time_threshold);
        let mut out = DeclaredLosses {
            outcome: LossOutcome {
                lost: self
                    .sent_mut(space)
                    .detect_lost(now, loss_delay, config.packet_threshold),
                ..LossOutcome::default()
            },
            for_controller: Vec::new(),
            congestion: None,
        };
        let loss = &mut out.outcome;
        if let Some(probe) = mtu_probe.filter(|_| space == SpaceId::Data) {
            // RFC 9000 §14.4: a lost PMTU probe is no congestion signal.
            let before = loss.lost.len();
            loss.lost.retain(|p| p.pn != probe.pn);
            if loss.lost.len() != before {
                loss.mtu_probe_lost = Some(probe.pn);
            }
        }
        if loss.lost.is_empty() {
            return out;
        }
        // RFC 9002 §7.6.1: (smoothed_rtt + max(4 rttvar, granularity) + max_ack_delay) * 3.
        let pc_duration = (self.rtt.pto_base().saturating_add(max_ack_delay()))
            .saturating_mul(config.persistent_congestion_threshold);
        let persistent = is_persistent_congestion(
            &loss.lost,
            self.sent(space),
            pc_duration,
            self.first_rtt_sample_time,
        );
        let mut largest_lost_sent = None;
        for p in loss.lost.iter().filter(|p| p.in_flight) {
            loss.lost_bytes = p.size.saturating_add(loss.lost_bytes);
            largest_lost_sent = Some(p.time_sent);
            out.for_controller
                .push(self.delivery.on_lost(p.size, &p.delivery));
        }
        if let Some(sent) = largest_lost_sent {
            loss.congestion_event = true;
            loss.persistent = persistent;
            out.congestion = Some(CongestionEvent {
                largest_lost_sent_time: sent,
                persistent,
                lost_bytes: loss.lost_bytes,
            });
        }
        out
    }

    /// RFC 9438 §4.9.2: the spurious-loss detector follows the congestion episodes of
    /// the application data space; the losses begin a new one when the controller was
    /// not in a recovery period as they reached it; persistent congestion ends any.
    pub(super) fn on_episode(&mut self, space: SpaceId, loss: &LossOutcome<T>, in_recovery: bool) {
        if space == SpaceId::Data {
            let mut new_episode = !in_recovery;
            for p in loss.lost.iter().filter(|p| p.in_flight) {
                self.spurious.on_lost(p.pn, new_episode);
                new_episode = false;
            }
        }
        if loss.persistent {
            self.spurious.close();
        }
    }

    /// Whether lost packet `pn` of `space` went by the packet threshold (RFC 9002
    /// §6.1.1) rather than the time threshold, for logs.
    pub fn lost_by_reordering(&self, space: SpaceId, pn: u64, packet_threshold: u64) -> bool {
        self.sent(space)
            .largest_acked()
            .is_some_and(|l| l >= pn.saturating_add(packet_threshold))
    }
}
