//! RFC 9002 A.8: when the loss detection timer fires and for which space, from the
//! sent packets' loss times, the last ack-eliciting send times and the PTO backoff.
//! The connection adds what only it knows (the anti-deadlock space, whether the
//! handshake is confirmed, the peer's max_ack_delay) and arms the timer.
// Peer values pass through here: arithmetic is checked, saturating or wrapping
// by the rule in CONTRIBUTING.md ("Arithmetic on wire values").
#![deny(clippy::arithmetic_side_effects)]

use super::Recovery;
use crate::recovery::SpaceId;
use crate::time::Instant;
use std::time::Duration;

impl<T> Recovery<T> {
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

    /// RFC 9002 A.8 GetPtoTimeAndSpace. `anti_deadlock`: the space of a PTO armed from
    /// `now` with nothing (useful) in flight (RFC 9002 §6.2.2.1), which the connection
    /// decides; otherwise the earliest space's last ack-eliciting send plus the backed-off
    /// PTO, the application data space only once `handshake_confirmed` and with the
    /// peer's `max_ack_delay` added.
    pub fn pto_time_and_space(
        &self,
        now: Instant,
        anti_deadlock: Option<SpaceId>,
        handshake_confirmed: bool,
        max_ack_delay: Duration,
    ) -> Option<(Instant, SpaceId)> {
        let backoff = self.pto_backoff();
        let duration = self.rtt.pto_base().saturating_mul(backoff);
        if let Some(space) = anti_deadlock {
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
