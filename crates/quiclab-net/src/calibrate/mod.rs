//! `quiclab calibrate`: measures this machine's quiclab endpoint and writes a host
//! profile for the simulator's host model (`quiclab_sim::host`, `host = { profile =
//! ... }`). What is measured, each in its own file:
//! - [`cpu`]: CPU per datagram each way and per byte, from bulk transfers over
//!   loopback UDP at two datagram sizes (thread CPU time);
//! - [`crypto`]: the AEAD's share per byte (seal and open timed alone);
//! - [`wakeup`]: timer wake-up lateness with the driver's timerfd and poll wakers;
//! - GSO batch sizes of the bulk transfers' sender (the driver's counters);
//! - [`profile`] writes them as a profile and an empirical latency file.

pub mod clock;
pub mod cpu;
pub mod crypto;
pub mod profile;
pub mod wakeup;

use crate::error::{NetError, Result};
use std::path::Path;
use std::time::Duration;

/// The two datagram sizes (UDP payload bytes) the costs are fitted between: QUIC's
/// minimum (RFC 9000 §14) and the largest on a 1500-byte Ethernet path under IPv6.
pub const SIZES: (u16, u16) = (1200, 1452);

/// The scheduling class the measuring threads run in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sched {
    /// As the caller's.
    Inherit,
    /// SCHED_FIFO at priority 10, as the lab's real endpoints (`[endpoints] realtime`),
    /// where permitted; refused, the thread stays in its class.
    Fifo,
}

impl Sched {
    /// Puts the calling thread in this class (best effort); returns the class it has.
    pub fn apply(self) -> &'static str {
        if self == Sched::Fifo {
            let param = libc::sched_param { sched_priority: 10 };
            // SAFETY: a plain syscall on the calling thread with a valid sched_param;
            // a refusal leaves it in its class.
            unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
        }
        // SAFETY: a query about the calling thread.
        if unsafe { libc::sched_getscheduler(0) } == libc::SCHED_FIFO {
            "fifo"
        } else {
            "normal"
        }
    }
}

/// How much to measure.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Bytes of each bulk transfer.
    pub transfer_bytes: u64,
    /// Transfers per datagram size.
    pub repetitions: usize,
    /// Wake-ups per waker.
    pub wake_samples: usize,
    /// The wait each wake-up sample asks for.
    pub wake_wait: Duration,
    /// Seals and opens per size.
    pub crypto_iters: u32,
    pub sched: Sched,
}

impl Options {
    /// About 10 s of measuring on an idle 2-core machine.
    pub fn full() -> Options {
        Options {
            transfer_bytes: 40_000_000,
            repetitions: 3,
            wake_samples: 2000,
            wake_wait: Duration::from_micros(500),
            crypto_iters: 50_000,
            sched: Sched::Fifo,
        }
    }

    /// A second or two: for tests and a first look (noisier).
    pub fn quick() -> Options {
        Options {
            transfer_bytes: 4_000_000,
            repetitions: 2,
            wake_samples: 300,
            crypto_iters: 20_000,
            ..Options::full()
        }
    }
}

/// Everything measured.
#[derive(Clone, Debug)]
pub struct Calibration {
    pub options: Options,
    /// The class the measuring threads got ("fifo" or "normal").
    pub sched: &'static str,
    /// Per size: the baseline (1-byte fetch) and the transfers, raw.
    pub runs: Vec<(u16, cpu::Pair, Vec<cpu::Pair>)>,
    pub fit: cpu::Fit,
    pub crypto: crypto::CryptoCost,
    pub wake: wakeup::Lateness,
}

impl Calibration {
    /// Mean datagrams per sendmsg of the senders (server side, bulk data) over the
    /// transfers, baselines subtracted.
    pub fn gso_mean(&self) -> f64 {
        let (mut dg, mut calls) = (0.0, 0.0);
        for (_, base, pairs) in &self.runs {
            for (s, _) in pairs {
                dg += s.sent - base.0.sent;
                calls += s.send_calls - base.0.send_calls;
            }
        }
        if calls > 0.0 {
            dg / calls
        } else {
            1.0
        }
    }
}

/// Runs every measurement (`scratch`: a directory for the transfers' config and root).
pub fn run(opts: Options, scratch: &Path) -> Result<Calibration> {
    let sched = opts.sched.apply();
    let crypto = crypto::measure((SIZES.0 as usize, SIZES.1 as usize), opts.crypto_iters);
    let wake = wakeup::measure(opts.wake_samples, opts.wake_wait)
        .map_err(|e| NetError::Config(format!("measuring wake-ups: {e}")))?;
    // A discarded warm-up fetch: the process's first connection pays one-time costs
    // (thread and socket setup, lazy statics, first-touch page faults: ~10x a warm
    // fetch's CPU here) that would otherwise inflate the first size's baseline and can
    // drive the fitted per-datagram costs negative.
    cpu::transfer(scratch, SIZES.0, 1, opts.sched, 0)?;
    let mut runs = Vec::new();
    let mut rows = Vec::new();
    for (i, size) in [SIZES.0, SIZES.1].into_iter().enumerate() {
        let seed = 1 + i as u64;
        let base = cpu::transfer(scratch, size, 1, opts.sched, seed)?;
        let mut pairs = Vec::new();
        for r in 0..opts.repetitions {
            pairs.push(cpu::transfer(
                scratch,
                size,
                opts.transfer_bytes,
                opts.sched,
                seed + 10 * r as u64,
            )?);
        }
        rows.extend(cpu::rows(&pairs, &base));
        runs.push((size, base, pairs));
    }
    let fit = cpu::fit(&rows).ok_or_else(|| {
        NetError::Config("the transfers' counts do not determine the costs (singular fit)".into())
    })?;
    Ok(Calibration {
        options: opts,
        sched,
        runs,
        fit,
        crypto,
        wake,
    })
}
