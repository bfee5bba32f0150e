//! The samples a statement compares, read from a plan's `runs.csv` (and `summary.csv`
//! for `[expected]` values): the runs of `of` paired with those of `against` (or the
//! point's expected value) and of `than`, on every axis `of` does not name and on the
//! repetition. Pairs are grouped into the points the statement is judged at (every
//! combination of the other axes, or one group when pooled) and, for a trend, into
//! cells along the trend axis. A pair with a sample missing on one side is reported,
//! never dropped.

use crate::csv::{row_matches, CsvError, Table};
use crate::plan::comparison::{Aggregate, Comparison, Test};
use crate::plan::points::{axis_values, canonical_value};
use crate::plan::{AxisValue, Plan};
use std::collections::BTreeMap;

/// One pair: the repetition, the `of` value, its baseline (the `against` run or the
/// expected value) and the `than` value of a difference of two effects.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pair {
    pub rep: usize,
    pub of: f64,
    pub base: f64,
    pub than: Option<f64>,
}

/// The pairs at one value of the trend axis (or all of a group's pairs without a
/// trend).
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    /// The trend axis's value as a number (its value, or its position for a text axis).
    pub x: Option<f64>,
    /// The trend axis's value as written ("" without a trend).
    pub x_label: String,
    pub pairs: Vec<Pair>,
    /// Every pair is exact: each point in the cell is deterministic (identical
    /// repetitions, or one repetition of a deterministic plan).
    pub exact: bool,
    /// The repetitions of some point came out identical although the plan is not
    /// declared deterministic.
    pub identical_repetitions: bool,
}

/// A point (or the pooled group) a statement is judged at.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    /// "p = 0.05, rtt_ms = 50", or "all points" when pooled, or "" when `of` names
    /// every axis.
    pub label: String,
    /// Cells in trend-axis order; exactly one without a trend.
    pub cells: Vec<Cell>,
}

/// Everything a statement's judgement needs from the tables.
#[derive(Clone, Debug, PartialEq)]
pub struct Collected {
    pub groups: Vec<Group>,
    /// Pairs lacking a sample, as "point 3 rep 1".
    pub missing: Vec<String>,
}

/// One side's run: its point number and its value of the metric.
type Sample = (usize, Option<f64>);

/// The runs of one side (`of`, `against` or `than`), keyed by the values of the axes
/// `of` does not name and by the repetition.
fn side(
    runs: &Table,
    filter: &BTreeMap<String, AxisValue>,
    key_cols: &[usize],
    metric_col: usize,
) -> Result<BTreeMap<(Vec<String>, usize), Sample>, CsvError> {
    let (point_col, rep_col) = (runs.require("point")?, runs.require("rep")?);
    let mut out = BTreeMap::new();
    for row in 0..runs.rows.len() {
        if filter.is_empty() || !row_matches(runs, row, filter)? {
            continue;
        }
        let cell = |c: usize| runs.get(row, c).unwrap_or("").to_string();
        let id = |c: usize| cell(c).parse::<usize>().unwrap_or(usize::MAX);
        let key: Vec<String> = key_cols.iter().map(|&c| cell(c)).collect();
        out.insert(
            (key, id(rep_col)),
            (id(point_col), runs.f64_at(row, metric_col)?),
        );
    }
    Ok(out)
}

/// `{metric}_expected` per point, when the statement compares with `[expected]`.
fn expected_by_point(
    summary: &Table,
    metric: &str,
) -> Result<BTreeMap<usize, Option<f64>>, CsvError> {
    let (point_col, col) = (
        summary.require("point")?,
        summary.require(&format!("{metric}_expected"))?,
    );
    let mut out = BTreeMap::new();
    for row in 0..summary.rows.len() {
        if let Some(point) = summary.get(row, point_col).and_then(|p| p.parse().ok()) {
            out.insert(point, summary.f64_at(row, col)?);
        }
    }
    Ok(out)
}

/// The position of a trend axis's value: its number, or its index in the plan's list.
fn trend_x(plan: &Plan, axis: &str, text: &str) -> Option<f64> {
    let a = plan.axes.iter().find(|a| a.name == axis)?;
    let values = axis_values(a);
    if values.iter().all(|v| matches!(v, AxisValue::Number(_))) {
        return text.trim().parse().ok();
    }
    let want = canonical_value(&AxisValue::Text(text.to_string()));
    values
        .iter()
        .position(|v| canonical_value(v) == want || matches!(v, AxisValue::Text(t) if t == text))
        .map(|i| i as f64)
}

/// The pairs of every point of one (group, trend value) cell, with the point's runs in
/// repetition order.
#[derive(Default)]
struct CellBuild {
    x_label: String,
    /// point key -> pairs of that point.
    points: BTreeMap<Vec<String>, Vec<Pair>>,
}

/// Reads the pairs of `cmp` from a plan's tables: `runs` (`runs.csv`) and `summary`
/// (`summary.csv`, for `[expected]` values).
pub fn collect(
    plan: &Plan,
    cmp: &Comparison,
    runs: &Table,
    summary: &Table,
) -> Result<Collected, CsvError> {
    let metric_col = runs.require(&cmp.metric)?;
    let key_axes: Vec<&str> = plan
        .axes
        .iter()
        .map(|a| a.name.as_str())
        .filter(|a| !cmp.of.contains_key(*a))
        .collect();
    let key_cols: Vec<usize> = key_axes
        .iter()
        .map(|a| runs.require(a))
        .collect::<Result<_, _>>()?;
    let trend_axis = match &cmp.test {
        Test::Trend { axis, .. } => Some(axis.as_str()),
        Test::Bound(_) => None,
    };
    let pooled = matches!(cmp.aggregate, Aggregate::Pooled { .. });
    let of = side(runs, &cmp.of, &key_cols, metric_col)?;
    let against = side(runs, &cmp.against, &key_cols, metric_col)?;
    let than = side(runs, &cmp.than, &key_cols, metric_col)?;
    let expected = if cmp.against.is_empty() {
        expected_by_point(summary, &cmp.metric)?
    } else {
        BTreeMap::new()
    };
    // group label -> (first point, trend value -> cell)
    let mut groups: BTreeMap<String, (usize, BTreeMap<String, CellBuild>)> = BTreeMap::new();
    let mut missing = Vec::new();
    for ((key, rep), &(point, a)) in &of {
        let base = if cmp.against.is_empty() {
            expected.get(&point).copied().flatten()
        } else {
            against.get(&(key.clone(), *rep)).and_then(|s| s.1)
        };
        let than_value =
            (!cmp.than.is_empty()).then(|| than.get(&(key.clone(), *rep)).and_then(|s| s.1));
        let pair = match (a, base, than_value) {
            (Some(a), Some(b), None) => Some(Pair {
                rep: *rep,
                of: a,
                base: b,
                than: None,
            }),
            (Some(a), Some(b), Some(Some(t))) => Some(Pair {
                rep: *rep,
                of: a,
                base: b,
                than: Some(t),
            }),
            _ => None,
        };
        let Some(pair) = pair.filter(|p| p.of.is_finite() && p.base.is_finite()) else {
            missing.push(format!("point {point} rep {rep}"));
            continue;
        };
        let mut label_parts = Vec::new();
        let mut x_label = String::new();
        for (axis, value) in key_axes.iter().zip(key) {
            if Some(*axis) == trend_axis {
                x_label = value.clone();
            } else if !pooled {
                label_parts.push(format!("{axis} = {value}"));
            }
        }
        let label = if pooled {
            "all points".to_string()
        } else {
            label_parts.join(", ")
        };
        let g = groups.entry(label).or_insert((point, BTreeMap::new()));
        g.0 = g.0.min(point);
        let cell = g.1.entry(x_label.clone()).or_default();
        cell.x_label = x_label;
        cell.points.entry(key.clone()).or_default().push(pair);
    }
    let mut ordered: Vec<(usize, Group)> = groups
        .into_iter()
        .map(|(label, (first, cells))| {
            let mut cells: Vec<Cell> = cells
                .into_values()
                .map(|c| finish_cell(plan, cmp, trend_axis, c))
                .collect();
            cells.sort_by(|a, b| a.x.unwrap_or(0.0).total_cmp(&b.x.unwrap_or(0.0)));
            (first, Group { label, cells })
        })
        .collect();
    ordered.sort_by_key(|(first, _)| *first);
    Ok(Collected {
        groups: ordered.into_iter().map(|(_, g)| g).collect(),
        missing,
    })
}

/// A cell's pairs and whether they are exact.
fn finish_cell(plan: &Plan, cmp: &Comparison, trend_axis: Option<&str>, c: CellBuild) -> Cell {
    let single_exact = plan.deterministic || cmp.single_runs_exact;
    let mut exact = true;
    let mut identical = false;
    for pairs in c.points.values() {
        let constant = pairs
            .windows(2)
            .all(|w| w[0].of == w[1].of && w[0].base == w[1].base && w[0].than == w[1].than);
        let point_exact = match pairs.len() {
            1 => single_exact,
            _ => constant,
        };
        identical |= pairs.len() > 1 && constant && !plan.deterministic;
        exact &= point_exact;
    }
    Cell {
        x: trend_axis.and_then(|a| trend_x(plan, a, &c.x_label)),
        x_label: c.x_label,
        pairs: c.points.into_values().flatten().collect(),
        exact,
        identical_repetitions: identical,
    }
}
