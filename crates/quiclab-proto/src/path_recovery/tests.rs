//! Recovery on its own: ACKs, losses and the PTO without a connection.

use super::{AckInput, MtuProbe, Recovery};
use crate::cc::CongestionControl;
use crate::config::LossConfig;
use crate::recovery::{DeliverySnapshot, SentPacket, SpaceId};
use crate::time::Instant;
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
    let now = Instant::from_millis(at);
    r.sent_mut(space).on_sent(SentPacket {
        pn,
        time_sent: now,
        size: MDS,
        ack_eliciting: true,
        in_flight: true,
        delivery: DeliverySnapshot::default(),
        data: pn,
    });
    let in_flight = r.bytes_in_flight();
    r.cc.on_packet_sent(now, MDS, in_flight);
}

fn ack(ranges: &[std::ops::RangeInclusive<u64>], probe: Option<MtuProbe>) -> AckInput<'_> {
    AckInput {
        space: SpaceId::Data,
        ranges,
        largest: *ranges[0].end(),
        ack_delay: Duration::ZERO,
        handshake_confirmed: true,
        max_ack_delay: ms(25),
        mtu_probe: probe,
    }
}

#[test]
fn one_ack_samples_rtt_acknowledges_and_declares_losses() {
    let mut r = recovery();
    for pn in 0..6 {
        send(&mut r, SpaceId::Data, pn, pn);
    }
    let window = r.cc.window();
    let mut asked = 0;
    let ranges = [3..=5];
    let out = r.on_ack(
        Instant::from_millis(55),
        &ack(&ranges, None),
        &LossConfig::default(),
        |acked| {
            asked += 1;
            assert_eq!(acked.len(), 3);
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
        asked, 1,
        "max_ack_delay asked once, for persistent congestion"
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
    let first = r.on_ack(Instant::from_millis(10), &ack(&ranges, None), &cfg, |_| {
        ms(25)
    });
    assert_eq!(first.newly_acked.len(), 1);
    let again = r.on_ack(Instant::from_millis(20), &ack(&ranges, None), &cfg, |_| {
        panic!("no loss detection without newly acknowledged packets")
    });
    assert!(again.newly_acked.is_empty() && !again.rtt_sampled);
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
        &LossConfig::default(),
        |_| panic!("nothing but the probe was lost"),
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
    assert_eq!(r.pto_time_and_space(now, None, false, ms(25)), None);
    // Before any sample: smoothed 100 + 4 · rttvar 50 = 300 ms, + max_ack_delay 25.
    let at = |r: &Recovery<u64>| r.pto_time_and_space(now, None, true, ms(25));
    assert_eq!(at(&r), Some((Instant::from_millis(325), SpaceId::Data)));
    r.pto_count = 1;
    assert_eq!(at(&r), Some((Instant::from_millis(650), SpaceId::Data)));
    // The anti-deadlock space is armed from now.
    assert_eq!(
        r.pto_time_and_space(now, Some(SpaceId::Initial), true, ms(25)),
        Some((Instant::from_millis(601), SpaceId::Initial))
    );
    assert!(r.ack_eliciting_in_flight() && !r.handshake_in_flight());
    assert_eq!(r.loss_time_and_space(), None);
}
