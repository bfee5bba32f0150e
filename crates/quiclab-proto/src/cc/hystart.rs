//! HyStart++ (RFC 9406): a slow start that leaves early, before the first loss, when the
//! round's minimum RTT rises, used by NewReno and CUBIC (RFC 9438 §4.10).
//!
//! Implemented: RFC 9406 §4.2 (delay-increase detection, Conservative Slow Start, the
//! per-ACK cap L, return to slow start on a spurious exit, congestion avoidance after
//! CSS_ROUNDS) and §4.3's constants, all of them knobs in [`HystartConfig`]. As §4.2
//! recommends, HyStart++ runs only in the initial slow start: after the first congestion
//! event the controller falls back to standard slow start. Not implemented: its optional
//! use after an idle period.
//!
//! Adaptations to the QUIC controller seam:
//! - Rounds (§4.2 `windowEnd`) are tracked by send time, not sequence number: a round
//!   starts with the first packet sent after the previous round ended, and ends when an
//!   acknowledged packet's `sent_time` is at or after that start. An RTT sample belongs to
//!   the round its ACK arrives in after that check (as Linux does).
//! - RFC 9002 takes one RTT sample per ACK frame, while the controller is told about each
//!   acknowledged packet; the packets of one ACK share `now`, so a sample (`latest_rtt`)
//!   is counted once per distinct `now`, and L caps the growth per distinct `now`.

use crate::recovery::RttEstimator;
use crate::time::Instant;
use std::time::Duration;

/// HyStart++'s knobs; defaults are RFC 9406 §4.3's. In a config, `hystart = true`
/// (the defaults, switched on), `hystart = false` (off) or a table of these keys.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
// `remote = "Self"`: the derives become inherent functions, which the trait impls below
// call, so the table keeps serde's own checks (unknown keys, types) beside the switch.
#[serde(remote = "Self", default, deny_unknown_fields)]
pub struct HystartConfig {
    /// Whether slow start uses HyStart++ at all (off: RFC 9002 §7.3.1 slow start).
    pub enabled: bool,
    /// MIN_RTT_THRESH in ms (4): the smallest RTT increase that ends slow start.
    pub min_rtt_thresh_ms: u64,
    /// MAX_RTT_THRESH in ms (16): the largest RTT increase needed to end slow start.
    pub max_rtt_thresh_ms: u64,
    /// MIN_RTT_DIVISOR (8): RttThresh = lastRoundMinRTT / this, clamped.
    pub min_rtt_divisor: u32,
    /// N_RTT_SAMPLE (8): RTT samples a round needs before it is judged.
    pub n_rtt_sample: u32,
    /// CSS_GROWTH_DIVISOR (4, must be >= 2 per the RFC; >= 1 accepted for experiments):
    /// Conservative Slow Start grows by acked bytes / this.
    pub css_growth_divisor: u64,
    /// CSS_ROUNDS (5): rounds in CSS before congestion avoidance.
    pub css_rounds: u32,
    /// L, the per-ACK growth cap in segments (§4.2): `None` = no cap, the RFC's value for
    /// paced senders, which quiclab is; 8 is the RFC's value for unpaced senders.
    pub ack_growth_limit_segments: Option<u64>,
}

impl HystartConfig {
    /// The RFC 9406 defaults, switched on.
    pub fn enabled() -> Self {
        HystartConfig {
            enabled: true,
            ..HystartConfig::default()
        }
    }
}

impl Default for HystartConfig {
    /// Off: controllers pick their own default for `enabled`.
    fn default() -> Self {
        HystartConfig {
            enabled: false,
            min_rtt_thresh_ms: 4,
            max_rtt_thresh_ms: 16,
            min_rtt_divisor: 8,
            n_rtt_sample: 8,
            css_growth_divisor: 4,
            css_rounds: 5,
            ack_growth_limit_segments: None,
        }
    }
}

impl serde::Serialize for HystartConfig {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        HystartConfig::serialize(self, serializer)
    }
}

impl<'de> serde::Deserialize<'de> for HystartConfig {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(SwitchOrTable)
    }
}

/// Reads `true`, `false` or a table of [`HystartConfig`] keys.
struct SwitchOrTable;

impl<'de> serde::de::Visitor<'de> for SwitchOrTable {
    type Value = HystartConfig;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("true, false or a table of HyStart++ keys")
    }

    fn visit_bool<E: serde::de::Error>(self, on: bool) -> Result<HystartConfig, E> {
        Ok(if on {
            HystartConfig::enabled()
        } else {
            HystartConfig::default()
        })
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<HystartConfig, A::Error> {
        HystartConfig::deserialize(serde::de::value::MapAccessDeserializer::new(map))
    }
}

/// Where HyStart++ is in the initial slow start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HystartPhase {
    /// Standard slow start with delay-increase detection (RFC 9406 §4.2).
    SlowStart,
    /// Conservative Slow Start after a delay increase (§4.2).
    Css {
        /// cssBaselineMinRtt: the round minimum that triggered CSS.
        baseline: Duration,
        /// Round ends seen in CSS so far.
        rounds: u32,
    },
    /// Disabled, or the initial slow start is over: plain slow start from here.
    Off,
}

/// What one acknowledged packet in slow start does to the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlowStartStep {
    /// Bytes to add to cwnd.
    pub growth: u64,
    /// CSS is over (§4.2): the controller sets ssthresh = cwnd (after adding `growth`)
    /// and enters congestion avoidance.
    pub enter_congestion_avoidance: bool,
}

/// HyStart++ state for one connection. Call contract: `on_packet_sent` for every
/// in-flight packet; `on_slow_start_ack` for every acknowledged packet the controller
/// grows slow start with (it returns the growth); `on_congestion_event` when the
/// controller reduces its window.
#[derive(Clone, Debug)]
pub struct Hystart {
    config: HystartConfig,
    phase: HystartPhase,
    /// Send time of the round's first packet; `None` = the next send starts a round.
    round_start: Option<Instant>,
    /// lastRoundMinRTT (`None` = infinity).
    last_round_min: Option<Duration>,
    /// currentRoundMinRTT (`None` = infinity).
    current_round_min: Option<Duration>,
    /// rttSampleCount of the current round.
    samples: u32,
    /// `now` of the ACK last seen: packets acknowledged together share it.
    last_ack: Option<Instant>,
    /// Slow-start growth (before the CSS divisor) given for the ACK at `last_ack`, for L.
    ack_growth: u64,
    /// Remainder of CSS growth below one byte, carried between ACKs.
    css_remainder: u64,
}

impl Hystart {
    pub fn new(config: HystartConfig) -> Self {
        let phase = if config.enabled {
            HystartPhase::SlowStart
        } else {
            HystartPhase::Off
        };
        Hystart {
            config,
            phase,
            round_start: None,
            last_round_min: None,
            current_round_min: None,
            samples: 0,
            last_ack: None,
            ack_growth: 0,
            css_remainder: 0,
        }
    }

    pub fn phase(&self) -> HystartPhase {
        self.phase
    }

    /// Whether Conservative Slow Start is running.
    pub fn in_css(&self) -> bool {
        matches!(self.phase, HystartPhase::Css { .. })
    }

    /// A packet left at `now`: it opens a round if none is open (§4.2 `windowEnd`).
    pub fn on_packet_sent(&mut self, now: Instant) {
        if self.phase != HystartPhase::Off && self.round_start.is_none() {
            self.round_start = Some(now);
        }
    }

    /// The controller reduced its window: HyStart++ is done (§4.2: loss in slow start
    /// or CSS ends it; only the initial slow start uses HyStart++).
    pub fn on_congestion_event(&mut self) {
        self.phase = HystartPhase::Off;
    }

    /// A packet sent at `sent_time`, of `bytes`, was acknowledged at `now` in slow start
    /// (the controller's cwnd < ssthresh); `rtt` holds this ACK's sample.
    pub fn on_slow_start_ack(
        &mut self,
        now: Instant,
        sent_time: Instant,
        bytes: u64,
        rtt: &RttEstimator,
        mds: u64,
    ) -> SlowStartStep {
        if self.phase == HystartPhase::Off {
            // RFC 9002 §7.3.1: one byte per acknowledged byte.
            return SlowStartStep {
                growth: bytes,
                enter_congestion_avoidance: false,
            };
        }
        let enter_ca = self.end_round_if_done(sent_time);
        let new_ack = self.last_ack != Some(now);
        if new_ack {
            self.last_ack = Some(now);
            self.ack_growth = 0;
            if rtt.has_sample() {
                self.take_sample(rtt.latest());
            }
        }
        let growth = self.capped(bytes, mds);
        let growth = match self.phase {
            HystartPhase::Css { .. } => {
                // §4.2: CSS grows by min(N, L * SMSS) / CSS_GROWTH_DIVISOR.
                let divisor = self.config.css_growth_divisor.max(1);
                let num = growth.saturating_add(self.css_remainder);
                self.css_remainder = num % divisor;
                num / divisor
            }
            _ => growth,
        };
        if new_ack {
            self.judge_round();
        }
        if enter_ca {
            self.phase = HystartPhase::Off;
        }
        SlowStartStep {
            growth,
            enter_congestion_avoidance: enter_ca,
        }
    }

    /// §4.2 L: at most L * SMSS of growth per ACK (no cap when `None`).
    fn capped(&mut self, bytes: u64, mds: u64) -> u64 {
        let allowed = match self.config.ack_growth_limit_segments {
            Some(l) => l.saturating_mul(mds).saturating_sub(self.ack_growth),
            None => u64::MAX,
        };
        let growth = bytes.min(allowed);
        self.ack_growth = self.ack_growth.saturating_add(growth);
        growth
    }

    /// Ends the round when a packet sent at or after its start is acknowledged (§4.2:
    /// `windowEnd` acknowledged); returns true when CSS has run CSS_ROUNDS rounds.
    fn end_round_if_done(&mut self, sent_time: Instant) -> bool {
        if self.round_start.is_none_or(|start| sent_time < start) {
            return false;
        }
        // §4.2: at the start of each round, lastRoundMinRTT = currentRoundMinRTT,
        // currentRoundMinRTT = infinity, rttSampleCount = 0.
        self.round_start = None;
        self.last_round_min = self.current_round_min;
        self.current_round_min = None;
        self.samples = 0;
        if let HystartPhase::Css { baseline, rounds } = self.phase {
            let rounds = rounds + 1;
            self.phase = HystartPhase::Css { baseline, rounds };
            // §4.2: after CSS_ROUNDS rounds of CSS, congestion avoidance.
            return rounds >= self.config.css_rounds;
        }
        false
    }

    /// §4.2: currentRoundMinRTT = min(currentRoundMinRTT, currRTT); rttSampleCount += 1.
    fn take_sample(&mut self, latest: Duration) {
        self.current_round_min = Some(self.current_round_min.map_or(latest, |m| m.min(latest)));
        self.samples = self.samples.saturating_add(1);
    }

    /// RttThresh = max(MIN_RTT_THRESH, min(lastRoundMinRTT / MIN_RTT_DIVISOR,
    /// MAX_RTT_THRESH)) (§4.2).
    fn rtt_thresh(&self, last_round_min: Duration) -> Duration {
        let c = &self.config;
        let min = Duration::from_millis(c.min_rtt_thresh_ms);
        let max = Duration::from_millis(c.max_rtt_thresh_ms);
        (last_round_min / c.min_rtt_divisor.max(1))
            .min(max)
            .max(min)
    }

    /// After N_RTT_SAMPLE samples in a round: slow start exits to CSS on a delay
    /// increase; CSS returns to slow start when the RTT falls below its baseline (§4.2).
    fn judge_round(&mut self) {
        if self.samples < self.config.n_rtt_sample {
            return;
        }
        let Some(current) = self.current_round_min else {
            return;
        };
        match self.phase {
            HystartPhase::SlowStart => {
                let Some(last) = self.last_round_min else {
                    return;
                };
                if current >= last.saturating_add(self.rtt_thresh(last)) {
                    // §4.2: cssBaselineMinRtt = currentRoundMinRTT; enter CSS.
                    self.phase = HystartPhase::Css {
                        baseline: current,
                        rounds: 0,
                    };
                    self.css_remainder = 0;
                }
            }
            HystartPhase::Css { baseline, .. } => {
                // §4.2: the exit was spurious; resume slow start.
                if current < baseline {
                    self.phase = HystartPhase::SlowStart;
                }
            }
            HystartPhase::Off => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MDS: u64 = 1200;

    /// An ACK-clocked sender in slow start over a path whose RTT the test sets per
    /// flight: `flight` sends at `start`, its `acks` ACKs arrive one RTT later, 1 µs apart,
    /// and every ACK releases a new send (which opens the next round at the first ACK).
    struct Driver {
        hs: Hystart,
        rtt: RttEstimator,
        start_ns: u64,
    }

    impl Driver {
        fn new(config: HystartConfig) -> Self {
            Driver {
                hs: Hystart::new(config),
                rtt: RttEstimator::new(Duration::from_millis(100)),
                start_ns: 1_000_000,
            }
        }

        fn flight(&mut self, rtt_ms: u64, acks: u64) -> Vec<SlowStartStep> {
            let rtt_ns = rtt_ms * 1_000_000;
            self.hs.on_packet_sent(Instant::from_nanos(self.start_ns));
            let mut steps = Vec::new();
            for i in 0..acks {
                let sent = Instant::from_nanos(self.start_ns + i * 1_000);
                let now = Instant::from_nanos(self.start_ns + rtt_ns + i * 1_000);
                self.rtt.update(
                    Duration::from_millis(rtt_ms),
                    Duration::ZERO,
                    true,
                    Duration::from_millis(25),
                );
                steps.push(self.hs.on_slow_start_ack(now, sent, MDS, &self.rtt, MDS));
                self.hs.on_packet_sent(now);
            }
            self.start_ns += rtt_ns;
            steps
        }

        fn growth(&mut self, rtt_ms: u64, acks: u64) -> u64 {
            self.flight(rtt_ms, acks).iter().map(|s| s.growth).sum()
        }
    }

    fn ms(v: u64) -> Instant {
        Instant::from_millis(v)
    }

    #[test]
    fn rounds_end_on_ack_of_a_packet_sent_at_or_after_round_start() {
        let mut hs = Hystart::new(HystartConfig::enabled());
        let mut rtt = RttEstimator::new(Duration::from_millis(100));
        rtt.update(
            Duration::from_millis(50),
            Duration::ZERO,
            true,
            Duration::ZERO,
        );
        hs.on_packet_sent(ms(10));
        hs.on_packet_sent(ms(11));
        assert_eq!(hs.round_start, Some(ms(10)));
        // A packet sent before the round began: same round, one sample.
        hs.on_slow_start_ack(ms(60), ms(9), MDS, &rtt, MDS);
        assert_eq!((hs.round_start, hs.samples), (Some(ms(10)), 1));
        assert_eq!(hs.current_round_min, Some(Duration::from_millis(50)));
        // The round's first packet is acknowledged: the round ends, its minimum moves to
        // lastRoundMinRTT, and this ACK's sample opens the next round's count.
        hs.on_slow_start_ack(ms(61), ms(10), MDS, &rtt, MDS);
        assert_eq!(hs.round_start, None);
        assert_eq!(hs.last_round_min, Some(Duration::from_millis(50)));
        assert_eq!(hs.samples, 1);
        // The next send opens the next round; a later packet of the old round does not end it.
        hs.on_packet_sent(ms(61));
        hs.on_slow_start_ack(ms(62), ms(11), MDS, &rtt, MDS);
        assert_eq!((hs.round_start, hs.samples), (Some(ms(61)), 2));
        // Packets acknowledged in one ACK (same `now`) are one RTT sample.
        hs.on_slow_start_ack(ms(62), ms(12), MDS, &rtt, MDS);
        assert_eq!(hs.samples, 2);
    }

    #[test]
    fn flat_rtt_never_exits() {
        let mut d = Driver::new(HystartConfig::enabled());
        for _ in 0..30 {
            assert_eq!(d.growth(100, 20), 20 * MDS);
            assert_eq!(d.hs.phase(), HystartPhase::SlowStart);
        }
    }

    /// Rounds at `base_ms`, then one at `risen_ms`: whether HyStart++ entered CSS.
    fn exits(base_ms: u64, risen_ms: u64) -> bool {
        let mut d = Driver::new(HystartConfig::enabled());
        for _ in 0..3 {
            d.flight(base_ms, 10);
        }
        d.flight(risen_ms, 10);
        assert!(d.hs.phase() != HystartPhase::Off);
        d.hs.in_css()
    }

    #[test]
    fn delay_increase_exits_to_css_with_clamped_threshold() {
        // RttThresh = lastRoundMinRTT / 8 = 12.5 ms at 100 ms.
        assert!(!exits(100, 112));
        assert!(exits(100, 113));
        // 20 ms / 8 = 2.5 ms, clamped up to MIN_RTT_THRESH 4 ms.
        assert!(!exits(20, 23));
        assert!(exits(20, 24));
        // 200 ms / 8 = 25 ms, clamped down to MAX_RTT_THRESH 16 ms.
        assert!(!exits(200, 215));
        assert!(exits(200, 216));
        // The baseline is the round minimum that triggered CSS.
        let mut d = Driver::new(HystartConfig::enabled());
        d.flight(100, 10);
        d.flight(100, 10);
        d.flight(130, 10);
        assert_eq!(
            d.hs.phase(),
            HystartPhase::Css {
                baseline: Duration::from_millis(130),
                rounds: 0
            }
        );
    }

    #[test]
    fn too_few_samples_do_not_exit() {
        let mut d = Driver::new(HystartConfig::enabled());
        for _ in 0..3 {
            d.flight(100, 7);
        }
        d.flight(150, 7);
        assert_eq!(d.hs.phase(), HystartPhase::SlowStart);
    }

    /// A driver that has just entered CSS at baseline 130 ms.
    fn in_css() -> Driver {
        let mut d = Driver::new(HystartConfig::enabled());
        d.flight(100, 10);
        d.flight(100, 10);
        d.flight(130, 10);
        assert!(d.hs.in_css());
        d
    }

    #[test]
    fn css_grows_a_quarter_of_slow_start() {
        let mut d = in_css();
        assert_eq!(d.growth(130, 16), 16 * MDS / 4);
        // Sub-byte remainders carry: 3 x 1 byte / 4 then 1 more byte = 1 byte.
        let mut d = in_css();
        d.hs.css_remainder = 0;
        let now = Instant::from_nanos(d.start_ns + 130_000_000);
        let sent = Instant::from_nanos(d.start_ns);
        let grown: u64 = (0..4)
            .map(|_| d.hs.on_slow_start_ack(now, sent, 1, &d.rtt, MDS).growth)
            .sum();
        assert_eq!(grown, 1);
    }

    #[test]
    fn rtt_below_baseline_returns_to_slow_start() {
        let mut d = in_css();
        // Still above the 130 ms baseline: CSS continues.
        d.flight(130, 10);
        assert!(d.hs.in_css());
        d.flight(120, 10);
        assert_eq!(d.hs.phase(), HystartPhase::SlowStart);
        assert_eq!(d.growth(120, 10), 10 * MDS);
    }

    #[test]
    fn css_enters_congestion_avoidance_after_css_rounds() {
        let mut d = in_css();
        // The round CSS began in ends with the first ACK of the next flight: round 1.
        for round in 1..5 {
            let steps = d.flight(130, 10);
            assert!(steps.iter().all(|s| !s.enter_congestion_avoidance));
            assert!(matches!(d.hs.phase(), HystartPhase::Css { rounds, .. } if rounds == round));
        }
        let steps = d.flight(130, 10);
        assert!(steps[0].enter_congestion_avoidance);
        assert!(steps[1..].iter().all(|s| !s.enter_congestion_avoidance));
        assert_eq!(d.hs.phase(), HystartPhase::Off);
        // Afterwards: plain growth, whatever the RTT does.
        assert_eq!(d.growth(300, 10), 10 * MDS);
    }

    #[test]
    fn ack_growth_limit_caps_each_ack() {
        let mut hs = Hystart::new(HystartConfig {
            ack_growth_limit_segments: Some(2),
            ..HystartConfig::enabled()
        });
        let rtt = RttEstimator::new(Duration::from_millis(100));
        let grown: u64 = (0..3)
            .map(|_| hs.on_slow_start_ack(ms(100), ms(0), MDS, &rtt, MDS).growth)
            .sum();
        assert_eq!(grown, 2 * MDS);
        // A new ACK gets a fresh allowance.
        assert_eq!(
            hs.on_slow_start_ack(ms(101), ms(0), MDS, &rtt, MDS).growth,
            MDS
        );
    }

    #[test]
    fn disabled_or_after_loss_is_plain_slow_start() {
        let mut d = Driver::new(HystartConfig::default());
        d.flight(100, 10);
        d.flight(100, 10);
        assert_eq!(d.growth(200, 10), 10 * MDS);
        assert_eq!(d.hs.phase(), HystartPhase::Off);
        let mut d = in_css();
        d.hs.on_congestion_event();
        assert_eq!(d.hs.phase(), HystartPhase::Off);
        assert_eq!(d.growth(300, 10), 10 * MDS);
    }
}
