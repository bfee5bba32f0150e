//! NewReno as specified in RFC 9002 §7 and Appendix B.

use super::hystart::{Hystart, HystartConfig, HystartPhase};
use super::recovery_period::RecoveryPeriod;
use super::{initial_window, CongestionController, Coupling, InterLoss};
use crate::recovery::RttEstimator;
use crate::time::Instant;

/// How the window grows in congestion avoidance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WindowGrowth {
    /// RFC 9002 B.5: cwnd += max_datagram_size * acked_bytes / cwnd per ACKed packet.
    #[default]
    Approximate,
    /// Exact byte counting (RFC 3465): one max_datagram_size per full cwnd acknowledged.
    Exact,
}

/// NewReno's knobs; defaults are RFC 9002's.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NewRenoConfig {
    /// Initial window in packets; `None` = RFC 9002 §7.2: min(10 * mds, max(2 * mds, 14720)).
    pub initial_window_packets: Option<u64>,
    /// Minimum window in packets (RFC 9002: 2).
    pub minimum_window_packets: u64,
    /// kLossReductionFactor (RFC 9002: 0.5).
    pub loss_reduction_factor: f64,
    pub growth: WindowGrowth,
    /// HyStart++ in the initial slow start (RFC 9406); off by default, so that NewReno
    /// stays RFC 9002's (`hystart = true` turns it on; a table sets its knobs).
    pub hystart: HystartConfig,
}

impl Default for NewRenoConfig {
    fn default() -> Self {
        NewRenoConfig {
            initial_window_packets: None,
            minimum_window_packets: 2,
            loss_reduction_factor: 0.5,
            growth: WindowGrowth::Approximate,
            hystart: HystartConfig::default(),
        }
    }
}

/// RFC 9002 NewReno.
#[derive(Debug)]
pub struct NewReno {
    config: NewRenoConfig,
    mds: u64,
    /// kMinimumWindow in bytes (RFC 9002 §7.2).
    min_window: u64,
    cwnd: u64,
    ssthresh: u64,
    /// RFC 9002 §7.3.2: one reduction per recovery period.
    recovery: RecoveryPeriod,
    /// `WindowGrowth::Exact`: acknowledged bytes not yet turned into window growth.
    ca_acked: u64,
    /// `WindowGrowth::Approximate`: the fractional part of mds * acked / cwnd carried
    /// between ACKs (as a numerator over the window at the time).
    ca_remainder: u128,
    /// Slow start's exit and growth (RFC 9406 when enabled, else RFC 9002 §7.3.1).
    hystart: Hystart,
    /// LIA's or OLIA's coupling across a multipath connection's paths (RFC 6356 §3;
    /// `olia.rs`), when set: congestion avoidance grows by the coupled increase instead
    /// of Reno's.
    coupling: Option<Coupling>,
    /// OLIA's fractional bytes of window change carried between ACKs (signed: OLIA
    /// may shrink a path's window).
    olia_carry: f64,
    /// OLIA's l_r on this path (bytes acknowledged between losses; two counters).
    inter_loss: InterLoss,
}

impl NewReno {
    pub fn new(config: NewRenoConfig, max_datagram_size: u64) -> Self {
        let mds = max_datagram_size.max(1);
        let initial = initial_window(config.initial_window_packets, mds);
        let min_window = config.minimum_window_packets.saturating_mul(mds);
        NewReno {
            mds,
            min_window,
            cwnd: initial.max(min_window),
            ssthresh: u64::MAX,
            recovery: RecoveryPeriod::default(),
            ca_acked: 0,
            ca_remainder: 0,
            hystart: Hystart::new(config.hystart.clone()),
            coupling: None,
            olia_carry: 0.0,
            inter_loss: InterLoss::default(),
            config,
        }
    }

    /// kMinimumWindow in bytes.
    pub fn minimum_window(&self) -> u64 {
        self.min_window
    }

    /// Where HyStart++ is in the initial slow start.
    pub fn hystart_phase(&self) -> HystartPhase {
        self.hystart.phase()
    }

    /// The window Reno's increase divides by: cwnd, or LIA's max(cwnd_total / alpha,
    /// cwnd) (RFC 6356 §3).
    fn increase_divisor(&self) -> u64 {
        match self.coupling {
            Some(Coupling::Lia(c)) => c.increase_divisor(self.cwnd),
            _ => self.cwnd,
        }
    }

    /// Applies OLIA's signed change of `delta` bytes, whole bytes at a time, never
    /// below the minimum window (RFC 9002 §7.2).
    fn olia_increase(&mut self, delta: f64) {
        let total = self.olia_carry + delta;
        let whole = total.trunc();
        self.olia_carry = if whole.is_finite() {
            total - whole
        } else {
            0.0
        };
        if whole >= 1.0 {
            // Saturating `as`.
            self.cwnd = self.cwnd.saturating_add(whole as u64);
        } else if whole <= -1.0 {
            self.cwnd = self
                .cwnd
                .saturating_sub((-whole) as u64)
                .max(self.min_window);
        }
    }

    /// cwnd * kLossReductionFactor: exact in integers for the RFC's 0.5, else one f64
    /// multiplication rounded down (saturating `as`; NaN gives 0, then the minimum window).
    fn reduced(&self) -> u64 {
        let f = self.config.loss_reduction_factor;
        if f == 0.5 {
            self.cwnd / 2
        } else {
            (self.cwnd as f64 * f) as u64
        }
    }
}

impl CongestionController for NewReno {
    fn on_packet_sent(&mut self, now: Instant, _bytes: u64, _bytes_in_flight: u64) {
        // Bytes in flight are the connection's; only HyStart++'s rounds need sends.
        self.hystart.on_packet_sent(now);
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
        // OLIA's l_r counts every acknowledged byte (as its reference implementation).
        self.inter_loss.on_acked(bytes);
        if !self.recovery.on_ack(sent_time) {
            return;
        }
        // RFC 9002 §7.8: do not grow a window the sender is not using.
        if app_limited {
            return;
        }
        if self.cwnd < self.ssthresh {
            // RFC 9002 §7.3.1 slow start: one byte per acknowledged byte, unless
            // HyStart++ (RFC 9406 §4.2) is in Conservative Slow Start or caps the ACK.
            let step = self
                .hystart
                .on_slow_start_ack(now, sent_time, bytes, rtt, self.mds);
            self.cwnd = self.cwnd.saturating_add(step.growth);
            if step.enter_congestion_avoidance {
                // RFC 9406 §4.2: after CSS_ROUNDS, ssthresh = cwnd.
                self.ssthresh = self.cwnd;
            }
            return;
        }
        // OLIA (`olia.rs`): the window changes by mss * bytes * factor, signed.
        if let Some(Coupling::Olia(o)) = self.coupling {
            self.olia_increase(o.increase(bytes, self.mds));
            return;
        }
        // RFC 9002 §7.3.3 congestion avoidance; under LIA (RFC 6356 §3) the window the
        // increase divides by is max(cwnd_total / alpha, cwnd).
        let cwnd = self.increase_divisor();
        match self.config.growth {
            // RFC 9002 B.5, per acknowledged packet (integer division rounds down).
            WindowGrowth::Approximate => {
                // Keep the remainder: above cwnd = mds^2 (2.1 MB at 1452 bytes) each ACK's
                // share is below one byte, and integer truncation would freeze the window.
                let num = u128::from(self.mds) * u128::from(bytes) + self.ca_remainder;
                let cwnd = u128::from(cwnd.max(1));
                self.ca_remainder = num % cwnd;
                self.cwnd = self
                    .cwnd
                    .saturating_add(u64::try_from(num / cwnd).unwrap_or(u64::MAX));
            }
            // RFC 3465 byte counting: one mds per full window acknowledged.
            WindowGrowth::Exact => {
                self.ca_acked = self.ca_acked.saturating_add(bytes);
                let divisor = |r: &Self| r.increase_divisor();
                while self.ca_acked >= divisor(self) && self.cwnd > 0 {
                    self.ca_acked -= divisor(self);
                    self.cwnd = self.cwnd.saturating_add(self.mds);
                }
            }
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
        // RFC 9002 B.6 OnCongestionEvent: one reduction per recovery period (§7.3.2).
        if self
            .recovery
            .on_congestion_event(now, largest_lost_sent_time)
        {
            self.inter_loss.on_congestion_event();
            self.olia_carry = 0.0;
            self.ssthresh = self.reduced();
            self.cwnd = self.ssthresh.max(self.min_window);
            self.ca_acked = 0;
            self.ca_remainder = 0;
        }
        // RFC 9002 §7.6.2 / B.8: persistent congestion collapses to the minimum window
        // and forgets the recovery period, so that the next loss reduces again.
        if persistent {
            self.recovery.reset();
            self.cwnd = self.min_window;
            self.ca_acked = 0;
            self.ca_remainder = 0;
        }
    }

    /// RFC 9002 §7.1, B.7: a CE mark is a congestion event as a loss is (the same
    /// reduction, once per recovery period).
    fn on_ecn_ce(&mut self, now: Instant, sent_time: Instant) {
        self.on_congestion_event(now, sent_time, false, 0);
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
            self.ca_acked = 0;
            self.ca_remainder = 0;
        }
        true
    }
    fn in_recovery(&self) -> bool {
        self.recovery.is_running()
    }
    fn set_coupling(&mut self, coupling: Option<Coupling>) {
        self.coupling = coupling;
    }
    fn inter_loss_bytes(&self) -> u64 {
        self.inter_loss.bytes()
    }
    fn name(&self) -> &'static str {
        "new_reno"
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

    fn reno(growth: WindowGrowth) -> NewReno {
        NewReno::new(
            NewRenoConfig {
                growth,
                ..NewRenoConfig::default()
            },
            MDS,
        )
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

    fn rtt() -> RttEstimator {
        RttEstimator::new(Duration::from_millis(100))
    }

    /// Acknowledges one full window of `MDS` packets, all sent at `sent`.
    fn ack_window(cc: &mut NewReno, sent: Instant, now: Instant) {
        let packets = cc.window() / MDS;
        for _ in 0..packets {
            cc.on_packet_acked(now, sent, MDS, false, &rtt());
        }
    }

    #[test]
    fn initial_and_minimum_window() {
        assert_eq!(reno(WindowGrowth::Exact).window(), 12_000);
        // min(10 * 1500, max(3000, 14720)) = 14720.
        assert_eq!(
            NewReno::new(NewRenoConfig::default(), 1500).window(),
            14_720
        );
        // max(2 * 9000, 14720) = 18000.
        assert_eq!(
            NewReno::new(NewRenoConfig::default(), 9000).window(),
            18_000
        );
        let cfg = NewRenoConfig {
            initial_window_packets: Some(4),
            minimum_window_packets: 3,
            ..NewRenoConfig::default()
        };
        let cc = NewReno::new(cfg, MDS);
        assert_eq!((cc.window(), cc.minimum_window()), (4_800, 3_600));
        assert_eq!(cc.ssthresh(), u64::MAX);
        assert_eq!(cc.congestion_state(), CongestionState::SlowStart);
    }

    #[test]
    fn slow_start_doubles_per_rtt() {
        let mut cc = reno(WindowGrowth::Approximate);
        for round in 1..=4u64 {
            ack_window(&mut cc, ms(round * 100), ms(round * 100 + 100));
            assert_eq!(cc.window(), 12_000 << round);
        }
        assert!(cc.in_slow_start());
    }

    #[test]
    fn app_limited_does_not_grow() {
        let mut cc = reno(WindowGrowth::Exact);
        cc.on_packet_acked(ms(100), ms(0), MDS, true, &rtt());
        assert_eq!(cc.window(), 12_000);
    }

    #[test]
    fn loss_halves_once_per_recovery_period() {
        let mut cc = reno(WindowGrowth::Approximate);
        cc.on_congestion_event(ms(100), ms(50), false, MDS);
        assert_eq!((cc.window(), cc.ssthresh()), (6_000, 6_000));
        assert_eq!(cc.congestion_state(), CongestionState::Recovery);
        // More losses of packets sent before recovery began: no further reduction.
        cc.on_congestion_event(ms(110), ms(99), false, MDS);
        cc.on_congestion_event(ms(120), ms(100), false, MDS);
        assert_eq!(cc.window(), 6_000);
        // ACKs of packets sent before recovery: no growth, still in recovery.
        cc.on_packet_acked(ms(130), ms(90), MDS, false, &rtt());
        assert_eq!(cc.window(), 6_000);
        assert!(cc.in_recovery());
        // A packet sent after the start is acknowledged: recovery ends, CA growth.
        cc.on_packet_acked(ms(230), ms(101), MDS, false, &rtt());
        assert!(!cc.in_recovery());
        assert_eq!(cc.window(), 6_000 + MDS * MDS / 6_000);
        assert_eq!(cc.congestion_state(), CongestionState::CongestionAvoidance);
        // A loss of a packet sent after the recovery start reduces again.
        cc.on_congestion_event(ms(300), ms(150), false, MDS);
        assert_eq!(cc.window(), 3_120);
        // Never below the minimum window.
        cc.on_congestion_event(ms(400), ms(350), false, MDS);
        assert_eq!((cc.window(), cc.ssthresh()), (2_400, 1_560));
    }

    #[test]
    fn reduction_factor_configurable() {
        let cfg = NewRenoConfig {
            loss_reduction_factor: 0.7,
            ..NewRenoConfig::default()
        };
        let mut cc = NewReno::new(cfg, MDS);
        cc.on_congestion_event(ms(100), ms(50), false, MDS);
        assert_eq!(cc.window(), 8_400);
    }

    #[test]
    fn persistent_congestion_collapses() {
        let mut cc = reno(WindowGrowth::Approximate);
        ack_window(&mut cc, ms(0), ms(100));
        cc.on_congestion_event(ms(1_000), ms(500), true, 10 * MDS);
        assert_eq!(cc.window(), 2 * MDS);
        assert_eq!(cc.ssthresh(), 12_000);
        assert!(!cc.in_recovery());
        // The recovery period is forgotten: an old packet's ACK grows the window again
        // (slow start, since 2400 < ssthresh 12000).
        cc.on_packet_acked(ms(1_100), ms(600), MDS, false, &rtt());
        assert_eq!(cc.window(), 3 * MDS);
    }

    #[test]
    fn exact_growth_is_one_mds_per_window() {
        let mut cc = reno(WindowGrowth::Exact);
        cc.on_congestion_event(ms(10), ms(5), false, MDS);
        // Leave recovery with the first ACK of a later packet (its bytes count too).
        assert_eq!(cc.window(), 6_000);
        let mut now = 100;
        for round in 1..=20u64 {
            ack_window(&mut cc, ms(now), ms(now + 100));
            now += 100;
            assert_eq!(cc.window(), 6_000 + round * MDS, "round {round}");
        }
        assert_eq!(cc.congestion_state(), CongestionState::CongestionAvoidance);
    }

    #[test]
    fn approximate_growth_is_about_one_mds_per_window() {
        let mut cc = reno(WindowGrowth::Approximate);
        cc.on_congestion_event(ms(10), ms(5), false, MDS);
        let mut now = 100;
        for _ in 0..20 {
            // Exactly one window of bytes: full packets, then the remainder.
            let before = cc.window();
            for _ in 0..before / MDS {
                cc.on_packet_acked(ms(now + 100), ms(now), MDS, false, &rtt());
            }
            cc.on_packet_acked(ms(now + 100), ms(now), before % MDS, false, &rtt());
            now += 100;
            let growth = cc.window() - before;
            // Growth during the window shrinks each increment slightly: a bit under mds.
            assert!((MDS * 9 / 10..=MDS).contains(&growth), "growth {growth}");
        }
    }

    /// OLIA (`olia.rs`): the window changes by mss * bytes * factor, signed, carried
    /// across ACKs, never below the minimum window; l_r counts acknowledged bytes.
    #[test]
    fn olia_increase_is_signed_and_floored() {
        use crate::cc::OliaIncrease;
        let mut cc = reno(WindowGrowth::Exact);
        cc.on_congestion_event(ms(10), ms(5), false, MDS);
        assert_eq!(cc.window(), 6_000);
        // factor 1/24 000: one ACK of 1200 bytes adds 1200 * 1200 / 24 000 = 60 bytes.
        let grow = OliaIncrease {
            factor: 1.0 / 24_000.0,
            alpha: 0.0,
        };
        cc.set_coupling(Some(Coupling::Olia(grow)));
        cc.on_packet_acked(ms(100), ms(20), MDS, false, &rtt());
        assert_eq!(cc.window(), 6_060);
        // A third of a byte per ACK: carried, 1 byte after three ACKs.
        cc.set_coupling(Some(Coupling::Olia(OliaIncrease {
            factor: 1.0 / (3.0 * 1_440_000.0),
            alpha: 0.0,
        })));
        for _ in 0..2 {
            cc.on_packet_acked(ms(100), ms(20), MDS, false, &rtt());
        }
        assert_eq!(cc.window(), 6_060);
        cc.on_packet_acked(ms(100), ms(20), MDS, false, &rtt());
        assert_eq!(cc.window(), 6_061);
        // Negative: shrinks (60 bytes an ACK).
        cc.set_coupling(Some(Coupling::Olia(OliaIncrease {
            factor: -1.0 / 24_000.0,
            alpha: -0.5,
        })));
        cc.on_packet_acked(ms(100), ms(20), MDS, false, &rtt());
        assert_eq!(cc.window(), 6_001);
        // Down to the minimum window (2 x 1200) and no further (ssthresh at the minimum
        // keeps it in congestion avoidance; below ssthresh slow start would grow it, as
        // in the reference implementation).
        assert!(cc.set_window(3_000, Some(2_400)));
        cc.set_coupling(Some(Coupling::Olia(OliaIncrease {
            factor: -1.0 / 1_200.0,
            alpha: -0.5,
        })));
        for _ in 0..3 {
            cc.on_packet_acked(ms(100), ms(20), MDS, false, &rtt());
        }
        assert_eq!(cc.window(), cc.minimum_window());
        // Every acknowledged byte since the loss counts (1 + 3 + 1 + 3 ACKs).
        assert_eq!(cc.inter_loss_bytes(), 8 * MDS);
    }

    #[test]
    fn approximate_growth_does_not_stall_on_large_windows() {
        // cwnd of 6 MB is far above mds^2 = 1.44 MB: each ACK adds a fraction of a byte.
        let mut cc = NewReno::new(
            NewRenoConfig {
                initial_window_packets: Some(10_000),
                ..NewRenoConfig::default()
            },
            MDS,
        );
        cc.on_congestion_event(ms(10), ms(5), false, MDS);
        assert!(!cc.in_slow_start());
        let before = cc.window();
        for _ in 0..before / MDS {
            cc.on_packet_acked(ms(200), ms(100), MDS, false, &rtt());
        }
        let growth = cc.window() - before;
        assert!(
            (MDS * 9 / 10..=MDS).contains(&growth),
            "growth {growth} over a 6 MB window"
        );
    }

    #[test]
    fn hystart_off_by_default_and_css_then_congestion_avoidance_when_on() {
        // Off: a rising RTT changes nothing (RFC 9002 slow start).
        let mut cc = reno(WindowGrowth::Approximate);
        let mut path = (RttEstimator::new(Duration::from_millis(100)), 1_000_000);
        flights(&mut cc, &mut path, &[100, 100, 100, 150]);
        assert_eq!(cc.window(), 12_000 << 4);
        assert_eq!(cc.hystart_phase(), HystartPhase::Off);
        let mut cc = NewReno::new(
            NewRenoConfig {
                hystart: HystartConfig::enabled(),
                ..NewRenoConfig::default()
            },
            MDS,
        );
        let mut path = (RttEstimator::new(Duration::from_millis(100)), 1_000_000);
        flights(&mut cc, &mut path, &[100, 100, 100, 150]);
        assert!(matches!(cc.hystart_phase(), HystartPhase::Css { .. }));
        assert!(cc.in_slow_start());
        // RFC 9406 §4.2: five CSS rounds, then ssthresh = cwnd.
        flights(&mut cc, &mut path, &[150; 5]);
        // The rest of the last flight grew the window in congestion avoidance (< 1 mds).
        assert!(!cc.in_slow_start());
        assert!((cc.ssthresh()..cc.ssthresh() + MDS).contains(&cc.window()));
        assert!(cc.ssthresh() > 12_000 << 3);
        assert_eq!(cc.congestion_state(), CongestionState::CongestionAvoidance);
    }
}
