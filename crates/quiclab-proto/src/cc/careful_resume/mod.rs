//! Careful Resume (draft-ietf-tsvwg-careful-resume) as a layer over a window-based
//! controller (NewReno, CUBIC): the sender resumes from capacity saved on an earlier
//! connection: Reconnaissance confirms the path with the initial window, Unvalidated
//! jumps to half the saved window paced over one RTT, Validating waits for the jump's
//! ACKs, Safe Retreat drains the path after congestion, then Normal hands over to the
//! controller underneath.
//!
//! The layer owns the window while it differs from the controller's (Unvalidated,
//! Safe Retreat) and sets the controller's window on leaving those phases through
//! [`CongestionController::set_window`]. Unvalidated packets are recognised by their
//! send time (ACKs carry the send time to the controller), logged by packet number.

mod config;
mod store;
#[cfg(test)]
mod tests;

pub use crate::events::{
    CarefulResumePhase as Phase, CarefulResumeTrigger as Trigger,
    CarefulResumeUpdate as PhaseUpdate,
};
pub use config::{CarefulResumeConfig, CarefulResumeConfigError, UnvalidatedPacing};
pub use store::{ClaimError, SavedPathParams, SavedPathStore, StorePolicy};

use super::CongestionController;
use crate::events::CongestionState;
use crate::recovery::{LostPacket, RateSample, RttEstimator};
use crate::time::Instant;
use std::collections::VecDeque;
use std::time::Duration;

/// A controller wrapped in Careful Resume. Call contract: that of
/// [`CongestionController`]; the inner controller must implement `set_window`.
#[derive(Debug)]
pub struct CarefulResume {
    inner: Box<dyn CongestionController>,
    cfg: CarefulResumeConfig,
    saved_cwnd: u64,
    saved_rtt: Duration,
    mds: u64,
    /// The controller's initial window (IW).
    iw: u64,
    phase: Phase,
    /// Bytes in flight as last known (resynchronised on every send and ACK).
    flight: u64,
    /// Reconnaissance starts "after connection setup" (draft §4.2): at the first ACK,
    /// which ends the handshake's first round trip. Bytes sent since then (the initial
    /// data) and bytes of them acknowledged.
    recon_start: Option<Instant>,
    initial_sent: u64,
    initial_acked: u64,
    /// Whether anything was sent yet (the starting phase is logged with the first).
    started: bool,
    /// The window this layer imposes (Unvalidated: jump_cwnd; Safe Retreat: the
    /// retreat window); `None` = the controller's.
    cwnd: Option<u64>,
    jump_cwnd: u64,
    pipesize: u64,
    /// Most recent RTT sample (draft §2 "current RTT") and the minimum RTT.
    current_rtt: Duration,
    min_rtt: Duration,
    /// Packet number of the packet being sent (from `on_packet_number`).
    next_pn: u64,
    unvalidated_since: Option<Instant>,
    first_unvalidated: Option<(Instant, u64)>,
    last_unvalidated: Option<(Instant, u64)>,
    /// Safe Retreat ends when a packet sent at or after this is acknowledged.
    retreat_until: Option<Instant>,
    /// Set by an ACK of an unvalidated packet, acted on once the ACK is processed.
    first_unvalidated_acked: bool,
    last_sent: Option<Instant>,
    updates: VecDeque<PhaseUpdate>,
}

impl CarefulResume {
    /// Wraps `inner` (fresh, at its initial window) for a connection resuming from the
    /// saved values of `cfg` (validated, enabled).
    pub fn new(
        inner: Box<dyn CongestionController>,
        cfg: CarefulResumeConfig,
        max_datagram_size: u64,
    ) -> Self {
        let iw = inner.window();
        CarefulResume {
            saved_cwnd: cfg.saved_cwnd_bytes,
            saved_rtt: cfg.saved_rtt(),
            inner,
            cfg,
            mds: max_datagram_size.max(1),
            iw,
            phase: Phase::Reconnaissance,
            flight: 0,
            recon_start: None,
            initial_sent: 0,
            initial_acked: 0,
            started: false,
            cwnd: None,
            jump_cwnd: 0,
            pipesize: 0,
            current_rtt: Duration::ZERO,
            min_rtt: Duration::ZERO,
            next_pn: 0,
            unvalidated_since: None,
            first_unvalidated: None,
            last_unvalidated: None,
            retreat_until: None,
            first_unvalidated_acked: false,
            last_sent: None,
            updates: VecDeque::new(),
        }
    }

    /// The phase now.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// PipeSize (draft §2), bytes.
    pub fn pipesize(&self) -> u64 {
        self.pipesize
    }

    /// jump_cwnd in force (0 before the Unvalidated Phase).
    pub fn jump_cwnd(&self) -> u64 {
        self.jump_cwnd
    }

    fn min_window(&self) -> u64 {
        // draft §4.5 note: "The minimum CWND in QUIC is 2 packets" (RFC 9002 §7.2).
        2 * self.mds
    }

    fn go(&mut self, now: Instant, new: Phase, trigger: Option<Trigger>) {
        let old = self.phase;
        self.phase = new;
        let ssthresh = self.inner.ssthresh();
        // At most one update per phase and the phases only move forward (Figure 1), so
        // the queue holds at most six entries whether or not anyone drains it.
        self.updates.push_back(PhaseUpdate {
            at: now,
            old: Some(old),
            new,
            trigger,
            pipesize: self.pipesize,
            first_unvalidated_packet: self.first_unvalidated.map_or(0, |p| p.1),
            last_unvalidated_packet: self.last_unvalidated.map_or(0, |p| p.1),
            congestion_window: self.window(),
            ssthresh: (ssthresh != u64::MAX).then_some(ssthresh),
            saved_congestion_window: self.saved_cwnd,
            saved_rtt: self.saved_rtt,
        });
    }

    /// Leaves Careful Resume for good with the controller at `cwnd` (if given).
    fn leave_for_normal(&mut self, now: Instant, trigger: Option<Trigger>, cwnd: Option<u64>) {
        if let Some(w) = cwnd {
            self.inner.set_window(w, None);
        }
        self.cwnd = None;
        self.go(now, Phase::Normal, trigger);
    }

    fn rtt_scaled(&self, f: f64) -> Duration {
        Duration::from_secs_f64(self.saved_rtt.as_secs_f64() * f)
    }

    /// draft §4.2 "Minimum RTT too small" and §5.4 (more than ten times saved_rtt).
    fn rtt_confirmed(&self) -> bool {
        self.min_rtt > self.rtt_scaled(self.cfg.rtt_min_fraction)
            && self.min_rtt <= self.rtt_scaled(self.cfg.rtt_max_factor)
    }

    /// draft §4.2 "Path confirmed": the initial data (an IW sent after connection
    /// setup, or all of it when the sender had less) was acknowledged without
    /// congestion (congestion would have ended Careful Resume).
    fn path_confirmed(&self) -> bool {
        self.initial_acked > 0
            && (self.initial_acked >= self.iw || self.initial_acked >= self.initial_sent)
    }

    /// Reconnaissance → Unvalidated, at the send that fills the controller's window
    /// (draft §4.2: deferred "to the time at which more data is sent than would have
    /// normally been permitted").
    fn maybe_jump(&mut self, now: Instant, bytes_in_flight: u64) {
        if !self.path_confirmed() || bytes_in_flight + self.mds <= self.inner.window() {
            return;
        }
        if !self.rtt_confirmed() {
            self.leave_for_normal(now, Some(Trigger::RttNotValidated), None);
            return;
        }
        // draft §4.3 "Setting the jump_cwnd": jump_cwnd <= min(max_jump, saved_cwnd/2).
        let half = (self.saved_cwnd as f64 * self.cfg.jump_fraction) as u64;
        let jump = self.cfg.max_jump_bytes.map_or(half, |m| m.min(half));
        if jump <= self.inner.window() {
            // Nothing to gain over the controller's own window.
            self.leave_for_normal(now, None, None);
            return;
        }
        // draft §4.3 "Initialising PipeSize": the flight size on entry.
        self.pipesize = bytes_in_flight;
        self.jump_cwnd = jump;
        self.cwnd = Some(jump);
        self.unvalidated_since = Some(now);
        self.go(
            now,
            Phase::Unvalidated,
            Some(Trigger::CongestionWindowLimited),
        );
    }

    /// draft §4.3 "Check flight_size", after an event ending the Unvalidated Phase.
    fn end_unvalidated(&mut self, now: Instant, trigger: Trigger) {
        let flight = self.flight;
        if flight < self.iw || flight <= self.pipesize {
            // "the CWND is reset to the PipeSize ... not reduced below IW".
            let w = self.pipesize.max(self.iw);
            self.leave_for_normal(now, Some(Trigger::RateLimited), Some(w));
        } else {
            // "Otherwise, the CWND MUST be set to the flight_size".
            self.inner.set_window(flight, None);
            self.cwnd = None;
            self.go(now, Phase::Validating, Some(trigger));
        }
    }

    fn unvalidated_too_long(&self, now: Instant) -> bool {
        let limit = self.current_rtt.mul_f64(self.cfg.unvalidated_rtts);
        self.unvalidated_since.is_some_and(|t| {
            !self.current_rtt.is_zero() && now.saturating_duration_since(t) > limit
        })
    }

    /// draft §4.5: entry to Safe Retreat. The saved parameters are no longer valid (the
    /// driver deletes them from its store when it sees this phase).
    fn retreat(&mut self, now: Instant, trigger: Trigger) {
        let w = ((self.pipesize as f64 * self.cfg.retreat_fraction) as u64).max(self.min_window());
        self.cwnd = Some(w);
        self.retreat_until = self.last_sent;
        self.go(now, Phase::SafeRetreat, Some(trigger));
    }

    /// draft §4.5: leaving Safe Retreat, ssthresh = PipeSize · Beta, window kept.
    fn exit_retreat(&mut self, now: Instant) {
        let w = self.cwnd.unwrap_or(self.inner.window());
        let ssthresh = ((self.pipesize as f64 * self.cfg.beta) as u64).max(self.min_window());
        self.inner.set_window(w, Some(ssthresh));
        self.cwnd = None;
        self.go(now, Phase::Normal, Some(Trigger::ExitRecovery));
    }

    /// Per-ACK decisions once all its packets and losses were processed.
    fn after_ack(&mut self, now: Instant) {
        match self.phase {
            Phase::Unvalidated => {
                if self.min_rtt <= self.rtt_scaled(self.cfg.rtt_min_fraction) {
                    // draft §4.3 "Confirming the path during transmission".
                    self.retreat(now, Trigger::PathChanged);
                } else if self.first_unvalidated_acked {
                    self.end_unvalidated(now, Trigger::FirstUnvalidatedPacketAcknowledged);
                } else if self.unvalidated_too_long(now) {
                    self.end_unvalidated(now, Trigger::RttExceeded);
                }
            }
            Phase::Reconnaissance | Phase::Validating | Phase::SafeRetreat | Phase::Normal => {}
        }
        self.first_unvalidated_acked = false;
    }

    /// The next phase change not yet logged, oldest first.
    pub fn take_update(&mut self) -> Option<PhaseUpdate> {
        self.updates.pop_front()
    }

    fn pacing_rate_unvalidated(&self) -> Option<u64> {
        match self.cfg.unvalidated_pacing {
            // draft §5.6: ITT = current_rtt · MPS / jump_cwnd.
            UnvalidatedPacing::CurrentRtt => {
                let rtt = if self.current_rtt.is_zero() {
                    self.saved_rtt
                } else {
                    self.current_rtt
                };
                let rate = u128::from(self.jump_cwnd) * 1_000_000_000 / rtt.as_nanos().max(1);
                Some(u64::try_from(rate).unwrap_or(u64::MAX).max(1))
            }
            UnvalidatedPacing::Window => self.inner.pacing_rate(),
            UnvalidatedPacing::Off => Some(u64::MAX),
        }
    }
}

impl CongestionController for CarefulResume {
    fn on_packet_number(&mut self, pn: u64) {
        self.next_pn = pn;
        self.inner.on_packet_number(pn);
    }

    fn on_packet_sent(&mut self, now: Instant, bytes: u64, bytes_in_flight: u64) {
        self.flight = bytes_in_flight;
        self.last_sent = Some(now);
        if !self.started {
            // The first packet: log the phase Careful Resume starts in.
            self.started = true;
            self.go(now, Phase::Reconnaissance, None);
            if let Some(u) = self.updates.back_mut() {
                u.old = None;
            }
        }
        if self.phase == Phase::Reconnaissance && self.recon_start.is_some() {
            self.initial_sent += bytes;
        }
        self.inner.on_packet_sent(now, bytes, bytes_in_flight);
        match self.phase {
            Phase::Reconnaissance => self.maybe_jump(now, bytes_in_flight),
            Phase::Unvalidated => {
                if self.first_unvalidated.is_none() {
                    self.first_unvalidated = Some((now, self.next_pn));
                }
                self.last_unvalidated = Some((now, self.next_pn));
                // draft §4.3 "Completed sending all unvalidated packets": flight_size
                // equals the CWND (less than one packet of it unused).
                if bytes_in_flight + self.mds > self.jump_cwnd {
                    self.end_unvalidated(now, Trigger::LastUnvalidatedPacketSent);
                } else if self.unvalidated_too_long(now) {
                    self.end_unvalidated(now, Trigger::RttExceeded);
                }
            }
            Phase::Validating | Phase::SafeRetreat | Phase::Normal => {}
        }
    }

    fn on_packet_acked(
        &mut self,
        now: Instant,
        sent_time: Instant,
        bytes: u64,
        app_limited: bool,
        rtt: &RttEstimator,
    ) {
        self.flight = self.flight.saturating_sub(bytes);
        self.current_rtt = rtt.latest();
        self.min_rtt = rtt.min();
        match self.phase {
            Phase::Reconnaissance => {
                match self.recon_start {
                    None => self.recon_start = Some(now),
                    Some(t) if sent_time >= t => self.initial_acked += bytes,
                    Some(_) => {}
                }
                self.inner
                    .on_packet_acked(now, sent_time, bytes, app_limited, rtt);
            }
            Phase::Unvalidated => {
                // draft §4.3 "Tracking PipeSize".
                self.pipesize += bytes;
                if self.first_unvalidated.is_some_and(|(t, _)| sent_time >= t) {
                    self.first_unvalidated_acked = true;
                }
                self.inner
                    .on_packet_acked(now, sent_time, bytes, app_limited, rtt);
            }
            Phase::Validating => {
                // draft §4.4 "Tracking PipeSize", "Updating CWND" (normal rules).
                self.pipesize += bytes;
                self.inner
                    .on_packet_acked(now, sent_time, bytes, app_limited, rtt);
                if self.last_unvalidated.is_none_or(|(t, _)| sent_time >= t) {
                    self.leave_for_normal(
                        now,
                        Some(Trigger::LastUnvalidatedPacketAcknowledged),
                        None,
                    );
                }
            }
            Phase::SafeRetreat => {
                // draft §4.5: PipeSize tracked, "CWND MUST NOT be increased".
                self.pipesize += bytes;
                if self.retreat_until.is_none_or(|t| sent_time >= t) {
                    self.exit_retreat(now);
                }
            }
            Phase::Normal => self
                .inner
                .on_packet_acked(now, sent_time, bytes, app_limited, rtt),
        }
    }

    fn on_congestion_event(
        &mut self,
        now: Instant,
        largest_lost_sent_time: Instant,
        persistent: bool,
        lost_bytes: u64,
    ) {
        self.flight = self.flight.saturating_sub(lost_bytes);
        if persistent && self.phase != Phase::Normal {
            // draft §4.6: persistent congestion ends Careful Resume.
            self.leave_for_normal(now, Some(Trigger::PacketLoss), self.cwnd);
        }
        match self.phase {
            Phase::Reconnaissance => {
                // draft §4.2 "Detected congestion": normal CC reacts.
                self.leave_for_normal(now, Some(Trigger::PacketLoss), None);
                self.inner
                    .on_congestion_event(now, largest_lost_sent_time, persistent, lost_bytes);
            }
            Phase::Unvalidated | Phase::Validating => self.retreat(now, Trigger::PacketLoss),
            // Already reduced for this episode of unvalidated packets.
            Phase::SafeRetreat => {}
            Phase::Normal => {
                self.inner
                    .on_congestion_event(now, largest_lost_sent_time, persistent, lost_bytes)
            }
        }
    }

    fn on_rate_sample(&mut self, now: Instant, rs: &RateSample, rtt: &RttEstimator) {
        self.flight = rs.bytes_in_flight;
        self.after_ack(now);
        self.inner.on_rate_sample(now, rs, rtt);
    }

    fn on_packet_lost(&mut self, now: Instant, lost: &LostPacket) {
        self.inner.on_packet_lost(now, lost);
    }

    fn on_spurious_congestion(&mut self, now: Instant) {
        if self.phase == Phase::Normal {
            self.inner.on_spurious_congestion(now);
        }
    }

    /// A CE mark is congestion as a loss is (draft §4.2-§4.4 name both): the same
    /// phase changes as `on_congestion_event`, with the ECN trigger.
    fn on_ecn_ce(&mut self, now: Instant, sent_time: Instant) {
        match self.phase {
            Phase::Reconnaissance => {
                self.leave_for_normal(now, Some(Trigger::EcnCe), None);
                self.inner.on_ecn_ce(now, sent_time);
            }
            Phase::Unvalidated | Phase::Validating => self.retreat(now, Trigger::EcnCe),
            Phase::SafeRetreat => {}
            Phase::Normal => self.inner.on_ecn_ce(now, sent_time),
        }
    }

    fn window(&self) -> u64 {
        self.cwnd.unwrap_or_else(|| self.inner.window())
    }

    fn ssthresh(&self) -> u64 {
        self.inner.ssthresh()
    }

    fn in_slow_start(&self) -> bool {
        match self.phase {
            Phase::Unvalidated | Phase::SafeRetreat => false,
            _ => self.inner.in_slow_start(),
        }
    }

    fn in_recovery(&self) -> bool {
        self.phase == Phase::SafeRetreat || self.inner.in_recovery()
    }

    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn on_max_datagram_size(&mut self, mds: u64) {
        self.mds = mds.max(1);
        self.inner.on_max_datagram_size(mds);
    }

    fn pacing_rate(&self) -> Option<u64> {
        if self.phase == Phase::Unvalidated {
            self.pacing_rate_unvalidated()
        } else {
            self.inner.pacing_rate()
        }
    }

    fn set_window(&mut self, cwnd: u64, ssthresh: Option<u64>) -> bool {
        self.inner.set_window(cwnd, ssthresh)
    }

    fn set_coupling(&mut self, coupling: Option<super::Coupling>) {
        self.inner.set_coupling(coupling);
    }

    fn inter_loss_bytes(&self) -> u64 {
        self.inner.inter_loss_bytes()
    }

    fn take_careful_resume_update(&mut self) -> Option<PhaseUpdate> {
        self.take_update()
    }

    fn careful_resume_phase(&self) -> Option<Phase> {
        Some(self.phase)
    }

    fn congestion_state(&self) -> CongestionState {
        if self.in_recovery() {
            CongestionState::Recovery
        } else if self.in_slow_start() {
            CongestionState::SlowStart
        } else {
            CongestionState::CongestionAvoidance
        }
    }
}
