//! How a statement's numbers read in reports, CSV files and the index: a change as a
//! signed percentage (relative statistics) or a number in the metric's unit, its
//! interval or "deterministic", a trend's slope, and one "ours" text per statement.

use crate::plan::comparison::{Aggregate, Comparison, Test};
use crate::present::doc::fmt_num;
use crate::present::estimate::Estimate;
use crate::present::statements::Judged;

/// A change: "+4.0%" for a relative statistic, else the number ("-12.30").
pub fn change(x: f64, relative: bool) -> String {
    if relative {
        format!("{:+.1}%", x * 100.0)
    } else {
        fmt_num(x)
    }
}

/// The estimate's value as a report shows it (a trend's slope per unit of its axis).
fn value(x: f64, cmp: &Comparison) -> String {
    let relative = cmp.statistic.is_relative();
    match &cmp.test {
        Test::Trend { axis, .. } if relative => {
            format!("slope {} points per unit of {axis}", signed(x * 100.0))
        }
        Test::Trend { axis, .. } => format!("slope {} per unit of {axis}", signed(x)),
        Test::Bound(_) => change(x, relative),
    }
}

fn signed(x: f64) -> String {
    let s = fmt_num(x);
    if x > 0.0 {
        format!("+{s}")
    } else {
        s
    }
}

/// "+4.0% [+1.0%, +7.0%]", "+4.0% (deterministic)", "+4.0% (no interval)".
pub fn estimate(e: &Estimate, cmp: &Comparison) -> String {
    let relative = cmp.statistic.is_relative();
    let bounds = |x: f64| match &cmp.test {
        Test::Trend { .. } if relative => signed(x * 100.0),
        Test::Trend { .. } => signed(x),
        Test::Bound(_) => change(x, relative),
    };
    let v = value(e.value, cmp);
    if e.is_exact() {
        return format!("{v} (deterministic)");
    }
    match e.ci {
        Some((lo, hi)) => format!("{v} [{}, {}]", bounds(lo), bounds(hi)),
        None => format!("{v} (no interval)"),
    }
}

/// One text for a statement's result: its single estimate, or the range of its
/// points' estimates ("-12.3% to -8.1% at 4 points"); "–" without any.
pub fn ours(j: &Judged) -> String {
    let Some(cmp) = &j.comparison else {
        return "–".into();
    };
    let estimates: Vec<&Estimate> = j
        .points
        .iter()
        .filter_map(|p| p.estimate.as_ref())
        .collect();
    match estimates.as_slice() {
        [] => "–".into(),
        [e] if j.points.len() == 1 => estimate(e, cmp),
        many => {
            let lo = many.iter().map(|e| e.value).fold(f64::INFINITY, f64::min);
            let hi = many
                .iter()
                .map(|e| e.value)
                .fold(f64::NEG_INFINITY, f64::max);
            let exact = if many.iter().all(|e| e.is_exact()) {
                ", deterministic"
            } else {
                ""
            };
            if lo == hi {
                format!("{} at {} points{exact}", value(lo, cmp), j.points.len())
            } else {
                format!(
                    "{} to {} at {} points{exact}",
                    value(lo, cmp),
                    value(hi, cmp),
                    j.points.len()
                )
            }
        }
    }
}

/// The aggregation in words: "at every point" or "pooled (reason)".
pub fn aggregate(cmp: &Comparison) -> String {
    match &cmp.aggregate {
        Aggregate::AtEveryPoint => "at every point".into(),
        Aggregate::Pooled { because } => format!("pooled ({because})"),
    }
}

/// "ratio of means, at every point" or "mean of ratios, pooled (reason)".
pub fn how(cmp: &Comparison) -> String {
    format!("{}, {}", cmp.statistic.as_str(), aggregate(cmp))
}
