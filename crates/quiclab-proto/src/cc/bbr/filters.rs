//! The windowed max filter BBR uses for BBR.max_bw (window: 2 ProbeBW cycles,
//! draft-ietf-ccwg-bbr §5.5.3-§5.5.5) and BBR.extra_acked (window: 10 packet-timed round
//! trips, 1 in Startup, §5.5.9). Time is a virtual counter (cycles or rounds), never a
//! clock.

use std::collections::VecDeque;

/// A windowed maximum over an integer virtual time: the largest value whose time is
/// within `window` of the latest update's time. Kept as a deque of (time, value) with
/// strictly decreasing values (a monotone-queue form of the Nichols filter the draft
/// cites): each update costs amortised O(1), and there is at most one entry per time
/// unit inside the window, so memory is bounded by the window length.
#[derive(Clone, Debug, Default)]
pub(crate) struct WindowedMax {
    entries: VecDeque<(u64, u64)>,
}

impl WindowedMax {
    /// Draft §5.5.5 UpdateWindowedMaxFilter: adds `value` at `time` (non-decreasing
    /// across calls) and returns the maximum over times in (time − window, time].
    pub(crate) fn update(&mut self, value: u64, time: u64, window: u64) -> u64 {
        self.expire(time, window);
        while self.entries.back().is_some_and(|&(_, v)| v <= value) {
            self.entries.pop_back();
        }
        self.entries.push_back((time, value));
        self.best()
    }

    /// Drops entries older than the window ending at `time`.
    pub(crate) fn expire(&mut self, time: u64, window: u64) {
        while self
            .entries
            .front()
            .is_some_and(|&(t, _)| t.saturating_add(window.max(1)) <= time)
        {
            self.entries.pop_front();
        }
    }

    /// The current maximum (0 when empty).
    pub(crate) fn best(&self) -> u64 {
        self.entries.front().map_or(0, |&(_, v)| v)
    }
}

#[cfg(test)]
mod tests {
    use super::WindowedMax;

    #[test]
    fn keeps_the_max_of_the_window_only() {
        let mut f = WindowedMax::default();
        assert_eq!(f.best(), 0);
        assert_eq!(f.update(10, 0, 2), 10);
        assert_eq!(f.update(5, 0, 2), 10);
        // Time 1: the time-0 maximum is still inside a window of 2.
        assert_eq!(f.update(7, 1, 2), 10);
        // Time 2: time 0 expired; the best of times 1 and 2 is 7.
        assert_eq!(f.update(3, 2, 2), 7);
        assert_eq!(f.update(8, 2, 2), 8);
        // Window 1: only the current time counts.
        assert_eq!(f.update(1, 3, 1), 1);
        f.expire(10, 2);
        assert_eq!(f.best(), 0);
        // Bounded: a long run of decreasing values keeps at most `window` entries.
        for t in 0..1000u64 {
            f.update(10_000 - t, t, 10);
        }
        assert!(f.entries.len() <= 10);
    }
}
