//! Recovery on its own: ACKs, losses and the PTO without a connection.

use super::{AckInput, LossTimer, MtuProbe, Outgoing, Probe, PtoContext, Recovery, TimeoutOutcome};
use crate::cc::{AckResponse, AckSummary, CongestionControl, CongestionController};
use crate::config::LossConfig;
use crate::recovery::{RttEstimator, SpaceId};
use crate::time::Instant;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const MDS: u64 = 1200;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn recovery() -> Recovery<u64> {
    Recovery::new(ms(100), CongestionControl::default().build(MDS))
}

/// Sends packet `pn` of `space` at `at` ms, ack-eliciting and in flight.
fn send(r: &mut Recovery<u64>, space: SpaceId, pn: u64, at: u64) {
    let p = Outgoing {
        space,
        pn,
        size: MDS,
        ack_eliciting: true,
        in_flight: true,
        data: pn,
    };
    r.on_packet_sent(Instant::from_millis(at), p);
}

/// A confirmed handshake, the peer's max_ack_delay 25 ms, address validated.
fn ctx() -> PtoContext {
    PtoContext {
        handshake_confirmed: true,
        max_ack_delay: ms(25),
        peer_completed_address_validation: true,
        handshake_keys: false,
        amplification_blocked: false,
    }
}

fn ack(ranges: &[std::ops::RangeInclusive<u64>], probe: Option<MtuProbe>) -> AckInput<'_> {
    AckInput {
        space: SpaceId::Data,
        ranges,
        largest: *ranges[0].end(),
        ack_delay: Duration::ZERO,
        pto: ctx(),
        mtu_probe: probe,
        ce_growth: 0,
    }
}

/// What a controller was told, one line per call.
#[derive(Debug, Default)]
struct Recorder {
    log: Arc<Mutex<Vec<String>>>,
}

impl CongestionController for Recorder {
    fn on_ack(&mut self, ack: &AckSummary<'_>) -> AckResponse {
        let acked: Vec<_> = ack
            .acked
            .iter()
            .map(|p| (p.bytes, p.max_datagram_size))
            .collect();
        self.log.lock().unwrap().push(format!(
            "ack acked={acked:?} lost={} congestion={:?} rate_sample={} spurious={}",
            ack.lost.len(),
            ack.congestion.map(|c| (c.lost_bytes, c.persistent)),
            ack.rate_sample.is_some(),
            ack.spurious_congestion,
        ));
        AckResponse::default()
    }
    fn on_packet_sent(&mut self, _: Instant, bytes: u64, bytes_in_flight: u64) {
        self.log
            .lock()
            .unwrap()
            .push(format!("sent {bytes} in_flight={bytes_in_flight}"));
    }
    fn on_packet_acked(&mut self, _: Instant, _: Instant, _: u64, _: bool, _: &RttEstimator) {
        unreachable!("on_ack is overridden")
    }
    fn on_congestion_event(&mut self, _: Instant, _: Instant, _: bool, _: u64) {
        unreachable!("on_ack is overridden")
    }
    fn window(&self) -> u64 {
        u64::MAX
    }
    fn ssthresh(&self) -> u64 {
        u64::MAX
    }
    fn in_slow_start(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "recorder"
    }
}

fn recording() -> (Recovery<u64>, Arc<Mutex<Vec<String>>>) {
    let rec = Recorder::default();
    let log = rec.log.clone();
    (Recovery::new(ms(100), Box::new(rec)), log)
}

#[test]
fn one_ack_samples_rtt_acknowledges_and_declares_losses() {
    let mut r = recovery();
    for pn in 0..6 {
        send(&mut r, SpaceId::Data, pn, pn);
    }
    let window = r.cc.window();
    let asked = std::cell::RefCell::new(Vec::new());
    let ranges = [3..=5];
    let out = r.on_ack(
        Instant::from_millis(55),
        &ack(&ranges, None),
        Vec::new(),
        &LossConfig::default(),
        |acked, lost| {
            asked.borrow_mut().push((acked.len(), lost.len()));
            ms(25)
        },
    );
    assert!(out.rtt_sampled);
    assert_eq!(r.rtt.latest(), ms(50));
    assert_eq!(
        out.newly_acked.iter().map(|p| p.data).collect::<Vec<_>>(),
        [3, 4, 5]
    );
    // RFC 9002 §6.1.1: 0, 1 and 2 are three or more below the largest acknowledged.
    assert_eq!(
        out.loss.lost.iter().map(|p| p.pn).collect::<Vec<_>>(),
        [0, 1, 2]
    );
    assert_eq!(out.loss.lost_bytes, 3 * MDS);
    assert!(out.loss.congestion_event && !out.loss.persistent);
    assert_eq!(
        asked.into_inner(),
        [(3, 0), (3, 3)],
        "max_ack_delay asked for persistent congestion, then for the timer"
    );
    assert!(r.cc.window() < window, "the controller reduced its window");
    assert_eq!(r.bytes_in_flight(), 0);
    assert!(r.lost_by_reordering(SpaceId::Data, 2, 3));
}

#[test]
fn an_ack_of_nothing_new_does_nothing() {
    let mut r = recovery();
    send(&mut r, SpaceId::Data, 0, 0);
    let ranges = [0..=0];
    let cfg = LossConfig::default();
    let first = r.on_ack(
        Instant::from_millis(10),
        &ack(&ranges, None),
        Vec::new(),
        &cfg,
        |_, _| ms(25),
    );
    assert_eq!(first.newly_acked.len(), 1);
    // The previous outcome's list as the buffer: it comes back cleared.
    let again = r.on_ack(
        Instant::from_millis(20),
        &ack(&ranges, None),
        first.newly_acked,
        &cfg,
        |_, _| panic!("no loss detection without newly acknowledged packets"),
    );
    assert!(again.newly_acked.is_empty() && !again.rtt_sampled);
    assert_eq!(again.loss_timer, None, "the timer is left alone");
    assert_eq!(r.rtt.latest(), ms(10));
}

#[test]
fn a_lost_mtu_probe_is_no_congestion_signal() {
    let mut r = recovery();
    for pn in 0..5 {
        send(&mut r, SpaceId::Data, pn, pn);
    }
    let window = r.cc.window();
    let probe = MtuProbe {
        pn: 0,
        confirms: 1452,
    };
    let ranges = [1..=4];
    let out = r.on_ack(
        Instant::from_millis(50),
        &ack(&ranges, Some(probe)),
        Vec::new(),
        &LossConfig::default(),
        |_, lost| {
            assert!(lost.is_empty(), "nothing but the probe was lost");
            ms(25)
        },
    );
    assert_eq!(out.loss.mtu_probe_lost, Some(0));
    assert!(out.loss.lost.is_empty() && !out.loss.congestion_event);
    assert!(r.cc.window() >= window);
}

#[test]
fn pto_waits_for_confirmation_in_the_data_space_and_backs_off() {
    let mut r = recovery();
    send(&mut r, SpaceId::Data, 0, 0);
    let now = Instant::from_millis(1);
    let unconfirmed = PtoContext {
        handshake_confirmed: false,
        ..ctx()
    };
    assert_eq!(r.pto_time_and_space(now, &unconfirmed), None);
    // Before any sample: smoothed 100 + 4 · rttvar 50 = 300 ms, + max_ack_delay 25.
    let at = |r: &Recovery<u64>| r.pto_time_and_space(now, &ctx());
    assert_eq!(at(&r), Some((Instant::from_millis(325), SpaceId::Data)));
    r.pto_count = 1;
    assert_eq!(at(&r), Some((Instant::from_millis(650), SpaceId::Data)));
    // A client the server has not validated, with only 1-RTT data in flight: the
    // anti-deadlock PTO is armed from now, in the Initial space without Handshake keys.
    let unvalidated = PtoContext {
        peer_completed_address_validation: false,
        ..ctx()
    };
    assert_eq!(r.anti_deadlock_space(&unvalidated), Some(SpaceId::Initial));
    assert_eq!(
        r.pto_time_and_space(now, &unvalidated),
        Some((Instant::from_millis(601), SpaceId::Initial))
    );
    let with_keys = PtoContext {
        handshake_keys: true,
        ..unvalidated
    };
    assert_eq!(r.anti_deadlock_space(&with_keys), Some(SpaceId::Handshake));
    assert!(r.ack_eliciting_in_flight() && !r.handshake_in_flight());
    assert_eq!(r.loss_time_and_space(), None);
}

#[test]
fn on_packet_sent_records_the_packet_and_tells_the_controller_in_flight_ones() {
    let (mut r, log) = recording();
    send(&mut r, SpaceId::Initial, 0, 0);
    let ack_only = Outgoing {
        space: SpaceId::Initial,
        pn: 1,
        size: 50,
        ack_eliciting: false,
        in_flight: false,
        data: 1,
    };
    r.on_packet_sent(Instant::from_millis(1), ack_only);
    send(&mut r, SpaceId::Initial, 2, 2);
    assert_eq!(r.sent(SpaceId::Initial).len(), 3);
    assert_eq!(r.bytes_in_flight(), 2 * MDS);
    assert_eq!(
        *log.lock().unwrap(),
        ["sent 1200 in_flight=1200", "sent 1200 in_flight=2400"]
    );
    // draft-ietf-ccwg-bbr §4.1.2.2: the in-flight packets carry a delivery snapshot.
    let snapshots: Vec<_> = r
        .sent(SpaceId::Initial)
        .iter()
        .map(|p| p.delivery.tx_in_flight)
        .collect();
    assert_eq!(snapshots, [MDS, 0, 2 * MDS]);
}

#[test]
fn one_ack_reaches_the_controller_as_one_summary() {
    let (mut r, log) = recording();
    for pn in 0..6 {
        send(&mut r, SpaceId::Data, pn, pn);
    }
    log.lock().unwrap().clear();
    let probe = MtuProbe {
        pn: 4,
        confirms: 1452,
    };
    let ranges = [3..=5];
    r.on_ack(
        Instant::from_millis(55),
        &ack(&ranges, Some(probe)),
        Vec::new(),
        &LossConfig::default(),
        |_, _| ms(25),
    );
    assert_eq!(
        *log.lock().unwrap(),
        [
            "ack acked=[(1200, None), (1200, Some(1452)), (1200, None)] lost=3 \
          congestion=Some((3600, false)) rate_sample=true spurious=false"
        ]
    );
}

#[test]
fn a_timer_loss_reaches_the_controller_as_one_summary_without_acks() {
    let (mut r, log) = recording();
    for pn in 0..2 {
        send(&mut r, SpaceId::Data, pn, pn);
    }
    // Acknowledging 1 at 10 ms leaves 0 short of the packet threshold: it is lost
    // by the time threshold (9/8 of the 10 ms RTT) at its loss time.
    let ranges = [1..=1];
    let cfg = LossConfig::default();
    let out = r.on_ack(
        Instant::from_millis(10),
        &ack(&ranges, None),
        Vec::new(),
        &cfg,
        |_, _| ms(25),
    );
    let Some(LossTimer::LossTime(at)) = out.loss_timer else {
        panic!("a loss time is armed: {:?}", out.loss_timer);
    };
    log.lock().unwrap().clear();
    let TimeoutOutcome::Lost { space, loss } = r.on_loss_detection_timeout(at, &ctx(), &cfg, None)
    else {
        panic!("the timer declares the loss");
    };
    assert_eq!((space, loss.lost.len()), (SpaceId::Data, 1));
    assert_eq!(
        *log.lock().unwrap(),
        ["ack acked=[] lost=1 congestion=Some((1200, false)) rate_sample=false spurious=false"]
    );
    assert_eq!(r.pto_count(), 0, "a loss is no PTO");
}

#[test]
fn the_loss_detection_timer_follows_rfc_9002_a8() {
    let mut r = recovery();
    let now = Instant::from_millis(1);
    // Nothing in flight and the address validated: no timer.
    assert_eq!(r.loss_detection_timer(now, &ctx()), LossTimer::Off);
    // ... but a client not yet validated keeps an anti-deadlock PTO (§6.2.2.1).
    let unvalidated = PtoContext {
        peer_completed_address_validation: false,
        ..ctx()
    };
    assert_eq!(
        r.loss_detection_timer(now, &unvalidated),
        LossTimer::Pto(Instant::from_millis(301))
    );
    send(&mut r, SpaceId::Data, 0, 0);
    assert_eq!(
        r.loss_detection_timer(now, &ctx()),
        LossTimer::Pto(Instant::from_millis(325))
    );
    // A server at its amplification limit arms nothing.
    let blocked = PtoContext {
        amplification_blocked: true,
        ..ctx()
    };
    assert_eq!(r.loss_detection_timer(now, &blocked), LossTimer::Off);
}

#[test]
fn a_pto_expiry_counts_and_names_the_space_to_probe() {
    let mut r = recovery();
    send(&mut r, SpaceId::Handshake, 0, 0);
    let cfg = LossConfig::default();
    let handshake = PtoContext {
        handshake_confirmed: false,
        handshake_keys: true,
        ..ctx()
    };
    let now = Instant::from_millis(300);
    let TimeoutOutcome::Pto { probe, pto_count } =
        r.on_loss_detection_timeout(now, &handshake, &cfg, None)
    else {
        panic!("no loss time: a PTO");
    };
    assert_eq!(
        (probe, pto_count),
        (Some(Probe::Pto(SpaceId::Handshake)), 1)
    );
    // RFC 9002 §6.2.1: the next PTO is twice as far.
    assert_eq!(
        r.loss_detection_timer(now, &handshake),
        LossTimer::Pto(Instant::from_millis(600))
    );
    // Nothing ack-eliciting in flight at a client not yet validated: anti-deadlock.
    r.discard_space(SpaceId::Handshake);
    let unvalidated = PtoContext {
        peer_completed_address_validation: false,
        ..handshake
    };
    let TimeoutOutcome::Pto { probe, pto_count } =
        r.on_loss_detection_timeout(now, &unvalidated, &cfg, None)
    else {
        panic!("no loss time: a PTO");
    };
    assert_eq!(
        (probe, pto_count),
        (Some(Probe::AntiDeadlock(SpaceId::Handshake)), 1)
    );
}

#[test]
fn discarding_a_space_drops_its_packets_and_restarts_the_backoff() {
    let mut r = recovery();
    send(&mut r, SpaceId::Initial, 0, 0);
    send(&mut r, SpaceId::Initial, 1, 1);
    send(&mut r, SpaceId::Handshake, 0, 2);
    r.pto_count = 3;
    let window = r.cc.window();
    r.discard_space(SpaceId::Initial);
    // RFC 9002 A.11: out of bytes in flight, no loss or PTO time, pto_count 0; the
    // controller is not told (no window change).
    assert!(r.sent(SpaceId::Initial).is_empty());
    assert_eq!(r.bytes_in_flight(), MDS);
    assert_eq!(r.pto_count(), 0);
    assert_eq!(r.sent(SpaceId::Initial).time_of_last_ack_eliciting(), None);
    assert_eq!(r.cc.window(), window);
    let pto = r.pto_time_and_space(Instant::from_millis(3), &ctx());
    assert_eq!(pto.map(|(_, s)| s), Some(SpaceId::Handshake));
}

#[test]
fn an_ack_restarts_the_backoff_only_once_the_address_is_validated() {
    let cfg = LossConfig::default();
    for validated in [false, true] {
        let mut r = recovery();
        send(&mut r, SpaceId::Data, 0, 0);
        send(&mut r, SpaceId::Data, 1, 1);
        r.pto_count = 2;
        let ranges = [0..=0];
        let mut input = ack(&ranges, None);
        input.pto.peer_completed_address_validation = validated;
        r.on_ack(
            Instant::from_millis(20),
            &input,
            Vec::new(),
            &cfg,
            |_, _| ms(25),
        );
        // RFC 9002 A.7: "Reset pto_count unless the client is unsure if the server
        // has validated the client's address."
        assert_eq!(r.pto_count(), if validated { 0 } else { 2 });
    }
}

/// Puts `space` of `r` in one of five states: 0 nothing sent, 1 an ack-eliciting packet
/// in flight, 2 a packet waiting for its time-threshold loss (a loss time set, still in
/// flight), 3 everything acknowledged (a last ack-eliciting send time, nothing in
/// flight), 4 a padded packet that is in flight but not ack-eliciting.
fn put_space_in_state(r: &mut Recovery<u64>, space: SpaceId, state: u8) {
    let cfg = LossConfig::default();
    let acked = |r: &mut Recovery<u64>, range: std::ops::RangeInclusive<u64>, at: u64| {
        let ranges = [range];
        let input = AckInput {
            space,
            ..ack(&ranges, None)
        };
        r.on_ack(
            Instant::from_millis(at),
            &input,
            Vec::new(),
            &cfg,
            |_, _| ms(25),
        );
    };
    match state {
        1 => send(r, space, 0, 5),
        2 => {
            send(r, space, 0, 0);
            send(r, space, 1, 1);
            // Packet 0 is 1 below the largest acknowledged (threshold 3) and sent
            // 100 ms ago with a 99 ms RTT: lost only at 0 + 9/8 * 99 ms.
            acked(r, 1..=1, 100);
            assert!(r.sent(space).loss_time().is_some());
        }
        3 => {
            send(r, space, 0, 0);
            acked(r, 0..=0, 50);
        }
        4 => r.on_packet_sent(
            Instant::from_millis(7),
            Outgoing {
                space,
                pn: 0,
                size: MDS,
                ack_eliciting: false,
                in_flight: true,
                data: 0,
            },
        ),
        _ => {}
    }
}

/// The fast path of `loss_detection_timer` (a confirmed handshake) against A.8's steps
/// (`loss_detection_timer_general`) over every combination of the three spaces' states,
/// the context's flags and the backoff: they must never differ.
#[test]
fn confirmed_timer_matches_the_general_path() {
    let mut compared = 0;
    let mut fast = 0;
    for states in 0..125u32 {
        let space_states = [states % 5, states / 5 % 5, states / 25].map(|s| s as u8);
        for flags in 0..16u32 {
            // The largest backoff and max_ack_delay make the sums saturate.
            let extremes = [0, 3, 20].into_iter().zip([ms(25), ms(25), Duration::MAX]);
            for (pto_count, max_ack_delay) in extremes {
                let mut r = recovery();
                for (space, &state) in SpaceId::ALL.iter().zip(&space_states) {
                    put_space_in_state(&mut r, *space, state);
                }
                r.pto_count = pto_count;
                let ctx = PtoContext {
                    handshake_confirmed: flags & 1 != 0,
                    max_ack_delay,
                    peer_completed_address_validation: flags & 2 != 0,
                    handshake_keys: flags & 4 != 0,
                    amplification_blocked: flags & 8 != 0,
                };
                let now = Instant::from_millis(150);
                let general = r.loss_detection_timer_general(now, &ctx);
                assert_eq!(
                    r.loss_detection_timer(now, &ctx),
                    general,
                    "spaces {space_states:?}, flags {flags:#b}, pto_count {pto_count}, \
                     max_ack_delay {max_ack_delay:?}"
                );
                compared += 1;
                fast += usize::from(r.confirmed_timer(&ctx).is_some());
            }
        }
    }
    assert_eq!(compared, 125 * 16 * 3);
    // The fast path answers in a real share of the cases (else the test compares
    // nothing): every space quiet but the application data space, both flags set.
    assert!(fast >= 16, "{fast}");
}
