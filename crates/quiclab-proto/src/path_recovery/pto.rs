//! RFC 9002 A.8: when the loss detection timer fires and for which space, from the
//! sent packets' loss times, the last ack-eliciting send times and the PTO backoff.
//! The connection tells what only it knows ([`PtoContext`]) and puts the returned
//! deadline in its timer table.
// Peer values pass through here: arithmetic is checked, saturating or wrapping
// by the rule in CONTRIBUTING.md ("Arithmetic on wire values").
#![deny(clippy::arithmetic_side_effects)]

use super::Recovery;
use crate::recovery::SpaceId;
use crate::time::{duration_nanos, Instant};
use std::time::Duration;

/// What the connection knows that the PTO depends on (RFC 9002 A.8).
#[derive(Clone, Copy, Debug)]
pub(crate) struct PtoContext {
    /// The handshake is confirmed (RFC 9002 §6.2.1: no application data PTO before).
    pub handshake_confirmed: bool,
    /// The peer's max_ack_delay (RFC 9002 §6.2.1).
    pub max_ack_delay: Duration,
    /// A.8 PeerCompletedAddressValidation.
    pub peer_completed_address_validation: bool,
    /// Handshake keys are installed (the anti-deadlock probe goes there, else Initial).
    pub handshake_keys: bool,
    /// A server at its anti-amplification limit (RFC 9002 §6.2.2.1: no PTO armed).
    pub amplification_blocked: bool,
}

/// The loss detection timer as A.8 SetLossDetectionTimer sets it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LossTimer {
    /// Cancelled.
    Off,
    /// A time-threshold loss is due (RFC 9002 §6.1.2).
    LossTime(Instant),
    /// The probe timeout (RFC 9002 §6.2).
    Pto(Instant),
}

impl LossTimer {
    pub fn deadline(self) -> Option<Instant> {
        match self {
            LossTimer::Off => None,
            LossTimer::LossTime(t) | LossTimer::Pto(t) => Some(t),
        }
    }
}

impl<T> Recovery<T> {
    /// RFC 9002 A.8 SetLossDetectionTimer: the earliest time-threshold loss, else the
    /// PTO, or nothing (a server at its amplification limit; nothing ack-eliciting in
    /// flight once the peer validated our address).
    ///
    /// Called after every datagram sent and every ACK that acknowledged something
    /// (issue 29: ~300 instructions a call through the general path below), so the
    /// state a connection is in once its handshake is confirmed takes
    /// [`Recovery::confirmed_timer`] first; the general path decides everything else.
    pub fn loss_detection_timer(&self, now: Instant, ctx: &PtoContext) -> LossTimer {
        match self.confirmed_timer(ctx) {
            Some(timer) => timer,
            None => self.loss_detection_timer_general(now, ctx),
        }
    }

    /// [`Recovery::loss_detection_timer`] once the handshake is confirmed, or `None`
    /// when the state is not this one: the peer completed address validation, no
    /// amplification limit, no loss time in any space, nothing ack-eliciting in flight
    /// in the Initial and Handshake spaces (their keys are discarded, RFC 9001 §4.9).
    ///
    /// Why it equals the general path (the test
    /// `confirmed_timer_matches_the_general_path` compares the two over every
    /// combination of these inputs): `loss_time_and_space` is `None` and the PTO is
    /// not blocked; with nothing ack-eliciting in flight the general path returns
    /// `Off` (validation completed); otherwise `anti_deadlock_space` is `None`
    /// (something is in flight, the address is validated) and the loop of
    /// `pto_time_and_space` skips Initial and Handshake and takes the application
    /// data space, the handshake being confirmed: the same sums in the same order.
    #[inline]
    pub(super) fn confirmed_timer(&self, ctx: &PtoContext) -> Option<LossTimer> {
        if !ctx.handshake_confirmed
            || !ctx.peer_completed_address_validation
            || ctx.amplification_blocked
        {
            return None;
        }
        let [initial, handshake, data] = &self.sent;
        let quiet = |s: &crate::recovery::SentPackets<T>| {
            !s.has_ack_eliciting_in_flight() && s.loss_time().is_none()
        };
        if !quiet(initial) || !quiet(handshake) || data.loss_time().is_some() {
            return None;
        }
        if !data.has_ack_eliciting_in_flight() {
            return Some(LossTimer::Off);
        }
        let last = data.time_of_last_ack_eliciting()?;
        // RFC 9002 §6.2.1: the backed-off PTO plus the peer's max_ack_delay, in whole
        // nanoseconds saturating at `u64::MAX`: every step adds or multiplies by at
        // least 1, so a step that saturates here leaves the exact sum at or above
        // `u64::MAX` ns, which `Instant::saturating_add` turns into the same
        // `u64::MAX`; below that both are exact.
        let backoff = u64::from(self.pto_backoff());
        let base = duration_nanos(self.rtt.pto_base()).saturating_mul(backoff);
        let d = base.saturating_add(duration_nanos(ctx.max_ack_delay).saturating_mul(backoff));
        Some(LossTimer::Pto(Instant::from_nanos(
            last.as_nanos().saturating_add(d),
        )))
    }

    /// [`Recovery::loss_detection_timer`] in every state, step by step as A.8 writes it.
    pub(super) fn loss_detection_timer_general(&self, now: Instant, ctx: &PtoContext) -> LossTimer {
        if let Some((t, _)) = self.loss_time_and_space() {
            return LossTimer::LossTime(t);
        }
        if ctx.amplification_blocked {
            // RFC 9002 §6.2.2.1: a server at the amplification limit arms no PTO.
            return LossTimer::Off;
        }
        if !self.ack_eliciting_in_flight() && ctx.peer_completed_address_validation {
            return LossTimer::Off;
        }
        match self.pto_time_and_space(now, ctx) {
            Some((t, _)) => LossTimer::Pto(t),
            None => LossTimer::Off,
        }
    }

    /// The space of an anti-deadlock PTO (RFC 9002 §6.2.2.1), armed from now in the
    /// highest space with keys: when nothing ack-eliciting is in flight (A.8), and also
    /// at a client the server has not validated yet whose only packets in flight are
    /// 0-RTT ones. A.8's GetPtoTimeAndSpace skips the application space until the
    /// handshake is confirmed and would arm nothing then, although §6.2.2.1 says the
    /// client MUST keep a PTO "even if there are no packets in flight": with the
    /// server's first flight lost and the server at its amplification limit (its
    /// budget spent on 0.5-RTT data), neither side would ever send again.
    pub fn anti_deadlock_space(&self, ctx: &PtoContext) -> Option<SpaceId> {
        let stuck = !self.ack_eliciting_in_flight()
            || (!self.handshake_in_flight() && !ctx.peer_completed_address_validation);
        if !stuck {
            return None;
        }
        Some(if ctx.handshake_keys {
            SpaceId::Handshake
        } else {
            SpaceId::Initial
        })
    }

    /// Whether any space has ack-eliciting packets in flight.
    pub fn ack_eliciting_in_flight(&self) -> bool {
        SpaceId::ALL
            .iter()
            .any(|&s| self.sent(s).has_ack_eliciting_in_flight())
    }

    /// Whether the Initial or Handshake space has ack-eliciting packets in flight.
    pub fn handshake_in_flight(&self) -> bool {
        [SpaceId::Initial, SpaceId::Handshake]
            .iter()
            .any(|&s| self.sent(s).has_ack_eliciting_in_flight())
    }

    /// RFC 9002 A.8 GetLossTimeAndSpace: the earliest time-threshold loss to come.
    pub fn loss_time_and_space(&self) -> Option<(Instant, SpaceId)> {
        SpaceId::ALL
            .iter()
            .filter_map(|&s| self.sent(s).loss_time().map(|t| (t, s)))
            .min_by_key(|&(t, _)| t)
    }

    /// RFC 9002 A.8 GetPtoTimeAndSpace: from `now` in the anti-deadlock space when
    /// there is one; otherwise the earliest space's last ack-eliciting send plus the
    /// backed-off PTO, the application data space only once the handshake is confirmed
    /// and with the peer's max_ack_delay added.
    pub fn pto_time_and_space(&self, now: Instant, ctx: &PtoContext) -> Option<(Instant, SpaceId)> {
        let (handshake_confirmed, max_ack_delay) = (ctx.handshake_confirmed, ctx.max_ack_delay);
        let backoff = self.pto_backoff();
        let duration = self.rtt.pto_base().saturating_mul(backoff);
        if let Some(space) = self.anti_deadlock_space(ctx) {
            return Some((now.saturating_add(duration), space));
        }
        let mut best: Option<(Instant, SpaceId)> = None;
        for space in SpaceId::ALL {
            let sent = self.sent(space);
            if !sent.has_ack_eliciting_in_flight() {
                continue;
            }
            let mut d = duration;
            if space == SpaceId::Data {
                if !handshake_confirmed {
                    return best;
                }
                d = d.saturating_add(max_ack_delay.saturating_mul(backoff));
            }
            let Some(last) = sent.time_of_last_ack_eliciting() else {
                continue;
            };
            let t = last.saturating_add(d);
            if best.is_none_or(|(b, _)| t < b) {
                best = Some((t, space));
            }
        }
        best
    }
}
