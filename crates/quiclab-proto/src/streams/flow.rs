//! Receive-side flow-control credit (RFC 9000 §4.1-4.2), with optional window auto-tuning.
// Peer values pass through here: arithmetic is checked, saturating or wrapping
// by the rule in CONTRIBUTING.md ("Arithmetic on wire values").
#![deny(clippy::arithmetic_side_effects)]

use crate::time::Instant;
use crate::wire::varint;
use std::time::Duration;

/// The credit we advertise for one stream or for the connection.
#[derive(Clone, Debug)]
pub(super) struct RecvWindow {
    /// The limit last advertised (initial parameter, MAX_DATA or MAX_STREAM_DATA; §4.1).
    pub max: u64,
    /// How far beyond `consumed` each update moves `max`; grows only with auto-tuning.
    pub window: u64,
    cap: u64,
    autotune: bool,
    /// Bytes the application has consumed (read, or discarded after a reset/stop).
    pub consumed: u64,
    /// When `max` last moved, to detect windows that are too small for the RTT.
    last_update: Option<Instant>,
    /// The limit a peer's STREAM_DATA_BLOCKED / DATA_BLOCKED reported (§4.1, §19.13).
    pub blocked_at: Option<u64>,
}

impl RecvWindow {
    pub fn new(window: u64, cap: u64, autotune: bool) -> Self {
        RecvWindow {
            max: window,
            window,
            cap: cap.max(window),
            autotune,
            consumed: 0,
            last_update: None,
            blocked_at: None,
        }
    }

    /// §4.2: offer more credit once more than half of the window has been consumed, so
    /// the sender is not blocked while the update travels; and (§4.1, §19.13) once the
    /// peer reported being blocked at a limit that is now all consumed, if an update
    /// would raise `max`. Without the second rule, a receiver that reads each packet of
    /// window-sized line-rate bursts (congestion control off) updates once per burst,
    /// at its first packet, and the sender settles at half a window per round trip.
    /// Either way only if an update would raise `max`: `consumed` never exceeds `max`
    /// (flow control), so below the 2^62-1 cap (§4.1) the half-window rule implies it,
    /// and at the cap a window that can grow no further wants nothing (so a sent update
    /// always ends the want, which `Streams::read` relies on).
    pub fn wants_update(&self) -> bool {
        let target = self.consumed.saturating_add(self.window).min(varint::MAX);
        if target <= self.max {
            return false;
        }
        let blocked = self.blocked_at.is_some_and(|l| self.consumed >= l);
        blocked || self.max.saturating_sub(self.consumed).saturating_mul(2) < self.window
    }

    /// Moves `max` to `consumed + window` and returns it. With auto-tuning, an update
    /// less than 2 RTT after the previous one means the window limits throughput
    /// (the application drains it faster than a round trip), so it doubles up to `cap`.
    pub fn update(&mut self, now: Instant, rtt: Duration) -> u64 {
        if self.autotune {
            if let Some(prev) = self.last_update {
                if now.saturating_duration_since(prev) < rtt.saturating_mul(2) {
                    self.window = self.window.saturating_mul(2).min(self.cap);
                }
            }
        }
        self.last_update = Some(now);
        self.blocked_at = None;
        let target = self.consumed.saturating_add(self.window).min(varint::MAX);
        self.max = self.max.max(target);
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_threshold_and_autotune() {
        let rtt = Duration::from_millis(100);
        let mut w = RecvWindow::new(100, 400, true);
        w.consumed = 50;
        assert!(!w.wants_update());
        w.consumed = 51;
        assert!(w.wants_update());
        // The first update has no previous one to compare with: no growth.
        assert_eq!(w.update(Instant::from_millis(0), rtt), 151);
        w.consumed = 120;
        // Within 2 RTT of the previous update: the window doubles.
        assert_eq!(w.update(Instant::from_millis(150), rtt), 320);
        assert_eq!(w.window, 200);
        w.consumed = 300;
        assert_eq!(w.update(Instant::from_millis(500), rtt), 500);
        assert_eq!(w.window, 200);
        w.consumed = 400;
        w.update(Instant::from_millis(510), rtt);
        w.consumed = 500;
        w.update(Instant::from_millis(520), rtt);
        assert_eq!(w.window, 400, "capped");

        let mut off = RecvWindow::new(100, 400, false);
        for i in 0..5 {
            off.consumed += 60;
            off.update(Instant::from_millis(i), rtt);
        }
        assert_eq!(off.window, 100);
    }

    /// A sender blocked at a limit the receiver has fully consumed gets a fresh window at
    /// once, even if less than half of the current window is consumed: the half-window
    /// rule alone, with reads per packet of window-sized bursts, fires once per burst
    /// (at its first packet) and settles at half a window per round trip.
    #[test]
    fn blocked_sender_gets_credit_once_its_limit_is_consumed() {
        let rtt = Duration::from_millis(100);
        let mut w = RecvWindow::new(100, 100, false);
        w.consumed = 51;
        assert_eq!(w.update(Instant::from_millis(0), rtt), 151);
        // The rest of the first burst: the sender is blocked at 100.
        w.consumed = 100;
        assert!(!w.wants_update(), "half-window rule alone: 51 of 100 left");
        w.blocked_at = Some(100);
        assert!(w.wants_update());
        assert_eq!(w.update(Instant::from_millis(1), rtt), 200);
        assert_eq!(w.blocked_at, None, "an update answers the report");
        // A report of a limit whose bytes are not all read yet waits for the reads.
        w.blocked_at = Some(150);
        assert!(!w.wants_update());
        w.consumed = 150;
        assert!(w.wants_update());
    }

    /// At the 2^62-1 cap an update cannot raise `max`: the window wants none, so an
    /// update once sent is not asked for again (the half-window rule alone would ask
    /// after every read).
    #[test]
    fn no_update_wanted_at_the_varint_cap() {
        let rtt = Duration::from_millis(100);
        let mut w = RecvWindow::new(100, 100, false);
        w.max = varint::MAX - 10;
        w.consumed = varint::MAX - 40;
        assert!(w.wants_update(), "30 of 100 left, and the cap leaves room");
        assert_eq!(w.update(Instant::from_millis(0), rtt), varint::MAX);
        assert!(!w.wants_update(), "nothing left to offer");
        w.blocked_at = Some(varint::MAX - 40);
        assert!(!w.wants_update(), "nor for a blocked report");
        // Below the cap the blocked rule still applies (60 of 100 left: the half-window
        // rule alone would wait).
        w.max = varint::MAX - 20;
        w.consumed = varint::MAX - 80;
        w.blocked_at = Some(varint::MAX - 80);
        assert!(w.wants_update());
    }
}
