//! Every phase transition of draft-ietf-tsvwg-careful-resume §4, driven through the
//! controller interface over NewReno (and CUBIC) with a scripted path.

use super::*;
use crate::cc::{CubicConfig, NewReno, NewRenoConfig};
use std::collections::VecDeque;

const MDS: u64 = 1200;
const IW: u64 = 12_000;
const SAVED_CWND: u64 = 1_200_000;
const RTT: Duration = Duration::from_millis(50);

struct Harness {
    cr: CarefulResume,
    rtt: RttEstimator,
    now: Instant,
    pn: u64,
    /// (pn, send time) of packets in flight, oldest first.
    flight: VecDeque<(u64, Instant)>,
}

fn cfg() -> CarefulResumeConfig {
    CarefulResumeConfig {
        enabled: true,
        saved_cwnd_bytes: SAVED_CWND,
        saved_rtt_ms: 50.0,
        ..CarefulResumeConfig::default()
    }
}

impl Harness {
    fn new(cfg: CarefulResumeConfig) -> Self {
        Self::with_rtt(cfg, RTT)
    }

    /// A harness whose handshake measured `rtt`.
    fn with_rtt(cfg: CarefulResumeConfig, rtt: Duration) -> Self {
        let inner = Box::new(NewReno::new(NewRenoConfig::default(), MDS));
        let mut h = Harness {
            cr: CarefulResume::new(inner, cfg, MDS),
            rtt: RttEstimator::new(Duration::from_millis(333)),
            now: Instant::from_millis(1),
            pn: 0,
            flight: VecDeque::new(),
        };
        h.handshake(rtt);
        h
    }

    /// The handshake's round trip: one packet out and acknowledged (connection setup;
    /// Reconnaissance starts after it, draft §4.2). The window grows by one packet.
    fn handshake(&mut self, rtt: Duration) {
        assert!(self.send());
        self.ack_with(1, rtt, true);
        assert_eq!(self.cr.window(), IW, "an application-limited ACK");
    }

    fn in_flight(&self) -> u64 {
        self.flight.len() as u64 * MDS
    }

    fn tick(&mut self, d: Duration) {
        self.now = self.now.saturating_add(d);
    }

    /// Sends one packet if the window allows; 10 µs between packets.
    fn send(&mut self) -> bool {
        if self.in_flight() + MDS > self.cr.window() {
            return false;
        }
        self.tick(Duration::from_micros(10));
        self.flight.push_back((self.pn, self.now));
        self.cr.on_packet_number(self.pn);
        self.pn += 1;
        let inflight = self.in_flight();
        self.cr.on_packet_sent(self.now, MDS, inflight);
        true
    }

    fn fill(&mut self) -> u64 {
        let mut n = 0;
        while self.send() {
            n += 1;
        }
        n
    }

    /// One ACK for the oldest `n` packets, with an RTT sample of `rtt`.
    fn ack(&mut self, n: usize, rtt: Duration) {
        self.ack_with(n, rtt, false);
    }

    fn ack_with(&mut self, n: usize, rtt: Duration, app_limited: bool) {
        let newest = self.flight[n - 1].1;
        self.now = self.now.max(newest.saturating_add(rtt));
        let latest = self.now.saturating_duration_since(newest);
        self.rtt
            .update(latest, Duration::ZERO, true, Duration::ZERO);
        for _ in 0..n {
            let (_, sent) = self.flight.pop_front().expect("in flight");
            self.cr
                .on_packet_acked(self.now, sent, MDS, app_limited, &self.rtt);
        }
        let rs = RateSample {
            bytes_in_flight: self.in_flight(),
            ..RateSample::default()
        };
        self.cr.on_rate_sample(self.now, &rs, &self.rtt);
    }

    /// The oldest packet is declared lost.
    fn lose_oldest(&mut self, persistent: bool) {
        let (_, sent) = self.flight.pop_front().expect("in flight");
        self.cr.on_congestion_event(self.now, sent, persistent, MDS);
    }

    /// Reconnaissance with the IW acknowledged after `rtt`, then the window filled.
    fn confirm_and_fill(&mut self, rtt: Duration) {
        assert_eq!(self.fill(), IW / MDS);
        self.ack(10, rtt);
        self.fill();
    }

    fn triggers(&mut self) -> Vec<(Phase, Option<Trigger>)> {
        std::iter::from_fn(|| self.cr.take_update())
            .filter(|u| u.old.is_some())
            .map(|u| (u.new, u.trigger))
            .collect()
    }
}

#[test]
fn full_resume_unvalidated_validating_normal() {
    let mut h = Harness::new(cfg());
    assert_eq!(h.cr.phase(), Phase::Reconnaissance);
    assert_eq!(h.cr.window(), IW, "Reconnaissance starts at the IW");
    h.fill();
    h.ack(10, RTT);
    assert_eq!(h.cr.phase(), Phase::Reconnaissance, "not yet cwnd-limited");
    // Slow start doubled the window; the send that fills it enters Unvalidated.
    for _ in 0..19 {
        assert!(h.send());
    }
    assert_eq!(h.cr.phase(), Phase::Reconnaissance);
    assert!(h.send());
    assert_eq!(h.cr.phase(), Phase::Unvalidated);
    assert_eq!(
        h.cr.window(),
        SAVED_CWND / 2,
        "jump to half the saved window"
    );
    assert_eq!(h.cr.pipesize(), 2 * IW, "PipeSize = flight size on entry");
    // Paced at jump_cwnd / current RTT (draft §5.6).
    assert_eq!(h.cr.pacing_rate(), Some(SAVED_CWND / 2 * 20));
    h.fill();
    assert_eq!(h.cr.phase(), Phase::Validating);
    assert_eq!(h.cr.window(), SAVED_CWND / 2, "CWND = flight_size");
    assert_eq!(h.cr.pacing_rate(), None, "the controller's pacing again");
    // The ACKs of the jump validate it; the window grows by the normal rules.
    h.ack(20, RTT);
    assert_eq!(h.cr.phase(), Phase::Validating);
    assert_eq!(h.cr.window(), SAVED_CWND / 2 + 20 * MDS);
    let rest = h.flight.len();
    h.ack(rest, RTT);
    assert_eq!(h.cr.phase(), Phase::Normal);
    assert_eq!(
        h.triggers(),
        vec![
            (Phase::Unvalidated, Some(Trigger::CongestionWindowLimited)),
            (Phase::Validating, Some(Trigger::LastUnvalidatedPacketSent)),
            (
                Phase::Normal,
                Some(Trigger::LastUnvalidatedPacketAcknowledged)
            ),
        ]
    );
}

#[test]
fn rtt_check_too_small_stops_careful_resume() {
    let mut h = Harness::with_rtt(cfg(), Duration::from_millis(25));
    h.confirm_and_fill(Duration::from_millis(25)); // <= saved_rtt / 2
    assert_eq!(h.cr.phase(), Phase::Normal);
    assert_eq!(h.cr.window(), 2 * IW, "the window is not modified");
    assert_eq!(
        h.triggers(),
        vec![(Phase::Normal, Some(Trigger::RttNotValidated))]
    );
}

#[test]
fn rtt_check_slightly_above_half_passes() {
    let mut h = Harness::with_rtt(cfg(), Duration::from_millis(26));
    h.confirm_and_fill(Duration::from_millis(26));
    assert_eq!(h.cr.phase(), Phase::Validating);
}

#[test]
fn rtt_check_ten_times_larger_stops_careful_resume() {
    let mut h = Harness::with_rtt(cfg(), Duration::from_millis(501));
    h.confirm_and_fill(Duration::from_millis(501));
    assert_eq!(h.cr.phase(), Phase::Normal);
    assert_eq!(
        h.triggers(),
        vec![(Phase::Normal, Some(Trigger::RttNotValidated))]
    );
}

#[test]
fn loss_in_reconnaissance_returns_to_normal_cc() {
    let mut h = Harness::new(cfg());
    h.fill();
    h.lose_oldest(false);
    assert_eq!(h.cr.phase(), Phase::Normal);
    assert_eq!(h.cr.window(), IW / 2, "NewReno's own reduction");
    assert_eq!(
        h.triggers(),
        vec![(Phase::Normal, Some(Trigger::PacketLoss))]
    );
}

#[test]
fn reconnaissance_starts_after_the_handshake_round_trip() {
    // Without the handshake's ACK, nothing sent counts as initial data.
    let inner = Box::new(NewReno::new(NewRenoConfig::default(), MDS));
    let mut h = Harness {
        cr: CarefulResume::new(inner, cfg(), MDS),
        rtt: RttEstimator::new(Duration::from_millis(333)),
        now: Instant::from_millis(1),
        pn: 0,
        flight: VecDeque::new(),
    };
    h.fill();
    h.ack(10, RTT); // the first ACK: setup done, Reconnaissance starts now
    h.fill();
    assert_eq!(h.cr.phase(), Phase::Reconnaissance);
    h.ack(10, RTT);
    h.fill();
    assert_eq!(h.cr.phase(), Phase::Validating);
}

#[test]
fn initial_data_must_be_acknowledged_first() {
    let mut h = Harness::new(cfg());
    h.fill();
    h.ack(5, RTT); // half the initial data
    h.fill();
    assert_eq!(h.cr.phase(), Phase::Reconnaissance);
}

#[test]
fn loss_in_unvalidated_enters_safe_retreat() {
    let mut h = Harness::new(cfg());
    h.fill();
    h.ack(10, RTT);
    for _ in 0..40 {
        h.send();
    }
    assert_eq!(h.cr.phase(), Phase::Unvalidated);
    // A packet from before the jump is lost (draft §4.3 note).
    h.lose_oldest(false);
    assert_eq!(h.cr.phase(), Phase::SafeRetreat);
    let pipesize = 2 * IW;
    assert_eq!(h.cr.window(), pipesize / 2, "CWND = PipeSize / 2");
    assert!(h.cr.in_recovery());
    // ACKs in Safe Retreat do not grow the window but grow PipeSize.
    h.ack(10, RTT);
    assert_eq!(h.cr.window(), pipesize / 2);
    assert_eq!(h.cr.pipesize(), pipesize + 10 * MDS);
    let rest = h.flight.len();
    h.ack(rest, RTT);
    assert_eq!(h.cr.phase(), Phase::Normal);
    let ps = h.cr.pipesize();
    assert_eq!(h.cr.ssthresh(), ps / 2, "ssthresh = PipeSize · Beta");
    assert_eq!(h.cr.window(), pipesize / 2);
    assert_eq!(
        h.triggers(),
        vec![
            (Phase::Unvalidated, Some(Trigger::CongestionWindowLimited)),
            (Phase::SafeRetreat, Some(Trigger::PacketLoss)),
            (Phase::Normal, Some(Trigger::ExitRecovery)),
        ]
    );
}

#[test]
fn loss_in_validating_enters_safe_retreat() {
    let mut h = Harness::new(cfg());
    h.confirm_and_fill(RTT);
    assert_eq!(h.cr.phase(), Phase::Validating);
    h.ack(30, RTT);
    let pipesize = h.cr.pipesize();
    h.lose_oldest(false);
    assert_eq!(h.cr.phase(), Phase::SafeRetreat);
    assert_eq!(h.cr.window(), pipesize / 2);
    // Further losses of the same flight do not reduce again.
    h.lose_oldest(false);
    assert_eq!(h.cr.window(), pipesize / 2);
    assert_eq!(
        h.triggers().last(),
        Some(&(Phase::SafeRetreat, Some(Trigger::PacketLoss)))
    );
}

#[test]
fn first_unvalidated_ack_enters_validating_at_flight_size() {
    let mut h = Harness::new(cfg());
    h.fill();
    h.ack(10, RTT);
    for _ in 0..100 {
        h.send();
    }
    assert_eq!(h.cr.phase(), Phase::Unvalidated);
    // ACK everything up to and including the first unvalidated packet (the 21st).
    h.ack(21, RTT);
    assert_eq!(h.cr.phase(), Phase::Validating);
    assert_eq!(h.cr.window(), h.in_flight(), "CWND = flight_size");
    assert_eq!(
        h.triggers()[1],
        (
            Phase::Validating,
            Some(Trigger::FirstUnvalidatedPacketAcknowledged)
        )
    );
}

#[test]
fn rate_limited_sender_returns_to_normal_at_pipesize() {
    let mut h = Harness::new(cfg());
    h.fill();
    h.ack(10, RTT);
    for _ in 0..22 {
        h.send();
    }
    assert_eq!(h.cr.phase(), Phase::Unvalidated);
    // The application has nothing more: every packet is acknowledged.
    let all = h.flight.len();
    h.ack(all, RTT);
    assert_eq!(h.cr.phase(), Phase::Normal);
    assert_eq!(h.cr.window(), h.cr.pipesize(), "CWND = PipeSize");
    assert_eq!(h.triggers()[1], (Phase::Normal, Some(Trigger::RateLimited)));
}

#[test]
fn more_than_one_rtt_unvalidated_enters_validating() {
    let mut h = Harness::new(cfg());
    h.fill();
    h.ack(10, RTT);
    for _ in 0..40 {
        h.send();
    }
    h.tick(RTT + Duration::from_millis(1));
    h.send();
    assert_eq!(h.cr.phase(), Phase::Validating);
    assert_eq!(
        h.triggers()[1],
        (Phase::Validating, Some(Trigger::RttExceeded))
    );
}

#[test]
fn persistent_congestion_ends_careful_resume() {
    let mut h = Harness::new(cfg());
    h.confirm_and_fill(RTT);
    h.lose_oldest(true);
    assert_eq!(h.cr.phase(), Phase::Normal);
    assert_eq!(
        h.cr.window(),
        2 * MDS,
        "persistent congestion: minimum window"
    );
}

#[test]
fn ecn_ce_in_unvalidated_enters_safe_retreat() {
    let mut h = Harness::new(cfg());
    h.fill();
    h.ack(10, RTT);
    for _ in 0..40 {
        h.send();
    }
    h.cr.on_ecn_ce(h.now, h.now);
    assert_eq!(h.cr.phase(), Phase::SafeRetreat);
    assert_eq!(h.triggers()[1], (Phase::SafeRetreat, Some(Trigger::EcnCe)));
}

#[test]
fn small_saved_window_gives_no_jump() {
    let mut h = Harness::new(CarefulResumeConfig {
        saved_cwnd_bytes: 4 * IW,
        ..cfg()
    });
    h.confirm_and_fill(RTT);
    assert_eq!(h.cr.phase(), Phase::Normal);
    assert_eq!(h.cr.window(), 2 * IW);
}

#[test]
fn max_jump_and_pacing_variants() {
    let mut h = Harness::new(CarefulResumeConfig {
        max_jump_bytes: Some(100_000),
        unvalidated_pacing: UnvalidatedPacing::Off,
        ..cfg()
    });
    h.fill();
    h.ack(10, RTT);
    for _ in 0..20 {
        h.send();
    }
    assert_eq!(
        h.cr.window(),
        100_000,
        "jump_cwnd = min(max_jump, saved_cwnd / 2)"
    );
    assert_eq!(h.cr.pacing_rate(), Some(u64::MAX));
}

#[test]
fn wraps_cubic_too() {
    let inner = CubicConfig::default();
    let cc = crate::cc::CongestionControl::Cubic(inner).build(MDS);
    let mut h = Harness::new(cfg());
    h.cr = CarefulResume::new(cc, cfg(), MDS);
    h.flight.clear();
    h.handshake(RTT);
    h.confirm_and_fill(RTT);
    assert_eq!(h.cr.phase(), Phase::Validating);
    assert_eq!(h.cr.window(), SAVED_CWND / 2);
}

#[test]
fn config_validation_names_the_key() {
    let e = CarefulResumeConfig {
        saved_rtt_ms: 0.0,
        ..cfg()
    }
    .validate()
    .unwrap_err();
    assert_eq!(e.key, "saved_rtt_ms");
    let e = CarefulResumeConfig { beta: 0.4, ..cfg() }
        .validate()
        .unwrap_err();
    assert_eq!(e.key, "beta");
    assert!(
        CarefulResumeConfig::default().validate().is_ok(),
        "off needs no values"
    );
    let bad: Result<CarefulResumeConfig, _> = toml::from_str("enabled = true\nsaved_cwd = 1");
    assert!(bad.is_err(), "unknown keys are refused");
}
