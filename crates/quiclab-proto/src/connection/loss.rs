//! Acknowledgement processing, loss detection and the probe timeout (RFC 9002 §6,
//! Appendix A), applied to the connection's spaces, streams and congestion controller.
// Peer values pass through here: arithmetic is checked, saturating or wrapping
// by the rule in CONTRIBUTING.md ("Arithmetic on wire values").
#![deny(clippy::arithmetic_side_effects)]

use super::spaces::{SentFrame, SentRecord, SpaceId};
use super::stats::tally;
use super::timers::Timer;
use super::Connection;
use crate::error::TransportError;
use crate::events::{CongestionState, Event, LossTrigger, RecoveryMetrics};
use crate::recovery::sent::is_persistent_congestion;
use crate::recovery::SentPacket;
use crate::streams::StreamFrameRecord;
use crate::time::Instant;
use crate::wire::{AckFrame, Side};
use std::time::Duration;

impl Connection {
    /// RFC 9002 A.7 OnAckReceived.
    pub(super) fn on_ack_frame(
        &mut self,
        now: Instant,
        space: SpaceId,
        ack: &AckFrame,
    ) -> Result<(), TransportError> {
        if ack.largest() >= self.spaces[space as usize].next_pn {
            // RFC 9000 §13.1: acknowledging a packet never sent.
            return Err(TransportError::protocol_violation(
                "ACK of an unsent packet number",
            ));
        }
        let newly_acked = self.path.recovery.sent_mut(space).on_ack(&ack.ranges);
        // RFC 9438 §4.9.2: every packet of the last congestion episode acknowledged
        // after it was declared lost: the episode was spurious.
        if space == SpaceId::Data && self.path.recovery.spurious.on_ack(&ack.ranges) {
            tally(&mut self.stats.spurious_congestion_events, 1);
            self.path.recovery.cc.on_spurious_congestion(now);
        }
        if newly_acked.is_empty() {
            return Ok(());
        }
        let largest = newly_acked.last().expect("non-empty");
        if largest.pn == ack.largest() && newly_acked.iter().any(|p| p.ack_eliciting) {
            let latest_rtt = now.saturating_duration_since(largest.time_sent);
            // RFC 9002 §5.3: Initial ACKs are not delayed by the peer; ignore the field.
            let ack_delay = if space == SpaceId::Data {
                let exp = self.peer_ack_delay_exponent().min(20);
                Duration::from_micros(ack.ack_delay.saturating_mul(1 << exp))
            } else {
                Duration::ZERO
            };
            if self.path.recovery.first_rtt_sample_time.is_none() {
                self.path.recovery.first_rtt_sample_time = Some(now);
            }
            let max_ack_delay = self.peer_max_ack_delay();
            self.path.recovery.rtt.update(
                latest_rtt,
                ack_delay,
                self.handshake.confirmed,
                max_ack_delay,
            );
            if self.stats.first_sample_pto.is_none() {
                self.stats.first_sample_pto = Some(self.path.recovery.rtt.pto_base());
            }
        }
        if space == SpaceId::Handshake && self.side == Side::Client {
            // RFC 9002 A.8: the server validated our address once it ACKs a Handshake packet.
            self.handshake.peer_validated_address = true;
        }
        let in_slow_start = self.path.recovery.cc.in_slow_start();
        for p in &newly_acked {
            self.on_packet_acked(now, space, p);
        }
        self.detect_and_remove_lost(now, space);
        self.deliver_rate_sample(now);
        if self.peer_completed_address_validation() {
            self.path.recovery.pto_count = 0;
        }
        self.set_loss_detection_timer(now);
        self.log_metrics(now, in_slow_start);
        Ok(())
    }

    /// draft-ietf-ccwg-bbr §4.1.2.3 GenerateRateSample and §5.2 UpdateOnACK: the ACK's
    /// rate sample goes to the controller after its losses were marked; a controller
    /// in ProbeRTT asks for the app-limited mark; a model state change is logged.
    fn deliver_rate_sample(&mut self, now: Instant) {
        let in_flight = self.bytes_in_flight();
        let Some(rs) = self
            .path
            .recovery
            .delivery
            .generate(self.path.recovery.rtt.min(), in_flight)
        else {
            return;
        };
        self.path
            .recovery
            .cc
            .on_rate_sample(now, &rs, &self.path.recovery.rtt);
        if self.path.recovery.cc.wants_app_limited_mark() {
            self.path.recovery.delivery.mark_app_limited(in_flight);
        }
        while let Some(new) = self.path.recovery.cc.take_state_change() {
            if self.logging() {
                self.emit(now, Event::CongestionStateUpdated { new });
            }
        }
    }

    fn on_packet_acked(&mut self, now: Instant, space: SpaceId, p: &SentPacket<SentRecord>) {
        if space == SpaceId::Data && self.path.pmtud.is_some() {
            self.on_pmtu_probe_acked(now, p.pn);
        }
        if p.in_flight {
            self.path
                .recovery
                .delivery
                .on_acked(now, p.pn, p.time_sent, p.size, &p.delivery);
            self.path.recovery.cc.on_packet_acked(
                now,
                p.time_sent,
                p.size,
                self.path.recovery.app_limited,
                &self.path.recovery.rtt,
            );
        }
        if let Some(largest) = p.data.ack_largest {
            self.spaces[space as usize].acks.on_ack_acked(largest);
        }
        for f in &p.data.frames {
            match f {
                SentFrame::Crypto { offset, len } => self.spaces[space as usize]
                    .crypto_send
                    .on_acked(*offset, *len),
                SentFrame::Stream(r) => self.streams.on_acked(r),
                SentFrame::AckFrequency {
                    sequence,
                    max_ack_delay_us,
                } => self
                    .ack_frequency
                    .sender
                    .on_acked(*sequence, *max_ack_delay_us),
                SentFrame::NewToken => self.tokens.new_token.on_acked(),
                SentFrame::HandshakeDone
                | SentFrame::NewConnectionId { .. }
                | SentFrame::RetireConnectionId { .. } => {}
            }
        }
    }

    /// RFC 9002 A.10 DetectAndRemoveLostPackets, then A.11 OnPacketsLost.
    pub(super) fn detect_and_remove_lost(&mut self, now: Instant, space: SpaceId) {
        let loss_delay = self
            .path
            .recovery
            .rtt
            .loss_delay(self.config.loss.time_threshold);
        let sent = self.path.recovery.sent_mut(space);
        let largest_acked = sent.largest_acked();
        let mut lost = sent.detect_lost(now, loss_delay, self.config.loss.packet_threshold);
        if space == SpaceId::Data && self.path.pmtud.is_some() {
            // RFC 9000 §14.4: a lost PMTU probe is no congestion signal.
            lost.retain(|p| !self.on_pmtu_probe_lost(now, p.pn));
        }
        if lost.is_empty() {
            return;
        }
        let pc_duration = self.persistent_congestion_duration();
        let persistent = is_persistent_congestion(
            &lost,
            self.path.recovery.sent(space),
            pc_duration,
            self.path.recovery.first_rtt_sample_time,
        );
        let mut lost_bytes = 0;
        let mut largest_lost_sent = None;
        let mut new_episode = !self.path.recovery.cc.in_recovery();
        for p in &lost {
            tally(&mut self.stats.packets_lost, 1);
            if self.logging() {
                let trigger = if largest_acked
                    .is_some_and(|l| l >= p.pn.saturating_add(self.config.loss.packet_threshold))
                {
                    LossTrigger::ReorderingThreshold
                } else {
                    LossTrigger::TimeThreshold
                };
                self.emit(
                    now,
                    Event::PacketLost {
                        ty: space.packet_type(),
                        pn: p.pn,
                        trigger,
                    },
                );
            }
            if p.in_flight {
                lost_bytes = p.size.saturating_add(lost_bytes);
                largest_lost_sent = Some(p.time_sent);
                let lost = self.path.recovery.delivery.on_lost(p.size, &p.delivery);
                self.path.recovery.cc.on_packet_lost(now, &lost);
                if space == SpaceId::Data {
                    self.path.recovery.spurious.on_lost(p.pn, new_episode);
                    new_episode = false;
                }
            }
            self.requeue_lost(space, &p.data);
        }
        tally(&mut self.stats.bytes_lost, lost_bytes);
        if let Some(sent) = largest_lost_sent {
            tally(&mut self.stats.congestion_events, 1);
            if persistent {
                tally(&mut self.stats.persistent_congestion_events, 1);
                self.path.recovery.spurious.close();
            }
            self.path
                .recovery
                .cc
                .on_congestion_event(now, sent, persistent, lost_bytes);
            if self.logging() {
                self.emit(
                    now,
                    Event::CongestionStateUpdated {
                        new: CongestionState::Recovery,
                    },
                );
            }
        }
    }

    /// RFC 9000 §13.3: retransmit information, not packets.
    pub(super) fn requeue_lost(&mut self, space: SpaceId, record: &SentRecord) {
        for f in &record.frames {
            match f {
                SentFrame::Crypto { offset, len } => self.spaces[space as usize]
                    .crypto_send
                    .on_lost(*offset, *len),
                SentFrame::Stream(r) => self.streams.on_lost(r),
                SentFrame::HandshakeDone => self.handshake.done_pending = true,
                SentFrame::NewToken => self.tokens.new_token.on_lost(),
                SentFrame::NewConnectionId { sequence } => {
                    self.cids.pending_new.push_back(*sequence)
                }
                SentFrame::RetireConnectionId { sequence } => {
                    self.cids.pending_retire.push_back(*sequence)
                }
                SentFrame::AckFrequency {
                    sequence,
                    max_ack_delay_us,
                } => self
                    .ack_frequency
                    .sender
                    .on_lost(*sequence, *max_ack_delay_us),
            }
        }
    }

    /// RFC 9002 §7.6.1: (smoothed_rtt + max(4 rttvar, granularity) + max_ack_delay) * 3.
    fn persistent_congestion_duration(&self) -> Duration {
        (self
            .path
            .recovery
            .rtt
            .pto_base()
            .saturating_add(self.peer_max_ack_delay()))
        .saturating_mul(self.config.loss.persistent_congestion_threshold)
    }

    /// RFC 9002 A.8 PeerCompletedAddressValidation.
    pub(super) fn peer_completed_address_validation(&self) -> bool {
        self.side == Side::Server
            || self.handshake.peer_validated_address
            || self.handshake.confirmed
    }

    /// Server before address validation: may send at most 3x what it received (RFC 9000 §8.1).
    pub(super) fn amplification_budget(&self) -> u64 {
        self.path
            .amplification_budget(self.config.amplification_factor)
    }

    fn ack_eliciting_in_flight(&self) -> bool {
        SpaceId::ALL
            .iter()
            .any(|&s| self.path.recovery.sent(s).has_ack_eliciting_in_flight())
    }

    /// The space of an anti-deadlock PTO (RFC 9002 §6.2.2.1), armed from now in the
    /// highest space with keys: when nothing ack-eliciting is in flight (A.8), and also
    /// at a client the server has not validated yet whose only packets in flight are
    /// 0-RTT ones. A.8's GetPtoTimeAndSpace skips the application space until the
    /// handshake is confirmed and would arm nothing then, although §6.2.2.1 says the
    /// client MUST keep a PTO "even if there are no packets in flight": with the
    /// server's first flight lost and the server at its amplification limit (its
    /// budget spent on 0.5-RTT data), neither side would ever send again.
    fn anti_deadlock_space(&self) -> Option<SpaceId> {
        let handshake_in_flight = [SpaceId::Initial, SpaceId::Handshake]
            .iter()
            .any(|&s| self.path.recovery.sent(s).has_ack_eliciting_in_flight());
        let stuck = !self.ack_eliciting_in_flight()
            || (!handshake_in_flight && !self.peer_completed_address_validation());
        if !stuck {
            return None;
        }
        Some(if self.spaces[SpaceId::Handshake as usize].can_send() {
            SpaceId::Handshake
        } else {
            SpaceId::Initial
        })
    }

    /// RFC 9002 A.8 GetLossTimeAndSpace.
    fn loss_time_and_space(&self) -> Option<(Instant, SpaceId)> {
        SpaceId::ALL
            .iter()
            .filter_map(|&s| self.path.recovery.sent(s).loss_time().map(|t| (t, s)))
            .min_by_key(|&(t, _)| t)
    }

    /// RFC 9002 A.8 GetPtoTimeAndSpace.
    pub(super) fn pto_time_and_space(&self, now: Instant) -> Option<(Instant, SpaceId)> {
        let backoff = self.path.recovery.pto_backoff();
        let duration = self.path.recovery.rtt.pto_base().saturating_mul(backoff);
        if let Some(space) = self.anti_deadlock_space() {
            return Some((now.saturating_add(duration), space));
        }
        let mut best: Option<(Instant, SpaceId)> = None;
        for space in SpaceId::ALL {
            let sent = self.path.recovery.sent(space);
            if !sent.has_ack_eliciting_in_flight() {
                continue;
            }
            let mut d = duration;
            if space == SpaceId::Data {
                if !self.handshake.confirmed {
                    return best;
                }
                d = d.saturating_add(self.peer_max_ack_delay().saturating_mul(backoff));
            }
            let Some(last) = sent.time_of_last_ack_eliciting() else {
                continue;
            };
            let t = last.saturating_add(d);
            if best.is_none_or(|(b, _)| t < b) {
                best = Some((t, space));
            }
        }
        best
    }

    /// RFC 9002 A.8 SetLossDetectionTimer.
    pub(super) fn set_loss_detection_timer(&mut self, now: Instant) {
        if let Some((t, _)) = self.loss_time_and_space() {
            self.timers.set(Timer::LossDetection, t);
            return;
        }
        if self.amplification_budget() == 0 {
            // RFC 9002 §6.2.2.1: a server at the amplification limit arms no PTO.
            self.timers.stop(Timer::LossDetection);
            return;
        }
        if !self.ack_eliciting_in_flight() && self.peer_completed_address_validation() {
            self.timers.stop(Timer::LossDetection);
            return;
        }
        let pto = self.pto_time_and_space(now);
        if self.stats.first_pto.is_none() {
            if let Some((t, _)) = pto {
                self.stats.first_pto = Some(
                    t.saturating_duration_since(now)
                        .max(self.path.recovery.rtt.pto_base()),
                );
            }
        }
        self.timers
            .set_or_stop(Timer::LossDetection, pto.map(|(t, _)| t));
    }

    /// RFC 9002 A.9 OnLossDetectionTimeout.
    pub(super) fn on_loss_detection_timeout(&mut self, now: Instant) {
        if let Some((_, space)) = self.loss_time_and_space() {
            self.detect_and_remove_lost(now, space);
            self.set_loss_detection_timer(now);
            return;
        }
        if let Some(space) = self.anti_deadlock_space() {
            // Anti-deadlock: a padded Initial earns credit; a Handshake packet proves the address.
            self.spaces[space as usize].probes = 1;
        } else if let Some((_, space)) = self.pto_time_and_space(now) {
            self.queue_probes(space);
        }
        self.path.recovery.pto_count = self.path.recovery.pto_count.saturating_add(1);
        tally(&mut self.stats.pto_count_total, 1);
        if self.logging() {
            self.emit(
                now,
                Event::PtoExpired {
                    pto_count: self.path.recovery.pto_count,
                },
            );
        }
        self.set_loss_detection_timer(now);
    }

    /// RFC 9002 §6.2.3 "Speeding up Handshake Completion": the peer evidently misses
    /// some of our CRYPTO data in `space` (it repeated CRYPTO data we already have, or,
    /// at a client, sent packets we cannot read yet), so send what is unacknowledged
    /// now instead of at the PTO. Limited per connection and to once per PTO period,
    /// so two endpoints cannot ping-pong; the send path keeps the amplification limit.
    pub(super) fn speed_up_handshake(&mut self, now: Instant, space: SpaceId) {
        if space == SpaceId::Data
            || !self
                .handshake
                .may_speed_up(now, self.path.recovery.rtt.pto_base())
        {
            return;
        }
        let sp = &mut self.spaces[space as usize];
        if !sp.can_send() || !sp.crypto_send.has_unacked() {
            return;
        }
        sp.crypto_send.requeue_unacked();
        self.handshake.on_speed_up(now);
        tally(&mut self.stats.early_crypto_retransmits, 1);
    }

    /// RFC 9002 §6.2.4: one or two ack-eliciting probes, carrying unacknowledged data
    /// where there is some. Before the handshake completes, probe both handshake spaces
    /// that have data in flight (the peer may be missing either flight).
    fn queue_probes(&mut self, space: SpaceId) {
        if space == SpaceId::Data {
            self.queue_data_probes();
            return;
        }
        let spaces = [SpaceId::Initial, SpaceId::Handshake];
        for s in spaces {
            let in_flight = self.path.recovery.sent(s).has_ack_eliciting_in_flight();
            let sp = &mut self.spaces[s as usize];
            if !sp.can_send() || (s != space && !in_flight) {
                continue;
            }
            sp.probes = 2;
            sp.crypto_send.requeue_unacked();
        }
    }

    /// RFC 9002 §6.2.4: two 1-RTT probes. They carry new data when there is some;
    /// otherwise ("previously sent data MAY be sent") the stream data of the two oldest
    /// ack-eliciting packets in flight is queued again, so a probe repairs a lost tail
    /// (a request, the end of a response) at once instead of eliciting an ACK whose
    /// loss detection costs another round trip. The packets are not declared lost: the
    /// window is untouched, and whichever copy is acknowledged first clears the other
    /// (`SendStream::on_acked` drops the range from the retransmission queue).
    fn queue_data_probes(&mut self) {
        let sp = &mut self.spaces[SpaceId::Data as usize];
        if !sp.can_send() {
            return;
        }
        sp.probes = 2;
        if self.streams.has_pending() {
            return;
        }
        let oldest: Vec<StreamFrameRecord> = self
            .path
            .recovery
            .sent(SpaceId::Data)
            .iter()
            .filter(|p| p.ack_eliciting)
            .take(2)
            .flat_map(|p| p.data.frames.iter())
            .filter_map(|f| match f {
                SentFrame::Stream(r @ StreamFrameRecord::Stream { .. }) => Some(r.clone()),
                _ => None,
            })
            .collect();
        for r in &oldest {
            self.streams.on_lost(r);
        }
    }

    fn log_metrics(&mut self, now: Instant, was_slow_start: bool) {
        if !self.logging() {
            return;
        }
        let m = RecoveryMetrics {
            min_rtt: Some(self.path.recovery.rtt.min()),
            smoothed_rtt: Some(self.path.recovery.rtt.smoothed()),
            latest_rtt: Some(self.path.recovery.rtt.latest()),
            rtt_variance: Some(self.path.recovery.rtt.rttvar()),
            pto_count: Some(self.path.recovery.pto_count),
            congestion_window: Some(self.path.recovery.cc.window()),
            bytes_in_flight: Some(self.bytes_in_flight()),
            ssthresh: (self.path.recovery.cc.ssthresh() != u64::MAX)
                .then(|| self.path.recovery.cc.ssthresh()),
            pacing_rate: self.path.recovery.cc.pacing_rate(),
            model_bandwidth: self.path.recovery.cc.model().and_then(|m| m.bandwidth),
            model_min_rtt: self.path.recovery.cc.model().and_then(|m| m.min_rtt),
        };
        self.emit(now, Event::MetricsUpdated(m));
        while let Some(u) = self.path.recovery.cc.take_careful_resume_update() {
            self.emit(u.at, Event::CarefulResumePhaseUpdated(Box::new(u)));
        }
        // Model-based controllers report their own transitions (`take_state_change`).
        if was_slow_start
            && !self.path.recovery.cc.in_slow_start()
            && self.path.recovery.cc.model().is_none()
        {
            self.emit(
                now,
                Event::CongestionStateUpdated {
                    new: CongestionState::CongestionAvoidance,
                },
            );
        }
    }
}
