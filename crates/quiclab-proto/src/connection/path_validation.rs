//! One path validation (RFC 9000 §8.2): the unpredictable PATH_CHALLENGE data, when
//! the challenge is (re)sent, and when the attempt is abandoned.
//!
//! The connection owns one per path it validates (`migration_state.rs`) and sends the
//! challenges in datagrams of their own (`path_probe.rs`).
// Peer values pass through here: arithmetic is checked, saturating or wrapping
// by the rule in CONTRIBUTING.md ("Arithmetic on wire values").
#![deny(clippy::arithmetic_side_effects)]

use crate::time::Instant;
use std::time::Duration;

/// How often a challenge is sent at most in one validation: the first and two
/// retransmissions (RFC 9000 §8.2.1 lets an endpoint send several to guard against
/// loss; §8.2.4's timeout allows for multiple PTOs).
pub const MAX_CHALLENGES: u32 = 3;

/// RFC 9000 §8.2.4: abandon validation after three times the larger of the current
/// PTO and the new path's PTO computed from kInitialRtt.
pub fn validation_timeout(current_pto: Duration, new_path_pto: Duration) -> Duration {
    current_pto.max(new_path_pto).saturating_mul(3)
}

/// What a validation's timer says when it comes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValidationTimer {
    /// Nothing yet.
    Wait,
    /// Send another challenge (the previous one may be lost).
    Resend,
    /// The timeout passed without a matching PATH_RESPONSE: the path is unusable
    /// (RFC 9000 §8.2.4).
    Failed,
}

/// A path validation in progress.
#[derive(Clone, Debug)]
pub struct Validation {
    /// The PATH_CHALLENGE data, from the connection's seeded generator (§8.2.1:
    /// unpredictable).
    token: [u8; 8],
    /// When the attempt is abandoned.
    deadline: Instant,
    /// A challenge is owed now.
    send_pending: bool,
    /// When the next challenge is owed, after one was sent.
    resend_at: Option<Instant>,
    /// Challenges sent so far.
    sent: u32,
}

impl Validation {
    /// A validation started at `now` that gives up after `timeout`; its first
    /// challenge is owed at once.
    pub fn new(token: [u8; 8], now: Instant, timeout: Duration) -> Self {
        Validation {
            token,
            deadline: now.saturating_add(timeout),
            send_pending: true,
            resend_at: None,
            sent: 0,
        }
    }

    pub fn token(&self) -> [u8; 8] {
        self.token
    }

    /// A challenge is owed now.
    pub fn send_pending(&self) -> bool {
        self.send_pending
    }

    /// A challenge left at `now`; the next is owed after `pto` doubled per challenge
    /// already sent (§9.4: the challenge's own timer, no more aggressive than RFC 9002
    /// §6.2.1's PTO), unless [`MAX_CHALLENGES`] went out.
    pub fn on_sent(&mut self, now: Instant, pto: Duration) {
        self.send_pending = false;
        self.sent = self.sent.saturating_add(1);
        self.resend_at = (self.sent < MAX_CHALLENGES).then(|| {
            now.saturating_add(pto.saturating_mul(2u32.saturating_pow(self.sent.saturating_sub(1))))
        });
    }

    /// Whether `data` answers this validation's challenge (§8.2.3: from any path).
    pub fn matches(&self, data: &[u8; 8]) -> bool {
        self.token == *data
    }

    /// The earliest time the validation needs attention.
    pub fn next_deadline(&self) -> Instant {
        self.resend_at
            .map_or(self.deadline, |r| r.min(self.deadline))
    }

    /// Serves the timer at `now`.
    pub fn on_timer(&mut self, now: Instant) -> ValidationTimer {
        if now >= self.deadline {
            return ValidationTimer::Failed;
        }
        match self.resend_at {
            Some(t) if now >= t => {
                self.resend_at = None;
                self.send_pending = true;
                ValidationTimer::Resend
            }
            _ => ValidationTimer::Wait,
        }
    }
}

#[cfg(test)]
#[allow(clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn the_timeout_is_three_times_the_larger_pto() {
        // RFC 9000 §8.2.4 with kInitialRtt = 333 ms: PTO = 333 + 4 * 166.5 = 999 ms.
        assert_eq!(validation_timeout(ms(100), ms(999)), ms(2997));
        assert_eq!(validation_timeout(ms(1500), ms(999)), ms(4500));
    }

    #[test]
    fn challenges_are_resent_with_backoff_until_the_deadline() {
        let t0 = Instant::ZERO;
        let mut v = Validation::new([7; 8], t0, ms(3000));
        assert!(v.send_pending());
        v.on_sent(t0, ms(100));
        assert!(!v.send_pending());
        assert_eq!(v.next_deadline(), t0 + ms(100));
        assert_eq!(v.on_timer(t0 + ms(99)), ValidationTimer::Wait);
        assert_eq!(v.on_timer(t0 + ms(100)), ValidationTimer::Resend);
        v.on_sent(t0 + ms(100), ms(100));
        assert_eq!(v.next_deadline(), t0 + ms(300), "doubled");
        assert_eq!(v.on_timer(t0 + ms(300)), ValidationTimer::Resend);
        v.on_sent(t0 + ms(300), ms(100));
        assert_eq!(v.next_deadline(), t0 + ms(3000), "no fourth challenge");
        assert_eq!(v.on_timer(t0 + ms(2999)), ValidationTimer::Wait);
        assert_eq!(v.on_timer(t0 + ms(3000)), ValidationTimer::Failed);
    }

    #[test]
    fn only_the_challenge_data_matches() {
        let v = Validation::new([1, 2, 3, 4, 5, 6, 7, 8], Instant::ZERO, ms(1));
        assert!(v.matches(&[1, 2, 3, 4, 5, 6, 7, 8]));
        assert!(!v.matches(&[1, 2, 3, 4, 5, 6, 7, 9]));
    }
}
