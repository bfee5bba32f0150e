//! The typed comparison a claim or a check makes (docs/CLAIMS.md): which runs are
//! compared, by which statistic, over which points, and the test the change must pass
//! (a bound or band, or a trend along an axis); and a claim's published number. Parsed
//! from the plan's keys with the plan (`plan::statement`); judged by `present::judge`.

use crate::plan::AxisValue;
use std::collections::BTreeMap;

/// A bound or band on a change (a fraction for relative statistics: 0.1 = +10%; the
/// metric's unit for "difference of means").
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bound {
    /// The change is below the bound (`expect = "lower"` is `Below(0)`).
    Below(f64),
    /// The change is above the bound (`expect = "higher"` is `Above(0)`).
    Above(f64),
    /// The change lies in `[lo, hi]` (`within = x` is `[-x, x]`): two-sided.
    Between(f64, f64),
}

impl Bound {
    /// Parses an `expect` string: "lower", "higher", "< x", "> x".
    pub fn parse_expect(s: &str) -> Result<Bound, String> {
        let t = s.trim();
        let bound = |rest: &str| {
            rest.trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| format!("`{s}`: `{}` is not a number", rest.trim()))
        };
        match t {
            "lower" => Ok(Bound::Below(0.0)),
            "higher" => Ok(Bound::Above(0.0)),
            _ if t.starts_with('<') => bound(&t[1..]).map(Bound::Below),
            _ if t.starts_with('>') => bound(&t[1..]).map(Bound::Above),
            _ => Err(format!(
                "`{s}`: expected \"lower\", \"higher\", \"< x\" or \"> x\""
            )),
        }
    }

    /// `within = x`: |change| <= x, for x finite and >= 0.
    pub fn within(x: f64) -> Result<Bound, String> {
        if x.is_finite() && x >= 0.0 {
            Ok(Bound::Between(-x, x))
        } else {
            Err(format!("{x} is not a finite number >= 0"))
        }
    }

    /// `between = [lo, hi]`, finite with lo <= hi.
    pub fn between(lo: f64, hi: f64) -> Result<Bound, String> {
        if lo.is_finite() && hi.is_finite() && lo <= hi {
            Ok(Bound::Between(lo, hi))
        } else {
            Err(format!(
                "[{lo}, {hi}] is not a finite interval with lo <= hi"
            ))
        }
    }

    /// Whether one exact value satisfies the bound.
    pub fn satisfied_by(self, x: f64) -> bool {
        match self {
            Bound::Below(b) => x < b,
            Bound::Above(b) => x > b,
            Bound::Between(lo, hi) => (lo..=hi).contains(&x),
        }
    }

    /// Whether an interval of plausible values lies wholly inside the bound
    /// (`Some(true)`), wholly outside it (`Some(false)`), or straddles it (`None`).
    pub fn judge_interval(self, lo: f64, hi: f64) -> Option<bool> {
        let (inside, outside) = match self {
            Bound::Below(b) => (hi < b, lo >= b),
            Bound::Above(b) => (lo > b, hi <= b),
            Bound::Between(a, b) => (a <= lo && hi <= b, hi < a || lo > b),
        };
        if inside {
            Some(true)
        } else if outside {
            Some(false)
        } else {
            None
        }
    }

    /// The bound in words: "< -5%", "in [25%, 50%]", "within ±1%" (relative), or the
    /// same with plain numbers for an absolute statistic.
    pub fn describe(self, relative: bool) -> String {
        let show = |x: f64| {
            if relative {
                format!("{}%", trim_float(x * 100.0))
            } else {
                trim_float(x)
            }
        };
        match self {
            Bound::Below(b) => format!("< {}", show(b)),
            Bound::Above(b) => format!("> {}", show(b)),
            Bound::Between(lo, hi) if lo == -hi => format!("within ±{}", show(hi)),
            Bound::Between(lo, hi) => format!("in [{}, {}]", show(lo), show(hi)),
        }
    }
}

/// A number without float noise: 5 not 5.000000000000001.
pub fn trim_float(x: f64) -> String {
    let s = format!("{x:.6}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// What a statement tests about the change.
#[derive(Clone, Debug, PartialEq)]
pub enum Test {
    /// The change lies on one side of a bound or inside a band (`expect`, `within`,
    /// `between`).
    Bound(Bound),
    /// The change grows (`increasing`) or shrinks along `axis`: the least-squares slope
    /// of the per-point change against the axis value (numeric axes) or the value's
    /// position in the plan (text axes) is above (below) zero.
    Trend { axis: String, increasing: bool },
}

impl Test {
    /// The bound the estimate (the change, or the trend's slope) must satisfy.
    pub fn bound(&self) -> Bound {
        match self {
            Test::Bound(b) => *b,
            Test::Trend { increasing, .. } if *increasing => Bound::Above(0.0),
            Test::Trend { .. } => Bound::Below(0.0),
        }
    }

    /// The test in words for a report.
    pub fn describe(&self, relative: bool) -> String {
        match self {
            Test::Bound(b) => b.describe(relative),
            Test::Trend { axis, increasing } => format!(
                "{} with {axis}",
                if *increasing {
                    "increasing"
                } else {
                    "decreasing"
                }
            ),
        }
    }
}

/// How the change is computed from the runs of a point (or of all points, pooled).
/// `of`, `base` (the `against` runs or the `[expected]` value) and `than` are paired by
/// repetition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Statistic {
    /// mean(of) / mean(base) - 1; two effects: (mean(of) - mean(than)) / mean(base).
    RatioOfMeans,
    /// The mean of the paired changes of / base - 1 (two effects: (of - than) / base).
    MeanOfRatios,
    /// median(of) / median(base) - 1; two effects: (median(of) - median(than)) /
    /// median(base).
    RatioOfMedians,
    /// mean(of) - mean(base) in the metric's unit; two effects: mean(of) - mean(than).
    DifferenceOfMeans,
}

impl Statistic {
    pub const ALL: [Statistic; 4] = [
        Statistic::RatioOfMeans,
        Statistic::MeanOfRatios,
        Statistic::RatioOfMedians,
        Statistic::DifferenceOfMeans,
    ];

    /// The plan's word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            Statistic::RatioOfMeans => "ratio of means",
            Statistic::MeanOfRatios => "mean of ratios",
            Statistic::RatioOfMedians => "ratio of medians",
            Statistic::DifferenceOfMeans => "difference of means",
        }
    }

    pub fn parse(s: &str) -> Result<Statistic, String> {
        Statistic::ALL
            .into_iter()
            .find(|x| x.as_str() == s.trim())
            .ok_or_else(|| {
                let names: Vec<String> = Statistic::ALL
                    .iter()
                    .map(|x| format!("\"{}\"", x.as_str()))
                    .collect();
                format!("`{s}` is not one of {}", names.join(", "))
            })
    }

    /// Whether the change is relative (a fraction) rather than in the metric's unit.
    pub fn is_relative(self) -> bool {
        self != Statistic::DifferenceOfMeans
    }
}

/// Over which points a statement is judged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Aggregate {
    /// Each point of the axes `of` does not name is judged on its own; the statement
    /// holds only where every point does.
    AtEveryPoint,
    /// One estimate over all points, for the reason given (`pooled_because`).
    Pooled { because: String },
}

/// A statement's comparison, parsed and checked.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub metric: String,
    /// The measured points: axis name = value.
    pub of: BTreeMap<String, AxisValue>,
    /// The points compared against (same axes as `of`); empty: the `[expected]` value.
    pub against: BTreeMap<String, AxisValue>,
    /// The second effect of a difference of two effects (same axes as `of`).
    pub than: BTreeMap<String, AxisValue>,
    pub test: Test,
    pub statistic: Statistic,
    pub aggregate: Aggregate,
    /// Pairs a point needs before a non-deterministic estimate is judged.
    pub min_pairs: Option<usize>,
    /// Points with one pair each are exact (a `[[findings]]` entry of a plan that ran
    /// one repetition, as findings were judged before `deterministic` existed).
    pub single_runs_exact: bool,
}

/// A number a source publishes for a claim.
#[derive(Clone, Debug, PartialEq)]
pub enum Published {
    /// A change, as the statistic computes it.
    Change(f64),
    /// A range of changes ("25-50%").
    Between(f64, f64),
    /// A value of the metric at the `of` points, in `unit`.
    Value { value: f64, unit: String },
}

/// The project's default tolerance of a claim's published number (docs/CLAIMS.md).
pub const DEFAULT_TOLERANCE_SHARE: f64 = 0.25;
/// The floor of the default tolerance on a change (2 percentage points).
pub const DEFAULT_TOLERANCE_FLOOR: f64 = 0.02;

impl Published {
    /// The project default tolerance: 0.25 x |published change|, at least 0.02; for a
    /// band (already the source's spread), the floor 0.02; for a value, 0.25 x |value|
    /// in its unit (no floor: units differ; `None` for a value of 0, which needs an
    /// explicit tolerance).
    pub fn default_tolerance(&self) -> Option<f64> {
        match self {
            Published::Change(c) => {
                Some((DEFAULT_TOLERANCE_SHARE * c.abs()).max(DEFAULT_TOLERANCE_FLOOR))
            }
            Published::Between(..) => Some(DEFAULT_TOLERANCE_FLOOR),
            Published::Value { value, .. } if *value != 0.0 => {
                Some(DEFAULT_TOLERANCE_SHARE * value.abs())
            }
            Published::Value { .. } => None,
        }
    }

    /// How far `ours` (a change, or a value for [`Published::Value`]) lies from the
    /// published number: 0 inside a band.
    pub fn distance(&self, ours: f64) -> f64 {
        match self {
            Published::Change(c) => (ours - c).abs(),
            Published::Value { value, .. } => (ours - value).abs(),
            Published::Between(lo, hi) => (lo - ours).max(ours - hi).max(0.0),
        }
    }

    /// Whether the number is a value of the metric rather than a change.
    pub fn is_value(&self) -> bool {
        matches!(self, Published::Value { .. })
    }

    /// The number as a report shows it (changes as percentages for a relative
    /// statistic).
    pub fn describe(&self, relative: bool) -> String {
        let show = |x: f64| {
            if relative {
                format!("{:+.1}%", x * 100.0)
            } else {
                trim_float(x)
            }
        };
        match self {
            Published::Change(c) => show(*c),
            Published::Between(lo, hi) => format!("{} to {}", show(*lo), show(*hi)),
            Published::Value { value, unit } => format!("{} {unit}", trim_float(*value))
                .trim_end()
                .to_string(),
        }
    }

    /// A tolerance as a report shows it, in the published number's terms.
    pub fn describe_tolerance(&self, tol: f64, relative: bool) -> String {
        match self {
            Published::Value { unit, .. } => format!("±{} {unit}", trim_float(tol))
                .trim_end()
                .to_string(),
            _ if relative => format!("±{} points", trim_float(tol * 100.0)),
            _ => format!("±{}", trim_float(tol)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_parse_and_judge_intervals() {
        assert_eq!(Bound::parse_expect("lower"), Ok(Bound::Below(0.0)));
        assert_eq!(Bound::parse_expect(" > -0.5 "), Ok(Bound::Above(-0.5)));
        assert!(Bound::parse_expect("< x").is_err());
        assert!(Bound::parse_expect("smaller").is_err());
        assert!(Bound::within(-1.0).is_err() && Bound::between(2.0, 1.0).is_err());
        let lower = Bound::Below(0.0);
        assert_eq!(lower.judge_interval(-0.2, -0.1), Some(true));
        assert_eq!(lower.judge_interval(0.0, 0.1), Some(false));
        assert_eq!(lower.judge_interval(-0.1, 0.1), None);
        // A band is two-sided: 50% higher is outside "within 1%" though above -1%.
        let same = Bound::within(0.01).unwrap();
        assert_eq!(same.judge_interval(0.49, 0.51), Some(false));
        assert_eq!(same.judge_interval(-0.51, -0.49), Some(false));
        assert_eq!(same.judge_interval(-0.005, 0.005), Some(true));
        assert_eq!(same.judge_interval(0.005, 0.02), None);
        assert!(!same.satisfied_by(0.5) && !same.satisfied_by(-0.5));
        assert_eq!(same.describe(true), "within ±1%");
        assert_eq!(Bound::Below(-0.05).describe(true), "< -5%");
        assert_eq!(Bound::Above(3.0).describe(false), "> 3");
    }

    #[test]
    fn statistics_round_trip_their_names() {
        for s in Statistic::ALL {
            assert_eq!(Statistic::parse(s.as_str()), Ok(s));
        }
        let e = Statistic::parse("mean").unwrap_err();
        assert!(e.contains("\"ratio of means\""), "{e}");
    }

    #[test]
    fn default_tolerances() {
        assert_eq!(Published::Change(-0.18).default_tolerance(), Some(0.045));
        assert_eq!(Published::Change(-0.013).default_tolerance(), Some(0.02));
        assert_eq!(
            Published::Between(0.25, 0.5).default_tolerance(),
            Some(0.02)
        );
        let v = Published::Value {
            value: 0.4,
            unit: "s".into(),
        };
        assert_eq!(v.default_tolerance(), Some(0.1));
        let zero = Published::Value {
            value: 0.0,
            unit: "s".into(),
        };
        assert_eq!(zero.default_tolerance(), None);
        assert_eq!(Published::Between(0.25, 0.5).distance(0.3), 0.0);
        assert!((Published::Between(0.25, 0.5).distance(0.52) - 0.02).abs() < 1e-12);
        assert!((Published::Change(-0.15).distance(0.04) - 0.19).abs() < 1e-12);
        assert_eq!(v.describe(true), "0.4 s");
        assert_eq!(v.describe_tolerance(0.1, true), "±0.1 s");
        assert_eq!(Published::Change(-0.15).describe(true), "-15.0%");
    }
}
