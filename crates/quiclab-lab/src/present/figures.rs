//! Builds figure data ([`Figure`]) from a plan's [`FigureSpec`] and its result tables
//! (`summary.csv` for x-y and bar charts, `runs.csv` for CDFs). Kept separate from
//! rendering so the data can be tested without images, and reused by the ad-hoc
//! `quiclab plot` command.

use crate::csv::{cell_matches, row_matches, CsvError, Table};
use crate::plan::{AxisValue, FigureSpec, Plan};
use crate::present::plot::{Chart, Curve, Figure, Point, Series, Style};
use std::collections::BTreeMap;

/// Builds the data of the figure `spec` of `plan` from the plan's `summary` and `runs`
/// tables. Kinds: "lines", "scatter", "cdf", "bars"; "timeseries" needs cached run data
/// and is built elsewhere (an error here). Bars with no data for a (group, category)
/// pair get a NaN value.
pub fn build_figure(
    spec: &FigureSpec,
    plan: &Plan,
    summary: &Table,
    runs: &Table,
) -> Result<Figure, String> {
    let axis_label = |name: &str| -> String {
        plan.axes
            .iter()
            .find(|a| a.name == name)
            .and_then(|a| a.label.clone())
            .unwrap_or_else(|| name.to_string())
    };
    let series_label = spec.series.as_deref().map(axis_label);
    let value_labels = spec
        .series
        .as_deref()
        .and_then(|name| plan.axes.iter().find(|a| a.name == name))
        .map(|a| a.value_labels.clone())
        .unwrap_or_default();
    let input = |table, values| Input {
        table,
        values,
        series: spec.series.clone(),
        series_label: series_label.clone(),
        value_labels: value_labels.clone(),
        filter: &spec.filter,
        y_factor: spec.y_factor,
    };
    let what = format!("figure {:?}", spec.file);
    let chart = match spec.kind.as_str() {
        "lines" | "scatter" => {
            let x = spec.x.as_deref().ok_or(format!("{what}: needs an x axis"))?;
            let style = if spec.kind == "lines" {
                Style::Lines
            } else {
                Style::Scatter
            };
            let expected = if spec.expected {
                summary.column(&format!("{}_expected", spec.y))
            } else {
                None
            };
            xy_chart(&input(summary, Values::mean_ci(summary, &spec.y)?), x, style, expected)
        }
        "bars" => {
            let x = spec.x.as_deref().ok_or(format!("{what}: needs an x axis"))?;
            bars_chart(&input(summary, Values::mean_ci(summary, &spec.y)?), x)
        }
        "cdf" => {
            let col = runs.require(&spec.y).map_err(|e| e.to_string())?;
            cdf_chart(&input(runs, Values::Raw(col)))
        }
        "timeseries" => Err(format!(
            "{what}: \"timeseries\" figures are built from cached run data, not from the result tables"
        )),
        other => Err(format!(
            "{what}: unknown kind {other:?} (lines, scatter, cdf, bars, timeseries)"
        )),
    }
    .map_err(|e| format!("{what}: {e}"))?;
    let (x_label, y_label) = if spec.kind == "cdf" {
        (
            spec.x_label
                .clone()
                .or_else(|| spec.y_label.clone())
                .unwrap_or_else(|| spec.y.clone()),
            "CDF".to_string(),
        )
    } else {
        (
            spec.x_label
                .clone()
                .unwrap_or_else(|| axis_label(spec.x.as_deref().unwrap_or_default())),
            spec.y_label.clone().unwrap_or_else(|| spec.y.clone()),
        )
    };
    Ok(Figure {
        title: spec.title.clone(),
        x_label,
        y_label,
        x_scale: spec.x_scale,
        y_scale: spec.y_scale,
        chart,
    })
}

/// Which columns give a y value (and its error bar).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Values {
    /// `<y>_mean` with an optional CI `<y>_ci_lo..<y>_ci_hi`.
    Mean {
        mean: usize,
        ci: Option<(usize, usize)>,
    },
    /// A raw value column (no error bars).
    Raw(usize),
}

impl Values {
    /// `<y>_mean` and its CI columns of a summary table (all required).
    pub(crate) fn mean_ci(table: &Table, y: &str) -> Result<Values, String> {
        let col = |suffix: &str| {
            table
                .require(&format!("{y}_{suffix}"))
                .map_err(|e| e.to_string())
        };
        Ok(Values::Mean {
            mean: col("mean")?,
            ci: Some((col("ci_lo")?, col("ci_hi")?)),
        })
    }
}

/// A table plus how to read it into figure data.
pub(crate) struct Input<'a> {
    pub table: &'a Table,
    pub values: Values,
    /// Column whose values split the data into series.
    pub series: Option<String>,
    /// Label of the series column for series names ("<label> = <value>").
    pub series_label: Option<String>,
    /// The series axis's `value_labels`.
    pub value_labels: BTreeMap<String, String>,
    pub filter: &'a BTreeMap<String, AxisValue>,
    pub y_factor: f64,
}

/// A scaled y value and its optional error bar `(lo, hi)`.
type YValue = (f64, Option<(f64, f64)>);

/// One selected row: its series value and table row index.
struct Row {
    series: Option<String>,
    index: usize,
}

impl Input<'_> {
    fn err(&self, e: CsvError) -> String {
        e.to_string()
    }

    /// Rows that pass the filter, with their series value; series values in order of
    /// first appearance.
    fn rows(&self) -> Result<(Vec<Row>, Vec<Option<String>>), String> {
        let t = self.table;
        let series_col = match &self.series {
            Some(s) => Some(t.require(s).map_err(|e| self.err(e))?),
            None => None,
        };
        let mut rows = Vec::new();
        let mut order: Vec<Option<String>> = Vec::new();
        for index in 0..t.rows.len() {
            if !row_matches(t, index, self.filter).map_err(|e| self.err(e))? {
                continue;
            }
            let series = series_col.map(|c| t.get(index, c).unwrap_or("").to_string());
            if !order.contains(&series) {
                order.push(series.clone());
            }
            rows.push(Row { series, index });
        }
        if rows.is_empty() {
            return Err(format!("{}: no rows (after the filter)", t.source));
        }
        Ok((rows, order))
    }

    /// The scaled y value and error bar of a row (`None` if the value is missing).
    fn value(&self, row: usize) -> Result<Option<YValue>, String> {
        let t = self.table;
        let f = self.y_factor;
        let (mean, ci) = match self.values {
            Values::Mean { mean, ci } => (mean, ci),
            Values::Raw(col) => (col, None),
        };
        let Some(y) = t.f64_at(row, mean).map_err(|e| self.err(e))? else {
            return Ok(None);
        };
        let err = match ci {
            Some((lo, hi)) => {
                let lo = t.f64_at(row, lo).map_err(|e| self.err(e))?;
                let hi = t.f64_at(row, hi).map_err(|e| self.err(e))?;
                match (lo, hi) {
                    (Some(lo), Some(hi)) if lo != hi => {
                        let (a, b) = (lo * f, hi * f);
                        Some((a.min(b), a.max(b)))
                    }
                    _ => None,
                }
            }
            None => None,
        };
        Ok(Some((y * f, err)))
    }

    fn series_name(&self, value: &Option<String>, default: &str) -> String {
        let named = value.as_ref().and_then(|v| {
            self.value_labels
                .iter()
                .find(|(k, _)| cell_matches(Some(v), &AxisValue::Text(k.to_string())))
                .map(|(_, name)| name.clone())
        });
        if let Some(name) = named {
            return name;
        }
        match (value, &self.series_label) {
            (Some(v), Some(label)) => format!("{label} = {v}"),
            (Some(v), None) => v.clone(),
            (None, _) => default.to_string(),
        }
    }
}

/// x-y chart: one series per series value, points sorted by x; plus expected curves
/// from the column `expected` when given.
pub(crate) fn xy_chart(
    input: &Input<'_>,
    x: &str,
    style: Style,
    expected: Option<usize>,
) -> Result<Chart, String> {
    let t = input.table;
    let x_col = t.require(x).map_err(|e| e.to_string())?;
    let (rows, order) = input.rows()?;
    let mut series = Vec::new();
    let mut curves = Vec::new();
    for value in &order {
        let mut points = Vec::new();
        let mut curve = Vec::new();
        for row in rows.iter().filter(|r| &r.series == value) {
            let Some(xv) = t.f64_at(row.index, x_col).map_err(|e| e.to_string())? else {
                continue;
            };
            if let Some((y, err)) = input.value(row.index)? {
                points.push(Point { x: xv, y, err });
            }
            if let Some(c) = expected {
                if let Some(e) = t.f64_at(row.index, c).map_err(|e| e.to_string())? {
                    curve.push((xv, e * input.y_factor));
                }
            }
        }
        points.sort_by(|a, b| a.x.total_cmp(&b.x));
        curve.sort_by(|a, b| a.0.total_cmp(&b.0));
        curve.dedup();
        series.push(Series {
            name: input.series_name(value, "measured"),
            points,
            style,
        });
        if !curve.is_empty() {
            let name = match value {
                Some(v) => format!("expected ({v})"),
                None => "expected".to_string(),
            };
            curves.push(Curve {
                name,
                points: curve,
            });
        }
    }
    if series.iter().all(|s| s.points.is_empty()) {
        return Err(format!("{}: no values to plot", t.source));
    }
    // An expectation that does not depend on the series (a model baseline) is one
    // curve, not one identical curve per series.
    if curves.len() > 1 && curves.iter().all(|c| c.points == curves[0].points) {
        curves.truncate(1);
        curves[0].name = "expected".to_string();
    }
    Ok(Chart::XY { series, curves })
}

/// Grouped bars: categories = distinct x values in order of appearance, groups = series
/// values; a missing (group, category) pair is NaN.
pub(crate) fn bars_chart(input: &Input<'_>, x: &str) -> Result<Chart, String> {
    let t = input.table;
    let x_col = t.require(x).map_err(|e| e.to_string())?;
    let (rows, order) = input.rows()?;
    let mut categories: Vec<String> = Vec::new();
    for row in &rows {
        let c = t.get(row.index, x_col).unwrap_or("").to_string();
        if !categories.contains(&c) {
            categories.push(c);
        }
    }
    let mut values = Vec::new();
    let mut any = false;
    for value in &order {
        let mut group: Vec<Point> = (0..categories.len())
            .map(|c| Point {
                x: c as f64,
                y: f64::NAN,
                err: None,
            })
            .collect();
        for row in rows.iter().filter(|r| &r.series == value) {
            let c = t.get(row.index, x_col).unwrap_or("");
            let ci = categories.iter().position(|k| k == c).unwrap_or(0);
            if let Some((y, err)) = input.value(row.index)? {
                group[ci] = Point {
                    x: ci as f64,
                    y,
                    err,
                };
                any = true;
            }
        }
        values.push(group);
    }
    if !any {
        return Err(format!("{}: no values to plot", t.source));
    }
    let groups = order
        .iter()
        .map(|v| input.series_name(v, "measured"))
        .collect();
    Ok(Chart::Bars {
        categories,
        groups,
        values,
    })
}

/// CDFs: one sample set per series value (missing values skipped).
pub(crate) fn cdf_chart(input: &Input<'_>) -> Result<Chart, String> {
    let t = input.table;
    let (rows, order) = input.rows()?;
    let default = match input.values {
        Values::Raw(c) | Values::Mean { mean: c, .. } => t.header[c].clone(),
    };
    let mut samples = Vec::new();
    for value in &order {
        let mut set = Vec::new();
        for row in rows.iter().filter(|r| &r.series == value) {
            if let Some((y, _)) = input.value(row.index)? {
                set.push(y);
            }
        }
        samples.push((input.series_name(value, &default), set));
    }
    if samples.iter().all(|(_, s)| s.is_empty()) {
        return Err(format!("{}: no values to plot", t.source));
    }
    Ok(Chart::Cdf { samples })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csv::parse;
    use crate::plan::{Axis, Combine, Quick, Scale};

    fn plan() -> Plan {
        Plan {
            name: "t".into(),
            title: "T".into(),
            question: "Q?".into(),
            published: String::new(),
            discussion: String::new(),
            assumptions: Vec::new(),
            assumptions_files: Vec::new(),
            base: "base.toml".into(),
            master_seed: 1,
            repetitions: 2,
            combine: Combine::Cartesian,
            common_random_numbers: vec![],
            axes: vec![
                Axis {
                    name: "rtt".into(),
                    values: Some(vec![AxisValue::Number(10.0), AxisValue::Number(20.0)]),
                    range: None,
                    label: Some("RTT (ms)".into()),
                    value_labels: BTreeMap::new(),
                },
                Axis {
                    name: "cc".into(),
                    values: Some(vec![
                        AxisValue::Text("reno".into()),
                        AxisValue::Text("cubic".into()),
                    ]),
                    range: None,
                    label: None,
                    value_labels: BTreeMap::new(),
                },
            ],
            cases: BTreeMap::new(),
            set: BTreeMap::new(),
            metrics: BTreeMap::from([("tput".to_string(), "links[0].x".to_string())]),
            expected: BTreeMap::from([("tput".to_string(), "1/rtt".to_string())]),
            tolerance: Some(0.05),
            quick: Quick::default(),
            figures: vec![],
            deterministic: false,
            claims: vec![],
            checks: vec![],
            findings: vec![],
            min_pairs: 5,
            endpoints: None,
            quick_run: false,
        }
    }

    fn spec(kind: &str) -> FigureSpec {
        FigureSpec {
            file: "f".into(),
            title: "Fig".into(),
            kind: kind.into(),
            x: Some("rtt".into()),
            y: "tput".into(),
            series: Some("cc".into()),
            x_label: None,
            y_label: Some("Throughput (Mbit/s)".into()),
            y_factor: 1e-6,
            x_scale: Scale::Linear,
            y_scale: Scale::Log,
            expected: true,
            filter: BTreeMap::new(),
        }
    }

    const SUMMARY: &str = "\
point,rtt,cc,tput_n,tput_mean,tput_median,tput_p5,tput_p95,tput_ci_lo,tput_ci_hi,tput_expected,tput_deviation
0,20,reno,2,5000000,5000000,4000000,6000000,4000000,6000000,5000000,0
1,10,reno,2,9000000,9000000,9000000,9000000,9000000,9000000,10000000,-0.1
2,20,cubic,2,6000000,6000000,6000000,6000000,5000000,7000000,5000000,0.2
3,10,cubic,2,,,,,,,10000000,
";

    const RUNS: &str = "\
point,rep,seed,rtt,cc,tput,expected_tput
0,0,11,20,reno,4000000,5000000
0,1,12,20,reno,6000000,5000000
1,0,13,10,reno,9000000,10000000
2,0,14,20,cubic,6000000,5000000
3,0,15,10,cubic,,10000000
";

    fn tables() -> (Table, Table) {
        (
            parse(SUMMARY, "summary.csv").unwrap(),
            parse(RUNS, "runs.csv").unwrap(),
        )
    }

    #[test]
    fn lines_with_series_error_bars_and_expected_curves() {
        let (s, r) = tables();
        let f = build_figure(&spec("lines"), &plan(), &s, &r).unwrap();
        assert_eq!(f.title, "Fig");
        assert_eq!(f.x_label, "RTT (ms)");
        assert_eq!(f.y_label, "Throughput (Mbit/s)");
        assert_eq!(f.y_scale, Scale::Log);
        let Chart::XY { series, curves } = f.chart else {
            panic!("not xy")
        };
        assert_eq!(series.len(), 2);
        assert_eq!(series[0].name, "cc = reno");
        assert_eq!(series[0].style, Style::Lines);
        // Sorted by x; CI bar skipped when lo == hi; y_factor applied.
        assert_eq!(
            series[0].points,
            vec![
                Point {
                    x: 10.0,
                    y: 9.0,
                    err: None
                },
                Point {
                    x: 20.0,
                    y: 5.0,
                    err: Some((4.0, 6.0))
                },
            ]
        );
        // Missing mean: point skipped.
        assert_eq!(series[1].name, "cc = cubic");
        assert_eq!(series[1].points.len(), 1);
        // Both series expect 1/rtt: one curve, not two identical ones.
        assert_eq!(curves.len(), 1);
        assert_eq!(curves[0].name, "expected");
        assert_eq!(curves[0].points, vec![(10.0, 10.0), (20.0, 5.0)]);
    }

    #[test]
    fn value_labels_name_the_series() {
        let (s, r) = tables();
        let mut p = plan();
        p.axes[1].value_labels = BTreeMap::from([("reno".to_string(), "NewReno".to_string())]);
        let f = build_figure(&spec("lines"), &p, &s, &r).unwrap();
        let Chart::XY { series, .. } = f.chart else {
            panic!("not xy")
        };
        assert_eq!(series[0].name, "NewReno");
        assert_eq!(
            series[1].name, "cc = cubic",
            "unlabelled values keep label = value"
        );
    }

    #[test]
    fn filter_and_no_series() {
        let (s, r) = tables();
        let mut sp = spec("scatter");
        sp.series = None;
        sp.expected = false;
        sp.filter = BTreeMap::from([("cc".to_string(), AxisValue::Text("reno".into()))]);
        let f = build_figure(&sp, &plan(), &s, &r).unwrap();
        let Chart::XY { series, curves } = f.chart else {
            panic!()
        };
        assert!(curves.is_empty());
        assert_eq!(series.len(), 1);
        assert_eq!(series[0].name, "measured");
        assert_eq!(series[0].style, Style::Scatter);
        assert_eq!(series[0].points.len(), 2);

        sp.filter = BTreeMap::from([("rtt".to_string(), AxisValue::Number(20.0))]);
        sp.series = Some("cc".into());
        sp.expected = true;
        let f = build_figure(&sp, &plan(), &s, &r).unwrap();
        let Chart::XY { series, curves } = f.chart else {
            panic!()
        };
        assert_eq!(series.len(), 2);
        assert!(series.iter().all(|s| s.points.len() == 1));
        assert_eq!(curves.len(), 1);
        assert_eq!(curves[0].name, "expected");
    }

    #[test]
    fn bars_and_cdf() {
        let (s, r) = tables();
        let mut sp = spec("bars");
        sp.y_factor = 1.0;
        let f = build_figure(&sp, &plan(), &s, &r).unwrap();
        let Chart::Bars {
            categories,
            groups,
            values,
        } = f.chart
        else {
            panic!()
        };
        assert_eq!(categories, vec!["20", "10"]);
        assert_eq!(groups, vec!["cc = reno", "cc = cubic"]);
        assert_eq!(values[0][0].y, 5e6);
        assert_eq!(values[0][0].err, Some((4e6, 6e6)));
        assert_eq!(values[1][0].y, 6e6);
        assert!(values[1][1].y.is_nan());

        let f = build_figure(&spec("cdf"), &plan(), &s, &r).unwrap();
        assert_eq!(f.y_label, "CDF");
        assert_eq!(f.x_label, "Throughput (Mbit/s)");
        let Chart::Cdf { samples } = f.chart else {
            panic!()
        };
        assert_eq!(samples[0], ("cc = reno".to_string(), vec![4.0, 6.0, 9.0]));
        assert_eq!(samples[1], ("cc = cubic".to_string(), vec![6.0]));
    }

    #[test]
    fn errors_are_clear() {
        let (s, r) = tables();
        let e = build_figure(&spec("timeseries"), &plan(), &s, &r).unwrap_err();
        assert!(e.contains("cached run data"), "{e}");
        let e = build_figure(&spec("pie"), &plan(), &s, &r).unwrap_err();
        assert!(e.contains("unknown kind"), "{e}");
        let mut sp = spec("lines");
        sp.y = "loss".into();
        let e = build_figure(&sp, &plan(), &s, &r).unwrap_err();
        assert!(e.contains("loss_mean") && e.contains("summary.csv"), "{e}");
        let mut sp = spec("lines");
        sp.x = Some("mtu".into());
        let e = build_figure(&sp, &plan(), &s, &r).unwrap_err();
        assert!(e.contains("\"mtu\"") && e.contains("summary.csv"), "{e}");
        let mut sp = spec("lines");
        sp.filter = BTreeMap::from([("cc".to_string(), AxisValue::Text("bbr".into()))]);
        let e = build_figure(&sp, &plan(), &s, &r).unwrap_err();
        assert!(e.contains("no rows"), "{e}");
        let mut sp = spec("lines");
        sp.x = None;
        assert!(build_figure(&sp, &plan(), &s, &r).is_err());
    }
}
