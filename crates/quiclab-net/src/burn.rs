//! Extra CPU work per datagram, for making a CPU-limited host real (`--extra-cpu-us`,
//! `--extra-cpu-ns-per-byte`): the driver spins on its thread's CPU clock after each
//! datagram it hands to the endpoint and each datagram it sends, as the simulator's host
//! model charges `recv_cost_us` / `send_cost_us` and `per_byte_ns` (no GSO batching:
//! per datagram, whatever batch it left in). The thread is busy, not asleep, so a slow
//! host's queueing and drops happen in the kernel's socket buffer, as they would.

use crate::calibrate::clock::thread_cpu_ns;

/// CPU to burn per datagram each way; all zero: none (the default).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Burn {
    /// µs per datagram received or sent.
    pub per_datagram_us: f64,
    /// ns per byte of each datagram received or sent.
    pub per_byte_ns: f64,
}

impl Burn {
    pub fn is_off(&self) -> bool {
        self.per_datagram_us <= 0.0 && self.per_byte_ns <= 0.0
    }

    /// Spins for `datagrams` datagrams totalling `bytes` bytes.
    pub fn spend(&self, datagrams: u64, bytes: u64) {
        if self.is_off() {
            return;
        }
        let ns = self.per_datagram_us * 1e3 * datagrams as f64 + self.per_byte_ns * bytes as f64;
        let start = thread_cpu_ns();
        while thread_cpu_ns() - start < ns {
            std::hint::spin_loop();
        }
    }
}
