//! BBR's state machine driven through a model path: a bottleneck of fixed rate with a
//! FIFO drop-tail buffer and a fixed base RTT, a paced sender, per-packet ACKs, and
//! the connection's delivery-rate estimator in between, and one `on_ack` summary per
//! ACK as the connection gives it.

use super::*;
use crate::cc::{AckSummary, AckedPacket, CongestionEvent};
use crate::recovery::DeliveryRateEstimator;
use std::collections::VecDeque;

const MDS: u64 = 1200;

struct Sent {
    pn: u64,
    at: Instant,
    snapshot: crate::recovery::DeliverySnapshot,
    /// When its ACK arrives; `None` if the buffer dropped it.
    ack_at: Option<Instant>,
    /// The bottleneck marked it CE (the ACK reports a CE count increase).
    ce: bool,
}

/// The model path and sender.
struct Path {
    bbr: Bbr,
    est: DeliveryRateEstimator,
    rtt: RttEstimator,
    /// Bottleneck rate, bytes per second.
    rate: u64,
    base: Duration,
    buffer: u64,
    link_free: Instant,
    now: Instant,
    next_send: Instant,
    flight: VecDeque<Sent>,
    in_flight: u64,
    pn: u64,
    /// (time, state) at each transition.
    states: Vec<(Instant, BbrState)>,
    lost: u64,
    /// A step AQM: packets finding more than this many bytes queued are CE-marked.
    ce_above: Option<u64>,
    ce_marked: u64,
}

impl Path {
    fn new(cfg: BbrConfig, rate: u64, base_ms: u64, buffer: u64) -> Self {
        Path {
            bbr: Bbr::new(cfg, MDS, 7),
            est: DeliveryRateEstimator::new(),
            rtt: RttEstimator::new(Duration::from_millis(333)),
            rate,
            base: Duration::from_millis(base_ms),
            buffer,
            link_free: Instant::ZERO,
            now: Instant::ZERO,
            next_send: Instant::ZERO,
            flight: VecDeque::new(),
            in_flight: 0,
            pn: 0,
            states: vec![(Instant::ZERO, BbrState::Startup)],
            lost: 0,
            ce_above: None,
            ce_marked: 0,
        }
    }

    fn serialise(&self) -> Duration {
        Duration::from_nanos(MDS * 1_000_000_000 / self.rate)
    }

    fn send(&mut self) {
        self.in_flight += MDS;
        let snapshot = self.est.on_sent(self.now, MDS, self.in_flight);
        self.bbr.on_packet_sent(self.now, MDS, self.in_flight);
        let queued = mul_rate_ns(
            self.rate,
            self.link_free.saturating_duration_since(self.now),
        );
        let ack_at = (queued + MDS <= self.buffer).then(|| {
            self.link_free = self.link_free.max(self.now) + self.serialise();
            self.link_free + self.base
        });
        let ce = ack_at.is_some() && self.ce_above.is_some_and(|t| queued > t);
        self.ce_marked += u64::from(ce);
        self.flight.push_back(Sent {
            pn: self.pn,
            at: self.now,
            snapshot,
            ack_at,
            ce,
        });
        self.pn += 1;
        // Pacing: the next packet leaves MDS / pacing_rate later.
        let rate = self.bbr.pacing_rate().unwrap().max(1);
        self.next_send = self.now + Duration::from_nanos(MDS * 1_000_000_000 / rate);
    }

    /// One ACK: the oldest delivered packet; earlier dropped packets are declared lost.
    fn ack(&mut self) {
        let pos = self.flight.iter().position(|p| p.ack_at.is_some()).unwrap();
        let lost: Vec<Sent> = self.flight.drain(..pos).collect();
        let p = self.flight.pop_front().unwrap();
        self.now = p.ack_at.unwrap();
        self.rtt
            .update(self.now - p.at, Duration::ZERO, true, Duration::ZERO);
        self.in_flight -= MDS;
        self.est.on_acked(self.now, p.pn, p.at, MDS, &p.snapshot);
        let mut lost_packets = Vec::new();
        for l in &lost {
            self.in_flight -= MDS;
            self.lost += 1;
            lost_packets.push(self.est.on_lost(MDS, &l.snapshot));
        }
        let congestion = lost.last().map(|last| CongestionEvent {
            largest_lost_sent_time: last.at,
            persistent: false,
            lost_bytes: MDS * lost.len() as u64,
        });
        let rs = self.est.generate(self.rtt.min(), self.in_flight).unwrap();
        // The connection's one call per ACK.
        let response = self.bbr.on_ack(&AckSummary {
            now: self.now,
            spurious_congestion: false,
            acked: &[AckedPacket {
                time_sent: p.at,
                bytes: MDS,
                max_datagram_size: None,
            }],
            app_limited: false,
            rtt: &self.rtt,
            lost: &lost_packets,
            congestion,
            ce_event: p.ce.then_some(p.at),
            newly_ce_marked: u64::from(p.ce),
            rate_sample: Some(&rs),
        });
        if response.mark_app_limited {
            self.est.mark_app_limited(self.in_flight);
        }
        for s in response.state_changes {
            let s = match s {
                CongestionState::BbrStartup => BbrState::Startup,
                CongestionState::BbrDrain => BbrState::Drain,
                CongestionState::BbrProbeBwDown => BbrState::ProbeBwDown,
                CongestionState::BbrProbeBwCruise => BbrState::ProbeBwCruise,
                CongestionState::BbrProbeBwRefill => BbrState::ProbeBwRefill,
                CongestionState::BbrProbeBwUp => BbrState::ProbeBwUp,
                CongestionState::BbrProbeRtt => BbrState::ProbeRtt,
                other => panic!("not a BBR state: {other:?}"),
            };
            self.states.push((self.now, s));
        }
    }

    /// Runs until `until`, always having data to send.
    fn run(&mut self, until: Instant) {
        while self.now < until {
            let can_send = self.in_flight + MDS <= self.bbr.window();
            let next_ack = self.flight.iter().find_map(|p| p.ack_at);
            match next_ack {
                Some(a) if !can_send || a <= self.next_send.max(self.now) => self.ack(),
                _ => {
                    self.now = self.now.max(self.next_send);
                    self.send();
                }
            }
        }
    }

    fn first(&self, s: BbrState) -> Option<Instant> {
        self.states.iter().find(|(_, x)| *x == s).map(|(t, _)| *t)
    }
}

fn mul_rate_ns(rate: u64, d: Duration) -> u64 {
    (u128::from(rate) * d.as_nanos() / 1_000_000_000) as u64
}

fn secs(s: f64) -> Instant {
    Instant::from_nanos((s * 1e9) as u64)
}

/// 12 Mbit/s (1.5 MB/s), 40 ms: a BDP of 60 kB (50 packets); a 2-BDP buffer.
fn clean_path() -> Path {
    Path::new(BbrConfig::default(), 1_500_000, 40, 120_000)
}

#[test]
fn startup_drain_then_the_probe_bw_cycle() {
    let mut p = clean_path();
    assert_eq!(p.bbr.state(), BbrState::Startup);
    assert_eq!(p.bbr.window(), 12_000);
    p.run(secs(4.0));
    let order: Vec<BbrState> = p.states.iter().map(|(_, s)| *s).collect();
    // §5.3: Startup -> Drain -> ProbeBW_DOWN -> CRUISE -> REFILL -> UP -> DOWN.
    let expect = [
        BbrState::Startup,
        BbrState::Drain,
        BbrState::ProbeBwDown,
        BbrState::ProbeBwCruise,
        BbrState::ProbeBwRefill,
        BbrState::ProbeBwUp,
        BbrState::ProbeBwDown,
    ];
    assert_eq!(&order[..expect.len()], &expect, "{:?}", p.states);
    assert!(p.bbr.full_bw_reached());
    // The model: max_bw within 3% of the bottleneck, min_rtt the base RTT plus one
    // packet's serialisation.
    let bw = p.bbr.max_bw() as f64;
    assert!((bw / 1_500_000.0 - 1.0).abs() < 0.03, "max_bw {bw}");
    let min_rtt = p.bbr.min_rtt().unwrap();
    assert!(min_rtt >= Duration::from_millis(40) && min_rtt < Duration::from_millis(42));
    // Startup's plateau exit needs no loss on a 2-BDP buffer; Drain leaves within a
    // few rounds.
    let drain = p.first(BbrState::Drain).unwrap();
    let down = p.first(BbrState::ProbeBwDown).unwrap();
    assert!(drain < secs(1.0) && down - drain < Duration::from_millis(200));
    // §5.3.3.5: REFILL comes 2 to 3 s after DOWN started (or earlier by the Reno
    // bound of TargetInflight = 50 packets' worth of rounds: 2 s at 40 ms).
    let refill = p.first(BbrState::ProbeBwRefill).unwrap();
    let wait = refill - down;
    assert!(wait <= Duration::from_millis(3_100), "probe wait {wait:?}");
    // UP follows REFILL after one round.
    let up = p.first(BbrState::ProbeBwUp).unwrap();
    assert!(
        up - refill < Duration::from_millis(100),
        "{:?}",
        up - refill
    );
    assert!(p.bbr.state().is_probe_bw());
    assert_eq!(p.bbr.congestion_state(), p.bbr.state().qlog());
}

#[test]
fn probe_rtt_after_five_seconds_and_back_to_cruise() {
    let mut p = clean_path();
    p.run(secs(12.0));
    let rtt_entries: Vec<Instant> = p
        .states
        .iter()
        .filter(|(_, s)| *s == BbrState::ProbeRtt)
        .map(|(t, _)| *t)
        .collect();
    assert_eq!(p.bbr.probe_rtt_count(), rtt_entries.len() as u64);
    assert!(rtt_entries.len() >= 2, "{:?}", p.states);
    // The first: 5 s after the min_rtt sample of the start (§5.3.4.4, plus an RTT).
    let first = rtt_entries[0];
    assert!(first > secs(5.0) && first < secs(5.2), "{first:?}");
    // Exit (§5.3.4.5): straight to CRUISE after at least 200 ms and a round.
    let i = p.states.iter().position(|(t, _)| *t == first).unwrap();
    // ExitProbeRTT: StartProbeBW_DOWN, then at once StartProbeBW_CRUISE.
    let (exit_t, exit_state) = p.states[i + 1];
    assert_eq!(exit_state, BbrState::ProbeBwDown, "{:?}", p.states);
    assert_eq!(p.states[i + 2], (exit_t, BbrState::ProbeBwCruise));
    assert!(exit_t - first >= Duration::from_millis(200));
    // During ProbeRTT cwnd was cut to half the BDP (25 packets) at most.
    // The next ProbeRTT: 5 s after the previous one ended.
    let gap = rtt_entries[1] - exit_t;
    assert!(
        gap > Duration::from_secs(5) && gap < Duration::from_millis(5_200),
        "{gap:?}"
    );
}

#[test]
fn shallow_buffer_losses_set_inflight_longterm() {
    // A buffer of a fifth of the BDP: Startup overflows it and UP probes do too.
    let mut p = Path::new(BbrConfig::default(), 1_500_000, 40, 12_000);
    p.run(secs(8.0));
    assert!(p.lost > 0);
    assert!(p.bbr.full_bw_reached());
    // §5.5.10.2: a probe whose loss rate passed 2% bounded inflight_longterm near
    // the path's BDP plus buffer (60 kB + 12 kB).
    let hi = p.bbr.inflight_longterm();
    assert!(hi < 150_000, "inflight_longterm {hi}");
    assert!(hi >= 40_000, "inflight_longterm {hi}");
    // Throughput stays high: max_bw still near the bottleneck.
    let bw = p.bbr.max_bw() as f64;
    assert!(bw > 0.9 * 1_500_000.0, "max_bw {bw}");
}

#[test]
fn persistent_congestion_collapses_and_recovery_restores() {
    let mut b = Bbr::new(BbrConfig::default(), MDS, 1);
    let rtt = RttEstimator::new(Duration::from_millis(100));
    b.on_packet_sent(Instant::from_millis(1), MDS, MDS);
    // A congestion event starts recovery; cwnd is saved.
    b.on_congestion_event(
        Instant::from_millis(100),
        Instant::from_millis(1),
        false,
        MDS,
    );
    assert!(b.in_recovery());
    assert_eq!(b.prior_cwnd, 12_000);
    // Persistent congestion: one packet.
    b.on_congestion_event(
        Instant::from_millis(200),
        Instant::from_millis(150),
        true,
        MDS,
    );
    assert_eq!(b.window(), MDS);
    // An ACK of a packet sent after recovery started restores the saved cwnd.
    b.on_congestion_event(
        Instant::from_millis(300),
        Instant::from_millis(250),
        false,
        MDS,
    );
    b.on_packet_acked(
        Instant::from_millis(400),
        Instant::from_millis(350),
        MDS,
        false,
        &rtt,
    );
    assert!(!b.in_recovery());
    assert_eq!(b.window(), 12_000);
}

#[test]
fn config_validation_names_the_knob() {
    assert_eq!(BbrConfig::default().validate(), Ok(()));
    let bad = [
        (
            "loss_thresh",
            BbrConfig {
                loss_thresh: 1.0,
                ..Default::default()
            },
        ),
        (
            "beta",
            BbrConfig {
                beta: 0.0,
                ..Default::default()
            },
        ),
        (
            "headroom",
            BbrConfig {
                headroom: -0.1,
                ..Default::default()
            },
        ),
        (
            "startup_pacing_gain",
            BbrConfig {
                startup_pacing_gain: f64::NAN,
                ..Default::default()
            },
        ),
        (
            "min_rtt_filter_len_ms",
            BbrConfig {
                min_rtt_filter_len_ms: 1_000,
                ..Default::default()
            },
        ),
        (
            "probe_rtt_duration_ms",
            BbrConfig {
                probe_rtt_duration_ms: 0,
                ..Default::default()
            },
        ),
    ];
    for (key, cfg) in bad {
        assert_eq!(cfg.validate().unwrap_err().key, key);
    }
}

#[test]
fn spurious_loss_restores_the_model_and_the_probe() {
    // §5.5.11.2: a probe ended by a (spurious) loss goes back to REFILL with the old
    // bounds.
    let mut b = Bbr::new(BbrConfig::default(), MDS, 1);
    b.full_bw_reached = true;
    b.state = BbrState::ProbeBwDown;
    b.undo_state = Some(BbrState::ProbeBwUp);
    b.inflight_longterm = 50_000;
    b.undo_inflight_longterm = 100_000;
    b.prior_cwnd = 90_000;
    b.on_spurious_congestion(Instant::from_millis(1));
    assert_eq!(b.state(), BbrState::ProbeBwRefill);
    assert_eq!(b.inflight_longterm(), 100_000);
    assert_eq!(b.window(), 90_000);
    assert_eq!(b.undo_state, None);
    // A Startup exit on loss is undone back into Startup.
    let mut b = Bbr::new(BbrConfig::default(), MDS, 1);
    b.full_bw_reached = true;
    b.state = BbrState::Drain;
    b.undo_state = Some(BbrState::Startup);
    b.on_spurious_congestion(Instant::from_millis(1));
    assert_eq!(b.state(), BbrState::Startup);
    assert!(!b.full_bw_reached());
    // Nothing saved: nothing changes state.
    let mut b = Bbr::new(BbrConfig::default(), MDS, 1);
    b.state = BbrState::ProbeBwCruise;
    b.on_spurious_congestion(Instant::from_millis(1));
    assert_eq!(b.state(), BbrState::ProbeBwCruise);
}

#[test]
fn ce_marks_bound_inflight_longterm_without_losses() {
    // A deep buffer (no loss) with a step AQM marking CE above a tenth of the BDP.
    let mut p = clean_path();
    p.ce_above = Some(6_000);
    p.run(secs(8.0));
    assert_eq!(p.lost, 0);
    assert!(p.ce_marked > 0);
    // The assumed response (model.rs `handle_ce`): a CE mark while probing bounds
    // inflight_longterm as a loss rate above LossThresh does.
    let hi = p.bbr.inflight_longterm();
    assert!(hi < 150_000, "inflight_longterm {hi}");
    let bw = p.bbr.max_bw() as f64;
    assert!(bw > 0.9 * 1_500_000.0, "max_bw {bw}");
    // Without marks the same path leaves it unbounded.
    let mut clean = clean_path();
    clean.run(secs(8.0));
    assert_eq!(clean.bbr.inflight_longterm(), u64::MAX);
}
