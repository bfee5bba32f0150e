//! BBRv3 as specified in draft-ietf-ccwg-bbr, driven the QUIC way: per-packet delivery
//! snapshots and one rate sample per ACK from the connection
//! ([`crate::recovery::DeliveryRateEstimator`]), per-packet loss calls, and the pacing
//! rate handed back to the connection's pacer.
//!
//! One concern per file, in the draft's order and names:
//! - `config`: the constants as knobs;
//! - `filters`: the windowed max filter (max_bw, extra_acked);
//! - `model`: round counting, max_bw, the short- and long-term bounds, loss response
//!   (§5.5);
//! - `startup`: Startup and Drain (§5.3.1, §5.3.2);
//! - `probe_bw`: the ProbeBW cycle DOWN, CRUISE, REFILL, UP (§5.3.3);
//! - `probe_rtt`: min_rtt and ProbeRTT (§5.3.4), restart from idle (§5.4);
//! - `control`: pacing rate and cwnd (§5.6).
//!
//! Departures, each because QUIC or this connection differs from the draft's TCP frame:
//! - RS.rtt is send-to-ACK of the newest acknowledged packet, without ack-delay
//!   correction (§4.2 asks for the newest packet's sample).
//! - C.is_cwnd_limited is "bytes in flight reached cwnd at a send during the last
//!   packet-timed round", tracked here from `on_packet_sent`.
//! - HandleRestartFromIdle's "C.app_limited" is read from the last rate sample.
//! - The send quantum (§5.6.3) is the pacer's fixed 10-packet burst; the offload budget
//!   is therefore that burst's bytes (§5.5.8 "QUIC Offload Budget": the send quantum).
//! - Persistent congestion (RFC 9002 §7.6) plays the RTO's part (§5.6.4.4 OnEnterRTO),
//!   collapsing cwnd to one packet.
//! - A spurious loss episode (§5.5.11) is one whose lost packets were all acknowledged
//!   later (the connection's `SpuriousLossDetector`, 1-RTT packets only).

mod config;
mod control;
mod filters;
mod model;
mod probe_bw;
mod probe_rtt;
mod startup;

#[cfg(test)]
mod tests;

pub use config::{BbrConfig, BbrConfigError};

use super::recovery_period::RecoveryPeriod;
use super::{initial_window, CongestionController, ModelEstimate};
use crate::events::CongestionState;
use crate::recovery::{pacer::DEFAULT_BURST_PACKETS, LostPacket, RateSample, RttEstimator};
use crate::rng::DetRng;
use crate::time::Instant;
use filters::WindowedMax;
use std::collections::VecDeque;
use std::time::Duration;

/// BBR's states (draft §5.1), ProbeBW's four phases included.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BbrState {
    Startup,
    Drain,
    ProbeBwDown,
    ProbeBwCruise,
    ProbeBwRefill,
    ProbeBwUp,
    ProbeRtt,
}

impl BbrState {
    /// IsInAProbeBWState (§5.3.3.6).
    pub fn is_probe_bw(self) -> bool {
        matches!(
            self,
            BbrState::ProbeBwDown
                | BbrState::ProbeBwCruise
                | BbrState::ProbeBwRefill
                | BbrState::ProbeBwUp
        )
    }

    fn qlog(self) -> CongestionState {
        match self {
            BbrState::Startup => CongestionState::BbrStartup,
            BbrState::Drain => CongestionState::BbrDrain,
            BbrState::ProbeBwDown => CongestionState::BbrProbeBwDown,
            BbrState::ProbeBwCruise => CongestionState::BbrProbeBwCruise,
            BbrState::ProbeBwRefill => CongestionState::BbrProbeBwRefill,
            BbrState::ProbeBwUp => CongestionState::BbrProbeBwUp,
            BbrState::ProbeRtt => CongestionState::BbrProbeRtt,
        }
    }
}

/// BBR.ack_phase (§2.12).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AckPhase {
    Init,
    Refilling,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
}

/// "Infinity" for volumes and rates.
const INF: u64 = u64::MAX;

/// BBRv3 (draft-ietf-ccwg-bbr). Field names follow the draft's (BBR.x -> x, C.x -> x).
#[derive(Debug)]
pub struct Bbr {
    cfg: BbrConfig,
    /// C.SMSS: the path's maximum datagram size.
    mds: u64,
    initial_cwnd: u64,
    rng: DetRng,
    // --- Output control parameters (§2.5) ---
    cwnd: u64,
    /// C.pacing_rate, bytes per second.
    pacing_rate: u64,
    // --- Connection state as BBR sees it ---
    bytes_in_flight: u64,
    /// C.delivered after the last ACK.
    delivered: u64,
    /// Bytes in flight reached cwnd at a send in the current round.
    cwnd_limited_in_round: bool,
    /// C.is_cwnd_limited: ... in the current or the previous round.
    is_cwnd_limited: bool,
    /// The last rate sample was application-limited.
    app_limited: bool,
    recovery: RecoveryPeriod,
    has_seen_rtt: bool,
    // --- General state (§2.8) ---
    state: BbrState,
    pacing_gain: f64,
    cwnd_gain: f64,
    round_count: u64,
    round_start: bool,
    next_round_delivered: u64,
    idle_restart: bool,
    drain_start_round: u64,
    // --- Data rate model (§2.10) ---
    max_bw_filter: WindowedMax,
    cycle_count: u64,
    max_bw: u64,
    bw_shortterm: u64,
    bw: u64,
    // --- Data volume model (§2.10.2) ---
    min_rtt: Option<Duration>,
    min_rtt_stamp: Instant,
    extra_acked: u64,
    extra_acked_filter: WindowedMax,
    extra_acked_interval_start: Instant,
    extra_acked_delivered: u64,
    inflight_longterm: u64,
    inflight_shortterm: u64,
    // --- Congestion response (§2.10.3) ---
    bw_latest: u64,
    inflight_latest: u64,
    loss_round_delivered: u64,
    loss_round_start: bool,
    is_loss_in_round: bool,
    /// ACKs with losses in the current round (Startup's loss exit, §5.3.1.2).
    loss_events_in_round: u64,
    // --- Startup (§2.13) ---
    full_bw_reached: bool,
    full_bw_now: bool,
    full_bw: u64,
    full_bw_count: u64,
    // --- ProbeBW (§2.14) ---
    ack_phase: AckPhase,
    is_bw_probe_sample: bool,
    bw_probe_up_acked: u64,
    probe_up_acked_per_inc: u64,
    bw_probe_up_rounds: u32,
    rounds_since_probe_up: u64,
    bw_probe_wait: Duration,
    cycle_stamp: Instant,
    prev_probe_too_high: bool,
    prev_probe_precautionary: bool,
    // --- Undo (§2.15) ---
    undo_state: Option<BbrState>,
    undo_bw_shortterm: u64,
    undo_inflight_shortterm: u64,
    undo_inflight_longterm: u64,
    // --- ProbeRTT (§2.16) ---
    probe_rtt_min_delay: Option<Duration>,
    probe_rtt_min_stamp: Instant,
    probe_rtt_expired: bool,
    probe_rtt_done_stamp: Option<Instant>,
    probe_rtt_round_done: bool,
    prior_cwnd: u64,
    /// Times ProbeRTT was entered (for tests and reports).
    probe_rtt_count: u64,
    /// Transitions not yet reported through `take_state_change`, oldest first (one ACK
    /// can pass through several states, e.g. Drain -> ProbeBW_DOWN -> CRUISE).
    state_log: VecDeque<BbrState>,
}

impl Bbr {
    /// A controller in Startup (§5.2.1 OnInit) for a path whose maximum datagram size is
    /// `max_datagram_size`; `seed` drives ProbeBW's randomised wait (§5.3.3.6).
    pub fn new(cfg: BbrConfig, max_datagram_size: u64, seed: u64) -> Self {
        let mds = max_datagram_size.max(1);
        let initial_cwnd = initial_window(cfg.initial_window_packets, mds).max(4 * mds);
        let mut bbr = Bbr {
            mds,
            initial_cwnd,
            rng: DetRng::new(seed),
            cwnd: initial_cwnd,
            pacing_rate: 0,
            bytes_in_flight: 0,
            delivered: 0,
            cwnd_limited_in_round: false,
            is_cwnd_limited: false,
            app_limited: false,
            recovery: RecoveryPeriod::default(),
            has_seen_rtt: false,
            state: BbrState::Startup,
            pacing_gain: 1.0,
            cwnd_gain: cfg.cwnd_gain,
            round_count: 0,
            round_start: false,
            next_round_delivered: 0,
            idle_restart: false,
            drain_start_round: 0,
            max_bw_filter: WindowedMax::default(),
            cycle_count: 0,
            max_bw: 0,
            bw_shortterm: INF,
            bw: 0,
            min_rtt: None,
            min_rtt_stamp: Instant::ZERO,
            extra_acked: 0,
            extra_acked_filter: WindowedMax::default(),
            extra_acked_interval_start: Instant::ZERO,
            extra_acked_delivered: 0,
            inflight_longterm: INF,
            inflight_shortterm: INF,
            bw_latest: 0,
            inflight_latest: 0,
            loss_round_delivered: 0,
            loss_round_start: false,
            is_loss_in_round: false,
            loss_events_in_round: 0,
            full_bw_reached: false,
            full_bw_now: false,
            full_bw: 0,
            full_bw_count: 0,
            ack_phase: AckPhase::Init,
            is_bw_probe_sample: false,
            bw_probe_up_acked: 0,
            probe_up_acked_per_inc: INF,
            bw_probe_up_rounds: 0,
            rounds_since_probe_up: 0,
            bw_probe_wait: Duration::ZERO,
            cycle_stamp: Instant::ZERO,
            prev_probe_too_high: false,
            prev_probe_precautionary: false,
            undo_state: None,
            undo_bw_shortterm: 0,
            undo_inflight_shortterm: 0,
            undo_inflight_longterm: 0,
            probe_rtt_min_delay: None,
            probe_rtt_min_stamp: Instant::ZERO,
            probe_rtt_expired: false,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            prior_cwnd: 0,
            probe_rtt_count: 0,
            state_log: VecDeque::new(),
            cfg,
        };
        bbr.init_pacing_rate(None);
        bbr.enter_startup();
        bbr.state_log.clear();
        bbr
    }

    /// The current state.
    pub fn state(&self) -> BbrState {
        self.state
    }
    /// BBR.max_bw in bytes per second.
    pub fn max_bw(&self) -> u64 {
        self.max_bw
    }
    /// BBR.bw in bytes per second.
    pub fn bw(&self) -> u64 {
        self.bw
    }
    /// BBR.min_rtt, once there is a sample.
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }
    /// BBR.inflight_longterm (`u64::MAX` = unset).
    pub fn inflight_longterm(&self) -> u64 {
        self.inflight_longterm
    }
    /// BBR.full_bw_reached.
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }
    /// How many times ProbeRTT was entered.
    pub fn probe_rtt_count(&self) -> u64 {
        self.probe_rtt_count
    }

    /// Changes state, remembering to report it.
    fn set_state(&mut self, s: BbrState) {
        if self.state != s {
            // Bounded: a reader that never drains keeps the latest transitions.
            if self.state_log.len() >= 16 {
                self.state_log.pop_front();
            }
            self.state_log.push_back(s);
        }
        self.state = s;
    }

    /// §5.6.2 / §5.5.8: the smallest volume that keeps a send quantum moving.
    fn offload_budget(&self) -> u64 {
        DEFAULT_BURST_PACKETS * self.mds
    }

    /// BBR.MinPipeCwnd (§2.9): 4 packets.
    fn min_pipe_cwnd(&self) -> u64 {
        4 * self.mds
    }

    /// Per-ACK steps (§5.2.3 UpdateOnACK) for one rate sample.
    fn update_on_ack(&mut self, now: Instant, rs: &RateSample) {
        self.update_model_and_state(now, rs);
        self.update_control_parameters(rs);
    }

    /// §5.2.3 UpdateModelAndState.
    fn update_model_and_state(&mut self, now: Instant, rs: &RateSample) {
        self.update_latest_delivery_signals(rs);
        self.update_congestion_signals(rs);
        self.update_ack_aggregation(now, rs);
        self.check_full_bw_reached(rs);
        self.check_startup_done(rs);
        self.check_drain_done(now);
        self.update_probe_bw_cycle_phase(now, rs);
        self.update_min_rtt(now, rs);
        self.check_probe_rtt(now, rs);
        self.advance_latest_delivery_signals(rs);
        self.bound_bw_for_model();
    }
}

impl CongestionController for Bbr {
    fn on_packet_sent(&mut self, now: Instant, bytes: u64, bytes_in_flight: u64) {
        // §5.2.2 OnTransmit: HandleRestartFromIdle before the flight restarts.
        if bytes_in_flight <= bytes {
            self.handle_restart_from_idle(now);
        }
        self.bytes_in_flight = bytes_in_flight;
        if bytes_in_flight >= self.cwnd {
            self.cwnd_limited_in_round = true;
            self.is_cwnd_limited = true;
        }
    }

    fn on_packet_acked(
        &mut self,
        _now: Instant,
        sent_time: Instant,
        _bytes: u64,
        _app_limited: bool,
        _rtt: &RttEstimator,
    ) {
        // §5.6.4.4: leaving loss recovery restores the last known good cwnd.
        let was = self.recovery.is_running();
        self.recovery.on_ack(sent_time);
        if was && !self.recovery.is_running() {
            self.restore_cwnd();
        }
    }

    fn on_packet_lost(&mut self, now: Instant, lost: &LostPacket) {
        self.handle_lost_packet(now, lost);
    }

    fn on_congestion_event(
        &mut self,
        now: Instant,
        largest_lost_sent_time: Instant,
        persistent: bool,
        _lost_bytes: u64,
    ) {
        let entering = !self.recovery.is_running();
        if self
            .recovery
            .on_congestion_event(now, largest_lost_sent_time)
            && entering
        {
            // §5.6.4.4 OnEnterFastRecovery (SaveStateUponLoss ran in NoteLoss).
            self.save_cwnd_outside_recovery();
        }
        if persistent {
            // §5.6.4.4 OnEnterRTO: C.cwnd = C.inflight + 1 packet; everything in flight
            // was just declared lost, so one packet.
            // Recovery restarts now, so that RestoreCwnd waits for a packet sent after
            // the collapse.
            self.save_cwnd();
            self.save_state_upon_loss();
            self.recovery.reset();
            self.recovery
                .on_congestion_event(now, largest_lost_sent_time);
            self.cwnd = self.mds;
        }
    }

    /// draft-ietf-ccwg-bbr §3.7 ("ECN"): BBRv3 specifies no response to ECN, but a
    /// connection that sends ECT "MUST treat any CE marks as congestion". quiclab's
    /// choice (an assumption, not the draft's text): CE is treated as BBR treats a
    /// loss in its bounds, `model.rs` `handle_ce`.
    fn on_ecn_ce(&mut self, now: Instant, _sent_time: Instant) {
        self.handle_ce(now);
    }

    fn on_spurious_congestion(&mut self, _now: Instant) {
        self.handle_spurious_loss_detection();
    }

    fn on_rate_sample(&mut self, now: Instant, rs: &RateSample, rtt: &RttEstimator) {
        self.delivered = rs.total_delivered;
        self.bytes_in_flight = rs.bytes_in_flight;
        self.app_limited = rs.is_app_limited;
        if !self.has_seen_rtt && rtt.has_sample() {
            // §5.6.2 InitPacingRate, once the first RTT sample exists.
            self.has_seen_rtt = true;
            if self.bw == 0 {
                self.init_pacing_rate(Some(rtt.smoothed()));
            }
        }
        self.update_on_ack(now, rs);
    }

    fn window(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> u64 {
        u64::MAX
    }
    /// Startup is BBR's slow start (for the connection's ACK-frequency policy).
    fn in_slow_start(&self) -> bool {
        self.state == BbrState::Startup
    }
    fn in_recovery(&self) -> bool {
        self.recovery.is_running()
    }
    fn name(&self) -> &'static str {
        "bbr"
    }
    fn on_max_datagram_size(&mut self, mds: u64) {
        self.mds = mds.max(1);
    }
    fn pacing_rate(&self) -> Option<u64> {
        Some(self.pacing_rate.max(1))
    }
    fn wants_app_limited_mark(&self) -> bool {
        // §5.3.4.4 HandleProbeRTT: ignore low rate samples during ProbeRTT.
        self.state == BbrState::ProbeRtt
    }
    fn model(&self) -> Option<ModelEstimate> {
        Some(ModelEstimate {
            bandwidth: Some(self.bw),
            min_rtt: self.min_rtt,
        })
    }
    fn take_state_change(&mut self) -> Option<CongestionState> {
        self.state_log.pop_front().map(BbrState::qlog)
    }
    fn congestion_state(&self) -> CongestionState {
        self.state.qlog()
    }
}
