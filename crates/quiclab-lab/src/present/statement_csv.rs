//! The statement files of a results directory: `claims.csv` and `checks.csv` (one row
//! per statement: its status or verdict, why, its statistic and aggregation, and the
//! estimate when it has one point) and `claims_points.csv` / `checks_points.csv` (one
//! row per statement and point). Changes are fractions (or the metric's unit for
//! "difference of means"); cells are empty where a value does not exist.

use crate::plan::comparison::Comparison;
use crate::present::statement_text::{aggregate, ours};
use crate::present::statements::{CheckResult, ClaimResult, Judged};
use std::fmt::Write as _;

fn num(x: Option<f64>) -> String {
    x.map(|v| v.to_string()).unwrap_or_default()
}

/// statistic, aggregate, test, points, ours, estimate, ci_lo, ci_hi, interval.
fn comparison_cells(j: &Judged) -> Vec<String> {
    let cmp: Option<&Comparison> = j.comparison.as_ref();
    let single = (j.points.len() == 1)
        .then(|| j.points[0].estimate)
        .flatten();
    vec![
        cmp.map(|c| c.statistic.as_str().to_string())
            .unwrap_or_default(),
        cmp.map(aggregate).unwrap_or_default(),
        cmp.map(|c| c.test.describe(c.statistic.is_relative()))
            .unwrap_or_default(),
        j.points.len().to_string(),
        if cmp.is_some() {
            ours(j)
        } else {
            String::new()
        },
        num(single.map(|e| e.value)),
        num(single.and_then(|e| e.ci).map(|c| c.0)),
        num(single.and_then(|e| e.ci).map(|c| c.1)),
        single
            .map(|e| e.interval.as_str().to_string())
            .unwrap_or_default(),
    ]
}

fn row(cells: Vec<String>) -> String {
    crate::csv::to_text([cells])
}

/// `claims.csv`.
pub fn claims_csv(results: &[ClaimResult]) -> String {
    let mut s = String::from(
        "name,source,where,status,reason,metric,statistic,aggregate,test,points,ours,estimate,\
         ci_lo,ci_hi,interval,published,tolerance,tolerance_from,claim\n",
    );
    for r in results {
        let relative = r
            .judged
            .comparison
            .as_ref()
            .is_none_or(|c| c.statistic.is_relative());
        let mut cells = vec![
            r.spec.name.clone(),
            r.spec.source.clone(),
            r.spec.where_.clone(),
            r.status.as_str().into(),
            r.reason.clone(),
            r.spec.metric.clone().unwrap_or_default(),
        ];
        cells.extend(comparison_cells(&r.judged));
        cells.push(
            r.published
                .as_ref()
                .map(|p| p.describe(relative))
                .unwrap_or_default(),
        );
        cells.push(num(r.tolerance));
        cells.push(match (&r.published, &r.spec.tolerance_from) {
            (Some(_), Some(from)) => from.clone(),
            (Some(_), None) => "project default".into(),
            (None, _) => String::new(),
        });
        cells.push(r.spec.claim.clone());
        s += &row(cells);
    }
    s
}

/// `checks.csv`.
pub fn checks_csv(results: &[CheckResult]) -> String {
    let mut s = String::from(
        "name,verdict,reason,metric,statistic,aggregate,test,points,ours,estimate,ci_lo,ci_hi,\
         interval,basis,check\n",
    );
    for r in results {
        let mut cells = vec![
            r.spec.name.clone(),
            r.verdict.as_str().into(),
            r.reason.clone(),
            r.spec.metric.clone(),
        ];
        cells.extend(comparison_cells(&r.judged));
        cells.push(r.spec.basis.clone());
        cells.push(r.spec.check.clone());
        s += &row(cells);
    }
    s
}

const POINTS_HEADER: &str = "name,point,status,n,estimate,ci_lo,ci_hi,interval,of_value,reason\n";

/// One row per point of `j`, named `name`, with `words` the status at each point.
fn point_rows(s: &mut String, name: &str, j: &Judged, words: &[&str]) {
    for (p, w) in j.points.iter().zip(words) {
        let e = p.estimate;
        let _ = write!(
            s,
            "{}",
            row(vec![
                name.to_string(),
                p.label.clone(),
                w.to_string(),
                e.map_or(0, |e| e.n).to_string(),
                num(e.map(|e| e.value)),
                num(e.and_then(|e| e.ci).map(|c| c.0)),
                num(e.and_then(|e| e.ci).map(|c| c.1)),
                e.map(|e| e.interval.as_str().to_string())
                    .unwrap_or_default(),
                num(p.of_value),
                p.reason.clone(),
            ])
        );
    }
}

/// `claims_points.csv`: each claim at each of its points.
pub fn claims_points_csv(results: &[ClaimResult]) -> String {
    let mut s = String::from(POINTS_HEADER);
    for r in results {
        let words: Vec<&str> = r
            .point_status
            .iter()
            .map(|st| st.map_or("no verdict", |st| st.as_str()))
            .collect();
        point_rows(&mut s, &r.spec.name, &r.judged, &words);
    }
    s
}

/// `checks_points.csv`: each check at each of its points.
pub fn checks_points_csv(results: &[CheckResult]) -> String {
    let mut s = String::from(POINTS_HEADER);
    for r in results {
        let words: Vec<&str> = r
            .judged
            .points
            .iter()
            .map(|p| p.verdict.map_or("no verdict", |v| v.as_str()))
            .collect();
        point_rows(&mut s, &r.spec.name, &r.judged, &words);
    }
    s
}
