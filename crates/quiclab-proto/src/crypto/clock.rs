//! rustls's clock in virtual time. rustls reads the time for ticket ages and lifetimes
//! (RFC 8446 §4.6.1, §4.2.11.1) and for certificate validity; the core never reads a
//! clock, so every quiclab TLS config gets a [`VirtualClock`] that answers with the
//! connection's `now` (installed per TLS call by [`with_time`], like the random source
//! in `provider.rs`) added to a fixed Unix base.
//!
//! Why a base: certificates have validity dates, so `Instant::ZERO` must map to a real
//! date (the seeded certificates are valid from 2025 on). A driver on real time (the CLI)
//! may give the wall-clock base of its own epoch instead ([`VirtualClock::with_base`]).

use crate::time::Instant;
use rustls::pki_types::UnixTime;
use rustls::time_provider::TimeProvider;
use std::cell::Cell;
use std::time::Duration;

/// 2026-01-01T00:00:00Z: the Unix time of `Instant::ZERO` unless a driver says otherwise.
pub const DEFAULT_BASE: Duration = Duration::from_secs(1_767_225_600);

thread_local! {
    /// The `now` of the connection whose rustls call is running on this thread.
    static NOW: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Runs `f` with `now` as the virtual time of every rustls call it makes on this thread;
/// restores the previous time afterwards (nesting is allowed).
pub fn with_time<R>(now: Instant, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Instant>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let _ = NOW.try_with(|slot| slot.set(self.0));
        }
    }
    let _restore = Restore(NOW.with(|slot| slot.replace(Some(now))));
    f()
}

/// rustls's time source: `base + now` of the running TLS call. Outside a call (no time
/// installed) it answers `None`, and rustls fails the operation rather than reading the
/// system clock.
#[derive(Debug, Clone, Copy)]
pub struct VirtualClock {
    base: Duration,
}

impl Default for VirtualClock {
    fn default() -> Self {
        VirtualClock { base: DEFAULT_BASE }
    }
}

impl VirtualClock {
    /// A clock mapping `Instant::ZERO` to `base` after the Unix epoch.
    pub fn with_base(base: Duration) -> Self {
        VirtualClock { base }
    }
}

impl TimeProvider for VirtualClock {
    fn current_time(&self) -> Option<UnixTime> {
        let now = NOW.with(Cell::get)?;
        Some(UnixTime::since_unix_epoch(
            self.base + Duration::from_nanos(now.as_nanos()),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_only_inside_with_time_and_restored() {
        let clock = VirtualClock::default();
        assert!(clock.current_time().is_none());
        let t = with_time(Instant::from_millis(2500), || {
            let inner = with_time(Instant::from_millis(7000), || clock.current_time());
            assert_eq!(inner.unwrap().as_secs(), DEFAULT_BASE.as_secs() + 7);
            clock.current_time()
        });
        assert_eq!(t.unwrap().as_secs(), DEFAULT_BASE.as_secs() + 2);
        assert!(clock.current_time().is_none());
    }
}
