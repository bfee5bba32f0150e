//! The result files of a plan run, byte-for-byte deterministic (fixed column order, rows
//! sorted by point and repetition, floats in Rust's shortest round-trip `{}` form), so
//! the same plan gives the same files whatever `--jobs` and however often resumed.
//!
//! - `runs.csv` / `runs.jsonl`: one row / object per run: point, rep, seed, each axis in
//!   plan order, each metric in name order, `expected_<m>` for metrics with an
//!   expectation, and the cache key. Absent values: empty cell / `null`.
//! - `summary.csv`: one row per point: point, each axis, then per metric
//!   `<m>_n, <m>_mean, <m>_median, <m>_p5, <m>_p95, <m>_ci_lo, <m>_ci_hi` and, with an
//!   expectation, `<m>_expected, <m>_deviation` (mean / expected - 1).
//! - `plan.toml`: the plan file as given; `plan.resolved.json`: the plan as run (after
//!   `--quick` overrides).

use crate::error::LabError;
use crate::plan::{AxisValue, Plan};
use crate::run::rows::{write_atomic, PointSummary, Row};
use std::fmt::Write as _;
use std::path::Path;

fn axis_text(v: Option<&AxisValue>) -> String {
    match v {
        Some(AxisValue::Number(n)) => format!("{n}"),
        Some(AxisValue::Text(s)) => s.clone(),
        None => String::new(),
    }
}

fn num_text(v: Option<f64>) -> String {
    v.map(|x| format!("{x}")).unwrap_or_default()
}

fn axis_json(v: Option<&AxisValue>) -> serde_json::Value {
    match v {
        Some(AxisValue::Number(n)) => num_json(Some(*n)),
        Some(AxisValue::Text(s)) => serde_json::Value::String(s.clone()),
        None => serde_json::Value::Null,
    }
}

fn num_json(v: Option<f64>) -> serde_json::Value {
    v.and_then(serde_json::Number::from_f64)
        .map_or(serde_json::Value::Null, serde_json::Value::Number)
}

/// A run row as (column, CSV text, JSON value) in column order.
fn run_cells(plan: &Plan, r: &Row) -> Vec<(String, String, serde_json::Value)> {
    let mut c = vec![
        ("point".to_string(), r.point.to_string(), r.point.into()),
        ("rep".to_string(), r.rep.to_string(), r.rep.into()),
        ("seed".to_string(), r.seed.to_string(), r.seed.into()),
    ];
    for a in &plan.axes {
        let v = r.params.get(&a.name);
        c.push((a.name.clone(), axis_text(v), axis_json(v)));
    }
    for m in plan.metrics.keys() {
        let v = r.metrics.get(m).copied();
        c.push((m.clone(), num_text(v), num_json(v)));
    }
    for m in plan.expected.keys() {
        let v = r.expected.get(m).copied();
        c.push((format!("expected_{m}"), num_text(v), num_json(v)));
    }
    c.push(("key".into(), r.key.clone(), r.key.clone().into()));
    c
}

/// The header of `runs.csv` (also when there are no rows).
fn run_header(plan: &Plan) -> Vec<String> {
    let mut h: Vec<String> = ["point", "rep", "seed"].map(String::from).to_vec();
    h.extend(plan.axes.iter().map(|a| a.name.clone()));
    h.extend(plan.metrics.keys().cloned());
    h.extend(plan.expected.keys().map(|m| format!("expected_{m}")));
    h.push("key".into());
    h
}

/// `runs.csv` text.
pub fn runs_csv(plan: &Plan, rows: &[Row]) -> String {
    let cells = rows.iter().map(|r| {
        run_cells(plan, r)
            .into_iter()
            .map(|c| c.1)
            .collect::<Vec<_>>()
    });
    crate::csv::to_text(std::iter::once(run_header(plan)).chain(cells))
}

/// `runs.jsonl` text: keys in column order.
pub fn runs_jsonl(plan: &Plan, rows: &[Row]) -> String {
    let mut s = String::new();
    for r in rows {
        let fields: Vec<String> = run_cells(plan, r)
            .into_iter()
            .map(|(k, _, v)| format!("{}:{v}", serde_json::Value::String(k)))
            .collect();
        let _ = writeln!(s, "{{{}}}", fields.join(","));
    }
    s
}

const STAT_COLUMNS: [&str; 7] = ["n", "mean", "median", "p5", "p95", "ci_lo", "ci_hi"];

/// `summary.csv` text.
pub fn summary_csv(plan: &Plan, summaries: &[PointSummary]) -> String {
    let mut h = vec!["point".to_string()];
    h.extend(plan.axes.iter().map(|a| a.name.clone()));
    for m in plan.metrics.keys() {
        h.extend(STAT_COLUMNS.iter().map(|c| format!("{m}_{c}")));
        if plan.expected.contains_key(m) {
            h.push(format!("{m}_expected"));
            h.push(format!("{m}_deviation"));
        }
    }
    let mut records = vec![h];
    for p in summaries {
        let mut cells = vec![p.point.to_string()];
        cells.extend(plan.axes.iter().map(|a| axis_text(p.params.get(&a.name))));
        for m in plan.metrics.keys() {
            let st = p.stats.get(m);
            match st {
                Some(st) => cells.extend([
                    st.n.to_string(),
                    format!("{}", st.mean),
                    format!("{}", st.median),
                    format!("{}", st.p5),
                    format!("{}", st.p95),
                    format!("{}", st.ci_lo),
                    format!("{}", st.ci_hi),
                ]),
                None => {
                    cells.push("0".into());
                    cells.extend(std::iter::repeat_n(String::new(), STAT_COLUMNS.len() - 1));
                }
            }
            if plan.expected.contains_key(m) {
                let e = p.expected.get(m).copied();
                let dev = match (st, e) {
                    (Some(st), Some(e)) if e != 0.0 => Some(st.mean / e - 1.0),
                    _ => None,
                };
                cells.push(num_text(e));
                cells.push(num_text(dev));
            }
        }
        records.push(cells);
    }
    crate::csv::to_text(records)
}

/// Writes every result file into `out` (each atomically).
pub fn write_outputs(
    plan_path: &Path,
    out: &Path,
    plan: &Plan,
    rows: &[Row],
    summaries: &[PointSummary],
) -> Result<(), LabError> {
    let plan_text = std::fs::read(plan_path).map_err(|e| LabError::io(plan_path, e))?;
    let resolved = serde_json::to_string_pretty(plan).map_err(|e| LabError::Data {
        file: out.join("plan.resolved.json").display().to_string(),
        why: e.to_string(),
    })?;
    write_atomic(&out.join("runs.csv"), runs_csv(plan, rows).as_bytes())?;
    write_atomic(&out.join("runs.jsonl"), runs_jsonl(plan, rows).as_bytes())?;
    write_atomic(
        &out.join("summary.csv"),
        summary_csv(plan, summaries).as_bytes(),
    )?;
    write_atomic(&out.join("plan.toml"), &plan_text)?;
    write_atomic(
        &out.join("plan.resolved.json"),
        (resolved + "\n").as_bytes(),
    )
}
