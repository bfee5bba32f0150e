//! Receive-side flow-control credit (RFC 9000 §4.1-4.2), with optional window auto-tuning.

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
        }
    }

    /// §4.2: offer more credit once more than half of the window has been consumed, so
    /// the sender is not blocked while the update travels.
    pub fn wants_update(&self) -> bool {
        self.max.saturating_sub(self.consumed).saturating_mul(2) < self.window
    }

    /// Moves `max` to `consumed + window` and returns it. With auto-tuning, an update
    /// less than 2 RTT after the previous one means the window limits throughput
    /// (the application drains it faster than a round trip), so it doubles up to `cap`.
    pub fn update(&mut self, now: Instant, rtt: Duration) -> u64 {
        if self.autotune {
            if let Some(prev) = self.last_update {
                if now - prev < rtt.saturating_mul(2) {
                    self.window = self.window.saturating_mul(2).min(self.cap);
                }
            }
        }
        self.last_update = Some(now);
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
}
