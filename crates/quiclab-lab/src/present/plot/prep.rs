//! Turns a [`Figure`] into clean drawable layers and axis ranges, before any backend is
//! involved: all filtering of non-finite values and all range arithmetic lives here, so
//! the PNG and SVG drawings cannot disagree and bad data cannot reach plotters.

use super::{Chart, Curve, Figure, Point, Scale, Series, Style};

/// One axis: its scale and the (padded) value range, plus category names for bar charts.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct AxisSpec {
    pub log: bool,
    pub lo: f64,
    pub hi: f64,
    /// Bar charts: category `i` sits at x = i.
    pub categories: Option<Vec<String>>,
}

/// What one legend entry stands for, and how to draw it.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum LayerKind {
    /// Measured points: markers, optional joining lines (`runs` is empty for scatter
    /// plots) and error bars `(x, lo, hi)`.
    Measured {
        runs: Vec<Vec<(f64, f64)>>,
        points: Vec<(f64, f64)>,
        errs: Vec<(f64, f64, f64)>,
    },
    /// An analytic curve: dashed lines, no markers. Runs break where values were skipped.
    Curve { runs: Vec<Vec<(f64, f64)>> },
    /// An empirical CDF as a step path.
    Step { path: Vec<(f64, f64)> },
    /// Bars `(x0, x1, y0, y1)` with error bars `(x, lo, hi)`.
    Bars {
        rects: Vec<(f64, f64, f64, f64)>,
        errs: Vec<(f64, f64, f64)>,
    },
}

/// A named, coloured layer (one legend entry).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Layer {
    pub name: String,
    /// Index into the palette.
    pub colour: usize,
    pub kind: LayerKind,
}

/// A figure ready to draw.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Prepared {
    pub x: AxisSpec,
    pub y: AxisSpec,
    pub layers: Vec<Layer>,
}

/// Relative margin added around the data on each side.
const MARGIN: f64 = 0.05;

/// Log axes only take values within this many decades of 1: plotters' log tick
/// generation loops (practically) forever when hi/lo overflows to infinity or a tick
/// underflows to 0, so the whole axis must span well under 308 decades.
const LOG_LIMIT: f64 = 100.0;
/// The smallest linear axis span drawn; plotters' tick arithmetic breaks down below.
const MIN_SPAN: f64 = 1e-250;

/// Whether `v` can be placed on an axis with this scale.
fn ok(v: f64, log: bool) -> bool {
    v.is_finite() && (!log || (v > 0.0 && v.log10().abs() <= LOG_LIMIT))
}

/// Splits a sequence into runs of drawable points (a skipped value breaks a line rather
/// than bridging the gap).
fn runs(points: impl Iterator<Item = (f64, f64)>, xlog: bool, ylog: bool) -> Vec<Vec<(f64, f64)>> {
    let mut out = vec![];
    let mut cur = vec![];
    for (x, y) in points {
        if ok(x, xlog) && ok(y, ylog) {
            cur.push((x, y));
        } else if !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The colour of analytic curve `j`: that of the series with the same name, or whose name
/// is the longest prefix of the curve's name at a word boundary ("NewReno" pairs with
/// "NewReno (model)"); otherwise that of series `j`, so series i and curve i pair up.
pub(super) fn curve_colour(curve: &str, series: &[&str], j: usize) -> usize {
    series
        .iter()
        .enumerate()
        .filter(|(_, s)| {
            !s.is_empty()
                && curve.starts_with(**s)
                && curve[s.len()..]
                    .chars()
                    .next()
                    .is_none_or(|c| !c.is_alphanumeric())
        })
        .max_by_key(|(i, s)| (s.len(), usize::MAX - i))
        .map_or(j, |(i, _)| i)
}

/// Padded range of `values` (already filtered for the scale). `from_zero` anchors a
/// linear axis at 0 when every value is non-negative.
fn range(values: &[f64], log: bool, from_zero: bool) -> Result<(f64, f64), String> {
    let (mut lo, mut hi) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    if lo > hi {
        return Err("nothing to draw: no finite values".into());
    }
    if log {
        let (l, h) = (lo.log10(), hi.log10());
        let (l, h) = pad(l, h, 0.5);
        let limit = LOG_LIMIT + 5.0;
        let (lo, hi) = (10f64.powf(l.max(-limit)), 10f64.powf(h.min(limit)));
        return if lo > 0.0 && hi.is_finite() && lo < hi {
            Ok((lo, hi))
        } else {
            Err(format!("log range {lo}..{hi} not representable"))
        };
    }
    if from_zero && lo >= 0.0 {
        lo = 0.0;
        hi = if hi > 0.0 { hi * (1.0 + MARGIN) } else { 1.0 };
    } else {
        // A single value: +-10% of it, or +-1 when that is zero or subnormal.
        let tenth = lo.abs().max(hi.abs()) * 0.1;
        let degenerate = if tenth > MIN_SPAN { tenth } else { 1.0 };
        (lo, hi) = pad(lo, hi, degenerate);
    }
    if lo.is_finite() && hi.is_finite() && (hi - lo).is_finite() && hi - lo >= MIN_SPAN {
        Ok((lo, hi))
    } else {
        Err(format!(
            "range {lo:e}..{hi:e} too wide or too narrow to draw"
        ))
    }
}

/// Adds the relative margin, or `degenerate` on each side when the span is (nearly) zero.
fn pad(lo: f64, hi: f64, degenerate: f64) -> (f64, f64) {
    let span = hi - lo;
    if span <= lo.abs().max(hi.abs()) * 1e-9 {
        (lo - degenerate, hi + degenerate)
    } else {
        (lo - span * MARGIN, hi + span * MARGIN)
    }
}

fn axis(values: &[f64], log: bool, from_zero: bool) -> Result<AxisSpec, String> {
    let (lo, hi) = range(values, log, from_zero)?;
    Ok(AxisSpec {
        log,
        lo,
        hi,
        categories: None,
    })
}

/// Cleans `fig` into layers and computes the axes; `Err` when nothing is drawable.
pub(super) fn prepare(fig: &Figure) -> Result<Prepared, String> {
    let xlog = fig.x_scale == Scale::Log;
    let ylog = fig.y_scale == Scale::Log;
    match &fig.chart {
        Chart::XY { series, curves } => prepare_xy(series, curves, xlog, ylog),
        Chart::Cdf { samples } => prepare_cdf(samples, xlog),
        Chart::Bars {
            categories,
            groups,
            values,
        } => prepare_bars(categories, groups, values, ylog),
    }
}

/// Measured series (points, lines, error bars) and analytic curves.
fn prepare_xy(
    series: &[Series],
    curves: &[Curve],
    xlog: bool,
    ylog: bool,
) -> Result<Prepared, String> {
    let mut layers = vec![];
    let (mut xs, mut ys) = (vec![], vec![]);
    for (i, s) in series.iter().enumerate() {
        let mut points = vec![];
        let mut errs = vec![];
        for p in &s.points {
            if !(ok(p.x, xlog) && ok(p.y, ylog)) {
                continue;
            }
            points.push((p.x, p.y));
            xs.push(p.x);
            ys.push(p.y);
            if let Some((a, b)) = p.err.filter(|(a, b)| a.is_finite() && b.is_finite()) {
                // Bars always enclose the point, whatever order lo/hi came in.
                let (lo, hi) = (a.min(b).min(p.y), a.max(b).max(p.y));
                ys.extend([lo, hi].into_iter().filter(|&v| ok(v, ylog)));
                errs.push((p.x, lo, hi));
            }
        }
        let line = match s.style {
            Style::Lines => runs(s.points.iter().map(|p| (p.x, p.y)), xlog, ylog),
            Style::Scatter => vec![],
        };
        if !points.is_empty() {
            let kind = LayerKind::Measured {
                runs: line,
                points,
                errs,
            };
            layers.push(Layer {
                name: s.name.clone(),
                colour: i,
                kind,
            });
        }
    }
    let names: Vec<&str> = series.iter().map(|s| s.name.as_str()).collect();
    for (j, c) in curves.iter().enumerate() {
        let runs = runs(c.points.iter().copied(), xlog, ylog);
        if runs.is_empty() {
            continue;
        }
        for &(x, y) in runs.iter().flatten() {
            xs.push(x);
            ys.push(y);
        }
        layers.push(Layer {
            name: c.name.clone(),
            colour: curve_colour(&c.name, &names, j),
            kind: LayerKind::Curve { runs },
        });
    }
    let x = axis(&xs, xlog, false)?;
    let y = axis(&ys, ylog, true)?;
    Ok(Prepared { x, y, layers })
}

/// One step path per sample set; y spans [0, 1].
fn prepare_cdf(samples: &[(String, Vec<f64>)], xlog: bool) -> Result<Prepared, String> {
    let mut layers = vec![];
    let mut xs = vec![];
    let mut sorted = vec![];
    for (i, (name, v)) in samples.iter().enumerate() {
        let mut v: Vec<f64> = v.iter().copied().filter(|&s| ok(s, xlog)).collect();
        if v.is_empty() {
            continue;
        }
        v.sort_by(f64::total_cmp);
        xs.extend([v[0], v[v.len() - 1]]);
        sorted.push((i, name, v));
    }
    let x = axis(&xs, xlog, false)?;
    for (i, name, v) in sorted {
        layers.push(Layer {
            name: name.clone(),
            colour: i,
            kind: LayerKind::Step {
                path: step_path(&v, x.lo, x.hi),
            },
        });
    }
    // Slightly beyond [0, 1] so the flat ends are not hidden by the axes.
    let y = AxisSpec {
        log: false,
        lo: -0.03,
        hi: 1.03,
        categories: None,
    };
    Ok(Prepared { x, y, layers })
}

/// Grouped bars from 0 (or the axis bottom on a log scale), with error bars.
fn prepare_bars(
    categories: &[String],
    groups: &[String],
    values: &[Vec<Point>],
    ylog: bool,
) -> Result<Prepared, String> {
    let mut layers = vec![];
    let mut ys = vec![];
    let ncat = values
        .iter()
        .map(Vec::len)
        .max()
        .unwrap_or(0)
        .max(categories.len());
    let ngroups = values.len();
    for row in values {
        for p in row {
            if ok(p.y, ylog) {
                ys.push(p.y);
                if let Some((a, b)) = p.err {
                    ys.extend([a, b].into_iter().filter(|&v| ok(v, ylog)));
                }
            }
        }
    }
    if ys.is_empty() {
        return Err("nothing to draw: no finite bar values".into());
    }
    if !ylog {
        ys.push(0.0); // bars grow from 0, negative ones downwards
    }
    let y = axis(&ys, ylog, true)?;
    let base = if ylog { y.lo } else { 0.0 };
    // Groups share 80% of a category's width, leaving a gap between categories.
    let w = 0.8 / ngroups as f64;
    for (g, row) in values.iter().enumerate() {
        let mut rects = vec![];
        let mut errs = vec![];
        for (c, p) in row.iter().enumerate() {
            if !ok(p.y, ylog) {
                continue;
            }
            let x0 = c as f64 - 0.4 + g as f64 * w;
            let (x0, x1) = (x0 + w * 0.05, x0 + w * 0.95);
            rects.push((x0, x1, base, p.y));
            if let Some((a, b)) = p.err.filter(|(a, b)| a.is_finite() && b.is_finite()) {
                errs.push(((x0 + x1) / 2.0, a.min(b).min(p.y), a.max(b).max(p.y)));
            }
        }
        if rects.is_empty() {
            continue;
        }
        layers.push(Layer {
            name: groups
                .get(g)
                .cloned()
                .unwrap_or_else(|| format!("group {g}")),
            colour: g,
            kind: LayerKind::Bars { rects, errs },
        });
    }
    let names = (0..ncat)
        .map(|c| categories.get(c).cloned().unwrap_or_default())
        .collect();
    let x = AxisSpec {
        log: false,
        lo: -0.5,
        hi: ncat as f64 - 0.5,
        categories: Some(names),
    };
    Ok(Prepared { x, y, layers })
}

/// Above this many samples the step path keeps every k-th order statistic only: the
/// vertical error is at most 1/`MAX_STEPS` of the axis (under a pixel), and SVGs of
/// million-sample CDFs stay small.
const MAX_STEPS: usize = 2000;

/// The step path of the ECDF of sorted `v`, extended flat to the axis ends `lo`, `hi`.
fn step_path(v: &[f64], lo: f64, hi: f64) -> Vec<(f64, f64)> {
    let n = v.len() as f64;
    let stride = v.len().div_ceil(MAX_STEPS).max(1);
    let mut path = Vec::with_capacity(2 * v.len().min(MAX_STEPS) + 4);
    path.push((lo, 0.0));
    let mut i = 0;
    while i < v.len() {
        // Ties (and, for huge inputs, the next stride-1 samples) make one vertical step.
        let mut j = (i + stride).min(v.len());
        while j < v.len() && v[j] == v[j - 1] {
            j += 1;
        }
        path.push((v[i], i as f64 / n));
        path.push((v[j - 1], j as f64 / n));
        i = j;
    }
    path.push((hi, 1.0));
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_pad_and_anchor() {
        assert_eq!(range(&[10.0, 20.0], false, true).unwrap(), (0.0, 21.0));
        let (lo, hi) = range(&[10.0, 20.0], false, false).unwrap();
        assert!((lo - 9.5).abs() < 1e-12 && (hi - 20.5).abs() < 1e-12);
        assert_eq!(range(&[0.0], false, true).unwrap(), (0.0, 1.0));
        assert_eq!(range(&[5.0], false, false).unwrap(), (4.5, 5.5));
        assert_eq!(range(&[0.0], false, false).unwrap(), (-1.0, 1.0));
        let (lo, hi) = range(&[10.0], true, true).unwrap();
        assert!(lo < 10.0 && hi > 10.0 && lo > 0.0);
        assert!(range(&[], false, false).is_err());
        assert!(range(&[-f64::MAX, f64::MAX], false, false).is_err());
        assert!(range(&[0.0, 5e-324], false, false).is_err());
        assert_eq!(range(&[5e-324], false, false).unwrap(), (-1.0, 1.0));
        assert!(!ok(1e-310, true) && ok(1e-100, true) && !ok(1e101, true) && ok(1e-310, false));
    }

    #[test]
    fn curves_pair_by_name_then_index() {
        let s = ["Reno", "NewReno", "Cubic"];
        assert_eq!(curve_colour("NewReno (model)", &s, 0), 1);
        assert_eq!(curve_colour("Cubic", &s, 0), 2);
        assert_eq!(curve_colour("Renovated", &s, 1), 1);
        assert_eq!(curve_colour("Mathis", &s, 2), 2);
    }

    #[test]
    fn step_path_handles_ties() {
        let big: Vec<f64> = (0..1_000_000).map(f64::from).collect();
        let p = step_path(&big, 0.0, 1e6);
        assert!(p.len() <= 2 * MAX_STEPS + 2, "{}", p.len());
        assert_eq!((p[1], p[p.len() - 2]), ((0.0, 0.0), (999_999.0, 1.0)));
        let p = step_path(&[1.0, 1.0, 2.0], 0.0, 3.0);
        assert_eq!(
            p,
            vec![
                (0.0, 0.0),
                (1.0, 0.0),
                (1.0, 2.0 / 3.0),
                (2.0, 2.0 / 3.0),
                (2.0, 1.0),
                (3.0, 1.0)
            ]
        );
    }
}
