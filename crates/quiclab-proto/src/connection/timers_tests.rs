//! The timer table and the instant-ACK server hold, on their own.

use super::{Timer, TimerTable};
use crate::config::HandshakeConfig;
use crate::connection::server_hold::ServerHold;
use crate::connection::spaces::SpaceId;
use crate::time::Instant;

fn ms(v: u64) -> Instant {
    Instant::from_millis(v)
}

#[test]
fn table_reports_the_earliest_armed_deadline() {
    let mut t = TimerTable::default();
    assert_eq!(t.next_timeout(), None);
    t.set(Timer::Idle, ms(30_000));
    t.set(Timer::LossDetection, ms(300));
    t.set(Timer::Pacing, ms(5));
    assert_eq!(t.next_timeout(), Some(ms(5)));
    t.stop(Timer::Pacing);
    assert_eq!(t.next_timeout(), Some(ms(300)));
    assert!(!t.is_expired(Timer::LossDetection, ms(299)));
    assert!(t.is_expired(Timer::LossDetection, ms(300)));
    assert!(!t.is_expired(Timer::Pacing, ms(1_000)));
    t.set_or_stop(Timer::LossDetection, None);
    assert_eq!(t.next_timeout(), Some(ms(30_000)));
}

#[test]
fn ack_timers_are_one_per_space_and_count_in_the_earliest_deadline() {
    let mut t = TimerTable::new(ms(0), 30_000);
    t.set(Timer::LossDetection, ms(300));
    t.set(Timer::ack(SpaceId::Data), ms(25));
    t.set(Timer::ack(SpaceId::Initial), ms(40));
    assert_eq!(t.next_timeout(), Some(ms(25)));
    assert_ne!(Timer::ack(SpaceId::Initial), Timer::ack(SpaceId::Handshake));
    t.set_or_stop(Timer::ack(SpaceId::Data), None);
    assert_eq!(t.next_timeout(), Some(ms(40)));
    assert!(t.is_expired(Timer::AckInitial, ms(40)));
    assert_eq!(t.get(Timer::AckHandshake), None);
}

#[test]
fn idle_timeout_is_the_smaller_nonzero_value_and_restarts_once_per_receipt() {
    let mut t = TimerTable::new(ms(0), 30_000);
    assert_eq!(t.get(Timer::Idle), Some(ms(30_000)));
    t.negotiate_idle(ms(10), 0);
    assert_eq!(t.get(Timer::Idle), Some(ms(30_010)));
    t.negotiate_idle(ms(20), 5_000);
    assert_eq!(t.get(Timer::Idle), Some(ms(5_020)));
    // Sending before any receipt does not restart it.
    t.on_ack_eliciting_sent(ms(100));
    assert_eq!(t.get(Timer::Idle), Some(ms(5_020)));
    t.on_packet_received(ms(200));
    assert_eq!(t.get(Timer::Idle), Some(ms(5_200)));
    t.on_ack_eliciting_sent(ms(300));
    assert_eq!(t.get(Timer::Idle), Some(ms(5_300)));
    t.on_ack_eliciting_sent(ms(400));
    assert_eq!(t.get(Timer::Idle), Some(ms(5_300)));
    let mut off = TimerTable::new(ms(0), 0);
    assert_eq!(off.get(Timer::Idle), None);
    // Only the peer's value then counts; with neither there is no idle timer.
    off.on_packet_received(ms(5));
    assert_eq!(off.get(Timer::Idle), None);
    off.negotiate_idle(ms(10), 2_000);
    assert_eq!(off.get(Timer::Idle), Some(ms(2_010)));
}

#[test]
fn instant_ack_hold_ends_only_after_the_instant_ack() {
    let cfg = HandshakeConfig {
        instant_ack: true,
        instant_ack_ping: true,
        ..HandshakeConfig::default()
    };
    let mut t = TimerTable::default();
    let mut hold = ServerHold::new(&cfg);
    hold.on_first_initial_crypto(ms(10), &cfg, &mut t);
    assert!(hold.is_holding(&t));
    assert_eq!(t.get(Timer::ServerHold), Some(ms(10)));
    // IACK: the Initial ACK is not held, it is the instant ACK.
    assert!(!hold.holds_ack(SpaceId::Initial, &t));
    assert!(hold.ping_pending());
    assert!(!hold.try_release(ms(10), &mut t));
    hold.on_initial_ack_sent(&t);
    hold.on_ping_sent();
    assert!(!hold.ping_pending());
    assert!(hold.try_release(ms(10), &mut t));
    assert!(!hold.is_holding(&t));
    // The decision is taken once: later Initial CRYPTO data does not hold again.
    hold.on_first_initial_crypto(ms(20), &cfg, &mut t);
    assert!(!hold.is_holding(&t));
}

#[test]
fn wfc_hold_keeps_the_initial_ack_until_the_deadline() {
    let cfg = HandshakeConfig {
        certificate_delay_ms: 50.0,
        signing_delay_ms: 5.0,
        ..HandshakeConfig::default()
    };
    let mut t = TimerTable::default();
    let mut hold = ServerHold::new(&cfg);
    hold.on_first_initial_crypto(ms(0), &cfg, &mut t);
    assert!(hold.holds_ack(SpaceId::Initial, &t));
    assert!(!hold.holds_ack(SpaceId::Handshake, &t));
    assert!(!hold.ping_pending());
    assert!(!hold.try_release(ms(54), &mut t));
    assert!(hold.try_release(ms(55), &mut t));
    assert!(!hold.holds_ack(SpaceId::Initial, &t));
    // Without delays and without IACK there is no hold at all.
    let plain = HandshakeConfig::default();
    let mut t = TimerTable::default();
    let mut hold = ServerHold::new(&plain);
    hold.on_first_initial_crypto(ms(0), &plain, &mut t);
    assert!(!hold.is_holding(&t));
}
