//! A "timeseries" figure of `cwnd`: each plan point's congestion window over time, from
//! the first repetition's sender trace (`flows[i].<sender>.cwnd`, recorded when the
//! scenario sets `measure.traces`), with its Careful Resume phase changes
//! (`careful_resume_phases`, draft-ietf-tsvwg-careful-resume-qlog §3) marked as labelled
//! points at the window after the change. One run per point, not a mean: a window
//! trace is a step function whose steps fall at different times in each repetition.

use crate::csv::cell_matches;
use crate::error::LabError;
use crate::plan::{AxisValue, FigureSpec};
use crate::present::plot::{Chart, Figure, Point, Series, Style};
use crate::run::cache::load_run;
use crate::run::runner::PlanOutcome;

/// The text of an axis value as the result tables write it.
fn text(v: &AxisValue) -> String {
    match v {
        AxisValue::Number(n) => n.to_string(),
        AxisValue::Text(s) => s.clone(),
    }
}

/// The figure (see the module docs); `spec.filter` picks points, `spec.series` names
/// the axis whose value labels each point's lines (else every axis value).
pub(super) fn cwnd_timeseries(
    spec: &FigureSpec,
    outcome: &PlanOutcome,
) -> Result<Figure, LabError> {
    let mut series = Vec::new();
    // Phase name -> its markers, in order of first appearance.
    let mut phases: Vec<(String, Vec<Point>)> = Vec::new();
    for s in &outcome.summaries {
        let wanted = spec.filter.iter().all(|(axis, want)| {
            let have = s.params.get(axis).map(text);
            cell_matches(have.as_deref(), want)
        });
        // Rows are sorted by (point, repetition): the first is repetition 0.
        let row = outcome.rows.iter().find(|r| r.point == s.point);
        let Some(row) = row.filter(|_| wanted) else {
            continue;
        };
        let label = match &spec.series {
            Some(axis) => s.params.get(axis).map(text).unwrap_or_default(),
            None => s
                .params
                .iter()
                .map(|(k, v)| format!("{k}={}", text(v)))
                .collect::<Vec<_>>()
                .join(", "),
        };
        let result = load_run(&outcome.cache_dir, &row.key)?;
        let flows = result["flows"].as_array().cloned().unwrap_or_default();
        for f in &flows {
            // The data sender: the client of an upload, else the server.
            let side = if f["workload"] == "bulk" {
                &f["client"]
            } else {
                &f["server"]
            };
            let name = if flows.len() > 1 {
                format!("{label} {}", f["name"].as_str().unwrap_or("flow"))
            } else {
                label.clone()
            };
            let points = pairs(&side["cwnd"])
                .map(|(t, c)| Point {
                    x: t,
                    y: c * spec.y_factor,
                    err: None,
                })
                .collect();
            series.push(Series {
                name,
                style: Style::Lines,
                points,
            });
            for p in side["careful_resume_phases"]
                .as_array()
                .into_iter()
                .flatten()
            {
                let (Some(t), Some(phase), Some(c)) = (p[0].as_f64(), p[1].as_str(), p[2].as_f64())
                else {
                    continue;
                };
                let marker = Point {
                    x: t,
                    y: c * spec.y_factor,
                    err: None,
                };
                match phases.iter_mut().find(|(n, _)| n == phase) {
                    Some((_, v)) => v.push(marker),
                    None => phases.push((phase.to_string(), vec![marker])),
                }
            }
        }
    }
    series.extend(phases.into_iter().map(|(phase, points)| Series {
        name: format!("Careful Resume -> {phase}"),
        style: Style::Scatter,
        points,
    }));
    Ok(Figure {
        title: spec.title.clone(),
        x_label: spec.x_label.clone().unwrap_or_else(|| "Time (s)".into()),
        y_label: spec
            .y_label
            .clone()
            .unwrap_or_else(|| "Congestion window (bytes)".into()),
        x_scale: spec.x_scale,
        y_scale: spec.y_scale,
        chart: Chart::XY {
            series,
            curves: vec![],
        },
    })
}

/// `[[t, v], ...]` as (t, v) pairs, skipping malformed ones.
fn pairs(v: &serde_json::Value) -> impl Iterator<Item = (f64, f64)> + '_ {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| Some((p.get(0)?.as_f64()?, p.get(1)?.as_f64()?)))
}
