//! The change a statement measures at a point, with a 95% interval that is honest for
//! its statistic (docs/CLAIMS.md):
//!
//! - "mean of ratios" and "difference of means" are means of per-pair values (the
//!   relative changes, the differences): Student's t interval on those values, exact
//!   for normal pair values and robust to the pairing (the pair carries the seed).
//! - "ratio of means": Fieller's interval for a ratio of two correlated means (the
//!   set of ratios R whose paired residual of - R x base has a mean t-compatible with
//!   zero). It keeps the correlation the pairing brings, is exact under normality, and
//!   says "no interval" when the denominator's mean is not clearly away from zero,
//!   where a delta-method interval would be finite and wrong.
//! - "ratio of medians": no closed form; a percentile bootstrap over the pairs
//!   ([`BOOTSTRAP_DRAWS`] draws from a fixed seed, so the same runs give the same
//!   bytes). A percentile bootstrap is narrow at few pairs: plans that state medians
//!   run at least 10 repetitions (the replication rule) and `min_pairs` still applies.
//! - A trend's slope (least squares of the per-point change against the trend axis):
//!   a bootstrap over repetitions, each draw resampling whole repetitions across the
//!   trend's points (with common random numbers a repetition is one seed at every
//!   point), for every statistic.
//!
//! A point whose pairs are exact (deterministic: identical repetitions, or the one run
//! of a deterministic plan) has one value and no interval. The t quantiles come from
//! [`t95`] (statrs's Student-t inverse CDF). Pure functions.

use crate::plan::comparison::Statistic;
use crate::present::samples::{Cell, Pair};
use crate::run::stats::{percentile, t95};
use std::collections::BTreeMap;

/// Draws of every bootstrap.
pub const BOOTSTRAP_DRAWS: usize = 2000;
/// The bootstrap's fixed seed.
const BOOTSTRAP_SEED: u64 = 0x9e37_79b9_7f4a_7c15;

/// How an estimate's interval was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interval {
    /// Exact: a deterministic comparison has one value.
    Deterministic,
    /// Student's t over per-pair values.
    StudentT,
    /// Fieller's interval for a ratio of means.
    Fieller,
    /// Percentile bootstrap from a fixed seed.
    Bootstrap,
}

impl Interval {
    pub fn as_str(self) -> &'static str {
        match self {
            Interval::Deterministic => "deterministic",
            Interval::StudentT => "t interval",
            Interval::Fieller => "Fieller interval",
            Interval::Bootstrap => "bootstrap",
        }
    }
}

/// A change (or a trend's slope) with its 95% interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    pub value: f64,
    /// `None` when exact, or when no finite interval exists (too few pairs, a ratio
    /// whose denominator is not clearly away from zero).
    pub ci: Option<(f64, f64)>,
    pub interval: Interval,
    /// Pairs (repetitions, for a trend) behind the estimate.
    pub n: usize,
}

impl Estimate {
    pub fn is_exact(&self) -> bool {
        self.interval == Interval::Deterministic
    }
}

fn mean(v: impl Iterator<Item = f64>) -> Option<f64> {
    let (s, n) = v.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    (n > 0).then(|| s / n as f64)
}

fn median(v: impl Iterator<Item = f64>) -> Option<f64> {
    let mut v: Vec<f64> = v.collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(percentile(&v, 0.5))
}

/// The point value of `stat` over pairs; `None` without pairs or with a zero
/// denominator.
pub fn value(stat: Statistic, pairs: &[Pair]) -> Option<f64> {
    let of = || pairs.iter().map(|p| p.of);
    let base = || pairs.iter().map(|p| p.base);
    let than = || pairs.iter().filter_map(|p| p.than);
    let two = pairs.first()?.than.is_some();
    let ratio = |num: f64, den: f64, than: f64| (den != 0.0).then(|| (num - than) / den);
    let v = match stat {
        Statistic::RatioOfMeans => {
            let b = mean(base())?;
            let t = if two { mean(than())? } else { b };
            ratio(mean(of())?, b, t)
        }
        Statistic::RatioOfMedians => {
            let b = median(base())?;
            let t = if two { median(than())? } else { b };
            ratio(median(of())?, b, t)
        }
        Statistic::MeanOfRatios => {
            let changes: Option<Vec<f64>> = pairs.iter().map(pair_change).collect();
            mean(changes?.into_iter())
        }
        Statistic::DifferenceOfMeans => {
            let other = if two { mean(than())? } else { mean(base())? };
            Some(mean(of())? - other)
        }
    }?;
    v.is_finite().then_some(v)
}

/// One pair's relative change: of / base - 1, or (of - than) / base.
fn pair_change(p: &Pair) -> Option<f64> {
    (p.base != 0.0).then(|| (p.of - p.than.unwrap_or(p.base)) / p.base)
}

/// The value of the metric at the `of` points the statistic looks at: the median for
/// "ratio of medians", else the mean (what a published value is compared with).
pub fn of_value(stat: Statistic, pairs: &[Pair]) -> Option<f64> {
    let of = pairs.iter().map(|p| p.of);
    match stat {
        Statistic::RatioOfMedians => median(of),
        _ => mean(of),
    }
}

/// Student's t interval of the mean of `v` (n >= 2).
fn t_interval(v: &[f64]) -> Option<(f64, f64)> {
    let n = v.len();
    if n < 2 {
        return None;
    }
    let m = mean(v.iter().copied())?;
    let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1) as f64;
    let half = t95(n - 1) * (var / n as f64).sqrt();
    Some((m - half, m + half))
}

/// Fieller's 95% interval for mean(x) / mean(y) over paired (x, y), minus `shift`;
/// `None` when the interval is unbounded (mean(y) not clearly away from zero).
fn fieller(xy: &[(f64, f64)], shift: f64) -> Option<(f64, f64)> {
    let n = xy.len();
    if n < 2 {
        return None;
    }
    let nf = n as f64;
    let mx = xy.iter().map(|p| p.0).sum::<f64>() / nf;
    let my = xy.iter().map(|p| p.1).sum::<f64>() / nf;
    let cov = |f: &dyn Fn(&(f64, f64)) -> f64| xy.iter().map(f).sum::<f64>() / (nf - 1.0);
    let sxx = cov(&|p| (p.0 - mx) * (p.0 - mx));
    let syy = cov(&|p| (p.1 - my) * (p.1 - my));
    let sxy = cov(&|p| (p.0 - mx) * (p.1 - my));
    let q = t95(n - 1).powi(2) / nf;
    // (mx - R my)^2 <= q (sxx - 2 R sxy + R^2 syy)  <=>  a R^2 + b R + c <= 0.
    let a = my * my - q * syy;
    let b = -2.0 * (mx * my - q * sxy);
    let c = mx * mx - q * sxx;
    if a <= 0.0 {
        return None;
    }
    let root = (b * b - 4.0 * a * c).max(0.0).sqrt();
    let (lo, hi) = ((-b - root) / (2.0 * a), (-b + root) / (2.0 * a));
    (lo.is_finite() && hi.is_finite()).then_some((lo - shift, hi - shift))
}

/// A small deterministic generator (SplitMix64) for the bootstrap.
struct SplitMix(u64);

impl SplitMix {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        ((z as u128 * n as u128) >> 64) as usize
    }
}

/// The 95% percentile interval of `f` over [`BOOTSTRAP_DRAWS`] resamples (with
/// replacement) of `n` units; `None` when more than 2.5% of the draws give no value.
fn bootstrap(n: usize, f: impl Fn(&[usize]) -> Option<f64>) -> Option<(f64, f64)> {
    if n < 2 {
        return None;
    }
    let mut rng = SplitMix(BOOTSTRAP_SEED);
    let mut draw = vec![0; n];
    let mut values = Vec::with_capacity(BOOTSTRAP_DRAWS);
    for _ in 0..BOOTSTRAP_DRAWS {
        for d in draw.iter_mut() {
            *d = rng.below(n);
        }
        if let Some(v) = f(&draw).filter(|v| v.is_finite()) {
            values.push(v);
        }
    }
    if values.len() * 40 < BOOTSTRAP_DRAWS * 39 {
        return None;
    }
    values.sort_by(f64::total_cmp);
    Some((percentile(&values, 0.025), percentile(&values, 0.975)))
}

/// The change over one cell's pairs, exact or with its interval; `None` without a
/// value.
pub fn estimate(stat: Statistic, cell: &Cell) -> Option<Estimate> {
    let pairs = &cell.pairs;
    let value = value(stat, pairs)?;
    let n = pairs.len();
    if cell.exact {
        return Some(Estimate {
            value,
            ci: None,
            interval: Interval::Deterministic,
            n,
        });
    }
    let two = pairs[0].than.is_some();
    let (ci, interval) = match stat {
        Statistic::MeanOfRatios => {
            let v: Option<Vec<f64>> = pairs.iter().map(pair_change).collect();
            (v.and_then(|v| t_interval(&v)), Interval::StudentT)
        }
        Statistic::DifferenceOfMeans => {
            let v: Vec<f64> = pairs
                .iter()
                .map(|p| p.of - p.than.unwrap_or(p.base))
                .collect();
            (t_interval(&v), Interval::StudentT)
        }
        Statistic::RatioOfMeans => {
            let xy: Vec<(f64, f64)> = pairs
                .iter()
                .map(|p| (p.of - p.than.map_or(0.0, |t| t), p.base))
                .collect();
            (fieller(&xy, if two { 0.0 } else { 1.0 }), Interval::Fieller)
        }
        Statistic::RatioOfMedians => {
            let ci = bootstrap(n, |idx| {
                let drawn: Vec<Pair> = idx.iter().map(|&i| pairs[i]).collect();
                self::value(stat, &drawn)
            });
            (ci, Interval::Bootstrap)
        }
    };
    Some(Estimate {
        value,
        ci,
        interval,
        n,
    })
}

/// The least-squares slope of `ys` against `xs` (at least two distinct x).
fn slope(xs: &[f64], ys: &[f64]) -> Option<f64> {
    let mx = mean(xs.iter().copied())?;
    let my = mean(ys.iter().copied())?;
    let sxx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
    let sxy: f64 = xs.iter().zip(ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

/// The trend of the change along a group's cells: the least-squares slope of the
/// per-cell value against the cell's x, exact when every cell is, else with a
/// bootstrap over repetitions (see the module docs). `n` is the repetitions present
/// at every cell.
pub fn trend(stat: Statistic, cells: &[Cell]) -> Option<Estimate> {
    let xs: Vec<f64> = cells.iter().map(|c| c.x).collect::<Option<_>>()?;
    let values: Vec<f64> = cells
        .iter()
        .map(|c| value(stat, &c.pairs))
        .collect::<Option<_>>()?;
    let s = slope(&xs, &values)?;
    // Each cell's pairs by repetition; the repetitions every cell has.
    let by_rep: Vec<BTreeMap<usize, Vec<Pair>>> = cells
        .iter()
        .map(|c| {
            let mut m: BTreeMap<usize, Vec<Pair>> = BTreeMap::new();
            for p in &c.pairs {
                m.entry(p.rep).or_default().push(*p);
            }
            m
        })
        .collect();
    let reps: Vec<usize> = by_rep[0]
        .keys()
        .copied()
        .filter(|r| by_rep.iter().all(|m| m.contains_key(r)))
        .collect();
    if cells.iter().all(|c| c.exact) {
        return Some(Estimate {
            value: s,
            ci: None,
            interval: Interval::Deterministic,
            n: reps.len(),
        });
    }
    let ci = bootstrap(reps.len(), |idx| {
        let ys: Option<Vec<f64>> = by_rep
            .iter()
            .map(|m| {
                let drawn: Vec<Pair> = idx
                    .iter()
                    .flat_map(|&i| m[&reps[i]].iter().copied())
                    .collect();
                value(stat, &drawn)
            })
            .collect();
        slope(&xs, &ys?)
    });
    Some(Estimate {
        value: s,
        ci,
        interval: Interval::Bootstrap,
        n: reps.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(of: &[f64], base: &[f64]) -> Vec<Pair> {
        of.iter()
            .zip(base)
            .enumerate()
            .map(|(rep, (&of, &base))| Pair {
                rep,
                of,
                base,
                than: None,
            })
            .collect()
    }

    fn cell(of: &[f64], base: &[f64], exact: bool) -> Cell {
        Cell {
            x: None,
            x_label: String::new(),
            pairs: pairs(of, base),
            exact,
            identical_repetitions: false,
        }
    }

    #[test]
    fn the_statistics_differ_as_they_should() {
        // The seed's India page: the ratio of means and the mean of ratios disagree.
        let p = pairs(&[1.0, 9.0], &[2.0, 4.0]);
        // (1 + 9) / (2 + 4) - 1 = +66.7%; mean(1/2, 9/4) - 1 = +37.5%.
        assert!((value(Statistic::RatioOfMeans, &p).unwrap() - 2.0 / 3.0).abs() < 1e-12);
        assert!((value(Statistic::MeanOfRatios, &p).unwrap() - 0.375).abs() < 1e-12);
        assert!((value(Statistic::DifferenceOfMeans, &p).unwrap() - 2.0).abs() < 1e-12);
        let p = pairs(&[1.0, 2.0, 30.0], &[2.0, 2.0, 2.0]);
        assert!((value(Statistic::RatioOfMedians, &p).unwrap() - 0.0).abs() < 1e-12);
        assert_eq!(value(Statistic::RatioOfMeans, &pairs(&[1.0], &[0.0])), None);
    }

    #[test]
    fn two_effects_subtract_the_second() {
        let p = vec![Pair {
            rep: 0,
            of: 90.0,
            base: 100.0,
            than: Some(99.0),
        }];
        assert!((value(Statistic::RatioOfMeans, &p).unwrap() - -0.09).abs() < 1e-12);
        assert!((value(Statistic::MeanOfRatios, &p).unwrap() - -0.09).abs() < 1e-12);
        assert!((value(Statistic::DifferenceOfMeans, &p).unwrap() - -9.0).abs() < 1e-12);
    }

    #[test]
    fn an_exact_cell_has_no_interval() {
        let e = estimate(
            Statistic::RatioOfMeans,
            &cell(&[3.0, 3.0], &[2.0, 2.0], true),
        )
        .unwrap();
        assert_eq!((e.ci, e.interval), (None, Interval::Deterministic));
        assert!((e.value - 0.5).abs() < 1e-12);
    }

    #[test]
    fn fieller_matches_the_t_interval_against_a_constant() {
        // Against a constant base, Fieller's interval is mean(x)/b - 1 +- t s / (sqrt(n) b).
        let of = [1.0, 2.0, 3.0, 2.0];
        let e = estimate(Statistic::RatioOfMeans, &cell(&of, &[2.0; 4], false)).unwrap();
        // t(3) at 0.975 = 3.1824463
        let half = 3.1824463052837096 * (2.0f64 / 3.0).sqrt() / 2.0 / 2.0;
        let (lo, hi) = e.ci.unwrap();
        assert!(
            (lo - (0.0 - half)).abs() < 1e-9 && (hi - half).abs() < 1e-9,
            "{lo} {hi}"
        );
        assert_eq!(e.interval, Interval::Fieller);
        // A denominator straddling zero has no finite interval.
        let e = estimate(
            Statistic::RatioOfMeans,
            &cell(&[1.0, 1.1, 0.9], &[1.0, -1.0, 0.5], false),
        )
        .unwrap();
        assert_eq!(e.ci, None);
    }

    #[test]
    fn fieller_uses_the_pairing() {
        // of = 0.9 x base exactly, with bases that vary a lot: paired, the ratio is sure.
        let base = [100.0, 50.0, 200.0, 80.0, 120.0];
        let of: Vec<f64> = base.iter().map(|b| 0.9 * b + 0.01).collect();
        let e = estimate(Statistic::RatioOfMeans, &cell(&of, &base, false)).unwrap();
        let (lo, hi) = e.ci.unwrap();
        assert!(lo > -0.11 && hi < -0.09, "{lo} {hi}");
    }

    #[test]
    fn the_bootstrap_is_deterministic() {
        let c = cell(&[1.0, 1.2, 0.9, 1.1, 1.05, 0.95], &[1.0; 6], false);
        let a = estimate(Statistic::RatioOfMedians, &c).unwrap();
        let b = estimate(Statistic::RatioOfMedians, &c).unwrap();
        assert_eq!(a, b);
        let (lo, hi) = a.ci.unwrap();
        assert!(
            lo < a.value && a.value < hi && lo >= -0.1 && hi <= 0.2,
            "{lo} {hi}"
        );
    }

    #[test]
    fn trend_slope_and_interval() {
        // The change grows by 0.1 per unit of x, with noise that the repetitions share.
        let noise = [0.01, -0.02, 0.0, 0.015, -0.01, 0.005];
        let cells: Vec<Cell> = (0..3)
            .map(|k| {
                let x = k as f64;
                let of: Vec<f64> = noise.iter().map(|n| 1.0 + 0.1 * x + n).collect();
                Cell {
                    x: Some(x),
                    ..cell(&of, &[1.0; 6], false)
                }
            })
            .collect();
        let e = trend(Statistic::MeanOfRatios, &cells).unwrap();
        assert!((e.value - 0.1).abs() < 1e-12);
        let (lo, hi) = e.ci.unwrap();
        assert!(lo > 0.0 && hi < 0.2, "{lo} {hi}");
        assert_eq!((e.n, e.interval), (6, Interval::Bootstrap));
        // Exact cells: an exact slope.
        let exact: Vec<Cell> = cells
            .iter()
            .map(|c| Cell {
                exact: true,
                ..c.clone()
            })
            .collect();
        assert!(trend(Statistic::MeanOfRatios, &exact).unwrap().is_exact());
        // One x value: no slope.
        assert_eq!(trend(Statistic::MeanOfRatios, &cells[..1]), None);
    }
}
