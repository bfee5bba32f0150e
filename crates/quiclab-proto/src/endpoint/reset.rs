//! Sending Stateless Resets (RFC 9000 §10.3): the answer to a short-header packet
//! whose connection ID the endpoint does not know, e.g. after a restart that lost the
//! connection's state. The token is HMAC(static key, that connection ID) (§10.3.2),
//! so it is the one the lost connection issued if the key survived the restart.
//!
//! # Call contract
//! [`ResetSender::respond`] is asked once per unroutable short-header datagram; it
//! returns the datagram to send, or `None` when the rules say not to answer: too small
//! to answer with something smaller (§10.3.3), no connection ID, or over the rate
//! limit. State is a fixed-size token bucket, whatever arrives.
#![deny(clippy::arithmetic_side_effects)]

use crate::reset_key::StatelessResetKey;
use crate::rng::DetRng;
use crate::time::Instant;
use crate::wire::ConnectionId;

/// RFC 9000 §10.3: the smallest Stateless Reset that looks like a short-header packet,
/// 38 unpredictable bits and the 2 fixed bits (5 bytes) then the 16-byte token.
pub const MIN_STATELESS_RESET: usize = 21;
/// RFC 9000 §10.3: a trigger of this many bytes or fewer is answered one byte shorter.
const SMALL_TRIGGER: usize = 43;
/// Larger triggers get a reset of at least this size: §10.3.3 says below 41 bytes an
/// observer may tell a reset from a packet; 42 keeps it above that by a margin.
const INDISTINGUISHABLE: usize = 42;
/// And at most this size, so a stream of junk to the endpoint cannot make it send
/// much (always also smaller than the trigger, §10.3.3).
const MAX_STATELESS_RESET: usize = 64;
const TOKEN_LEN: usize = 16;

/// Resets sent per second at most, on average (one bucket for all sources: bounded
/// memory; §10.3.3 suggests a limit to end any loop the size rule does not).
pub const RESETS_PER_SECOND: u64 = 100;
/// How many resets may go out back to back after a quiet period.
pub const RESET_BURST: u64 = 20;
const NANOS_PER_RESET: u64 = 1_000_000_000 / RESETS_PER_SECOND;
const BUCKET_NANOS: u64 = NANOS_PER_RESET * RESET_BURST;

/// Builds Stateless Resets under the size rules and a token-bucket rate limit.
#[derive(Debug)]
pub struct ResetSender {
    rng: DetRng,
    /// Credit in nanoseconds of the refill rate, at most `BUCKET_NANOS`.
    credit: u64,
    /// When `credit` was last brought up to date; `None` before the first trigger.
    updated: Option<Instant>,
    sent: u64,
    limited: u64,
}

impl ResetSender {
    /// `rng` supplies the unpredictable bits and the sizes (a stream of its own, so
    /// that resets do not shift any other random choice).
    pub fn new(rng: DetRng) -> Self {
        ResetSender {
            rng,
            credit: BUCKET_NANOS,
            updated: None,
            sent: 0,
            limited: 0,
        }
    }

    /// The Stateless Reset answering a `trigger_len`-byte datagram to `dcid` at
    /// `now`, or `None` if none may be sent.
    pub fn respond(
        &mut self,
        now: Instant,
        key: &StatelessResetKey,
        dcid: &ConnectionId,
        trigger_len: usize,
    ) -> Option<Vec<u8>> {
        // §10.3.2: the design needs the connection ID from the packet.
        if dcid.is_empty() {
            return None;
        }
        let size = reset_size(trigger_len, &mut self.rng)?;
        if !self.take_credit(now) {
            self.limited = self.limited.saturating_add(1);
            return None;
        }
        self.sent = self.sent.saturating_add(1);
        Some(build(key, dcid, size, &mut self.rng))
    }

    /// Resets sent so far.
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// Resets the rate limit held back so far.
    pub fn limited(&self) -> u64 {
        self.limited
    }

    fn take_credit(&mut self, now: Instant) -> bool {
        if let Some(before) = self.updated {
            let elapsed = now.saturating_duration_since(before);
            let elapsed = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
            self.credit = self.credit.saturating_add(elapsed).min(BUCKET_NANOS);
        }
        self.updated = Some(now);
        match self.credit.checked_sub(NANOS_PER_RESET) {
            Some(rest) => {
                self.credit = rest;
                true
            }
            None => false,
        }
    }
}

/// The size of the reset answering a `trigger_len`-byte datagram (RFC 9000 §10.3,
/// §10.3.3): always smaller than the trigger (so two endpoints resetting each other
/// stop), never under [`MIN_STATELESS_RESET`]; a trigger of 43 bytes or fewer gets
/// one byte less, a larger one a random size from 42 to 64 bytes (below the trigger).
pub fn reset_size(trigger_len: usize, rng: &mut DetRng) -> Option<usize> {
    let largest = trigger_len.checked_sub(1)?;
    if largest < MIN_STATELESS_RESET {
        return None;
    }
    if trigger_len <= SMALL_TRIGGER {
        return Some(largest);
    }
    let top = largest.min(MAX_STATELESS_RESET) as u64; // > INDISTINGUISHABLE here
    let pick = rng.range(INDISTINGUISHABLE as u64, top.saturating_add(1));
    Some(usize::try_from(pick).unwrap_or(INDISTINGUISHABLE))
}

/// RFC 9000 §10.3: a short-header first byte (form 0, fixed bit 1), unpredictable
/// bits, and the token of `dcid` in the last 16 bytes. `size` >= 21.
fn build(key: &StatelessResetKey, dcid: &ConnectionId, size: usize, rng: &mut DetRng) -> Vec<u8> {
    let mut pkt = vec![0u8; size];
    let split = size.saturating_sub(TOKEN_LEN);
    rng.fill(&mut pkt[..split]);
    pkt[0] = 0x40 | (pkt[0] & 0x3f);
    pkt[split..].copy_from_slice(&key.token(dcid));
    pkt
}

#[cfg(test)]
#[allow(clippy::arithmetic_side_effects)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn key() -> StatelessResetKey {
        StatelessResetKey::new([9; 32])
    }

    fn cid() -> ConnectionId {
        ConnectionId::new(&[1, 2, 3, 4, 5, 6, 7, 8]).unwrap()
    }

    #[test]
    fn sizes_follow_section_10_3() {
        let mut rng = DetRng::new(1);
        // Too small to answer with something smaller that still looks like a packet.
        for len in 0..=21 {
            assert_eq!(reset_size(len, &mut rng), None, "{len}");
        }
        // 22..=43: one byte shorter (§10.3 SHOULD).
        for len in 22..=43 {
            assert_eq!(reset_size(len, &mut rng), Some(len - 1), "{len}");
        }
        // Larger: at least 42 (above the 41-byte guidance), smaller than the trigger
        // (§10.3.3), at most 64, and not always the same.
        let mut seen = std::collections::BTreeSet::new();
        for len in (44..1500).chain(std::iter::repeat_n(1500, 200)) {
            let s = reset_size(len, &mut rng).unwrap();
            assert!((42..len).contains(&s) && s <= 64, "{len} -> {s}");
            seen.insert(s);
        }
        assert!(seen.len() > 10, "sizes vary: {seen:?}");
    }

    #[test]
    fn a_reset_is_a_short_header_ending_in_the_hmac_token() {
        let mut s = ResetSender::new(DetRng::new(2));
        let pkt = s.respond(Instant::ZERO, &key(), &cid(), 1200).unwrap();
        assert!((42..=64).contains(&pkt.len()));
        assert_eq!(pkt[0] & 0xc0, 0x40, "short header form, fixed bit set");
        assert_eq!(pkt[pkt.len() - 16..], key().token(&cid()));
        // The unpredictable bits differ between two resets for the same ID.
        let again = s.respond(Instant::ZERO, &key(), &cid(), 43).unwrap();
        assert_eq!(again.len(), 42);
        assert_ne!(pkt[1..6], again[1..6]);
        assert_eq!(s.sent(), 2);
    }

    #[test]
    fn resets_shrink_until_a_loop_ends() {
        // §10.3.3: two endpoints answering each other's resets (neither knows the
        // other's token) stop once a reset is too small to answer.
        let mut a = ResetSender::new(DetRng::new(3));
        let mut b = ResetSender::new(DetRng::new(4));
        let mut len = 1500;
        let mut now = Instant::ZERO;
        let mut exchanges = 0;
        loop {
            let who = if exchanges % 2 == 0 { &mut a } else { &mut b };
            now += Duration::from_secs(1); // never rate limited here
            match who.respond(now, &key(), &cid(), len) {
                Some(p) => {
                    assert!(p.len() < len);
                    len = p.len();
                    exchanges += 1;
                }
                None => break,
            }
        }
        assert_eq!(len, 21, "the last reset is the smallest");
        assert!(exchanges <= 1 + 64 - 21, "{exchanges} exchanges");
    }

    #[test]
    fn the_rate_limit_is_a_token_bucket_on_the_given_time() {
        let mut s = ResetSender::new(DetRng::new(5));
        let t0 = Instant::from_millis(1000);
        let sent = (0..100)
            .filter(|_| s.respond(t0, &key(), &cid(), 100).is_some())
            .count();
        assert_eq!(
            sent as u64, RESET_BURST,
            "a burst, then nothing at the same instant"
        );
        assert_eq!(s.limited(), 100 - RESET_BURST);
        // One reset's worth of time later (10 ms at 100/s), exactly one more.
        let t1 = t0 + Duration::from_millis(10);
        assert!(s.respond(t1, &key(), &cid(), 100).is_some());
        assert!(s.respond(t1, &key(), &cid(), 100).is_none());
        // A long silence refills only up to the burst: memory and output stay bounded.
        let t2 = t1 + Duration::from_secs(3600);
        let sent = (0..1000)
            .filter(|_| s.respond(t2, &key(), &cid(), 100).is_some())
            .count();
        assert_eq!(sent as u64, RESET_BURST);
        // Too-small triggers and empty IDs cost no credit.
        let t3 = t2 + Duration::from_secs(1);
        assert!(s.respond(t3, &key(), &cid(), 21).is_none());
        assert!(s.respond(t3, &key(), &ConnectionId::EMPTY, 100).is_none());
        assert_eq!(s.limited(), 100 - RESET_BURST + 1 + 1000 - RESET_BURST);
    }
}
