//! Named reproductions: `experiments/<name>.toml` is one plan, `experiments/<name>/` a
//! group of plans. Reproducing runs each plan (cached, in parallel), draws its figures,
//! writes its report, and writes the index ([`crate::present::index`]), with the last
//! full run from `experiments/last-full-run.csv`.

use crate::csv::{self, row_matches};
use crate::error::LabError;
use crate::plan::{AxisValue, FigureSpec};
use crate::present::figures::build_figure;
use crate::present::index::write_index;
use crate::present::plot::{self, Chart, Figure, Point, Series, Style};
use crate::present::record::LastFullRun;
use crate::present::report;
use crate::run::cache::load_run;
use crate::run::runner::{run_plan, PlanOutcome, RunOptions};
use crate::run::stats::Stats;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A named experiment and its plan files (sorted by file name).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Experiment {
    pub name: String,
    pub plans: Vec<PathBuf>,
}

fn toml_files(dir: &Path) -> Result<Vec<PathBuf>, LabError> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| LabError::io(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    Ok(files)
}

/// The experiments under `root`, sorted by name.
pub fn list(root: &Path) -> Result<Vec<Experiment>, LabError> {
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(root)
        .map_err(|e| LabError::io(root, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for p in entries {
        let Some(stem) = p.file_stem().and_then(|s| s.to_str()).map(str::to_string) else {
            continue;
        };
        if p.is_dir() {
            let plans = toml_files(&p)?;
            if !plans.is_empty() {
                out.push(Experiment { name: stem, plans });
            }
        } else if p.extension().is_some_and(|x| x == "toml") {
            out.push(Experiment {
                name: stem,
                plans: vec![p],
            });
        }
    }
    Ok(out)
}

fn data_err(file: &Path, why: impl std::fmt::Display) -> LabError {
    LabError::Data {
        file: file.display().to_string(),
        why: why.to_string(),
    }
}

/// The last full run's record in the experiments directory (see [`crate::present::record`]).
pub const LAST_FULL_RUN: &str = "last-full-run.csv";

/// What `reproduce` wrote: the index and each plan's results directory (for
/// [`crate::present::statements::gate`] and [`crate::present::record`]).
#[derive(Clone, Debug)]
pub struct Reproduction {
    pub index: PathBuf,
    pub dirs: Vec<PathBuf>,
}

/// Runs one plan into `out`, draws its figures and writes its report; returns the
/// report's path.
pub fn run_and_report(
    plan_path: &Path,
    out: &Path,
    opts: &RunOptions,
) -> Result<PathBuf, LabError> {
    let outcome = run_plan(plan_path, out, opts)?;
    draw_figures(&outcome, out)?;
    report::write_report(out).map_err(|e| data_err(out, e))
}

/// Draws every figure of a plan's results into `out/figures/`.
pub fn draw_figures(outcome: &PlanOutcome, out: &Path) -> Result<(), LabError> {
    let summary =
        csv::read(out.join("summary.csv")).map_err(|e| data_err(&out.join("summary.csv"), e))?;
    let runs = csv::read(out.join("runs.csv")).map_err(|e| data_err(&out.join("runs.csv"), e))?;
    let dir = out.join("figures");
    std::fs::create_dir_all(&dir).map_err(|e| LabError::io(&dir, e))?;
    for spec in &outcome.plan.figures {
        // A figure of points the run left out (a `--quick` run drops axis values) is
        // skipped; the report lists it as not rendered.
        if !any_row_matches(&summary, &spec.filter) {
            continue;
        }
        let figure = if spec.kind == "timeseries" && spec.y == "cwnd" {
            super::cwnd_series::cwnd_timeseries(spec, outcome)?
        } else if spec.kind == "timeseries" {
            timeseries(spec, outcome)?
        } else {
            build_figure(spec, &outcome.plan, &summary, &runs).map_err(|e| {
                data_err(
                    &out.join("summary.csv"),
                    format!("figure {}: {e}", spec.file),
                )
            })?
        };
        let stem = dir.join(&spec.file);
        plot::render(&figure, &stem).map_err(|e| data_err(&stem, e))?;
    }
    Ok(())
}

/// Whether some row of `summary` has every axis value of `filter`.
fn any_row_matches(summary: &csv::Table, filter: &BTreeMap<String, AxisValue>) -> bool {
    (0..summary.rows.len()).any(|r| row_matches(summary, r, filter).unwrap_or(false))
}

/// One flow's goodput series in one run: (flow name, [(t, bit/s)]).
type FlowSeries = (String, Vec<(f64, f64)>);

/// A "timeseries" figure: each flow's goodput per interval, averaged over the
/// repetitions of the first point, with 95% confidence intervals. Bins a run did not
/// record (no delivery in that interval) count as zero.
fn timeseries(spec: &FigureSpec, outcome: &PlanOutcome) -> Result<Figure, LabError> {
    if spec.y != "goodput" {
        return Err(data_err(
            &outcome.cache_dir,
            format!(
                "figure {}: a timeseries plots `goodput` or `cwnd`, not `{}`",
                spec.file, spec.y
            ),
        ));
    }
    let runs: Vec<_> = outcome.rows.iter().filter(|r| r.point == 0).collect();
    let mut per_run: Vec<Vec<FlowSeries>> = Vec::new();
    for row in &runs {
        let result = load_run(&outcome.cache_dir, &row.key)?;
        let flows = result["flows"].as_array().cloned().unwrap_or_default();
        per_run.push(
            flows
                .iter()
                .map(|f| {
                    let pts = f["goodput_series"]
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .filter_map(|p| Some((p.get(0)?.as_f64()?, p.get(1)?.as_f64()?)))
                                .collect()
                        })
                        .unwrap_or_default();
                    (f["name"].as_str().unwrap_or("flow").to_string(), pts)
                })
                .collect(),
        );
    }
    // The sampling interval: the smallest spacing between consecutive bins of any series.
    let mut bin_width = f64::INFINITY;
    for flows in &per_run {
        for (_, pts) in flows {
            for w in pts.windows(2) {
                if w[1].0 > w[0].0 {
                    bin_width = bin_width.min(w[1].0 - w[0].0);
                }
            }
        }
    }
    if !bin_width.is_finite() {
        bin_width = 1.0;
    }
    // flow index -> (name, time bin -> one value per run, absent bins as zero)
    let mut flows: BTreeMap<usize, (String, BTreeMap<u64, Vec<f64>>)> = BTreeMap::new();
    for (n, run) in per_run.iter().enumerate() {
        for (i, (name, pts)) in run.iter().enumerate() {
            let entry = flows
                .entry(i)
                .or_insert_with(|| (name.clone(), BTreeMap::new()));
            for &(x, y) in pts {
                let v = entry.1.entry((x / bin_width).round() as u64).or_default();
                // Earlier runs lacked this bin: they delivered nothing then.
                v.resize(n, 0.0);
                v.push(y);
            }
        }
    }
    let total = runs.len();
    let series = flows
        .into_values()
        .map(|(name, bins)| Series {
            name,
            style: Style::Lines,
            points: bins
                .into_iter()
                .filter_map(|(bin, mut v)| {
                    v.resize(total, 0.0);
                    let s = Stats::of(&v)?;
                    // Goodput cannot be negative: a t-interval around a steep step (a
                    // sender starting or stopping) can reach below zero; clamp it there.
                    let err = (total > 1)
                        .then_some((s.ci_lo.max(0.0) * spec.y_factor, s.ci_hi * spec.y_factor));
                    Some(Point {
                        x: bin as f64 * bin_width,
                        y: s.mean * spec.y_factor,
                        err,
                    })
                })
                .collect(),
        })
        .collect();
    Ok(Figure {
        title: spec.title.clone(),
        x_label: spec.x_label.clone().unwrap_or_else(|| "Time (s)".into()),
        y_label: spec.y_label.clone().unwrap_or_else(|| "Goodput".into()),
        x_scale: spec.x_scale,
        y_scale: spec.y_scale,
        chart: Chart::XY {
            series,
            curves: vec![],
        },
    })
}

/// Reproduces `name` (or every experiment for "all") from `root` into `out`, one
/// directory per plan (`out/<experiment>/<plan name>`), and writes `out/index.md`.
/// Returns the index's path.
pub fn reproduce(
    root: &Path,
    name: &str,
    out: &Path,
    opts: &RunOptions,
) -> Result<Reproduction, LabError> {
    let all = list(root)?;
    let chosen: Vec<&Experiment> = if name == "all" {
        all.iter().collect()
    } else {
        all.iter().filter(|e| e.name == name).collect()
    };
    if chosen.is_empty() {
        let names: Vec<&str> = all.iter().map(|e| e.name.as_str()).collect();
        return Err(data_err(
            root,
            format!("no experiment named `{name}`; known: {}", names.join(", ")),
        ));
    }
    let mut dirs = Vec::new();
    for e in chosen {
        for plan in &e.plans {
            let stem = plan.file_stem().and_then(|s| s.to_str()).unwrap_or("plan");
            let dir = if e.plans.len() == 1 {
                out.join(&e.name)
            } else {
                out.join(&e.name).join(stem)
            };
            if opts.progress {
                eprintln!("== {} ({})", e.name, plan.display());
            }
            match run_and_report(plan, &dir, opts) {
                // `all` goes on without a real stack this machine lacks, and says so;
                // a named experiment fails with the reason.
                Err(err @ LabError::Unavailable { .. }) if name == "all" => {
                    eprintln!("== {} ({}): not run: {err}", e.name, plan.display());
                    continue;
                }
                r => r?,
            };
            dirs.push(dir);
        }
    }
    let full = LastFullRun::read(&root.join(LAST_FULL_RUN))?;
    let index = write_index(out, &dirs, &full).map_err(|e| data_err(out, e))?;
    Ok(Reproduction { index, dirs })
}

/// The experiments directory: `experiments/` under the current directory or one of its
/// ancestors (so commands work from anywhere in the repository).
pub fn find_root() -> Option<PathBuf> {
    let mut dir = std::env::current_dir().ok()?;
    loop {
        let candidate = dir.join("experiments");
        if candidate.is_dir() {
            return Some(candidate);
        }
        if !dir.pop() {
            return None;
        }
    }
}
