//! Reports of one experiment's results directory (`report.md` and a self-contained
//! `report.html`), rendered from one small document model ([`crate::present::doc`]) so
//! both formats always say the same thing.

use crate::csv::{self, CsvError, Table};
use crate::error::LabError;
use crate::plan::load::load_plan;
use crate::plan::{AxisValue, Combine, Plan, Scale};
use crate::present::doc::{fmt_num, fmt_pct, fmt_tol, to_html, to_markdown, Block};
use crate::present::statement_csv;
use crate::present::statement_report::{checks_blocks, claims_blocks};
use crate::present::statements::{self, Evaluation};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Why a report could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error(transparent)]
    Csv(#[from] CsvError),
    #[error(transparent)]
    Plan(#[from] LabError),
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> ReportError + '_ {
    move |source| ReportError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Writes `dir/report.md` and `dir/report.html` for the results directory `dir`
/// (`plan.resolved.json` or `plan.toml`, `summary.csv`, `figures/*.png`), and the
/// statement files (`claims.csv`, `checks.csv` and their per-point tables, see
/// [`crate::present::statement_csv`]); returns the path of `report.md`.
pub fn write_report(dir: &Path) -> Result<PathBuf, ReportError> {
    let plan = load_plan(dir)?;
    let plan_text = std::fs::read_to_string(dir.join("plan.toml")).ok();
    let summary = csv::read(dir.join("summary.csv"))?;
    let figures = list_figures(dir)?;
    let evaluated = statements::evaluate_dir(dir)?;
    write_statement_files(dir, &evaluated)?;
    let mut doc = report_doc(&plan, plan_text.as_deref(), &summary, &figures)?;
    // The claims and checks come right after the question: they are the page's answer.
    let mut answer = claims_blocks(&evaluated);
    answer.extend(checks_blocks(&evaluated));
    if !plan.findings.is_empty() {
        answer.push(Block::Para(format!(
            "This plan still states {} `[[findings]]` (deprecated): they are read as checks \
             (mean of ratios, pooled over the other axes when the plan runs repetitions).",
            plan.findings.len()
        )));
    }
    answer.extend(crate::present::assumptions::assumptions_blocks(
        &plan.assumptions,
    ));
    if !plan.discussion.trim().is_empty() {
        answer.push(Block::Heading(2, "Discussion".into()));
        answer.extend(
            plan.discussion
                .split("\n\n")
                .map(|p| Block::Para(p.trim().to_string())),
        );
    }
    doc.splice(3..3, answer);
    let md = dir.join("report.md");
    std::fs::write(&md, to_markdown(&doc)).map_err(io_err(&md))?;
    let html = dir.join("report.html");
    std::fs::write(&html, to_html(&plan.title, &doc)).map_err(io_err(&html))?;
    Ok(md)
}

/// `claims.csv`, `checks.csv` and their per-point tables (each only when the plan has
/// such statements); an old `findings.csv` is removed so no reader takes it for current.
fn write_statement_files(dir: &Path, e: &Evaluation) -> Result<(), ReportError> {
    let files = [
        (
            "claims.csv",
            !e.claims.is_empty(),
            statement_csv::claims_csv(&e.claims),
        ),
        (
            "claims_points.csv",
            !e.claims.is_empty(),
            statement_csv::claims_points_csv(&e.claims),
        ),
        (
            "checks.csv",
            !e.checks.is_empty(),
            statement_csv::checks_csv(&e.checks),
        ),
        (
            "checks_points.csv",
            !e.checks.is_empty(),
            statement_csv::checks_points_csv(&e.checks),
        ),
    ];
    for (name, wanted, text) in files {
        let path = dir.join(name);
        if wanted {
            std::fs::write(&path, text).map_err(io_err(&path))?;
        } else if path.exists() {
            std::fs::remove_file(&path).map_err(io_err(&path))?;
        }
    }
    let old = dir.join("findings.csv");
    if old.exists() {
        std::fs::remove_file(&old).map_err(io_err(&old))?;
    }
    Ok(())
}

/// File stems of `dir/figures/*.png`, sorted.
fn list_figures(dir: &Path) -> Result<Vec<String>, ReportError> {
    let fig_dir = dir.join("figures");
    let Ok(entries) = std::fs::read_dir(&fig_dir) else {
        return Ok(Vec::new());
    };
    let mut stems = Vec::new();
    for entry in entries {
        let path = entry.map_err(io_err(&fig_dir))?.path();
        if path.extension().is_some_and(|e| e == "png") {
            if let Some(stem) = path.file_stem() {
                stems.push(stem.to_string_lossy().into_owned());
            }
        }
    }
    stems.sort();
    Ok(stems)
}

fn fmt_axis_value(v: &AxisValue) -> String {
    match v {
        AxisValue::Number(n) => n.to_string(),
        AxisValue::Text(s) => s.clone(),
    }
}

/// Per point and metric with an expectation: measured mean, expected, deviation.
struct Check {
    row: usize,
    metric: String,
    mean: Option<f64>,
    expected: Option<f64>,
    deviation: Option<f64>,
}

/// Metrics that have an expectation in the plan and an `<m>_expected` column.
fn checked_metrics(plan: &Plan, summary: &Table) -> Vec<String> {
    plan.expected
        .keys()
        .filter(|m| summary.column(&format!("{m}_expected")).is_some())
        .cloned()
        .collect()
}

fn checks(plan: &Plan, summary: &Table) -> Result<Vec<Check>, CsvError> {
    let metrics = checked_metrics(plan, summary);
    let mut out = Vec::new();
    for row in 0..summary.rows.len() {
        for m in &metrics {
            let mean = summary.f64(row, &format!("{m}_mean"))?;
            let expected = summary.f64(row, &format!("{m}_expected"))?;
            let dev_col = format!("{m}_deviation");
            let deviation = match summary.column(&dev_col) {
                Some(c) => summary.f64_at(row, c)?,
                None => None,
            }
            .or(match (mean, expected) {
                (Some(a), Some(e)) if e != 0.0 => Some(a / e - 1.0),
                _ => None,
            });
            out.push(Check {
                row,
                metric: m.clone(),
                mean,
                expected,
                deviation,
            });
        }
    }
    Ok(out)
}

/// Per point: Some(true) within tolerance for every checked metric, Some(false) outside
/// for some metric, None without data.
fn point_verdicts(checks: &[Check], points: usize, tol: f64) -> Vec<Option<bool>> {
    (0..points)
        .map(|p| {
            let mut verdict = Some(true);
            for c in checks.iter().filter(|c| c.row == p) {
                match c.deviation {
                    Some(d) if d.is_nan() || d.abs() > tol => return Some(false),
                    Some(_) => {}
                    None => verdict = None,
                }
            }
            verdict
        })
        .collect()
}

/// "12 of 12 points within 5%" (plus points without data), or `None` when the plan has
/// no tolerance or no expectation with values in the summary.
pub fn overall_verdict(plan: &Plan, summary: &Table) -> Result<Option<String>, CsvError> {
    let Some(tol) = plan.tolerance else {
        return Ok(None);
    };
    if checked_metrics(plan, summary).is_empty() {
        return Ok(None);
    }
    let checks = checks(plan, summary)?;
    let verdicts = point_verdicts(&checks, summary.rows.len(), tol);
    let within = verdicts.iter().filter(|v| **v == Some(true)).count();
    let missing = verdicts.iter().filter(|v| v.is_none()).count();
    let mut line = format!(
        "{within} of {} points within {}",
        verdicts.len(),
        fmt_tol(tol)
    );
    if missing > 0 {
        let _ = write!(line, " ({missing} without data)");
    }
    Ok(Some(line))
}

/// The summary's points: their number and axis cells, for the tables of a report.
struct PointCells<'a> {
    summary: &'a Table,
    axis_cols: Vec<usize>,
    axis_names: Vec<String>,
}

impl<'a> PointCells<'a> {
    fn new(plan: &Plan, summary: &'a Table) -> Result<PointCells<'a>, CsvError> {
        let axis_cols = plan
            .axes
            .iter()
            .map(|a| summary.require(&a.name))
            .collect::<Result<Vec<_>, _>>()?;
        let axis_names = plan.axes.iter().map(|a| a.name.clone()).collect();
        Ok(PointCells {
            summary,
            axis_cols,
            axis_names,
        })
    }

    fn axis_cells(&self, row: usize) -> Vec<String> {
        self.axis_cols
            .iter()
            .map(|&c| self.summary.get(row, c).unwrap_or("–").to_string())
            .collect()
    }

    fn point(&self, row: usize) -> String {
        self.summary
            .column("point")
            .and_then(|c| self.summary.get(row, c))
            .unwrap_or("")
            .to_string()
    }

    /// "point", the axis names, then `rest`.
    fn header(&self, rest: impl IntoIterator<Item = String>) -> Vec<String> {
        let mut header = vec!["point".to_string()];
        header.extend(self.axis_names.iter().cloned());
        header.extend(rest);
        header
    }

    /// The point and its axis cells: the start of a row.
    fn row_start(&self, row: usize) -> Vec<String> {
        let mut cells = vec![self.point(row)];
        cells.extend(self.axis_cells(row));
        cells
    }
}

/// The report without findings and discussion: title and question, the plan, figures,
/// summary tables and the comparison with the expected result.
fn report_doc(
    plan: &Plan,
    plan_text: Option<&str>,
    summary: &Table,
    figures: &[String],
) -> Result<Vec<Block>, ReportError> {
    let cells = PointCells::new(plan, summary)?;
    let mut doc = vec![
        Block::Heading(1, plan.title.clone()),
        Block::Heading(2, "Question".into()),
        Block::Para(plan.question.clone()),
    ];
    doc.extend(plan_section(plan, plan_text, summary.rows.len()));
    doc.extend(figures_section(plan, figures));
    doc.extend(summary_section(plan, &cells)?);
    doc.extend(comparison_section(plan, &cells)?);
    Ok(doc)
}

/// "Plan": how the sweep is built (axes, scenario settings, metrics) and the plan file.
fn plan_section(plan: &Plan, plan_text: Option<&str>, points: usize) -> Vec<Block> {
    let mut doc = vec![Block::Heading(2, "Plan".into())];
    doc.push(Block::Para(format!(
        "Plan {}: base scenario {}, master seed {}, {} repetition(s) per point, axes combined {}, {} point(s).",
        plan.name,
        plan.base,
        plan.master_seed,
        plan.repetitions,
        match plan.combine {
            Combine::Cartesian => "as a cartesian product",
            Combine::Zip => "element-wise (zip)",
        },
        points
    )));
    doc.push(Block::Heading(3, "Axes".into()));
    doc.push(Block::List(
        plan.axes
            .iter()
            .map(|a| {
                let mut s = a.name.clone();
                if let Some(l) = &a.label {
                    let _ = write!(s, " ({l})");
                }
                if let Some(vs) = &a.values {
                    let vs: Vec<String> = vs.iter().map(fmt_axis_value).collect();
                    let _ = write!(s, ": {}", vs.join(", "));
                }
                if let Some(r) = &a.range {
                    let scale = match r.scale {
                        Scale::Linear => "linear",
                        Scale::Log => "log",
                    };
                    let _ = write!(
                        s,
                        ": {} to {}, {} steps, {scale} scale",
                        r.from, r.to, r.steps
                    );
                }
                s
            })
            .collect(),
    ));
    doc.push(Block::Heading(3, "Scenario settings".into()));
    if plan.set.is_empty() {
        doc.push(Block::Para("None: the base scenario as is.".into()));
    } else {
        doc.push(Block::Table {
            header: vec!["scenario key".into(), "expression".into()],
            rows: plan
                .set
                .iter()
                .map(|(k, v)| vec![k.clone(), v.clone()])
                .collect(),
        });
    }
    if !plan.cases.is_empty() {
        doc.push(Block::Para(
            "Settings per value of a text axis (applied after the above):".into(),
        ));
        let mut rows = Vec::new();
        for (axis, cases) in &plan.cases {
            for (value, entries) in cases {
                for (k, v) in entries {
                    rows.push(vec![format!("{axis} = {value}"), k.clone(), v.clone()]);
                }
            }
        }
        doc.push(Block::Table {
            header: vec!["case".into(), "scenario key".into(), "expression".into()],
            rows,
        });
    }
    doc.push(Block::Heading(3, "Metrics".into()));
    doc.push(Block::Table {
        header: vec!["metric".into(), "result path".into(), "expected".into()],
        rows: plan
            .metrics
            .iter()
            .map(|(k, v)| {
                let e = plan.expected.get(k).cloned().unwrap_or_default();
                vec![k.clone(), v.clone(), e]
            })
            .collect(),
    });
    if let Some(t) = plan.tolerance {
        doc.push(Block::Para(format!(
            "Tolerance of measured vs expected: {}.",
            fmt_tol(t)
        )));
    }
    doc.push(Block::Heading(3, "Plan file".into()));
    let text = match plan_text {
        Some(t) => t.to_string(),
        None => toml::to_string(plan)
            .or_else(|_| serde_json::to_string_pretty(plan))
            .unwrap_or_default(),
    };
    doc.push(Block::Code(text));
    doc
}

/// "Figures": each rendered figure under its title, and the plan's figures not rendered.
fn figures_section(plan: &Plan, figures: &[String]) -> Vec<Block> {
    let mut doc = vec![Block::Heading(2, "Figures".into())];
    if figures.is_empty() {
        doc.push(Block::Para("No figures.".into()));
    }
    for stem in figures {
        let title = plan
            .figures
            .iter()
            .find(|f| &f.file == stem)
            .map(|f| f.title.clone())
            .unwrap_or_else(|| stem.clone());
        doc.push(Block::Heading(3, title.clone()));
        doc.push(Block::Image {
            title,
            src: format!("figures/{stem}.png"),
        });
    }
    let missing: Vec<&str> = plan
        .figures
        .iter()
        .filter(|f| !figures.contains(&f.file))
        .map(|f| f.file.as_str())
        .collect();
    if !missing.is_empty() {
        doc.push(Block::Para(format!(
            "Not rendered: {}.",
            missing.join(", ")
        )));
    }
    doc
}

/// "Summary": one table per metric with mean, CI and n per point (and Mbit/s for
/// `*_bps` metrics, expected value and deviation where the plan expects one).
fn summary_section(plan: &Plan, cells: &PointCells) -> Result<Vec<Block>, CsvError> {
    let mut doc = vec![Block::Heading(2, "Summary".into())];
    for m in plan.metrics.keys() {
        let (header, rows) = metric_table(m, cells)?;
        doc.push(Block::Heading(3, m.clone()));
        doc.push(Block::Table { header, rows });
    }
    Ok(doc)
}

/// The summary table of metric `m`: header and rows.
fn metric_table(m: &str, cells: &PointCells) -> Result<(Vec<String>, Vec<Vec<String>>), CsvError> {
    let summary = cells.summary;
    let col = |s: &str| summary.require(&format!("{m}_{s}"));
    let (mean, n, lo, hi) = (col("mean")?, col("n")?, col("ci_lo")?, col("ci_hi")?);
    let exp = summary.column(&format!("{m}_expected"));
    let dev = summary.column(&format!("{m}_deviation"));
    let bps = m.ends_with("_bps");
    let mut header = cells.header(["mean".into(), "CI".into(), "n".into()]);
    if bps {
        header.extend(["mean (Mbit/s)".into(), "CI (Mbit/s)".into()]);
    }
    if exp.is_some() {
        header.extend(["expected".into(), "deviation".into()]);
    }
    let mut rows = Vec::new();
    for r in 0..summary.rows.len() {
        let num = |c: usize, scale: f64| -> Result<Option<f64>, CsvError> {
            Ok(summary.f64_at(r, c)?.map(|v| v * scale))
        };
        let show = |v: Option<f64>| v.map(fmt_num).unwrap_or_else(|| "–".into());
        let ci = |scale: f64| -> Result<String, CsvError> {
            Ok(match (num(lo, scale)?, num(hi, scale)?) {
                (Some(a), Some(b)) => format!("[{}, {}]", fmt_num(a), fmt_num(b)),
                _ => "–".into(),
            })
        };
        let mut row = cells.row_start(r);
        row.push(show(num(mean, 1.0)?));
        row.push(ci(1.0)?);
        row.push(summary.get(r, n).unwrap_or("0").to_string());
        if bps {
            row.push(show(num(mean, 1e-6)?));
            row.push(ci(1e-6)?);
        }
        if let Some(e) = exp {
            let ev = num(e, 1.0)?;
            row.push(show(ev));
            let d = match dev {
                Some(d) => num(d, 1.0)?,
                None => None,
            }
            .or(match (num(mean, 1.0)?, ev) {
                (Some(a), Some(e)) if e != 0.0 => Some(a / e - 1.0),
                _ => None,
            });
            row.push(d.map(fmt_pct).unwrap_or_else(|| "–".into()));
        }
        rows.push(row);
    }
    Ok((header, rows))
}

/// "Comparison with the expected result": the published result, and per point and
/// metric the deviation from the expectation with the verdict against the tolerance.
fn comparison_section(plan: &Plan, cells: &PointCells) -> Result<Vec<Block>, CsvError> {
    let summary = cells.summary;
    let mut doc = vec![Block::Heading(
        2,
        "Comparison with the expected result".into(),
    )];
    if !plan.published.trim().is_empty() {
        doc.push(Block::Para("Published / expected result:".into()));
        doc.push(Block::Quote(plan.published.clone()));
    }
    let metrics = checked_metrics(plan, summary);
    for m in plan.expected.keys().filter(|m| !metrics.contains(m)) {
        doc.push(Block::Para(format!(
            "The plan expects {m}, but {} has no column {m}_expected.",
            summary.source
        )));
    }
    match plan.tolerance {
        Some(tol) if !metrics.is_empty() => doc.extend(tolerance_blocks(plan, cells, tol)?),
        Some(_) => doc.push(Block::Para(
            "No expectations with values in the summary: no verdict.".into(),
        )),
        None => doc.push(Block::Para("No tolerance set: no verdict.".into())),
    }
    Ok(doc)
}

/// Each check against the tolerance, the points outside it and the overall verdict.
fn tolerance_blocks(plan: &Plan, cells: &PointCells, tol: f64) -> Result<Vec<Block>, CsvError> {
    let summary = cells.summary;
    let checks = checks(plan, summary)?;
    let verdicts = point_verdicts(&checks, summary.rows.len(), tol);
    let header =
        cells.header(["metric", "measured", "expected", "deviation", "verdict"].map(String::from));
    let rows = checks
        .iter()
        .map(|c| {
            let mut row = cells.row_start(c.row);
            let show = |v: Option<f64>| v.map(fmt_num).unwrap_or_else(|| "–".into());
            row.push(c.metric.clone());
            row.push(show(c.mean));
            row.push(show(c.expected));
            row.push(c.deviation.map(fmt_pct).unwrap_or_else(|| "–".into()));
            row.push(
                match c.deviation {
                    Some(d) if !d.is_nan() && d.abs() <= tol => "within",
                    Some(_) => "outside",
                    None => "no data",
                }
                .into(),
            );
            row
        })
        .collect();
    let mut doc = vec![Block::Table { header, rows }];
    let outside: Vec<String> = verdicts
        .iter()
        .enumerate()
        .filter(|(_, v)| **v == Some(false))
        .map(|(r, _)| cells.point(r))
        .collect();
    if !outside.is_empty() {
        doc.push(Block::Para(format!(
            "Points outside tolerance: {}.",
            outside.join(", ")
        )));
    }
    if let Some(line) = overall_verdict(plan, summary)? {
        doc.push(Block::Para(format!("Overall: {line}.")));
    }
    Ok(doc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Axis, FigureSpec, Quick};
    use std::collections::BTreeMap;

    /// A fresh, unique temporary directory (removed at the end of the test).
    struct TempDir(PathBuf);
    impl TempDir {
        fn new(tag: &str) -> TempDir {
            let p = std::env::temp_dir().join(format!(
                "quiclab-report-{tag}-{}-{:?}",
                std::process::id(),
                std::thread::current().id()
            ));
            let _ = std::fs::remove_dir_all(&p);
            std::fs::create_dir_all(&p).unwrap();
            TempDir(p)
        }
    }
    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn plan() -> Plan {
        Plan {
            name: "bdp".into(),
            title: "Throughput <vs> RTT".into(),
            question: "Does throughput fall as 1/RTT when the window is capped?".into(),
            published: "Throughput = window / RTT (Mathis et al.)".into(),
            discussion: String::new(),
            assumptions: Vec::new(),
            assumptions_files: Vec::new(),
            base: "base.toml".into(),
            master_seed: 7,
            repetitions: 3,
            combine: Combine::Cartesian,
            common_random_numbers: vec![],
            axes: vec![Axis {
                name: "rtt".into(),
                values: Some(vec![AxisValue::Number(10.0), AxisValue::Number(20.0)]),
                range: None,
                label: Some("RTT (ms)".into()),
                value_labels: BTreeMap::new(),
            }],
            cases: BTreeMap::new(),
            set: BTreeMap::from([(
                "topology.forward.delay_ms".to_string(),
                "rtt / 2".to_string(),
            )]),
            metrics: BTreeMap::from([(
                "tput_bps".to_string(),
                "links[0].payload_throughput_bps".to_string(),
            )]),
            expected: BTreeMap::from([("tput_bps".to_string(), "1e9 / rtt".to_string())]),
            tolerance: Some(0.05),
            quick: Quick::default(),
            figures: vec![FigureSpec {
                file: "tput".into(),
                title: "Throughput vs RTT".into(),
                kind: "lines".into(),
                x: Some("rtt".into()),
                y: "tput_bps".into(),
                series: None,
                x_label: None,
                y_label: None,
                y_factor: 1e-6,
                x_scale: Scale::Linear,
                y_scale: Scale::Linear,
                expected: true,
                filter: BTreeMap::new(),
            }],
            deterministic: false,
            claims: vec![],
            checks: vec![],
            findings: vec![],
            min_pairs: 5,
            endpoints: None,
            quick_run: false,
        }
    }

    const SUMMARY: &str = "\
point,rtt,tput_bps_n,tput_bps_mean,tput_bps_median,tput_bps_p5,tput_bps_p95,tput_bps_ci_lo,tput_bps_ci_hi,tput_bps_expected,tput_bps_deviation
0,10,3,98000000,98000000,97000000,99000000,97000000,99000000,100000000,-0.02
1,20,3,40000000,40000000,40000000,40000000,40000000,40000000,50000000,-0.2
";

    fn results_dir(tag: &str, with_json: bool) -> TempDir {
        let t = TempDir::new(tag);
        let d = &t.0;
        let p = plan();
        std::fs::write(d.join("plan.toml"), toml::to_string(&p).unwrap()).unwrap();
        if with_json {
            std::fs::write(
                d.join("plan.resolved.json"),
                serde_json::to_string(&p).unwrap(),
            )
            .unwrap();
        }
        std::fs::write(d.join("summary.csv"), SUMMARY).unwrap();
        std::fs::create_dir_all(d.join("figures")).unwrap();
        std::fs::write(d.join("figures/tput.png"), b"not really a png").unwrap();
        t
    }

    #[test]
    fn report_has_question_table_and_verdict() {
        let t = results_dir("full", true);
        let md_path = write_report(&t.0).unwrap();
        assert_eq!(md_path, t.0.join("report.md"));
        let md = std::fs::read_to_string(&md_path).unwrap();
        assert!(md.starts_with("# Throughput <vs> RTT\n"), "{md}");
        assert!(md.contains("Does throughput fall as 1/RTT"));
        assert!(md.contains("| 0 | 10 | 9.800e7 | [9.700e7, 9.900e7] | 3 | 98.00 | [97.00, 99.00] | 1.000e8 | -2.00% |"), "{md}");
        assert!(md.contains("| within |"));
        assert!(md.contains("| outside |"));
        assert!(md.contains("Overall: 1 of 2 points within 5%."), "{md}");
        assert!(md.contains("> Throughput = window / RTT"));
        assert!(md.contains("![Throughput vs RTT](figures/tput.png)"));
        assert!(md.contains("topology.forward.delay_ms"));
        assert!(md.contains("```\n"));
        assert!(md.contains("rtt (RTT (ms)): 10, 20"));

        let html = std::fs::read_to_string(t.0.join("report.html")).unwrap();
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains("<h1>Throughput &lt;vs&gt; RTT</h1>"));
        assert!(!html.contains("<vs>"));
        assert!(html.contains("<img src=\"figures/tput.png\""));
        assert!(html.trim_end().ends_with("</html>"));
    }

    #[test]
    fn falls_back_to_plan_toml_and_indexes() {
        let a = results_dir("toml", false);
        write_report(&a.0).unwrap();
        let md = std::fs::read_to_string(a.0.join("report.md")).unwrap();
        assert!(md.contains("1 of 2 points within 5%"));

        let root = TempDir::new("index");
        let exp = root.0.join("bdp");
        std::fs::create_dir_all(&exp).unwrap();
        for f in ["plan.toml", "summary.csv"] {
            std::fs::copy(a.0.join(f), exp.join(f)).unwrap();
        }
        let bad = root.0.join("broken");
        let idx = crate::present::index::write_index(
            &root.0,
            &[exp, bad],
            &crate::present::record::LastFullRun::default(),
        )
        .unwrap();
        let md = std::fs::read_to_string(idx).unwrap();
        assert!(
            md.contains("- [Throughput <vs> RTT](bdp/report.md) — 1 of 2 points within 5%"),
            "{md}"
        );
        assert!(md.contains("error:"));
        let html = std::fs::read_to_string(root.0.join("index.html")).unwrap();
        assert!(html.contains("<a href=\"bdp/report.html\">Throughput &lt;vs&gt; RTT</a>"));
    }

    #[test]
    fn missing_inputs_are_errors_not_panics() {
        let t = TempDir::new("empty");
        let e = write_report(&t.0).unwrap_err().to_string();
        assert!(e.contains("plan.resolved.json nor plan.toml"), "{e}");

        let t = results_dir("nocol", true);
        std::fs::write(t.0.join("summary.csv"), "point,rtt\n0,10\n").unwrap();
        let e = write_report(&t.0).unwrap_err().to_string();
        assert!(
            e.contains("summary.csv") && e.contains("tput_bps_mean"),
            "{e}"
        );

        std::fs::write(t.0.join("summary.csv"), "point,tput_bps_mean\n0,1\n").unwrap();
        let e = write_report(&t.0).unwrap_err().to_string();
        assert!(e.contains("\"rtt\""), "{e}");
    }

    #[test]
    fn number_formatting() {
        assert_eq!(fmt_num(0.0), "0");
        assert_eq!(fmt_num(1.0), "1.000");
        assert_eq!(fmt_num(12345.6), "12346");
        assert_eq!(fmt_num(0.012346), "0.01235");
        assert_eq!(fmt_num(-3.5), "-3.500");
        assert_eq!(fmt_num(9.87e8), "9.870e8");
        assert_eq!(fmt_num(1e-5), "1.000e-5");
        assert_eq!(fmt_tol(0.05), "5%");
        assert_eq!(fmt_tol(0.025), "2.5%");
        assert_eq!(fmt_pct(-0.02), "-2.00%");
    }
}
