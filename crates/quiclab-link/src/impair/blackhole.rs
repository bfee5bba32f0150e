//! Blackholes (`impairments.blackhole = [{ from_s, to_s }]`), the interop runner's
//! `blackhole` network condition: every datagram offered to the direction from `from_s`
//! (inclusive) to `to_s` (exclusive), seconds from the start of the run, is dropped.
//! Set it on one direction or on both (the runner's scenario blocks both). Several
//! windows may be listed, e.g. the runner's `--on=5s --off=2s --repeat=2` is
//! `[{ from_s = 5, to_s = 7 }, { from_s = 12, to_s = 14 }]`. No randomness is drawn;
//! the random impairments still draw their values for a blackholed datagram (their
//! streams keep their positions). A scheduled `outage_s` (`[[schedule]]`) drops the
//! same datagrams on one direction; a blackhole is written with the link's other
//! impairments, and its drops count as `impairment_drops` (cause `blackhole`).

use quiclab_proto::Instant;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The largest time a window may name, s (the scenario limit).
const MAX_S: f64 = 1e9;

/// One window during which the direction drops everything.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Blackhole {
    /// Start, s from the start of the run (inclusive).
    pub from_s: f64,
    /// End, s (exclusive); greater than `from_s`.
    pub to_s: f64,
}

/// Checks every window; the error names it (`blackhole[1].to_s`).
pub(crate) fn validate(windows: &[Blackhole]) -> Result<(), String> {
    for (i, w) in windows.iter().enumerate() {
        if !(w.from_s.is_finite() && (0.0..=MAX_S).contains(&w.from_s)) {
            return Err(format!(
                "blackhole[{i}].from_s must be finite, >= 0 and <= 1e9"
            ));
        }
        if !(w.to_s.is_finite() && w.to_s > w.from_s && w.to_s <= MAX_S) {
            return Err(format!(
                "blackhole[{i}].to_s must be finite, greater than from_s and <= 1e9"
            ));
        }
    }
    Ok(())
}

/// Validated windows as instants.
#[derive(Clone, Debug, Default)]
pub(crate) struct Windows(Vec<(Instant, Instant)>);

impl Windows {
    /// `windows` must have passed [`validate`].
    pub(crate) fn new(windows: &[Blackhole]) -> Windows {
        let at = |s: f64| Instant::ZERO + Duration::from_secs_f64(s);
        Windows(windows.iter().map(|w| (at(w.from_s), at(w.to_s))).collect())
    }

    /// Whether there are no windows.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `now` falls in a window.
    pub(crate) fn covers(&self, now: Instant) -> bool {
        self.0.iter().any(|&(a, b)| a <= now && now < b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(from_s: f64, to_s: f64) -> Blackhole {
        Blackhole { from_s, to_s }
    }

    #[test]
    fn windows_cover_from_inclusive_to_exclusive() {
        let ws = Windows::new(&[w(5.0, 7.0), w(12.0, 14.0)]);
        let at = |s: f64| Instant::ZERO + Duration::from_secs_f64(s);
        assert!(!ws.covers(at(4.999)));
        assert!(ws.covers(at(5.0)));
        assert!(ws.covers(at(6.999)));
        assert!(!ws.covers(at(7.0)));
        assert!(ws.covers(at(13.0)));
        assert!(!ws.covers(at(20.0)));
        assert!(!Windows::new(&[]).covers(at(1.0)));
    }

    #[test]
    fn validation_names_the_window() {
        assert!(validate(&[w(0.0, 1.0)]).is_ok());
        assert!(validate(&[w(0.0, 1.0), w(3.0, 3.0)])
            .unwrap_err()
            .starts_with("blackhole[1].to_s"));
        assert!(validate(&[w(-1.0, 1.0)])
            .unwrap_err()
            .starts_with("blackhole[0].from_s"));
        assert!(validate(&[w(f64::NAN, 1.0)]).is_err());
        assert!(validate(&[w(0.0, f64::INFINITY)]).is_err());
    }
}
