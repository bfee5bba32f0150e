//! The ECN validation state machine alone (RFC 9000 §13.4.2, Appendix A.4).

use super::*;

const PTO: Duration = Duration::from_millis(100);

fn ms(n: u64) -> Instant {
    Instant::from_millis(n)
}

fn counts(ect0: u64, ect1: u64, ce: u64) -> Option<EcnCounts> {
    Some(EcnCounts { ect0, ect1, ce })
}

/// A path that sent `n` application-data packets (pn 0..n) at time 0.
fn sent(mode: EcnMode, n: u64) -> EcnPath {
    let mut e = EcnPath::new(mode);
    for pn in 0..n {
        e.on_sent(ms(0), SpaceId::Data, pn, PTO);
    }
    e
}

fn acked(pns: std::ops::Range<u64>, ecn: Ecn) -> impl Iterator<Item = (u64, Ecn)> {
    pns.map(move |pn| (pn, ecn))
}

fn changes(e: &mut EcnPath) -> Vec<(Option<EcnState>, EcnState)> {
    std::iter::from_fn(|| e.take_change()).collect()
}

#[test]
fn off_sends_not_ect_and_validates_nothing() {
    let mut e = sent(EcnMode::Off, 20);
    assert_eq!(e.codepoint(), Ecn::NotEct);
    assert!(!e.on_ack(
        SpaceId::Data,
        true,
        counts(0, 0, 5),
        acked(0..20, Ecn::NotEct)
    ));
    assert_eq!(e.report().state, None);
    assert_eq!(e.report().sent_ect0, [0; 3]);
    assert!(changes(&mut e).is_empty());
}

#[test]
fn testing_lasts_ten_packets_then_honest_counts_make_the_path_capable() {
    let mut e = EcnPath::new(EcnMode::Ect0);
    for pn in 0..TESTING_PACKETS {
        assert_eq!(e.on_sent(ms(0), SpaceId::Data, pn, PTO), Ecn::Ect0);
        assert_eq!(e.state, EcnState::Testing);
    }
    // The eleventh packet is still marked; testing has ended.
    assert_eq!(e.on_sent(ms(1), SpaceId::Data, 10, PTO), Ecn::Ect0);
    assert_eq!(e.state, EcnState::Unknown);
    assert!(e.is_testing(SpaceId::Data, 9) && !e.is_testing(SpaceId::Data, 10));
    assert!(!e.on_ack(SpaceId::Data, true, counts(4, 0, 0), acked(0..4, Ecn::Ect0)));
    assert_eq!(e.state, EcnState::Capable);
    assert_eq!(
        changes(&mut e),
        vec![
            (None, EcnState::Testing),
            (Some(EcnState::Testing), EcnState::Unknown),
            (Some(EcnState::Unknown), EcnState::Capable)
        ]
    );
}

#[test]
fn testing_ends_after_three_ptos() {
    let mut e = EcnPath::new(EcnMode::Ect1);
    assert_eq!(e.on_sent(ms(0), SpaceId::Initial, 0, PTO), Ecn::Ect1);
    e.on_sent(ms(299), SpaceId::Initial, 1, PTO);
    assert_eq!(e.state, EcnState::Testing);
    e.on_sent(ms(300), SpaceId::Initial, 2, PTO);
    assert_eq!(e.state, EcnState::Unknown);
    assert_eq!(e.testing_sent[SpaceId::Initial as usize], 2);
}

#[test]
fn counts_are_per_space_and_ack_ecn_only_once_non_zero() {
    let mut e = EcnPath::new(EcnMode::Off);
    assert_eq!(e.ack_counts(SpaceId::Data), None);
    e.on_received(SpaceId::Data, Ecn::NotEct);
    assert_eq!(e.ack_counts(SpaceId::Data), None);
    for ecn in [Ecn::Ect0, Ecn::Ect0, Ecn::Ect1, Ecn::Ce] {
        e.on_received(SpaceId::Data, ecn);
    }
    e.on_received(SpaceId::Handshake, Ecn::Ce);
    assert_eq!(e.ack_counts(SpaceId::Data), counts(2, 1, 1));
    assert_eq!(e.ack_counts(SpaceId::Handshake), counts(0, 0, 1));
    assert_eq!(e.ack_counts(SpaceId::Initial), None);
}

#[test]
fn missing_counts_fail_only_when_marked_packets_are_newly_acked() {
    let mut e = sent(EcnMode::Ect0, 4);
    // An ACK of not-ECT packets only (none here) without counts changes nothing.
    assert!(!e.on_ack(SpaceId::Data, true, None, acked(0..0, Ecn::Ect0)));
    assert_eq!(e.state, EcnState::Testing);
    e.on_ack(SpaceId::Data, true, None, acked(0..2, Ecn::Ect0));
    assert_eq!(e.state, EcnState::Failed);
    assert_eq!(e.failure, Some(EcnFailure::MissingCounts));
    assert_eq!(e.codepoint(), Ecn::NotEct);
    assert_eq!(e.on_sent(ms(1), SpaceId::Data, 4, PTO), Ecn::NotEct);
    assert_eq!(e.report().sent_ect0[SpaceId::Data as usize], 4);
}

#[test]
fn decreasing_counts_fail() {
    let mut e = sent(EcnMode::Ect0, 6);
    e.on_ack(SpaceId::Data, true, counts(3, 0, 0), acked(0..3, Ecn::Ect0));
    assert_eq!(e.failure, None);
    e.on_ack(SpaceId::Data, true, counts(2, 0, 2), acked(3..5, Ecn::Ect0));
    assert_eq!(e.failure, Some(EcnFailure::CountsDecreased));
}

#[test]
fn under_reporting_fails() {
    let mut e = sent(EcnMode::Ect0, 6);
    // Three newly acknowledged ECT(0) packets, ECT(0)+CE grew by two.
    e.on_ack(SpaceId::Data, true, counts(1, 0, 1), acked(0..3, Ecn::Ect0));
    assert_eq!(e.failure, Some(EcnFailure::UnderReported));
}

#[test]
fn more_of_a_codepoint_than_sent_is_re_marking() {
    let mut e = sent(EcnMode::Ect0, 6);
    e.on_ack(SpaceId::Data, true, counts(0, 3, 0), acked(0..3, Ecn::Ect0));
    assert_eq!(e.failure, Some(EcnFailure::Remarked), "ECT(1) never sent");
    let mut e = sent(EcnMode::Ect0, 6);
    e.on_ack(SpaceId::Data, true, counts(3, 1, 0), acked(0..3, Ecn::Ect0));
    assert_eq!(e.failure, Some(EcnFailure::Remarked));
    let mut e = sent(EcnMode::Ect0, 2);
    e.on_ack(SpaceId::Data, true, counts(3, 0, 0), acked(0..2, Ecn::Ect0));
    assert_eq!(
        e.failure,
        Some(EcnFailure::Remarked),
        "more ECT(0) than sent"
    );
}

#[test]
fn an_ack_that_does_not_raise_the_largest_never_fails() {
    let mut e = sent(EcnMode::Ect0, 6);
    e.on_ack(SpaceId::Data, true, counts(4, 0, 0), acked(2..6, Ecn::Ect0));
    // A reordered older ACK with smaller counts newly acknowledging 0 and 1.
    assert!(!e.on_ack(
        SpaceId::Data,
        false,
        counts(1, 0, 1),
        acked(0..2, Ecn::Ect0)
    ));
    assert_eq!(e.failure, None);
    assert_eq!(e.peer[SpaceId::Data as usize], counts(4, 0, 0).unwrap());
}

#[test]
fn a_ce_increase_is_a_signal_once_per_ack() {
    let mut e = sent(EcnMode::Ect0, 12);
    assert!(e.on_ack(SpaceId::Data, true, counts(2, 0, 1), acked(0..3, Ecn::Ect0)));
    assert!(!e.on_ack(SpaceId::Data, true, counts(5, 0, 1), acked(3..6, Ecn::Ect0)));
    assert!(e.on_ack(SpaceId::Data, true, counts(6, 0, 3), acked(6..9, Ecn::Ect0)));
    assert_eq!(e.report().ce_signals, 2);
    assert_eq!(e.failure, None);
}

#[test]
fn every_testing_packet_ce_marked_fails_once_all_are_settled() {
    let mut e = sent(EcnMode::Ect0, 11); // ten testing packets, then one more
    assert_eq!(e.state, EcnState::Unknown);
    assert!(e.on_ack(SpaceId::Data, true, counts(0, 0, 6), acked(0..6, Ecn::Ect0)));
    assert_eq!(e.state, EcnState::Unknown);
    e.on_ack(
        SpaceId::Data,
        true,
        counts(0, 0, 10),
        acked(6..10, Ecn::Ect0),
    );
    assert_eq!(e.failure, Some(EcnFailure::TestingLostOrCe));
    // One testing packet arriving un-CE'd would have made the path capable.
    let mut e = sent(EcnMode::Ect0, 11);
    e.on_ack(
        SpaceId::Data,
        true,
        counts(1, 0, 9),
        acked(0..10, Ecn::Ect0),
    );
    assert_eq!(e.state, EcnState::Capable);
}

#[test]
fn every_testing_packet_lost_fails() {
    let mut e = sent(EcnMode::Ect0, 11);
    for pn in 0..9 {
        e.on_lost(SpaceId::Data, pn, Ecn::Ect0);
        assert_eq!(e.state, EcnState::Unknown);
    }
    // Packets after the testing period do not count.
    e.on_lost(SpaceId::Data, 10, Ecn::Ect0);
    assert_eq!(e.state, EcnState::Unknown);
    e.on_lost(SpaceId::Data, 9, Ecn::Ect0);
    assert_eq!(e.failure, Some(EcnFailure::TestingLostOrCe));
}

#[test]
fn a_discarded_space_leaves_the_testing_count() {
    let mut e = EcnPath::new(EcnMode::Ect0);
    e.on_sent(ms(0), SpaceId::Initial, 0, PTO);
    e.on_sent(ms(0), SpaceId::Initial, 1, PTO);
    for pn in 0..9 {
        e.on_sent(ms(0), SpaceId::Data, pn, PTO);
    }
    assert_eq!(e.state, EcnState::Unknown);
    for pn in 0..8 {
        e.on_lost(SpaceId::Data, pn, Ecn::Ect0);
    }
    e.on_space_discarded(SpaceId::Initial);
    assert_eq!(e.failure, Some(EcnFailure::TestingLostOrCe));
}
