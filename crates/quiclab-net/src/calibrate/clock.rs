//! The calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID): what a measurement cost
//! the CPU, unlike wall time, which also counts waits and other processes' turns on
//! this shared machine.

use nix::time::{clock_gettime, ClockId};

/// A reading of the calling thread's CPU clock.
#[derive(Clone, Copy, Debug)]
pub struct ThreadCpu(f64);

impl ThreadCpu {
    pub fn now() -> ThreadCpu {
        ThreadCpu(thread_cpu_ns())
    }

    /// CPU ns the calling thread used since this reading (on the same thread).
    pub fn elapsed_ns(&self) -> f64 {
        thread_cpu_ns() - self.0
    }
}

/// The calling thread's CPU time so far, ns (0 should the clock be refused, which
/// Linux does not do for its own thread).
pub fn thread_cpu_ns() -> f64 {
    clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map(|t| t.tv_sec() as f64 * 1e9 + t.tv_nsec() as f64)
        .unwrap_or(0.0)
}
