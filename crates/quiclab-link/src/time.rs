//! Time conversions shared by the link models and their drivers. No clock is read
//! here or anywhere in this crate: every model takes `now` from its caller.

use std::time::Duration;

/// Seconds from a scenario value as a duration, saturating: negative and NaN give zero,
/// too large gives `Duration::MAX` (which [`Instant`] arithmetic saturates further).
/// Validated scenarios never hit either end; equal to `Duration::from_secs_f64` otherwise.
pub fn saturating_secs(s: f64) -> Duration {
    if s.is_nan() || s <= 0.0 {
        return Duration::ZERO;
    }
    Duration::try_from_secs_f64(s).unwrap_or(Duration::MAX)
}
