//! The statistics behind a finding's verdict: the estimate of a change over paired
//! samples (mean with its 95% confidence interval) and the verdict that follows from a
//! [`Claim`]: **holds** only when the whole interval lies on the claimed side (or inside
//! the claimed band), **fails** when the whole interval lies outside it,
//! **inconclusive** when it straddles, **no data** without pairs. Findings whose points
//! ran once each (a deterministic study) have no interval: they are judged on every
//! pair and marked as single runs rather than dressed as statistics. Pure functions.

use crate::plan::claim::{Claim, Verdict};
use crate::run::stats::t95;

/// How the samples of a change were obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sampling {
    /// Several runs per point, paired by repetition (by seed under common random
    /// numbers): the change has a confidence interval.
    Paired,
    /// One run per point: the changes are exact for a deterministic study, and there
    /// is no interval to give.
    SingleRun,
}

/// The change measured by a finding over its pairs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    pub sampling: Sampling,
    /// Pairs (samples of the change).
    pub n: usize,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    /// 95% confidence interval of the mean (Student's t); `None` for single runs or
    /// fewer than two pairs.
    pub ci: Option<(f64, f64)>,
}

impl Estimate {
    /// The estimate over samples of the change; `None` without a finite sample.
    pub fn of(changes: &[f64], sampling: Sampling) -> Option<Estimate> {
        let v: Vec<f64> = changes.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        let n = v.len();
        let mean = v.iter().sum::<f64>() / n as f64;
        let min = v.iter().copied().fold(f64::INFINITY, f64::min);
        let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let ci = (sampling == Sampling::Paired && n >= 2).then(|| {
            let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            let half = t95(n - 1) * (var / n as f64).sqrt();
            (mean - half, mean + half)
        });
        Some(Estimate {
            sampling,
            n,
            mean,
            min,
            max,
            ci,
        })
    }

    /// The range our result supports: the CI for paired samples, all the pairs
    /// ([min, max]) for single runs.
    pub fn range(&self) -> (f64, f64) {
        self.ci.unwrap_or((self.min, self.max))
    }
}

/// Judges a claim on an estimate, with the reason when it is not a plain verdict.
/// Paired samples: the CI decides, and fewer than `min_pairs` pairs is inconclusive.
/// Single runs: every pair must satisfy the claim to hold, none to fail.
pub fn judge(claim: Claim, est: Option<&Estimate>, min_pairs: usize) -> (Verdict, String) {
    let Some(e) = est else {
        return (Verdict::NoData, "no pairs with data".into());
    };
    match e.sampling {
        Sampling::Paired if e.n < min_pairs.max(2) => (
            Verdict::Inconclusive,
            format!(
                "{} pairs, fewer than the {} required",
                e.n,
                min_pairs.max(2)
            ),
        ),
        Sampling::Paired => {
            let (lo, hi) = e.ci.expect("n >= 2 gives a CI");
            (claim.judge_interval(lo, hi), String::new())
        }
        Sampling::SingleRun => {
            // Every pair lies in [min, max], so the extremes decide.
            let all = claim.satisfied_by(e.min) && claim.satisfied_by(e.max);
            let none = match claim {
                Claim::Below(b) => e.min >= b,
                Claim::Above(b) => e.max <= b,
                Claim::Between(lo, hi) => e.max < lo || e.min > hi,
            };
            if all {
                (Verdict::Holds, String::new())
            } else if none {
                (Verdict::Fails, String::new())
            } else {
                (
                    Verdict::Inconclusive,
                    "single runs: the claim holds at some pairs and not at others".into(),
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::claim::Published;

    fn paired(xs: &[f64]) -> Estimate {
        Estimate::of(xs, Sampling::Paired).unwrap()
    }

    #[test]
    fn the_ci_must_lie_on_the_claimed_side() {
        let lower = Claim::parse_expect("lower").unwrap();
        // Mean -1%, tight: holds.
        let e = paired(&[-0.011, -0.009, -0.010, -0.012, -0.008]);
        assert_eq!(judge(lower, Some(&e), 5).0, Verdict::Holds);
        // Mean -0.3% but straddling zero: inconclusive, not "holds".
        let e = paired(&[-0.008, 0.001, -0.004, 0.002, -0.006]);
        assert!(e.mean < 0.0);
        assert_eq!(judge(lower, Some(&e), 5).0, Verdict::Inconclusive);
        // Clearly higher: fails.
        let e = paired(&[0.05, 0.06, 0.04, 0.05, 0.055]);
        assert_eq!(judge(lower, Some(&e), 5).0, Verdict::Fails);
        // Too few pairs.
        let e = paired(&[-0.1, -0.1, -0.1]);
        let (v, why) = judge(lower, Some(&e), 5);
        assert_eq!(v, Verdict::Inconclusive);
        assert!(why.contains("fewer than the 5"), "{why}");
        assert_eq!(judge(lower, None, 5).0, Verdict::NoData);
    }

    #[test]
    fn a_band_is_two_sided() {
        let within = Claim::within(0.01).unwrap();
        // 50% higher must fail a "same within 1%" claim (the one-sided "> -0.01" passed it).
        let e = paired(&[0.5, 0.49, 0.51, 0.5, 0.5]);
        assert_eq!(judge(within, Some(&e), 5).0, Verdict::Fails);
        assert!(Claim::parse_expect("> -0.01").unwrap().satisfied_by(0.5));
        let e = paired(&[0.001, -0.002, 0.0, 0.002, -0.001]);
        assert_eq!(judge(within, Some(&e), 5).0, Verdict::Holds);
        let e = paired(&[0.001, 0.02, 0.0, 0.015, 0.003]);
        assert_eq!(judge(within, Some(&e), 5).0, Verdict::Inconclusive);
        let band = Claim::between(0.25, 0.5).unwrap();
        let e = paired(&[0.54, 0.55, 0.53, 0.54, 0.54]);
        assert_eq!(judge(band, Some(&e), 5).0, Verdict::Fails);
        assert!(Claim::within(-1.0).is_err() && Claim::between(2.0, 1.0).is_err());
    }

    #[test]
    fn single_runs_are_judged_on_every_pair() {
        let lower = Claim::Below(0.0);
        let e = Estimate::of(&[-0.1, -0.2, -0.05], Sampling::SingleRun).unwrap();
        assert!(e.ci.is_none());
        assert_eq!(judge(lower, Some(&e), 5).0, Verdict::Holds);
        let e = Estimate::of(&[-0.1, 0.2, -0.05], Sampling::SingleRun).unwrap();
        assert_eq!(judge(lower, Some(&e), 5).0, Verdict::Inconclusive);
        let e = Estimate::of(&[0.1, 0.2], Sampling::SingleRun).unwrap();
        assert_eq!(judge(lower, Some(&e), 5).0, Verdict::Fails);
        // Exactly equal single runs hold a "within 1%" claim.
        let e = Estimate::of(&[0.0, 0.0], Sampling::SingleRun).unwrap();
        assert_eq!(
            judge(Claim::within(0.01).unwrap(), Some(&e), 5).0,
            Verdict::Holds
        );
    }

    #[test]
    fn ci_matches_students_t() {
        // n = 4, mean 2, sd 1.2910: half-width 3.182 * 1.2910 / 2.
        let e = paired(&[1.0, 2.0, 3.0, 2.0]);
        let (lo, hi) = e.ci.unwrap();
        let sd = (2.0f64 / 3.0).sqrt();
        let half = 3.182 * sd / 2.0;
        assert!((lo - (2.0 - half)).abs() < 1e-12 && (hi - (2.0 + half)).abs() < 1e-12);
    }

    #[test]
    fn published_numbers_agree_by_overlap() {
        let p = Published::Change {
            value: -0.062,
            precision: 0.0005,
        };
        assert!(p.agrees_with((-0.07, -0.05)));
        assert!(!p.agrees_with((-0.05, -0.04)));
        let b = Published::Between(0.25, 0.5);
        assert!(b.agrees_with((0.26, 0.3)) && !b.agrees_with((0.51, 0.56)));
        assert_eq!(b.describe(), "+25.0% to +50.0%");
        assert_eq!(Claim::within(0.01).unwrap().describe(), "within ±1%");
        assert_eq!(Claim::Below(-0.05).describe(), "< -5%");
    }
}
