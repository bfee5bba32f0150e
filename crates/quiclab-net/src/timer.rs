//! A precise wake-up for the event loop. `epoll_wait` (and so mio) rounds timeouts up to
//! whole milliseconds, which turns the pacer's microsecond gaps on a fast path into
//! 1 ms stalls; a timerfd in the same poll wakes the loop at the nanosecond deadline
//! (issue 13: paced sending with accurate timers, chosen at run time).
//!
//! # Call contract
//! [`Timer::new`] (None where timerfd is unavailable: the loop then falls back to the
//! poll's millisecond timeout), register [`Timer::fd`] as readable, [`Timer::arm`]
//! before waiting, [`Timer::clear`] after it fired.

use std::os::fd::RawFd;
use std::time::Duration;

/// A non-blocking CLOCK_MONOTONIC timerfd, closed on drop.
pub struct Timer {
    fd: RawFd,
}

impl Timer {
    /// A timerfd, or `None` if the kernel refuses one.
    pub fn new() -> Option<Timer> {
        // SAFETY: plain syscall; a negative return is an error.
        let fd = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        (fd >= 0).then_some(Timer { fd })
    }

    pub fn fd(&self) -> RawFd {
        self.fd
    }

    /// Fires once after `after` (which must be non-zero).
    pub fn arm(&self, after: Duration) {
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: after.as_secs() as libc::time_t,
                // At least 1 ns: an all-zero value would disarm the timer.
                tv_nsec: libc::c_long::from(after.subsec_nanos().max(1)),
            },
        };
        // SAFETY: a valid timerfd and itimerspec; the old value is not asked for.
        unsafe { libc::timerfd_settime(self.fd, 0, &spec, std::ptr::null_mut()) };
    }

    /// Consumes an expiry so the fd stops being readable.
    pub fn clear(&self) {
        let mut n = [0u8; 8];
        // SAFETY: reading 8 bytes into an 8-byte buffer; EAGAIN when not expired.
        unsafe { libc::read(self.fd, n.as_mut_ptr().cast(), n.len()) };
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        // SAFETY: closing the fd this value owns.
        unsafe { libc::close(self.fd) };
    }
}
