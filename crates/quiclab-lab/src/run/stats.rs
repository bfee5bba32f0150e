//! Per-point summary statistics over repetitions: mean, median, 5th/95th percentiles
//! and the 95% confidence interval of the mean (Student's t), the numbers a figure's
//! error bars and a report's verdicts are made of.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Summary of one metric's samples at one point.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub n: usize,
    pub mean: f64,
    pub median: f64,
    pub p5: f64,
    pub p95: f64,
    /// 95% confidence interval of the mean (equal to the mean when n = 1).
    pub ci_lo: f64,
    pub ci_hi: f64,
}

/// The two-sided 95% Student's t quantile for `dof` degrees of freedom (statrs's
/// inverse CDF at 0.975; 1.96 in the limit); infinite for 0 (no interval).
pub fn t95(dof: usize) -> f64 {
    StudentsT::new(0.0, 1.0, dof as f64).map_or(f64::INFINITY, |t| t.inverse_cdf(0.975))
}

/// The `q`-quantile (0..=1) of sorted values: quiclab's one percentile definition
/// (linear interpolation between closest ranks, numpy's default).
pub use quiclab_link::quantile::percentile;

impl Stats {
    /// Summarises samples; `None` for no samples. Non-finite samples are ignored (a
    /// metric is either a number or absent, so they should not occur).
    pub fn of(samples: &[f64]) -> Option<Stats> {
        let mut v: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let mean = v.iter().sum::<f64>() / n as f64;
        let (ci_lo, ci_hi) = if n == 1 {
            (mean, mean)
        } else {
            let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            let half = t95(n - 1) * (var / n as f64).sqrt();
            (mean - half, mean + half)
        };
        Some(Stats {
            n,
            mean,
            median: percentile(&v, 0.5),
            p5: percentile(&v, 0.05),
            p95: percentile(&v, 0.95),
            ci_lo,
            ci_hi,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn known_values() {
        // 1..=10: mean 5.5, sd 3.02765, t(9) = 2.262157 -> half-width 2.165851.
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        let s = Stats::of(&v).unwrap();
        assert_eq!(s.n, 10);
        assert!(close(s.mean, 5.5));
        assert!(close(s.median, 5.5));
        // numpy.percentile(range(1, 11), [5, 95]) = [1.45, 9.55]
        assert!(close(s.p5, 1.45));
        assert!(close(s.p95, 9.55));
        let half = 2.2621571627982055 * (55.0f64 / 6.0 / 10.0).sqrt();
        assert!((s.ci_lo - (5.5 - half)).abs() < 1e-9);
        assert!((s.ci_hi - (5.5 + half)).abs() < 1e-9);
        assert!((half - 2.165851).abs() < 1e-6);
    }

    #[test]
    fn order_does_not_matter_and_small_n() {
        let a = Stats::of(&[3.0, 1.0, 2.0]).unwrap();
        let b = Stats::of(&[1.0, 2.0, 3.0]).unwrap();
        assert_eq!(a, b);
        assert!(close(a.median, 2.0));
        // sd 1, t(2) = 4.302653, half = t / sqrt(3)
        assert!((a.ci_hi - a.mean - 4.302_652_729_749_464 / 3f64.sqrt()).abs() < 1e-9);
        let one = Stats::of(&[7.0]).unwrap();
        assert_eq!(
            (one.ci_lo, one.ci_hi, one.p5, one.p95),
            (7.0, 7.0, 7.0, 7.0)
        );
        assert!(Stats::of(&[]).is_none());
        assert!(Stats::of(&[f64::NAN]).is_none());
    }

    #[test]
    fn t_quantiles() {
        // scipy.stats.t.ppf(0.975, dof), mpmath to 20 digits
        for (dof, want) in [
            (1, 12.706204736174705),
            (2, 4.302_652_729_749_464),
            (9, 2.2621571627982055),
            (30, 2.042_272_456_301_238),
            (45, 2.0141033888808467),
            (1000, 1.9623390808264085),
        ] {
            assert!(
                (t95(dof) - want).abs() < 1e-9 * want,
                "t95({dof}) = {}",
                t95(dof)
            );
        }
        assert_eq!(t95(0), f64::INFINITY);
    }
}
