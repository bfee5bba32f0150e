//! What acknowledgements, losses and probe timeouts (RFC 9002 §6, Appendix A) mean for
//! the connection: the path's `Recovery` processes an ACK or a loss detection in one
//! call; this file applies the outcome to the spaces, streams, statistics and events,
//! arms the loss detection timer and queues PTO probes.
// Peer values pass through here: arithmetic is checked, saturating or wrapping
// by the rule in CONTRIBUTING.md ("Arithmetic on wire values").
#![deny(clippy::arithmetic_side_effects)]

use super::spaces::{oldest_stream_data, SentFrame, SentRecord, SpaceId};
use super::stats::tally;
use super::timers::Timer;
use super::Connection;
use crate::cc::CarefulResumeUpdate;
use crate::error::TransportError;
use crate::events::{CongestionState, Event, LossTrigger, RecoveryMetrics};
use crate::path_recovery::{
    AckInput, AckOutcome, LossOutcome, LossTimer, Probe, PtoContext, TimeoutOutcome,
};
use crate::recovery::SentPacket;
use crate::time::Instant;
use crate::wire::{AckFrame, PathId, Side};
use std::time::Duration;

impl Connection {
    /// RFC 9002 A.7 OnAckReceived: recovery processes the frame in one call
    /// (`Recovery::on_ack`); the connection applies the outcome.
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
        // RFC 9002 §5.3: Initial ACKs are not delayed by the peer; ignore the field.
        let ack_delay = if space == SpaceId::Data {
            let exp = self.peer_ack_delay_exponent().min(20);
            Duration::from_micros(ack.ack_delay.saturating_mul(1 << exp))
        } else {
            Duration::ZERO
        };
        let mut pto = self.pto_context();
        // RFC 9002 A.7: the server validated our address once it ACKs a Handshake
        // packet (`apply_ack` records it).
        pto.peer_completed_address_validation |=
            space == SpaceId::Handshake && self.side == Side::Client;
        let input = AckInput {
            space,
            ranges: &ack.ranges,
            largest: ack.largest(),
            ack_delay,
            pto,
            mtu_probe: self.mtu_probe(),
            ce_growth: self.ecn.ce_growth(space, ack.ecn),
        };
        if space == SpaceId::Data {
            // RFC 6356 §3 under multipath (`multipath_coupling.rs`); else nothing.
            self.couple_before_ack(PathId::INITIAL);
        }
        let advertised = self.peer_advertised_max_ack_delay();
        let sender = &self.ack_frequency.sender;
        let buf = std::mem::take(&mut self.scratch.newly_acked);
        let outcome =
            self.path
                .recovery
                .on_ack(now, &input, buf, &self.config.loss, |acked, lost| {
                    sender.peer_max_ack_delay_after(advertised, acked, lost)
                });
        // RFC 9000 §13.4.2.1: the counts against the packets this ACK newly
        // acknowledged (only an ACK raising the largest acknowledged validates).
        let sent = outcome.newly_acked.iter().map(|p| (p.pn, p.data.ecn));
        self.ecn.on_ack(space, outcome.largest_grew, ack.ecn, sent);
        // The timer untouched (nothing newly acknowledged) or still armed: packets
        // are outstanding, the list is worth keeping for the next ACK.
        let outstanding = !matches!(outcome.loss_timer, Some(LossTimer::Off));
        let sent_storage = outcome.sent_storage;
        let acked = self.apply_ack(now, space, outcome);
        self.scratch
            .keep_newly_acked(acked, outstanding, sent_storage);
        if space == SpaceId::Data {
            // draft-ietf-quic-multipath "Key Phase Update Process" (else nothing).
            self.key_phase_note_multipath_ack(now);
        }
        self.log_ecn_changes(now);
        Ok(())
    }

    /// What an ACK's outcome means for the rest of the connection, in the order the
    /// steps of RFC 9002 A.7 produced it. Returns the newly acknowledged list, for
    /// its buffer.
    fn apply_ack(
        &mut self,
        now: Instant,
        space: SpaceId,
        outcome: AckOutcome<SentRecord>,
    ) -> Vec<SentPacket<SentRecord>> {
        if outcome.spurious_congestion {
            tally(&mut self.stats.spurious_congestion_events, 1);
        }
        if outcome.newly_acked.is_empty() {
            return outcome.newly_acked;
        }
        if outcome.rtt_sampled && self.stats.first_sample_pto.is_none() {
            self.stats.first_sample_pto = Some(self.path.recovery.rtt().pto_base());
        }
        if space == SpaceId::Handshake && self.side == Side::Client {
            // RFC 9002 A.8: the server validated our address once it ACKs a Handshake packet.
            self.handshake.peer_validated_address = true;
        }
        for p in &outcome.newly_acked {
            self.on_packet_acked(now, space, p);
        }
        self.apply_losses(now, space, outcome.loss);
        if self.logging() {
            for new in outcome.state_changes {
                self.emit(now, Event::CongestionStateUpdated { new });
            }
        }
        if let Some(timer) = outcome.loss_timer {
            self.arm_loss_detection_timer(now, timer);
        }
        self.log_metrics(now, outcome.was_slow_start, outcome.careful_resume_updates);
        outcome.newly_acked
    }

    /// What an acknowledged packet carried is delivered (RFC 9000 §13.3).
    fn on_packet_acked(&mut self, now: Instant, space: SpaceId, p: &SentPacket<SentRecord>) {
        if space == SpaceId::Data && self.path.pmtud.is_some() {
            self.on_pmtu_probe_acked(now, p.pn);
        }
        if let Some(largest) = p.data.ack_largest {
            self.spaces[space as usize].acks.on_ack_acked(largest);
        }
        self.on_frames_acked(space, &p.data);
    }

    /// RFC 9000 §13.3: what an acknowledged packet's frames delivered.
    pub(super) fn on_frames_acked(&mut self, space: SpaceId, record: &SentRecord) {
        for f in &record.frames {
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
                | SentFrame::RetireConnectionId { .. }
                | SentFrame::PathCid { .. }
                | SentFrame::PathAbandon { .. }
                | SentFrame::PathStatus { .. }
                | SentFrame::MaxPathId { .. }
                | SentFrame::PathsBlocked { .. } => {}
            }
        }
    }

    /// RFC 9002 B.8 OnPacketsLost, the connection's part: statistics, events and the
    /// retransmission of what the lost packets carried (recovery told the controller).
    fn apply_losses(&mut self, now: Instant, space: SpaceId, loss: LossOutcome<SentRecord>) {
        if let Some(pn) = loss.mtu_probe_lost {
            self.on_pmtu_probe_lost(now, pn);
        }
        if loss.lost.is_empty() {
            return;
        }
        let threshold = self.config.loss.packet_threshold;
        for p in &loss.lost {
            tally(&mut self.stats.packets_lost, 1);
            self.ecn.on_lost(space, p.pn, p.data.ecn);
            if self.logging() {
                let trigger = if self
                    .path
                    .recovery
                    .lost_by_reordering(space, p.pn, threshold)
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
                        path_id: self.logged_path_id(space.packet_type(), 0),
                    },
                );
            }
            self.requeue_lost(space, &p.data);
        }
        tally(&mut self.stats.bytes_lost, loss.lost_bytes);
        if loss.congestion_event {
            tally(&mut self.stats.congestion_events, 1);
            if loss.persistent {
                tally(&mut self.stats.persistent_congestion_events, 1);
            }
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
                SentFrame::PathCid {
                    path_id,
                    sequence,
                    new,
                } => self.path_cids.requeue(PathId(*path_id), *sequence, *new),
                SentFrame::PathAbandon {
                    path_id,
                    error_code,
                } => self.requeue_path_abandon(PathId(*path_id), *error_code),
                SentFrame::MaxPathId { value } => {
                    self.multipath.on_max_path_id_lost(PathId(*value))
                }
                SentFrame::PathsBlocked { limit } => {
                    self.multipath.on_paths_blocked_lost(PathId(*limit))
                }
                SentFrame::PathStatus { path_id, sequence } => self
                    .multipath
                    .local_status
                    .on_lost(PathId(*path_id), *sequence),
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

    /// What the PTO depends on that only the connection knows (RFC 9002 A.8).
    pub(super) fn pto_context(&self) -> PtoContext {
        PtoContext {
            handshake_confirmed: self.handshake.confirmed,
            max_ack_delay: self.peer_max_ack_delay(),
            peer_completed_address_validation: self.peer_completed_address_validation(),
            handshake_keys: self.spaces[SpaceId::Handshake as usize].can_send(),
            amplification_blocked: self.amplification_budget() == 0,
        }
    }

    /// RFC 9002 A.8 SetLossDetectionTimer (`Recovery::loss_detection_timer`).
    pub(super) fn set_loss_detection_timer(&mut self, now: Instant) {
        if self.multipath.path0_abandoned {
            // draft-ietf-quic-multipath §3.4: nothing in flight on path 0 any more.
            self.timers.stop(Timer::LossDetection);
            return;
        }
        let timer = self
            .path
            .recovery
            .loss_detection_timer(now, &self.pto_context());
        self.arm_loss_detection_timer(now, timer);
    }

    /// Puts the loss detection deadline in the timer table.
    fn arm_loss_detection_timer(&mut self, now: Instant, timer: LossTimer) {
        if let (LossTimer::Pto(t), None) = (timer, self.stats.first_pto) {
            self.stats.first_pto = Some(
                t.saturating_duration_since(now)
                    .max(self.path.recovery.rtt().pto_base()),
            );
        }
        self.timers
            .set_or_stop(Timer::LossDetection, timer.deadline());
    }

    /// RFC 9002 A.9 OnLossDetectionTimeout (`Recovery::on_loss_detection_timeout`),
    /// then what it means for the connection: retransmissions or probes, statistics,
    /// events; the timer is re-armed.
    pub(super) fn on_loss_detection_timeout(&mut self, now: Instant) {
        let ctx = self.pto_context();
        let mtu_probe = self.mtu_probe();
        let outcome =
            self.path
                .recovery
                .on_loss_detection_timeout(now, &ctx, &self.config.loss, mtu_probe);
        match outcome {
            TimeoutOutcome::Lost { space, loss } => self.apply_losses(now, space, loss),
            TimeoutOutcome::Pto { probe, pto_count } => {
                match probe {
                    // Anti-deadlock: a padded Initial earns credit; a Handshake
                    // packet proves the address.
                    Some(Probe::AntiDeadlock(space)) => self.spaces[space as usize].probes = 1,
                    Some(Probe::Pto(space)) => self.queue_probes(space),
                    None => {}
                }
                tally(&mut self.stats.pto_count_total, 1);
                if self.logging() {
                    self.emit(now, Event::PtoExpired { pto_count });
                }
                // `multipath.abandon_after_ptos` (`multipath_failed.rs`; off by default).
                self.abandon_if_failed(PathId::INITIAL);
            }
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
                .may_speed_up(now, self.path.recovery.rtt().pto_base())
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
        let oldest = oldest_stream_data(self.path.recovery.sent(SpaceId::Data));
        for r in &oldest {
            self.streams.on_lost(r);
        }
    }

    fn log_metrics(
        &mut self,
        now: Instant,
        was_slow_start: bool,
        careful_resume_updates: Vec<CarefulResumeUpdate>,
    ) {
        if !self.logging() {
            return;
        }
        let scalable = self.path.recovery.cc().scalable_ecn();
        let m = RecoveryMetrics {
            min_rtt: Some(self.path.recovery.rtt().min()),
            smoothed_rtt: Some(self.path.recovery.rtt().smoothed()),
            latest_rtt: Some(self.path.recovery.rtt().latest()),
            rtt_variance: Some(self.path.recovery.rtt().rttvar()),
            pto_count: Some(self.path.recovery.pto_count()),
            congestion_window: Some(self.path.recovery.cc().window()),
            bytes_in_flight: Some(self.bytes_in_flight()),
            ssthresh: (self.path.recovery.cc().ssthresh() != u64::MAX)
                .then(|| self.path.recovery.cc().ssthresh()),
            pacing_rate: self.path.recovery.cc().pacing_rate(),
            model_bandwidth: self.path.recovery.cc().model().and_then(|m| m.bandwidth),
            model_min_rtt: self.path.recovery.cc().model().and_then(|m| m.min_rtt),
            ecn_alpha_ppm: scalable.map(|s| s.alpha_ppm),
            ce_fraction_ppm: scalable.and_then(|s| s.ce_fraction_ppm),
        };
        self.emit(now, Event::MetricsUpdated(m));
        for u in careful_resume_updates {
            self.emit(u.at, Event::CarefulResumePhaseUpdated(Box::new(u)));
        }
        // Model-based controllers report their own transitions (`take_state_change`).
        if was_slow_start
            && !self.path.recovery.cc().in_slow_start()
            && self.path.recovery.cc().model().is_none()
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

#[cfg(test)]
#[path = "loss_tests.rs"]
mod tests;
