//! The relay's rest: a real-time relay that never blocks is stopped by the kernel.
//!
//! Under SCHED_FIFO the kernel lets real-time tasks run at most `sched_rt_runtime_us`
//! of every `sched_rt_period_us` on a CPU (default 0.95 s of 1 s) and then stops them
//! for the rest of the period: one ~50 ms stall a second, measured as p99 delay errors
//! of 20-46 ms at 500 and 1000 Mbit/s (docs/performance-history.md). The relay spins the
//! last `--spin-us` before each deadline, so once deliveries are due more often than
//! that (above ~250 Mbit/s with 1200-byte datagrams) it never blocks.
//!
//! The rest account spreads the kernel's pause into small ones the relay chooses: it
//! owes `share` of the wall time it runs and pays it back by blocking. While it owes
//! anything it does not spin (it sleeps on the timer up to the deadline itself, a
//! wake-up of a few µs later than a spin); if it still owes more than [`SLICE`] (it
//! had no gap to sleep in: every turn had work due), it sleeps one slice at once. A
//! delivery due in a slice leaves at most a slice late instead of ~50 ms. Unused rest
//! is banked up to [`CREDIT`], so a relay that was idle may spin through a burst.
//!
//! # Call contract
//! [`Rest::pay`] once per loop turn; [`Rest::owes`] before choosing how to wait.

use std::time::{Duration, Instant};

/// The longest rest taken at once when a busy relay owes rest.
pub const SLICE: Duration = Duration::from_micros(50);
/// The most rest banked (the kernel's budget is per second; 10 ms of running without
/// a pause stays far inside the 50 ms it allows).
const CREDIT: f64 = 10e6;
/// How often the account is brought up to date: reading the thread's CPU time is a
/// system call (~0.5 µs here), too dear for every turn of the loop.
const EVERY: Duration = Duration::from_micros(100);

/// How much rest the relay owes (positive) or has banked (negative), in ns.
pub struct Rest {
    /// Fraction of wall time to spend off the CPU (0: never rest, the behaviour before).
    share: f64,
    /// Wall clock and the thread's CPU time at the last update.
    last: Option<(Instant, Duration)>,
    debt_ns: f64,
}

impl Rest {
    /// A relay that stays off the CPU at least `share` (0 ≤ share ≤ 0.9) of the time;
    /// `share` is clamped into that range.
    pub fn new(share: f64) -> Rest {
        Rest {
            share: if share.is_finite() {
                share.clamp(0.0, 0.9)
            } else {
                0.0
            },
            last: None,
            debt_ns: -CREDIT,
        }
    }

    /// The share, for the start-up log.
    pub fn share(&self) -> f64 {
        self.share
    }

    /// Whether the relay owes rest (and so should not spin).
    pub fn owes(&self) -> bool {
        self.share > 0.0 && self.debt_ns > 0.0
    }

    /// Brings the account up to date (at most every [`EVERY`]) and sleeps one
    /// [`SLICE`] if the relay owes more than that. The account is the thread's CPU time
    /// against the wall clock, as the kernel counts it: a short sleep's wall time is
    /// not all rest, since switching away and back costs CPU (several µs per switch on
    /// the VM measured; with wall time asleep as the measure the relay used 90-95% of
    /// its CPU at 1 Gbit/s and was throttled all the same).
    pub fn pay(&mut self) {
        if self.share == 0.0 {
            return;
        }
        let now = Instant::now();
        if self.last.is_some_and(|(t, _)| now < t + EVERY) {
            return;
        }
        self.update(now);
        if self.debt_ns > SLICE.as_nanos() as f64 {
            std::thread::sleep(SLICE);
            self.update(Instant::now());
        }
    }

    fn update(&mut self, now: Instant) {
        let cpu = thread_cpu_time();
        if let Some((t, c)) = self.last {
            let wall = now.saturating_duration_since(t).as_nanos() as f64;
            let used = cpu.saturating_sub(c).as_nanos() as f64;
            self.charge(wall, used);
        }
        self.last = Some((now, cpu));
    }

    /// `used` ns of CPU in `wall` ns: owes `share` of the wall time, less what it spent
    /// off the CPU.
    fn charge(&mut self, wall: f64, used: f64) {
        let off = (wall - used).max(0.0);
        self.debt_ns = (self.debt_ns + self.share * wall - off).max(-CREDIT);
    }
}

/// The calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID); zero if unreadable.
fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime into a valid timespec.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The account itself (no clock): owing starts once the banked credit is used.
    #[test]
    fn credit_then_debt() {
        let mut r = Rest::new(0.1);
        assert!(!r.owes());
        // 10 ms of credit, then 100 ms at 100% CPU: owes 10 ms - 10 ms = 0, not yet.
        r.charge(100e6, 100e6);
        assert!(!r.owes());
        r.charge(1e3, 1e3);
        assert!(r.owes());
        // 95% busy: owes 10% of the time, rests 5%.
        let before = r.debt_ns;
        r.charge(1e6, 0.95e6);
        assert!((r.debt_ns - before - 0.05e6).abs() < 1e-3);
        r.charge(1e9, 0.0);
        assert!(!r.owes());
        assert_eq!(r.debt_ns, -CREDIT, "banked rest is capped");
        let mut off = Rest::new(0.0);
        off.debt_ns = 1e9;
        assert!(!off.owes());
        assert_eq!(Rest::new(f64::NAN).share(), 0.0);
        assert_eq!(Rest::new(5.0).share(), 0.9);
    }
}
