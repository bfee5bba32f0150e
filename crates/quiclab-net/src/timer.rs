//! A precise wake-up for the event loop. `epoll_wait` (and so mio) rounds timeouts up to
//! whole milliseconds, which turns the pacer's microsecond gaps on a fast path into
//! 1 ms stalls; a timerfd in the same poll wakes the loop at the nanosecond deadline
//! (issue 13: paced sending with accurate timers, chosen at run time).
//!
//! # Call contract
//! [`Timer::new`] (None where timerfd is unavailable: the loop then falls back to the
//! poll's millisecond timeout), register [`Timer::fd`] as readable, [`Timer::arm`]
//! before waiting, [`Timer::clear`] after it fired.

use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::time::Duration;

/// A non-blocking CLOCK_MONOTONIC timerfd, closed on drop.
pub struct Timer {
    fd: TimerFd,
}

impl Timer {
    /// A timerfd, or `None` if the kernel refuses one.
    pub fn new() -> Option<Timer> {
        let flags = TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC;
        TimerFd::new(ClockId::CLOCK_MONOTONIC, flags)
            .ok()
            .map(|fd| Timer { fd })
    }

    pub fn fd(&self) -> RawFd {
        self.fd.as_fd().as_raw_fd()
    }

    /// Fires once after `after` (at least 1 ns: an all-zero value would disarm it).
    pub fn arm(&self, after: Duration) {
        let after = after.max(Duration::from_nanos(1));
        let expiry = Expiration::OneShot(TimeSpec::from_duration(after));
        // A failure leaves the timer disarmed; the poll's own timeout still wakes the loop.
        let _ = self.fd.set(expiry, TimerSetTimeFlags::empty());
    }

    /// Consumes an expiry so the fd stops being readable (EAGAIN when not expired).
    pub fn clear(&self) {
        let mut n = [0u8; 8];
        let _ = nix::unistd::read(&self.fd, &mut n);
    }
}
