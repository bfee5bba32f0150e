//! Prague against draft-briscoe-iccrg-prague-congestion-control-04's arithmetic: the
//! alpha EWMA (g = 1/16, once per round), the cwnd · (1 − alpha/2) reduction at most
//! once per round trip, the additive increase (and its RTT-independence scaling), the
//! classic loss response, and the scalable relation W · p ≈ 2 in an ACK-clocked loop.

use super::*;
use crate::cc::{AckedPacket, CongestionControl, CongestionEvent};
use crate::config::TransportConfig;
use crate::ecn::EcnMode;
use crate::rng::DetRng;
use std::collections::VecDeque;

const MDS: u64 = 1200;

fn us(v: u64) -> Instant {
    Instant::from_micros(v)
}

fn ms(v: u64) -> Instant {
    Instant::from_millis(v)
}

fn rtt_of(millis: u64) -> RttEstimator {
    let mut rtt = RttEstimator::new(Duration::from_millis(millis));
    rtt.update(
        Duration::from_millis(millis),
        Duration::ZERO,
        true,
        Duration::ZERO,
    );
    rtt
}

fn prague(config: PragueConfig) -> Prague {
    Prague::new(config, MDS)
}

/// One ACK of one packet sent at `sent`, CE-marked or not.
fn ack_one(cc: &mut Prague, now: Instant, sent: Instant, marked: bool, rtt: &RttEstimator) {
    let acked = [AckedPacket {
        time_sent: sent,
        bytes: MDS,
        max_datagram_size: None,
    }];
    cc.on_ack(&AckSummary {
        acked: &acked,
        ce_event: marked.then_some(sent),
        newly_ce_marked: u64::from(marked),
        ..AckSummary::losses(now, rtt, &[], None)
    });
}

fn loss(cc: &mut Prague, now: Instant, sent: Instant, rtt: &RttEstimator, persistent: bool) {
    cc.on_ack(&AckSummary::losses(
        now,
        rtt,
        &[],
        Some(CongestionEvent {
            largest_lost_sent_time: sent,
            persistent,
            lost_bytes: MDS,
        }),
    ));
}

#[test]
fn defaults_are_the_drafts() {
    let c = PragueConfig::default();
    assert_eq!(c.alpha_gain, 1.0 / 16.0);
    assert_eq!(c.initial_alpha, 1.0);
    assert_eq!(c.additive_increase_segments, 1.0);
    assert_eq!(c.loss_reduction_factor, 0.5);
    assert!(c.rtt_independence);
    assert_eq!(c.target_rtt_ms, 25);
    assert_eq!(c.minimum_window_packets, 2);
    assert!(c.validate().is_ok());
    assert_eq!(prague(c).window(), 10 * MDS, "RFC 9002 §7.2 initial window");
}

#[test]
fn alpha_is_an_ewma_of_the_ce_fraction_updated_once_per_round() {
    let rtt = rtt_of(100);
    let mut cc = prague(PragueConfig {
        initial_alpha: 0.0,
        rtt_independence: false,
        ..PragueConfig::default()
    });
    // Ten packets sent at 0..9 µs, acknowledged from 100 ms; the first ACK starts the
    // round, four of the ten are marked. Nothing sent after 100 ms is acknowledged
    // yet: the round runs on and alpha does not move.
    for i in 0..10u64 {
        ack_one(
            &mut cc,
            ms(100) + Duration::from_micros(i),
            us(i),
            i < 4,
            &rtt,
        );
        assert_eq!(cc.alpha(), 0.0, "alpha changes only when a round ends");
    }
    assert_eq!(cc.last_ce_fraction(), None);
    // The ACK of a packet sent at 100 ms (after the round began) ends it: 11 packets,
    // 4 marked. alpha = (1 − 1/16) · 0 + 1/16 · 4/11.
    ack_one(&mut cc, ms(200), ms(100), false, &rtt);
    let f1 = 4.0 / 11.0;
    assert!(
        (cc.alpha() - f1 / 16.0).abs() < 1e-12,
        "alpha {}",
        cc.alpha()
    );
    assert_eq!(cc.last_ce_fraction(), Some(f1));
    // The next round: all 5 of its packets marked. alpha = 15/16 · a1 + 1/16 · 1.
    let a1 = cc.alpha();
    for i in 0..4u64 {
        ack_one(
            &mut cc,
            ms(200) + Duration::from_micros(i + 1),
            ms(150),
            true,
            &rtt,
        );
    }
    assert_eq!(cc.alpha(), a1, "still the same round");
    ack_one(&mut cc, ms(300), ms(250), true, &rtt);
    let a2 = 15.0 / 16.0 * a1 + 1.0 / 16.0;
    assert!(
        (cc.alpha() - a2).abs() < 1e-12,
        "alpha {} want {a2}",
        cc.alpha()
    );
    let est = cc.scalable_ecn().expect("prague reports alpha");
    assert_eq!(est.alpha_ppm, (a2 * 1e6).round() as u32);
    assert_eq!(est.ce_fraction_ppm, Some(1_000_000));
}

#[test]
fn the_virtual_rtt_stretches_the_round_below_the_target() {
    // srtt 10 ms, target 25 ms: a round lasts at least 25 ms even when packets sent
    // after its start are acknowledged sooner.
    let rtt = rtt_of(10);
    let mut cc = prague(PragueConfig {
        initial_alpha: 0.0,
        ..PragueConfig::default()
    });
    ack_one(&mut cc, ms(10), ms(0), true, &rtt); // round starts at 10 ms
    ack_one(&mut cc, ms(20), ms(10), false, &rtt);
    assert_eq!(cc.alpha(), 0.0, "10 ms < the 25 ms virtual RTT");
    ack_one(&mut cc, ms(35), ms(25), false, &rtt);
    assert!((cc.alpha() - 1.0 / 3.0 / 16.0).abs() < 1e-12);
}

#[test]
fn ce_reduces_by_half_alpha_at_most_once_per_round_trip() {
    let rtt = rtt_of(100);
    let mut cc = prague(PragueConfig {
        initial_alpha: 0.5,
        ..PragueConfig::default()
    });
    let w0 = cc.window();
    // A CE mark on the packet sent at 1 ms, reported at 101 ms: cwnd · (1 − 0.5/2).
    // (Growth first: the marked packet itself adds nothing.)
    ack_one(&mut cc, ms(101), ms(1), true, &rtt);
    let w1 = (w0 as f64 * 0.75) as u64;
    assert_eq!(cc.window(), w1);
    assert!(!cc.in_slow_start(), "the first reduction ends slow start");
    assert!(cc.in_recovery());
    // More marks on packets sent before the reduction: no second reduction.
    ack_one(&mut cc, ms(102), ms(2), true, &rtt);
    ack_one(&mut cc, ms(150), ms(50), true, &rtt);
    assert_eq!(cc.window(), w1);
    // A mark on a packet sent after it (one round trip later): a new reduction. The
    // ACK first ends the round that began at 101 ms (4 packets, all marked): alpha =
    // 15/16 · 0.5 + 1/16 · 1, the alpha the reduction uses.
    ack_one(&mut cc, ms(220), ms(120), true, &rtt);
    let alpha = 15.0 / 16.0 * 0.5 + 1.0 / 16.0;
    assert!((cc.alpha() - alpha).abs() < 1e-12);
    let w2 = (w1 as f64 * (1.0 - alpha / 2.0)) as u64;
    assert_eq!(cc.window(), w2);
    assert_eq!(cc.ssthresh(), w2);
}

#[test]
fn the_reduction_never_goes_below_the_minimum_window() {
    let rtt = rtt_of(100);
    let mut cc = prague(PragueConfig {
        initial_window_packets: Some(2),
        ..PragueConfig::default()
    });
    ack_one(&mut cc, ms(100), ms(0), true, &rtt);
    assert_eq!(cc.window(), 2 * MDS);
}

/// A controller in congestion avoidance at `cwnd` bytes, out of every period (a loss
/// at 10 ms, then an ACK of a packet sent after it).
fn avoiding(config: PragueConfig, rtt: &RttEstimator) -> Prague {
    let mut cc = prague(PragueConfig {
        initial_window_packets: Some(40),
        initial_alpha: 0.0,
        ..config
    });
    loss(&mut cc, ms(10), ms(5), rtt, false);
    assert_eq!(cc.window(), 20 * MDS);
    ack_one(&mut cc, ms(30), ms(11), true, rtt); // ends recovery; marked: no growth
    assert_eq!(cc.window(), 20 * MDS, "alpha 0: a CE mark changes nothing");
    cc
}

#[test]
fn additive_increase_is_one_segment_per_round_trip_on_unmarked_bytes() {
    let rtt = rtt_of(50);
    let mut cc = avoiding(PragueConfig::default(), &rtt);
    // A window of 20 unmarked packets: + 1 segment (to within the carried fraction).
    for i in 0..20u64 {
        ack_one(
            &mut cc,
            ms(100) + Duration::from_micros(i),
            ms(40),
            false,
            &rtt,
        );
    }
    let grown = cc.window() - 20 * MDS;
    assert!((MDS - 60..=MDS).contains(&grown), "grew {grown}");
}

/// One ACK of `n` packets sent at `sent`, the first `marked` of them CE-marked.
fn ack_many(
    cc: &mut Prague,
    now: Instant,
    sent: Instant,
    n: usize,
    marked: u64,
    rtt: &RttEstimator,
) {
    let acked = vec![
        AckedPacket {
            time_sent: sent,
            bytes: MDS,
            max_datagram_size: None,
        };
        n
    ];
    cc.on_ack(&AckSummary {
        acked: &acked,
        ce_event: (marked > 0).then_some(sent),
        newly_ce_marked: marked,
        ..AckSummary::losses(now, rtt, &[], None)
    });
}

#[test]
fn marked_packets_add_nothing_to_the_window() {
    let rtt = rtt_of(50);
    // One ACK of 20 packets, 10 of them marked, against one of the 10 unmarked only:
    // the marked one grows by the same 10 packets' increase, then reduces by alpha/2
    // (its round, begun at 30 ms with one marked packet, ends here: 11 of 21 marked).
    let mut marked = avoiding(PragueConfig::default(), &rtt);
    ack_many(&mut marked, ms(100), ms(40), 20, 10, &rtt);
    let mut unmarked = avoiding(PragueConfig::default(), &rtt);
    ack_many(&mut unmarked, ms(100), ms(40), 10, 0, &rtt);
    assert!(unmarked.window() > 20 * MDS);
    let alpha = 11.0 / 21.0 / 16.0;
    assert!((marked.alpha() - alpha).abs() < 1e-12);
    let want = (unmarked.window() as f64 * (1.0 - alpha / 2.0)) as u64;
    assert_eq!(marked.window(), want);
}

#[test]
fn rtt_independence_scales_the_increase_by_the_rtt_ratio_squared() {
    // srtt 10 ms, target 25 ms: (10/25)² = 0.16 segments per round trip.
    let rtt = rtt_of(10);
    let mut on = avoiding(PragueConfig::default(), &rtt);
    let mut off = avoiding(
        PragueConfig {
            rtt_independence: false,
            ..PragueConfig::default()
        },
        &rtt,
    );
    for i in 0..20u64 {
        let now = ms(100) + Duration::from_micros(i);
        ack_one(&mut on, now, ms(90), false, &rtt);
        ack_one(&mut off, now, ms(90), false, &rtt);
    }
    let on_growth = (on.window() - 20 * MDS) as f64 / MDS as f64;
    let off_growth = (off.window() - 20 * MDS) as f64 / MDS as f64;
    // One window of 20 packets: ≈ 1 segment unscaled, 0.16 of it scaled.
    assert!(
        (0.95..=1.0).contains(&off_growth),
        "unscaled growth {off_growth}"
    );
    let ratio = on_growth / off_growth;
    assert!((0.155..=0.175).contains(&ratio), "scaled/unscaled {ratio}");
}

#[test]
fn loss_gets_the_classic_reduction_once_per_period_and_blocks_ce_in_it() {
    let rtt = rtt_of(100);
    let mut cc = prague(PragueConfig {
        initial_window_packets: Some(40),
        initial_alpha: 0.1,
        ..PragueConfig::default()
    });
    loss(&mut cc, ms(100), ms(50), &rtt, false);
    assert_eq!(
        cc.window(),
        20 * MDS,
        "cwnd · 0.5 (Reno), not · (1 − alpha/2)"
    );
    assert_eq!(cc.ssthresh(), 20 * MDS);
    loss(&mut cc, ms(110), ms(60), &rtt, false);
    assert_eq!(cc.window(), 20 * MDS, "one reduction per recovery period");
    ack_one(&mut cc, ms(120), ms(80), true, &rtt);
    assert_eq!(
        cc.window(),
        20 * MDS,
        "no ECN reduction for a packet sent before it"
    );
    // Persistent congestion collapses to the minimum window.
    loss(&mut cc, ms(300), ms(200), &rtt, true);
    assert_eq!(cc.window(), 2 * MDS);
}

#[test]
fn the_loss_factor_is_a_knob() {
    let rtt = rtt_of(100);
    let mut cc = prague(PragueConfig {
        initial_window_packets: Some(40),
        loss_reduction_factor: 0.7,
        ..PragueConfig::default()
    });
    loss(&mut cc, ms(100), ms(50), &rtt, false);
    assert_eq!(cc.window(), 28 * MDS);
}

/// Runs Prague ACK-clocked over a path of fixed RTT `rtt_ms` where each packet is
/// CE-marked with probability `p` (seeded), one ACK per packet, for `rounds` round
/// trips; returns the mean window in segments over the last half.
fn mean_window_under_marking(p: f64, rtt_ms: u64, rounds: u64, seed: u64) -> f64 {
    let rtt = rtt_of(rtt_ms);
    let r = Duration::from_millis(rtt_ms);
    let mut rng = DetRng::new(seed);
    let mut cc = prague(PragueConfig::default());
    let mut in_flight: VecDeque<(Instant, bool)> = VecDeque::new();
    let mut next_send = Instant::ZERO;
    let end = Instant::ZERO + r * u32::try_from(rounds).unwrap();
    let measure_from = Instant::ZERO + r * u32::try_from(rounds / 2).unwrap();
    let (mut sum, mut n) = (0.0, 0u64);
    let tick = Duration::from_nanos(100);
    loop {
        // Fill the window; packets leave 100 ns apart after the ACK that freed them.
        while (in_flight.len() as u64) * MDS < cc.window() {
            next_send += tick;
            in_flight.push_back((next_send, rng.next_f64() < p));
        }
        let (sent, marked) = in_flight.pop_front().expect("window of at least 2");
        let now = sent + r;
        if now >= end {
            break;
        }
        next_send = next_send.max(now);
        ack_one(&mut cc, now, sent, marked, &rtt);
        if now >= measure_from {
            sum += cc.window() as f64 / MDS as f64;
            n += 1;
        }
    }
    sum / n as f64
}

#[test]
fn window_times_mark_probability_stays_near_two_segments() {
    // The scalable-control relation (RFC 9332 §2.1, DCTCP's W ∝ 1/p): W · p ≈ 2.
    for (i, p) in [0.01, 0.02, 0.05, 0.1].into_iter().enumerate() {
        let w = mean_window_under_marking(p, 50, 1500, 7 + i as u64);
        let wp = w * p;
        println!("p = {p}: mean window {w:.1} segments, W·p = {wp:.2}");
        assert!(
            (1.5..=3.0).contains(&wp),
            "p = {p}: mean window {w:.1} segments, W·p = {wp:.2}"
        );
    }
}

#[test]
fn prague_needs_ect1() {
    let mut config = TransportConfig {
        congestion_control: CongestionControl::Prague(PragueConfig::default()),
        ..TransportConfig::default()
    };
    let e = config.validate().unwrap_err();
    assert_eq!(e.key, "ecn");
    assert!(e.why.contains("ect1"), "{}", e.why);
    config.ecn = EcnMode::Ect0;
    assert_eq!(config.validate().unwrap_err().key, "ecn");
    config.ecn = EcnMode::Ect1;
    assert!(config.validate().is_ok());
    config.congestion_control = CongestionControl::Prague(PragueConfig {
        alpha_gain: 0.0,
        ..PragueConfig::default()
    });
    assert_eq!(
        config.validate().unwrap_err().key,
        "congestion_control.alpha_gain"
    );
}

#[test]
fn the_config_reads_from_toml_with_the_drafts_defaults() {
    let cc: CongestionControl =
        toml::from_str("algorithm = \"prague\"\nalpha_gain = 0.125\n").expect("parses");
    assert_eq!(
        cc,
        CongestionControl::Prague(PragueConfig {
            alpha_gain: 0.125,
            ..PragueConfig::default()
        })
    );
    assert!(toml::from_str::<CongestionControl>("algorithm = \"prague\"\nalpha = 1\n").is_err());
    assert_eq!(cc.build(MDS).name(), "prague");
}
