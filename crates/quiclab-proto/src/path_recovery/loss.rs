//! RFC 9002 A.10 DetectAndRemoveLostPackets and A.11 OnPacketsLost: the lost packets
//! leave the space and reach the delivery-rate sampler, the spurious-loss detector and
//! the controller; the connection applies the returned [`LossOutcome`] (retransmission
//! of what they carried, statistics, events).
// Peer values pass through here: arithmetic is checked, saturating or wrapping
// by the rule in CONTRIBUTING.md ("Arithmetic on wire values").
#![deny(clippy::arithmetic_side_effects)]

use super::Recovery;
use crate::config::LossConfig;
use crate::recovery::sent::is_persistent_congestion;
use crate::recovery::{SentPacket, SpaceId};
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

impl<T> Recovery<T> {
    /// RFC 9002 A.10 DetectAndRemoveLostPackets in `space`, then A.11 OnPacketsLost.
    /// `max_ack_delay` (the peer's) is asked only when packets are lost, for the
    /// persistent congestion duration.
    pub fn detect_lost(
        &mut self,
        now: Instant,
        space: SpaceId,
        config: &LossConfig,
        mtu_probe: Option<MtuProbe>,
        max_ack_delay: impl FnOnce() -> Duration,
    ) -> LossOutcome<T> {
        let loss_delay = self.rtt.loss_delay(config.time_threshold);
        let mut out = LossOutcome {
            lost: self
                .sent_mut(space)
                .detect_lost(now, loss_delay, config.packet_threshold),
            ..LossOutcome::default()
        };
        if let Some(probe) = mtu_probe.filter(|_| space == SpaceId::Data) {
            // RFC 9000 §14.4: a lost PMTU probe is no congestion signal.
            let before = out.lost.len();
            out.lost.retain(|p| p.pn != probe.pn);
            if out.lost.len() != before {
                out.mtu_probe_lost = Some(probe.pn);
            }
        }
        if out.lost.is_empty() {
            return out;
        }
        // RFC 9002 §7.6.1: (smoothed_rtt + max(4 rttvar, granularity) + max_ack_delay) * 3.
        let pc_duration = (self.rtt.pto_base().saturating_add(max_ack_delay()))
            .saturating_mul(config.persistent_congestion_threshold);
        let persistent = is_persistent_congestion(
            &out.lost,
            self.sent(space),
            pc_duration,
            self.first_rtt_sample_time,
        );
        let mut largest_lost_sent = None;
        let mut new_episode = !self.cc.in_recovery();
        for p in out.lost.iter().filter(|p| p.in_flight) {
            out.lost_bytes = p.size.saturating_add(out.lost_bytes);
            largest_lost_sent = Some(p.time_sent);
            let lost = self.delivery.on_lost(p.size, &p.delivery);
            self.cc.on_packet_lost(now, &lost);
            if space == SpaceId::Data {
                self.spurious.on_lost(p.pn, new_episode);
                new_episode = false;
            }
        }
        if let Some(sent) = largest_lost_sent {
            out.congestion_event = true;
            out.persistent = persistent;
            if persistent {
                self.spurious.close();
            }
            self.cc
                .on_congestion_event(now, sent, persistent, out.lost_bytes);
        }
        out
    }

    /// Whether lost packet `pn` of `space` went by the packet threshold (RFC 9002
    /// §6.1.1) rather than the time threshold, for logs.
    pub fn lost_by_reordering(&self, space: SpaceId, pn: u64, packet_threshold: u64) -> bool {
        self.sent(space)
            .largest_acked()
            .is_some_and(|l| l >= pn.saturating_add(packet_threshold))
    }
}
