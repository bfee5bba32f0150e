//! Ad-hoc plots of any result table (`quiclab plot RESULTS --x .. --y ..`), for looking
//! at results in ways the plan's figures did not anticipate, without writing a plan.

use crate::csv::{self, CsvError, Table};
use crate::plan::load::load_plan;
use crate::present::figures::{bars_chart, cdf_chart, xy_chart, Input, Values};
use crate::present::plot::{self, Figure, PlotError, Scale, Style};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Why an ad-hoc plot failed.
#[derive(Debug, thiserror::Error)]
pub enum AdhocError {
    #[error(transparent)]
    Csv(#[from] CsvError),
    #[error(transparent)]
    Plot(#[from] PlotError),
    #[error("{0}")]
    Input(String),
}

/// Plots column `y` against column `x` of a result table and writes
/// `<out_stem>.png` and `<out_stem>.svg`.
///
/// `results` is a `runs.csv` or `summary.csv`, or a results directory (its `summary.csv`,
/// else its `runs.csv`). If the table has `<y>_mean` (a summary), the means are plotted
/// with their CI (`<y>_ci_lo..<y>_ci_hi`) as error bars and `<y>_expected`, when
/// present, as expected curves; otherwise the raw values of column `y` (one point per
/// run, with `expected_<y>` as curves when present). `series` names a column whose
/// values become separate series. `kind` is "lines", "scatter", "bars" (x values as
/// categories) or "cdf" (of y; `x` is ignored). Axis labels come from the plan
/// (`plan.resolved.json` next to the table) when there is one, else the column names.
/// `title` defaults to "<y> vs <x>".
pub fn plot_csv(
    results: &Path,
    x: &str,
    y: &str,
    series: Option<&str>,
    kind: &str,
    out_stem: &Path,
    title: Option<&str>,
) -> Result<(), AdhocError> {
    let figure = build_adhoc(results, x, y, series, kind, title)?;
    if let Some(parent) = out_stem.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| AdhocError::Input(format!("creating {}: {e}", parent.display())))?;
    }
    plot::render(&figure, out_stem)?;
    Ok(())
}

/// The table file a `results` argument names.
fn resolve(results: &Path) -> Result<PathBuf, AdhocError> {
    if !results.is_dir() {
        return Ok(results.to_path_buf());
    }
    ["summary.csv", "runs.csv"]
        .iter()
        .map(|f| results.join(f))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            AdhocError::Input(format!(
                "{}: neither summary.csv nor runs.csv",
                results.display()
            ))
        })
}

/// The figure data of [`plot_csv`], without rendering.
pub fn build_adhoc(
    results: &Path,
    x: &str,
    y: &str,
    series: Option<&str>,
    kind: &str,
    title: Option<&str>,
) -> Result<Figure, AdhocError> {
    let path = resolve(results)?;
    let table = csv::read(&path)?;
    // The results directory of the CSV (its plan names the axes' labels), if any.
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let plan = load_plan(dir).ok();
    let label = |name: &str| {
        plan.as_ref()
            .and_then(|p| p.axes.iter().find(|a| a.name == name))
            .and_then(|a| a.label.clone())
            .unwrap_or_else(|| name.to_string())
    };
    figure_from_table(&table, x, y, series, kind, title, &label)
}

fn figure_from_table(
    table: &Table,
    x: &str,
    y: &str,
    series: Option<&str>,
    kind: &str,
    title: Option<&str>,
    label: &dyn Fn(&str) -> String,
) -> Result<Figure, AdhocError> {
    let mean_col = format!("{y}_mean");
    let (values, expected) = match table.column(&mean_col) {
        Some(mean) => {
            let ci = table
                .column(&format!("{y}_ci_lo"))
                .zip(table.column(&format!("{y}_ci_hi")));
            (
                Values::Mean { mean, ci },
                table.column(&format!("{y}_expected")),
            )
        }
        None => {
            let col = table.require(y).map_err(|_| {
                AdhocError::Input(format!("{}: no column {y:?} or {mean_col:?}", table.source))
            })?;
            (Values::Raw(col), table.column(&format!("expected_{y}")))
        }
    };
    let no_filter = BTreeMap::new();
    let input = Input {
        table,
        values,
        series: series.map(str::to_string),
        series_label: series.map(label),
        value_labels: BTreeMap::new(),
        filter: &no_filter,
        y_factor: 1.0,
    };
    let chart = match kind {
        "lines" => xy_chart(&input, x, Style::Lines, expected),
        "scatter" => xy_chart(&input, x, Style::Scatter, expected),
        "bars" => bars_chart(&input, x),
        "cdf" => cdf_chart(&input),
        other => Err(format!(
            "unknown plot kind {other:?} (lines, scatter, bars, cdf)"
        )),
    }
    .map_err(AdhocError::Input)?;
    let (x_label, y_label, default_title) = if kind == "cdf" {
        (y.to_string(), "CDF".to_string(), format!("CDF of {y}"))
    } else {
        (label(x), y.to_string(), format!("{y} vs {x}"))
    };
    Ok(Figure {
        title: title.map(str::to_string).unwrap_or(default_title),
        x_label,
        y_label,
        x_scale: Scale::Linear,
        y_scale: Scale::Linear,
        chart,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csv::parse;
    use crate::present::plot::{Chart, Point};

    fn plain(name: &str) -> String {
        name.to_string()
    }

    #[test]
    fn summary_uses_means_and_ci() {
        let t = parse(
            "point,loss,x_mean,x_ci_lo,x_ci_hi,x_expected\n0,0.01,2,1,3,2.5\n1,0,4,4,4,5\n",
            "summary.csv",
        )
        .unwrap();
        let f = figure_from_table(&t, "loss", "x", None, "lines", None, &plain).unwrap();
        assert_eq!(f.title, "x vs loss");
        let Chart::XY { series, curves } = f.chart else {
            panic!()
        };
        assert_eq!(
            series[0].points,
            vec![
                Point {
                    x: 0.0,
                    y: 4.0,
                    err: None
                },
                Point {
                    x: 0.01,
                    y: 2.0,
                    err: Some((1.0, 3.0))
                }
            ]
        );
        assert_eq!(curves[0].points, vec![(0.0, 5.0), (0.01, 2.5)]);
    }

    #[test]
    fn runs_use_raw_values_with_series() {
        let t = parse(
            "point,rep,seed,cc,rtt,x\n0,0,1,reno,10,5\n0,1,2,reno,10,7\n1,0,3,cubic,10,6\n",
            "runs.csv",
        )
        .unwrap();
        let label = |n: &str| if n == "cc" { "CC".into() } else { n.into() };
        let f =
            figure_from_table(&t, "rtt", "x", Some("cc"), "scatter", Some("T"), &label).unwrap();
        assert_eq!(f.title, "T");
        let Chart::XY { series, curves } = f.chart else {
            panic!()
        };
        assert!(curves.is_empty());
        assert_eq!(series.len(), 2);
        assert_eq!(series[0].name, "CC = reno");
        assert_eq!(series[0].points.len(), 2);
        assert_eq!(series[0].style, Style::Scatter);

        let f = figure_from_table(&t, "", "x", Some("cc"), "cdf", None, &plain).unwrap();
        let Chart::Cdf { samples } = f.chart else {
            panic!()
        };
        assert_eq!(samples[0].1, vec![5.0, 7.0]);
    }

    #[test]
    fn errors_name_the_column_and_file() {
        let t = parse("point,a\n0,1\n", "runs.csv").unwrap();
        let e = figure_from_table(&t, "a", "zz", None, "lines", None, &plain)
            .unwrap_err()
            .to_string();
        assert!(e.contains("runs.csv") && e.contains("zz"), "{e}");
        let e = figure_from_table(&t, "b", "a", None, "lines", None, &plain)
            .unwrap_err()
            .to_string();
        assert!(e.contains("runs.csv") && e.contains("\"b\""), "{e}");
        let e = figure_from_table(&t, "a", "a", None, "pie", None, &plain)
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown plot kind"), "{e}");
        let e = build_adhoc(Path::new("/nonexistent/dir"), "a", "b", None, "lines", None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("/nonexistent/dir"), "{e}");
    }

    #[test]
    fn directory_prefers_summary_and_reads_plan_labels() {
        let d = std::env::temp_dir().join(format!("quiclab-adhoc-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("runs.csv"), "point,rtt,x\n0,10,1\n").unwrap();
        std::fs::write(
            d.join("summary.csv"),
            "point,rtt,x_mean,x_ci_lo,x_ci_hi\n0,10,1,1,1\n",
        )
        .unwrap();
        assert_eq!(resolve(&d).unwrap(), d.join("summary.csv"));
        let f = build_adhoc(&d, "rtt", "x", None, "bars", None).unwrap();
        assert_eq!(f.x_label, "rtt");
        assert!(matches!(f.chart, Chart::Bars { .. }));
        let _ = std::fs::remove_dir_all(&d);
    }
}
