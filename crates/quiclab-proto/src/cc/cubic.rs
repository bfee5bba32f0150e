//! CUBIC as specified in RFC 9438, driven the QUIC way (RFC 9002 §7).
//!
//! The window (`cwnd`, `ssthresh`) is kept in integer bytes; f64 is used only for the
//! cubic function and its state (`W_max`, `K`, `W_est`), so a run is deterministic on a
//! given platform. Time comes only from the `now` arguments.
//!
//! Slow start uses HyStart++ (RFC 9406, RFC 9438 §4.10 SHOULD) by default
//! ([`CubicConfig::hystart`]); leaving it without a loss starts congestion avoidance with
//! K = 0 and W_max = cwnd (§4.10).
//!
//! Spurious-congestion undo (RFC 9438 §4.9.2, a MAY) is a knob, off by default
//! ([`CubicConfig::spurious_undo`]): the connection reports an episode whose lost packets
//! were all acknowledged later, and the state saved before the last reduction is
//! restored if cwnd is still below cwnd_prior.

use super::cubic_multcp::EmulatedFlows;
use super::hystart::{Hystart, HystartConfig, HystartPhase};
use super::recovery_period::RecoveryPeriod;
use super::{initial_window, CongestionController};
use crate::recovery::RttEstimator;
use crate::time::Instant;

/// CUBIC's knobs; defaults are RFC 9438's.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CubicConfig {
    /// Initial window in packets; `None` = RFC 9002 §7.2: min(10 * mds, max(2 * mds, 14720)).
    pub initial_window_packets: Option<u64>,
    /// Minimum window in packets (RFC 9002 §7.2 and RFC 9438 §4.6: 2).
    pub minimum_window_packets: u64,
    /// C, in segments / s^3 (RFC 9438 §5.1: 0.4). Must be finite and positive.
    pub c: f64,
    /// β_cubic, the multiplicative decrease factor (RFC 9438 §4.6: 0.7). In (0, 1).
    pub beta: f64,
    /// Fast convergence (RFC 9438 §4.7: SHOULD be implemented; on by default, though the
    /// RFC says to disable it for a lone flow).
    pub fast_convergence: bool,
    /// HyStart++ in the initial slow start (RFC 9438 §4.10: SHOULD); on by default
    /// (`hystart = false` turns it off; a table sets its knobs).
    pub hystart: HystartConfig,
    /// Undo a reduction caused by a spurious loss (RFC 9438 §4.9.2: MAY); off by
    /// default, since the RFC warns about paths whose capacity changes suddenly.
    pub spurious_undo: bool,
    /// mulTCP: compete like this many CUBIC flows (at least 1; 1 = plain RFC 9438, and
    /// then not serialized). β and the Reno-friendly α become N-flow values as
    /// Chromium's CubicBytes sets them; the cubic term is unchanged (see `cubic_multcp`).
    #[serde(skip_serializing_if = "is_one_flow")]
    pub emulated_flows: u32,
}

/// `emulated_flows` at its default (kept out of serialized configs).
fn is_one_flow(n: &u32) -> bool {
    *n == 1
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig {
            initial_window_packets: None,
            minimum_window_packets: 2,
            c: 0.4,
            beta: 0.7,
            fast_convergence: true,
            hystart: HystartConfig::enabled(),
            spurious_undo: false,
            emulated_flows: 1,
        }
    }
}

/// The state saved before a reduction (RFC 9438 §4.9.2: undo_cwnd, undo_cwnd_prior,
/// undo_ssthresh, undo_W_max, undo_K, undo_t_epoch, undo_W_est).
#[derive(Clone, Copy, Debug)]
struct Undo {
    cwnd: u64,
    cwnd_prior: u64,
    ssthresh: u64,
    w_max: f64,
    /// K and t_epoch.
    epoch: Option<Epoch>,
    w_est: f64,
}

/// The state of the current congestion-avoidance stage (RFC 9438 §4.1.2).
#[derive(Clone, Copy, Debug)]
struct Epoch {
    /// t_epoch, shifted forward by application-limited and idle periods (§4.2, §5.8).
    start: Instant,
    /// K in seconds (§4.2, eq. 2).
    k: f64,
    /// The last time the epoch's clock was looked at: an ACK in congestion avoidance, or
    /// a send that restarted an idle flight. Time after it that turns out to be
    /// application-limited is cut out of t.
    last_seen: Instant,
}

/// RFC 9438 CUBIC.
#[derive(Debug)]
pub struct Cubic {
    config: CubicConfig,
    mds: u64,
    /// kMinimumWindow in bytes (RFC 9002 §7.2).
    min_window: u64,
    cwnd: u64,
    ssthresh: u64,
    /// cwnd_prior in bytes: cwnd just before the last reduction (§4.1.2).
    cwnd_prior: u64,
    /// W_max in segments (§4.1.2); 0 until a congestion event, and after persistent
    /// congestion (then the next epoch starts with W_max = cwnd_epoch, K = 0: §4.8).
    w_max: f64,
    /// W_est in bytes (§4.3).
    w_est: f64,
    /// `None` outside congestion avoidance; started by the first ACK there.
    epoch: Option<Epoch>,
    /// The fractional part of the per-ACK growth carried between ACKs (a numerator over
    /// the window at the time), so that large windows do not stall.
    ca_remainder: u128,
    /// RFC 9002 §7.3.2: one reduction per recovery period.
    recovery: RecoveryPeriod,
    /// Slow start's exit and growth (RFC 9406 when enabled, else RFC 9002 §7.3.1).
    hystart: Hystart,
    /// What the last reduction changed, while it may still be undone.
    undo: Option<Undo>,
}

impl Cubic {
    /// A controller in slow start at the initial window, for a path whose maximum
    /// datagram size (the RFC's segment) is `max_datagram_size` bytes.
    pub fn new(config: CubicConfig, max_datagram_size: u64) -> Self {
        let mds = max_datagram_size.max(1);
        let min_window = config.minimum_window_packets.saturating_mul(mds);
        Cubic {
            mds,
            min_window,
            cwnd: initial_window(config.initial_window_packets, mds).max(min_window),
            ssthresh: u64::MAX,
            cwnd_prior: 0,
            w_max: 0.0,
            w_est: 0.0,
            epoch: None,
            ca_remainder: 0,
            recovery: RecoveryPeriod::default(),
            hystart: Hystart::new(config.hystart.clone()),
            undo: None,
            config,
        }
    }

    /// kMinimumWindow in bytes.
    pub fn minimum_window(&self) -> u64 {
        self.min_window
    }
    /// W_max in segments (0 before the first congestion event).
    pub fn w_max_segments(&self) -> f64 {
        self.w_max
    }
    /// Where HyStart++ is in the initial slow start.
    pub fn hystart_phase(&self) -> HystartPhase {
        self.hystart.phase()
    }
    /// K in seconds of the running congestion-avoidance stage.
    pub fn k_seconds(&self) -> Option<f64> {
        self.epoch.map(|e| e.k)
    }
    /// W_est in bytes, the Reno-friendly estimate (§4.3).
    pub fn reno_estimate_bytes(&self) -> f64 {
        self.w_est
    }

    /// The connections this one competes like (mulTCP; 1 = plain RFC 9438).
    fn flows(&self) -> EmulatedFlows {
        EmulatedFlows::new(self.config.emulated_flows)
    }

    /// β_cubic (RFC 9438 §4.6: 0.7), or β_N = (N − 1 + β) / N for N emulated flows.
    fn beta(&self) -> f64 {
        self.flows().beta(self.config.beta)
    }

    /// α_cubic = 3 (1 − β) / (1 + β) (RFC 9438 §4.3), or 3 N² (1 − β_N) / (1 + β_N).
    fn alpha_cubic(&self) -> f64 {
        self.flows().alpha_cubic(self.config.beta)
    }

    /// W_cubic(t) = C (t − K)^3 + W_max, in bytes (RFC 9438 §4.2, eq. 1).
    fn w_cubic_bytes(&self, t: f64, k: f64) -> f64 {
        let d = t - k;
        (self.config.c * d * d * d + self.w_max) * self.mds as f64
    }

    /// Slow start: RFC 9002 §7.3.1, one byte per acknowledged byte until ssthresh, or
    /// HyStart++ (RFC 9406 §4.2) when enabled.
    fn slow_start_ack(&mut self, now: Instant, sent_time: Instant, bytes: u64, rtt: &RttEstimator) {
        let step = self
            .hystart
            .on_slow_start_ack(now, sent_time, bytes, rtt, self.mds);
        self.cwnd = self.cwnd.saturating_add(step.growth);
        if step.enter_congestion_avoidance {
            // RFC 9406 §4.2: ssthresh = cwnd. RFC 9438 §4.10: no loss, so cwnd_prior =
            // cwnd; the next ACK starts a stage with K = 0 and W_max = cwnd_epoch
            // (`start_epoch`, since W_max is still 0).
            self.ssthresh = self.cwnd;
            self.cwnd_prior = self.cwnd;
            self.epoch = None;
        }
    }

    /// Starts a congestion-avoidance stage at `now` (RFC 9438 §4.2, §4.3, §4.8).
    fn start_epoch(&mut self, now: Instant) -> Epoch {
        let cwnd_epoch = self.cwnd as f64 / self.mds as f64;
        let k = if self.w_max <= cwnd_epoch {
            // §4.8 / §4.10: no useful W_max (after persistent congestion, or a window
            // already above it): plateau at the current window, K = 0.
            self.w_max = cwnd_epoch;
            0.0
        } else {
            // §4.2 eq. 2: K = cbrt((W_max − cwnd_epoch) / C).
            ((self.w_max - cwnd_epoch) / self.config.c).cbrt()
        };
        // §4.3: W_est starts at cwnd_epoch.
        self.w_est = self.cwnd as f64;
        self.ca_remainder = 0;
        let epoch = Epoch {
            start: now,
            k,
            last_seen: now,
        };
        self.epoch = Some(epoch);
        epoch
    }

    /// Cuts the time since the epoch's clock was last looked at out of t: it was
    /// application-limited or idle (RFC 9438 §4.2 and §5.8).
    fn pause_epoch(&mut self, now: Instant) {
        if let Some(e) = &mut self.epoch {
            let paused = now - e.last_seen;
            e.start = (e.start + paused).min(now);
            e.last_seen = now;
        }
    }

    /// Congestion avoidance on one acknowledged packet (RFC 9438 §4.2–§4.5).
    fn congestion_avoidance_ack(&mut self, now: Instant, bytes: u64, rtt: &RttEstimator) {
        let mut epoch = match self.epoch {
            Some(e) => e,
            None => self.start_epoch(now),
        };
        epoch.last_seen = now;
        self.epoch = Some(epoch);
        let t = (now - epoch.start).as_secs_f64();
        let cwnd = self.cwnd.max(1);
        // §4.3 eq. 4 in bytes: W_est += α · mds · bytes_acked / cwnd; α becomes 1 (N
        // for N emulated flows) once W_est has reached cwnd_prior.
        let alpha = if self.w_est >= self.cwnd_prior as f64 {
            self.flows().alpha_reno()
        } else {
            self.alpha_cubic()
        };
        self.w_est += alpha * (self.mds as f64) * (bytes as f64) / cwnd as f64;
        // §4.3: Reno-friendly region when W_cubic(t) < W_est: cwnd follows W_est (never
        // shrinking on an ACK).
        if self.w_cubic_bytes(t, epoch.k) < self.w_est {
            self.cwnd = self.cwnd.max(self.w_est as u64);
            self.ca_remainder = 0;
            return;
        }
        // §4.2: target = W_cubic(t + RTT), bounded to [cwnd, 1.5 cwnd].
        let lookahead = rtt.smoothed().as_secs_f64();
        let w = self.w_cubic_bytes(t + lookahead, epoch.k);
        let upper = cwnd.saturating_add(cwnd / 2);
        let target = if w < cwnd as f64 {
            cwnd
        } else {
            (w as u64).min(upper)
        };
        // §4.4 / §4.5: cwnd += (target − cwnd) / cwnd per segment, in bytes scaled by the
        // acknowledged bytes, keeping the remainder.
        let num = u128::from(target - cwnd) * u128::from(bytes) + self.ca_remainder;
        self.ca_remainder = num % u128::from(cwnd);
        let inc = u64::try_from(num / u128::from(cwnd)).unwrap_or(u64::MAX);
        self.cwnd = self.cwnd.saturating_add(inc);
    }

    /// RFC 9438 §4.6 and §4.7: one multiplicative decrease.
    fn reduce(&mut self) {
        // §4.9.2: save what the reduction changes.
        self.undo = self.config.spurious_undo.then_some(Undo {
            cwnd: self.cwnd,
            cwnd_prior: self.cwnd_prior,
            ssthresh: self.ssthresh,
            w_max: self.w_max,
            epoch: self.epoch,
            w_est: self.w_est,
        });
        let cwnd_seg = self.cwnd as f64 / self.mds as f64;
        // β, or β_N for N emulated flows (mulTCP).
        let beta = self.beta();
        // §4.7 fast convergence: a loss below the previous W_max lowers it further.
        self.w_max = if self.config.fast_convergence && cwnd_seg < self.w_max {
            cwnd_seg * (1.0 + beta) / 2.0
        } else {
            cwnd_seg
        };
        self.cwnd_prior = self.cwnd;
        // §4.6: ssthresh = cwnd · β (cwnd, not flight size: the connection's app_limited
        // flag keeps cwnd from growing unused, as §4.6 requires), at least the minimum.
        self.ssthresh = ((self.cwnd as f64 * beta) as u64).max(self.min_window);
        self.cwnd = self.ssthresh;
        // The next ACK in congestion avoidance starts a new stage.
        self.epoch = None;
        self.ca_remainder = 0;
    }
}

impl CongestionController for Cubic {
    fn on_packet_sent(&mut self, now: Instant, bytes: u64, bytes_in_flight: u64) {
        // RFC 9406 §4.2: sends open HyStart++ rounds.
        self.hystart.on_packet_sent(now);
        // RFC 9438 §5.8: a send into an empty flight ends an idle period, which must
        // not count towards t.
        if bytes_in_flight <= bytes {
            self.pause_epoch(now);
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
        // RFC 9002 B.5: no change for packets sent before the recovery period began.
        // RFC 9002 §7.3.2: a packet sent during recovery was acknowledged: recovery ends.
        if !self.recovery.on_ack(sent_time) {
            return;
        }
        // RFC 9002 §7.8 / RFC 9438 §5.8: no growth while application-limited, and the
        // time does not count towards t.
        if app_limited {
            self.pause_epoch(now);
            return;
        }
        if self.cwnd < self.ssthresh {
            self.slow_start_ack(now, sent_time, bytes, rtt);
        } else {
            self.congestion_avoidance_ack(now, bytes, rtt);
        }
    }

    fn on_congestion_event(
        &mut self,
        now: Instant,
        largest_lost_sent_time: Instant,
        persistent: bool,
        _lost_bytes: u64,
    ) {
        // RFC 9406 §4.2: a loss ends HyStart++ (only the initial slow start uses it).
        self.hystart.on_congestion_event();
        // RFC 9002 §7.3.2: one reduction per recovery period.
        if self
            .recovery
            .on_congestion_event(now, largest_lost_sent_time)
        {
            self.reduce();
        }
        // RFC 9002 §7.6.2: persistent congestion collapses to the minimum window and
        // forgets the recovery period; RFC 9438 §4.8: the next stage starts with K = 0
        // and W_max = cwnd_epoch.
        if persistent {
            self.undo = None;
            self.recovery.reset();
            self.cwnd = self.min_window;
            self.w_max = 0.0;
            self.epoch = None;
            self.ca_remainder = 0;
        }
    }

    /// RFC 9438 §4.9.2: restore the saved state if cwnd is still below cwnd_prior.
    fn on_spurious_congestion(&mut self, _now: Instant) {
        let Some(u) = self.undo.take() else {
            return;
        };
        if self.cwnd >= self.cwnd_prior {
            return; // detected long after: keep the current values
        }
        self.cwnd = u.cwnd;
        self.cwnd_prior = u.cwnd_prior;
        self.ssthresh = u.ssthresh;
        self.w_max = u.w_max;
        self.epoch = u.epoch;
        self.w_est = u.w_est;
        self.ca_remainder = 0;
    }

    /// RFC 9438 §4.6 / RFC 9002 §7.1: a CE mark is a congestion event (the same
    /// multiplicative decrease, once per recovery period). A CE mark is never
    /// spurious, so the reduction cannot be undone (§4.9.2 is about losses).
    fn on_ecn_ce(&mut self, now: Instant, sent_time: Instant) {
        if !self.recovery.covers(sent_time) {
            self.on_congestion_event(now, sent_time, false, 0);
            self.undo = None;
        }
    }

    fn window(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
    fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }
    /// Careful Resume sets the window (draft-ietf-tsvwg-careful-resume §4.3, §4.5);
    /// with an ssthresh, slow start ends (HyStart++ with it).
    fn set_window(&mut self, cwnd: u64, ssthresh: Option<u64>) -> bool {
        self.cwnd = cwnd.max(self.min_window);
        if let Some(s) = ssthresh {
            self.ssthresh = s.max(self.min_window);
            self.hystart.on_congestion_event();
            // RFC 9438 §4.8-like restart: the next stage starts with K = 0 and
            // W_max = cwnd_epoch; nothing left to undo.
            self.w_max = 0.0;
            self.cwnd_prior = self.cwnd;
            self.epoch = None;
            self.ca_remainder = 0;
            self.undo = None;
        }
        true
    }
    fn in_recovery(&self) -> bool {
        self.recovery.is_running()
    }
    fn name(&self) -> &'static str {
        "cubic"
    }
    fn on_max_datagram_size(&mut self, mds: u64) {
        self.mds = mds.max(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::CongestionState;
    use std::time::Duration;

    const MDS: u64 = 1200;

    fn ms(v: u64) -> Instant {
        Instant::from_millis(v)
    }

    /// Drives `cc` ACK-clocked through flights whose RTT is `rtts_ms[i]`: each flight's
    /// ACKs (one per window packet, 1 µs apart) arrive one RTT after it left, and each
    /// ACK releases a send.
    /// `path` carries the RTT estimator and the next flight's send time (ns) across calls.
    fn flights(cc: &mut dyn CongestionController, path: &mut (RttEstimator, u64), rtts_ms: &[u64]) {
        let (rtt, start) = path;
        cc.on_packet_sent(Instant::from_nanos(*start), MDS, MDS);
        for &r in rtts_ms {
            let rtt_ns = r * 1_000_000;
            for i in 0..cc.window() / MDS {
                let now = Instant::from_nanos(*start + rtt_ns + i * 1_000);
                rtt.update(
                    Duration::from_millis(r),
                    Duration::ZERO,
                    true,
                    Duration::ZERO,
                );
                cc.on_packet_acked(
                    now,
                    Instant::from_nanos(*start + i * 1_000),
                    MDS,
                    false,
                    rtt,
                );
                cc.on_packet_sent(now, MDS, MDS);
            }
            *start += rtt_ns;
        }
    }

    /// A controller whose window is `packets` full-size packets, in slow start.
    fn cubic_at(packets: u64, fast_convergence: bool) -> Cubic {
        Cubic::new(
            CubicConfig {
                initial_window_packets: Some(packets),
                fast_convergence,
                ..CubicConfig::default()
            },
            MDS,
        )
    }

    /// A sender that keeps one window in flight over a fixed RTT: each round acknowledges
    /// the window (as it was at the round's start) in `MDS` packets spread evenly over
    /// the RTT, each sent one RTT before its ACK.
    struct Flow {
        cc: Cubic,
        rtt: RttEstimator,
        rtt_ns: u64,
        now_ns: u64,
    }

    impl Flow {
        /// Congestion event at `start_ms` with the window `packets`, then ACK clocking
        /// from one RTT later.
        fn after_loss(packets: u64, fast_convergence: bool, rtt_ms: u64, start_ms: u64) -> Self {
            let mut cc = cubic_at(packets, fast_convergence);
            cc.on_congestion_event(ms(start_ms), ms(start_ms - 1), false, MDS);
            Flow {
                cc,
                rtt: RttEstimator::new(Duration::from_millis(rtt_ms)),
                rtt_ns: rtt_ms * 1_000_000,
                // Packets acknowledged from here on were sent after the loss.
                now_ns: (start_ms + rtt_ms) * 1_000_000,
            }
        }

        fn ack(&mut self, at_ns: u64, app_limited: bool) {
            let sent = Instant::from_nanos(at_ns.saturating_sub(self.rtt_ns));
            let now = Instant::from_nanos(at_ns);
            self.cc
                .on_packet_acked(now, sent, MDS, app_limited, &self.rtt);
        }

        /// One RTT of ACKs; returns the window at its end.
        fn round(&mut self, app_limited: bool) -> u64 {
            let n = (self.cc.window() / MDS).max(1);
            for i in 1..=n {
                self.ack(self.now_ns + self.rtt_ns * i / n, app_limited);
            }
            self.now_ns += self.rtt_ns;
            self.cc.window()
        }

        /// Seconds since `epoch_ns`, at the current time.
        fn t(&self, epoch_ns: u64) -> f64 {
            (self.now_ns - epoch_ns) as f64 / 1e9
        }
    }

    /// W_cubic(t) in segments for the defaults (RFC 9438 eq. 1).
    fn w_cubic(t: f64, k: f64, w_max: f64) -> f64 {
        0.4 * (t - k).powi(3) + w_max
    }

    #[test]
    fn defaults_and_initial_window() {
        let cc = Cubic::new(CubicConfig::default(), MDS);
        assert_eq!((cc.window(), cc.minimum_window()), (12_000, 2 * MDS));
        assert_eq!(cc.ssthresh(), u64::MAX);
        assert_eq!(cc.congestion_state(), CongestionState::SlowStart);
        assert_eq!(cc.name(), "cubic");
        let mut cc = cc;
        // RFC 9002 slow start: one byte per acknowledged byte.
        cc.on_packet_acked(
            ms(100),
            ms(0),
            MDS,
            false,
            &RttEstimator::new(Duration::ZERO),
        );
        assert_eq!(cc.window(), 12_000 + MDS);
    }

    #[test]
    fn loss_sets_beta_w_max_and_k() {
        let mut f = Flow::after_loss(100, false, 100, 1_000);
        // §4.6: cwnd = ssthresh = β · W_max (floor in bytes).
        assert_eq!(f.cc.w_max_segments(), 100.0);
        let expect = 0.7 * 100.0 * MDS as f64;
        assert!(
            (f.cc.window() as f64 - expect).abs() <= 1.0,
            "{}",
            f.cc.window()
        );
        assert_eq!(f.cc.ssthresh(), f.cc.window());
        assert_eq!(f.cc.cwnd_prior, 100 * MDS);
        assert_eq!(f.cc.congestion_state(), CongestionState::Recovery);
        assert_eq!(f.cc.k_seconds(), None);
        // The first ACK of a packet sent after the loss starts the epoch:
        // §4.2 K = cbrt(W_max (1 − β) / C) = cbrt(75) s.
        f.round(false);
        let k = f.cc.k_seconds().unwrap();
        assert!((k - 75f64.cbrt()).abs() < 1e-6, "K = {k}");
        assert!((k - 4.217_163).abs() < 1e-5);
        assert!(!f.cc.in_recovery());
    }

    #[test]
    fn window_returns_to_w_max_at_k_then_grows_convexly() {
        // W_max = 1000 segments over 100 ms: K ≈ 9.09 s, far outside the Reno-friendly
        // region (W_est only gains ~0.53 segments per RTT).
        let mut f = Flow::after_loss(1_000, false, 100, 1_000);
        let epoch_ns = f.now_ns + f.rtt_ns / f.cc.window().div_euclid(MDS);
        f.round(false);
        let k = f.cc.k_seconds().unwrap();
        assert!((k - 750f64.cbrt()).abs() < 1e-6);
        while f.t(epoch_ns) + 0.1 <= k {
            let w = f.round(false) as f64 / MDS as f64;
            let t = f.t(epoch_ns);
            // Concave region: the window tracks W_cubic(t) and stays below W_max.
            assert!((w - w_cubic(t, k, 1000.0)).abs() < 2.0, "t {t}: {w}");
            assert!(w <= 1_000.0 + 1.0, "t {t}: {w}");
        }
        let w = f.cc.window() as f64 / MDS as f64;
        assert!((w - 1000.0).abs() <= 1.0, "at t = K: {w} segments");
        // Convex region: growth per RTT keeps increasing past W_max.
        let mut last_growth = 0;
        for _ in 0..30 {
            let before = f.cc.window();
            let after = f.round(false);
            let growth = after - before;
            assert!(growth >= last_growth, "{growth} < {last_growth}");
            last_growth = growth;
        }
        let t = f.t(epoch_ns);
        let w = f.cc.window() as f64 / MDS as f64;
        assert!(w > 1_000.0 + 5.0, "{w}");
        assert!((w - w_cubic(t, k, 1000.0)).abs() < 2.0, "t {t}: {w}");
    }

    #[test]
    fn target_is_bounded_to_one_and_a_half_windows_per_rtt() {
        // A huge C puts W_cubic(t + RTT) far above 1.5 cwnd: §4.2 caps the target.
        let mut cc = Cubic::new(
            CubicConfig {
                initial_window_packets: Some(100),
                c: 10_000.0,
                ..CubicConfig::default()
            },
            MDS,
        );
        cc.on_congestion_event(ms(1_000), ms(999), false, MDS);
        let mut f = Flow {
            cc,
            rtt: RttEstimator::new(Duration::from_secs(1)),
            rtt_ns: 1_000_000_000,
            now_ns: 2_000_000_000,
        };
        let before = f.cc.window();
        let after = f.round(false);
        // One RTT of ACKs adds at most half a window (each ACK (1.5 cwnd − cwnd) / cwnd).
        assert!(after > before + before / 2 - MDS, "{before} -> {after}");
        assert!(after <= before + before / 2, "{before} -> {after}");
    }

    #[test]
    fn reno_friendly_region_follows_w_est() {
        // Small window, 1 ms RTT: W_cubic barely moves in a few RTTs, W_est wins.
        let mut f = Flow::after_loss(20, false, 1, 1_000);
        let alpha = 3.0 * 0.3 / 1.7;
        let start = f.cc.window();
        let mut before = start;
        for _ in 0..10 {
            let after = f.round(false);
            assert_eq!(after, f.cc.reno_estimate_bytes() as u64);
            // §4.3 eq. 4: about α segments per RTT (a little less as cwnd grows).
            let growth = (after - before) as f64 / MDS as f64;
            assert!(growth > 0.9 * alpha && growth <= alpha, "{growth}");
            before = after;
        }
        // Until W_est reaches cwnd_prior; then α = 1: one segment per RTT.
        while f.cc.window() < 20 * MDS {
            f.round(false);
        }
        let before = f.round(false);
        let growth = (f.round(false) - before) as f64 / MDS as f64;
        assert!(growth > 0.9 && growth <= 1.0, "{growth}");
    }

    /// A controller at `packets` packets emulating `n` flows.
    fn multcp_at(packets: u64, n: u32) -> Cubic {
        Cubic::new(
            CubicConfig {
                initial_window_packets: Some(packets),
                fast_convergence: false,
                emulated_flows: n,
                ..CubicConfig::default()
            },
            MDS,
        )
    }

    #[test]
    fn emulated_flows_decrease_by_beta_n_and_keep_the_cubic_term() {
        for (n, beta_n) in [(1u32, 0.7), (2, 0.85), (4, 0.925)] {
            let mut f = Flow::after_loss(100, false, 100, 1_000);
            f.cc = multcp_at(100, n);
            f.cc.on_congestion_event(ms(1_000), ms(999), false, MDS);
            // mulTCP: cwnd = ssthresh = β_N · W_max; W_max is the window at the loss.
            assert_eq!(f.cc.window(), (100.0 * MDS as f64 * beta_n) as u64, "n {n}");
            assert_eq!(f.cc.w_max_segments(), 100.0);
            // The cubic term is unchanged: K = cbrt(W_max (1 − β_N) / C) with C = 0.4.
            f.round(false);
            let k = f.cc.k_seconds().unwrap();
            let expect = (100.0 * (1.0 - beta_n) / 0.4f64).cbrt();
            assert!((k - expect).abs() < 1e-6, "n {n}: K {k} vs {expect}");
        }
    }

    #[test]
    fn emulated_flows_scale_the_reno_friendly_growth() {
        // Small window, 1 ms RTT: the Reno-friendly region decides the growth.
        for n in [1u32, 2, 3] {
            let mut f = Flow::after_loss(200, false, 1, 1_000);
            f.cc = multcp_at(200, n);
            f.cc.on_congestion_event(ms(1_000), ms(999), false, MDS);
            let alpha = EmulatedFlows::new(n).alpha_cubic(0.7);
            let mut before = f.round(false);
            for _ in 0..5 {
                let after = f.round(false);
                assert_eq!(after, f.cc.reno_estimate_bytes() as u64);
                // §4.3 eq. 4 with α_N: about α_N segments per RTT.
                let growth = (after - before) as f64 / MDS as f64;
                assert!(
                    growth > 0.9 * alpha && growth <= alpha,
                    "n {n}: {growth} vs {alpha}"
                );
                before = after;
            }
            // Past cwnd_prior, N segments per RTT (N Reno flows).
            while f.cc.window() < 201 * MDS {
                f.round(false);
            }
            let before = f.round(false);
            let growth = (f.round(false) - before) as f64 / MDS as f64;
            let n = f64::from(n);
            assert!(growth > 0.9 * n && growth <= n, "{growth}");
        }
    }

    #[test]
    fn emulated_flows_fast_convergence_uses_beta_n() {
        let mut f = Flow::after_loss(100, true, 100, 1_000);
        f.cc = multcp_at(100, 2);
        f.cc.config.fast_convergence = true;
        f.cc.on_congestion_event(ms(1_000), ms(999), false, MDS);
        f.round(false);
        let w = f.cc.window() as f64 / MDS as f64;
        let now = f.now_ns / 1_000_000;
        f.cc.on_congestion_event(ms(now), ms(now - 1), false, MDS);
        // §4.7 with β_2 = 0.85: W_max = cwnd · 0.925 (Chromium's (N − 1 + 0.85) / N).
        assert!((f.cc.w_max_segments() - w * 0.925).abs() < 1e-9);
    }

    #[test]
    fn fast_convergence_lowers_w_max() {
        for (fc, factor) in [(true, 1.7 / 2.0), (false, 1.0)] {
            let mut f = Flow::after_loss(100, fc, 100, 1_000);
            f.round(false);
            // A second loss well below the previous W_max of 100 segments.
            let w = f.cc.window() as f64 / MDS as f64;
            assert!((70.0..80.0).contains(&w), "{w}");
            let now = f.now_ns / 1_000_000;
            f.cc.on_congestion_event(ms(now), ms(now - 1), false, MDS);
            let w_max = f.cc.w_max_segments();
            // §4.7: W_max = cwnd (1 + β) / 2 with fast convergence, else cwnd.
            let expect = w * factor;
            assert!(
                (w_max - expect).abs() < 1e-6,
                "fc {fc}: {w_max} vs {expect}"
            );
        }
    }

    #[test]
    fn app_limited_does_not_grow_and_stops_the_clock() {
        let mut a = Flow::after_loss(100, false, 100, 1_000);
        let mut b = Flow::after_loss(100, false, 100, 1_000);
        for _ in 0..10 {
            a.round(false);
            b.round(false);
        }
        // b is application-limited for 20 RTTs: no growth, and t does not advance.
        let w = b.cc.window();
        for _ in 0..20 {
            assert_eq!(b.round(true), w);
        }
        for _ in 0..10 {
            assert_eq!(a.round(false), b.round(false));
        }
        assert!(a.cc.window() > w);
        // Slow start does not grow either.
        let mut cc = cubic_at(10, true);
        cc.on_packet_acked(
            ms(100),
            ms(0),
            MDS,
            true,
            &RttEstimator::new(Duration::ZERO),
        );
        assert_eq!(cc.window(), 10 * MDS);
    }

    #[test]
    fn idle_restart_stops_the_clock() {
        let mut a = Flow::after_loss(100, false, 100, 1_000);
        let mut b = Flow::after_loss(100, false, 100, 1_000);
        for _ in 0..10 {
            a.round(false);
            b.round(false);
        }
        // b sits idle for 5 s, then sends into an empty flight.
        b.now_ns += 5_000_000_000;
        b.cc.on_packet_sent(Instant::from_nanos(b.now_ns), MDS, MDS);
        for _ in 0..10 {
            assert_eq!(a.round(false), b.round(false));
        }
    }

    #[test]
    fn one_reduction_per_recovery_period() {
        let mut cc = cubic_at(10, true);
        cc.on_congestion_event(ms(100), ms(50), false, MDS);
        assert_eq!((cc.window(), cc.ssthresh()), (8_400, 8_400));
        // More losses of packets sent before recovery began: no further reduction.
        cc.on_congestion_event(ms(110), ms(99), false, MDS);
        cc.on_congestion_event(ms(120), ms(100), false, MDS);
        assert_eq!(cc.window(), 8_400);
        // ACKs of packets sent before recovery: no growth, still in recovery.
        let rtt = RttEstimator::new(Duration::from_millis(100));
        cc.on_packet_acked(ms(130), ms(90), MDS, false, &rtt);
        assert_eq!(cc.window(), 8_400);
        assert!(cc.in_recovery());
        cc.on_packet_acked(ms(230), ms(101), MDS, false, &rtt);
        assert!(!cc.in_recovery());
        assert_eq!(cc.congestion_state(), CongestionState::CongestionAvoidance);
        // A loss of a packet sent after the recovery start reduces again (β = 0.7).
        let w = cc.window();
        cc.on_congestion_event(ms(300), ms(150), false, MDS);
        assert_eq!(cc.window(), (w as f64 * 0.7) as u64);
        // Never below the minimum window.
        for i in 0..10 {
            cc.on_congestion_event(ms(400 + 100 * i), ms(350 + 100 * i), false, MDS);
        }
        assert_eq!((cc.window(), cc.ssthresh()), (2 * MDS, 2 * MDS));
    }

    #[test]
    fn spurious_undo_restores_the_state_before_the_reduction() {
        for undo in [false, true] {
            let mut f = Flow::after_loss(100, false, 100, 1_000);
            f.cc.config.spurious_undo = undo;
            for _ in 0..5 {
                f.round(false);
            }
            let (cwnd, w_max, k, ssthresh) = (
                f.cc.window(),
                f.cc.w_max_segments(),
                f.cc.k_seconds(),
                f.cc.ssthresh(),
            );
            let prior = f.cc.cwnd_prior;
            let now = f.now_ns / 1_000_000;
            f.cc.on_congestion_event(ms(now), ms(now - 1), false, MDS);
            assert!(f.cc.window() < cwnd);
            f.cc.on_spurious_congestion(ms(now + 100));
            if undo {
                // §4.9.2: cwnd, cwnd_prior, ssthresh, W_max, K, t_epoch back.
                assert_eq!((f.cc.window(), f.cc.ssthresh()), (cwnd, ssthresh));
                assert_eq!((f.cc.w_max_segments(), f.cc.k_seconds()), (w_max, k));
                assert_eq!(f.cc.cwnd_prior, prior);
                // Only once: a second report changes nothing.
                f.round(false);
                let w = f.cc.window();
                f.cc.on_spurious_congestion(ms(now + 300));
                assert_eq!(f.cc.window(), w);
            } else {
                assert!(f.cc.window() < cwnd, "undo is off by default");
            }
        }
        // Detected after cwnd regrew past cwnd_prior: keep the current values.
        let mut f = Flow::after_loss(100, false, 100, 1_000);
        f.cc.config.spurious_undo = true;
        f.round(false);
        let now = f.now_ns / 1_000_000;
        f.cc.on_congestion_event(ms(now), ms(now - 1), false, MDS);
        f.cc.cwnd = f.cc.cwnd_prior + MDS;
        f.cc.on_spurious_congestion(ms(now + 100));
        assert_eq!(f.cc.window(), f.cc.cwnd_prior + MDS);
    }

    #[test]
    fn persistent_congestion_collapses_and_restarts_with_k_zero() {
        let mut f = Flow::after_loss(100, true, 100, 1_000);
        f.round(false);
        let now = f.now_ns / 1_000_000;
        f.cc.on_congestion_event(ms(now), ms(now - 1), true, 10 * MDS);
        assert_eq!(f.cc.window(), 2 * MDS);
        assert!(!f.cc.in_recovery());
        assert!(f.cc.in_slow_start());
        let ssthresh = f.cc.ssthresh();
        // Slow start back to ssthresh, then a stage with K = 0 and W_max = cwnd_epoch.
        while f.cc.in_slow_start() {
            f.round(false);
        }
        let w = f.cc.window();
        assert!(w >= ssthresh);
        f.round(false);
        assert_eq!(f.cc.k_seconds(), Some(0.0));
        assert!(f.cc.w_max_segments() >= ssthresh as f64 / MDS as f64);
        assert!(f.cc.window() >= w);
    }

    #[test]
    fn hystart_exit_starts_congestion_avoidance_with_k_zero() {
        let mut cc = Cubic::new(CubicConfig::default(), MDS);
        let mut path = (RttEstimator::new(Duration::from_millis(100)), 1_000_000);
        flights(&mut cc, &mut path, &[100, 100, 100, 150]);
        assert!(matches!(cc.hystart_phase(), HystartPhase::Css { .. }));
        flights(&mut cc, &mut path, &[150; 5]);
        assert!(!cc.in_slow_start());
        // RFC 9406 §4.2: ssthresh = cwnd at the exit; RFC 9438 §4.10: cwnd_prior = cwnd,
        // and the stage (started by the next ACK) has K = 0 and W_max = that cwnd.
        let w = cc.ssthresh();
        assert!(w > 12_000 << 3 && w < u64::MAX);
        assert_eq!(cc.cwnd_prior, w);
        assert_eq!(cc.k_seconds(), Some(0.0));
        assert_eq!(cc.w_max_segments(), w as f64 / MDS as f64);
        let before = cc.window();
        flights(&mut cc, &mut path, &[150]);
        assert!(cc.window() > before);
        // With HyStart++ off the same path stays in slow start.
        let mut cc = Cubic::new(
            CubicConfig {
                hystart: HystartConfig::default(),
                ..CubicConfig::default()
            },
            MDS,
        );
        let mut path = (RttEstimator::new(Duration::from_millis(100)), 1_000_000);
        flights(&mut cc, &mut path, &[100, 100, 100, 150, 150]);
        assert!(cc.in_slow_start());
    }
}
