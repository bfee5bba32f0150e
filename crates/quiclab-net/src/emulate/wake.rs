//! The relay's precise sleep: a timerfd (the endpoint driver's timerfd)
//! in the same poll as the sockets wakes the loop at the nanosecond deadline, and the
//! last `spin` before a deadline is spent polling the sockets without blocking instead
//! of sleeping, since the wake-up from a sleep itself takes tens of microseconds on a
//! loaded machine (docs/PERFORMANCE.md has the measured trade-off). Without a timerfd
//! the poll's own timeout is used (whole milliseconds).
//!
//! On a loaded machine the sleep itself is not the problem but getting the CPU back
//! after it: with other processes runnable, a woken normal-priority process waits for
//! its turn (measured here at load 10 on 2 cores: send lateness p50 ~1 ms, p99 ~9 ms).
//! [`raise_priority`] moves the relay to the real-time FIFO class, so a wake-up runs at
//! once (same machine and load: p50 1 µs, p99 13 µs); the kernel's RT throttling still
//! leaves other processes 5% of each CPU.
//!
//! # Call contract
//! [`Waker::register`] once with the poll; before each poll ask [`Waker::timeout`] for
//! the poll timeout of a wait; after an event with [`TIMER`]'s token,
//! [`Waker::clear`].

use super::rest::Rest;
use crate::driver::WakeMode;
use crate::timer::Timer;
use mio::{Interest, Registry, Token};
use std::time::Duration;

/// The poll token of the timer (the relay's sockets use 0 and 1).
pub(crate) const TIMER: Token = Token(2);

/// Backstop added to a timerfd wait in case the timer event is missed.
const BACKSTOP: Duration = Duration::from_millis(1);

/// The share of wall time a relay spends blocked by default (`rest.rs`): twice what
/// the kernel's default RT throttling (5%) requires, as margin for the other real-time
/// threads that may share the relay's CPU.
pub const DEFAULT_REST: f64 = 0.1;

/// How the relay sleeps until its next deadline.
pub struct Waker {
    timer: Option<Timer>,
    spin: Duration,
    /// What rest the relay owes the kernel's RT throttling; no spin while it owes any.
    pub(crate) rest: Rest,
}

impl Waker {
    /// `wake`: a timerfd (falling back to the poll's timeout where unavailable) or the
    /// poll's timeout; `spin`: how long before a deadline to stop sleeping.
    pub fn new(wake: WakeMode, spin: Duration) -> Waker {
        let timer = match wake {
            WakeMode::Timerfd => Timer::new(),
            WakeMode::Poll => None,
        };
        // Timer slack (default 50 µs) delays the poll's own timeouts; 1 µs is enough.
        // SAFETY: prctl with an integer argument; failure leaves the default slack.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong) };
        Waker {
            timer,
            spin,
            rest: Rest::new(DEFAULT_REST),
        }
    }

    /// The same with `share` of the time spent blocked (0: spin whenever a deadline is
    /// near, never rest).
    pub fn with_rest(mut self, share: f64) -> Waker {
        self.rest = Rest::new(share);
        self
    }

    /// The choice made, for the start-up log.
    pub fn note(&self) -> String {
        format!(
            "sleeps with {}, spinning the last {} µs; rests {}% of the time",
            if self.timer.is_some() {
                "timerfd (ns)"
            } else {
                "poll timeout (ms)"
            },
            self.spin.as_micros(),
            (self.rest.share() * 100.0).round()
        )
    }

    pub fn register(&self, registry: &Registry) -> std::io::Result<()> {
        if let Some(t) = &self.timer {
            registry.register(&mut mio::unix::SourceFd(&t.fd()), TIMER, Interest::READABLE)?;
        }
        Ok(())
    }

    /// The poll timeout for a wait of `wait` (non-zero): zero inside the spin window
    /// (the caller polls again at once), else a sleep that ends `spin` early; while the
    /// relay owes rest, a sleep to the deadline itself.
    pub fn timeout(&self, wait: Duration) -> Duration {
        let spin = if self.rest.owes() {
            Duration::ZERO
        } else {
            self.spin
        };
        if wait <= spin {
            return Duration::ZERO;
        }
        let sleep = wait - spin;
        match &self.timer {
            Some(t) => {
                t.arm(sleep);
                sleep + BACKSTOP
            }
            None => sleep,
        }
    }

    pub fn clear(&self) {
        if let Some(t) = &self.timer {
            t.clear();
        }
    }
}

/// Asks for SCHED_FIFO at a middle priority (needs CAP_SYS_NICE or root; an RLIMIT_RTPRIO
/// may also allow it). `Ok` with a note when the kernel throttles real-time tasks (the
/// relay then pauses at high rates), `Err` with the OS error when refused (timing then
/// suffers on a busy machine).
pub fn raise_priority() -> std::io::Result<Option<String>> {
    let param = libc::sched_param { sched_priority: 20 };
    // SAFETY: plain syscall on this process with a valid sched_param.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(rt_throttling_note())
}

/// The kernel's real-time throttling, if on: a real-time task that runs for
/// `sched_rt_runtime_us` of every `sched_rt_period_us` (default 0.95 s of 1 s) is
/// stopped for the rest of the period. A relay that spins before each deadline never
/// sleeps at rates where deliveries are due every few tens of microseconds, and was
/// stopped ~50 ms a second (measured: p99 delay error 20-46 ms at 500 and 1000 Mbit/s;
/// docs/performance-history.md); the rest account (`rest.rs`, `--rest-percent`, 10% by
/// default) keeps it below the budget.
fn rt_throttling_note() -> Option<String> {
    let read = |f: &str| -> Option<i64> {
        std::fs::read_to_string(format!("/proc/sys/kernel/{f}"))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    let runtime = read("sched_rt_runtime_us")?;
    let period = read("sched_rt_period_us")?;
    (runtime >= 0 && runtime < period).then(|| {
        format!(
            "the kernel throttles real-time tasks ({runtime} of every {period} µs): the \
             relay stays off the CPU --rest-percent of the time; with less than {}% it \
             pauses ~{} ms a second at rates where it never sleeps",
            (period - runtime) * 100 / period,
            (period - runtime) / 1000
        )
    })
}
