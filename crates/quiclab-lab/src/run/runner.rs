//! Running a plan: the missing runs in parallel (rayon), each result cached under its
//! run key ([`crate::run::cache`]) so an interrupted sweep resumes where it stopped, then
//! the metrics of every run and the per-point statistics, written as deterministic files
//! ([`crate::run::output`]).
//!
//! Metrics: each `[metrics]` path is read from `result`; a missing step, `null` or a
//! non-number makes the metric absent for that run (an empty CSV cell, `null` in JSON),
//! and statistics are over the runs where it is present.

use crate::error::LabError;
use crate::expr::Expr;
use crate::plan::expand::{expand, RunSpec};
use crate::plan::load::load_plan;
use crate::plan::path::MetricPath;
use crate::plan::points::{apply_quick, numeric_vars};
use crate::plan::{AxisValue, Plan};
use crate::run::cache::{load_run, read_entry, store};
use crate::run::output::write_outputs;
use crate::run::rows::{PointSummary, Row};
use crate::run::stats::Stats;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use quiclab_sim::Simulation;
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// How to run a plan.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Worker threads; 0 = all cores.
    pub jobs: usize,
    /// Apply the plan's `[quick]` overrides.
    pub quick: bool,
    /// Show a progress bar (only when stderr is a terminal).
    pub progress: bool,
}

/// What running a plan produced.
#[derive(Clone, Debug)]
pub struct PlanOutcome {
    /// The plan as run (after `--quick` overrides when quick).
    pub plan: Plan,
    /// Sorted by (point, rep).
    pub rows: Vec<Row>,
    /// Sorted by point.
    pub summaries: Vec<PointSummary>,
    pub cache_dir: PathBuf,
    /// Runs executed now / taken from the cache.
    pub ran: usize,
    pub reused: usize,
}

/// Runs one simulation and stores its cache entry.
fn run_one(spec: &RunSpec, plan_file: &str, cache_dir: &Path) -> Result<(), LabError> {
    let label = format!(
        "{plan_file} point {} rep {} ({})",
        spec.point, spec.rep, spec.key
    );
    let fail = |why: String| LabError::Run {
        label: label.clone(),
        why,
    };
    let result = Simulation::new(spec.scenario.clone(), &label, None)
        .and_then(Simulation::run)
        .map_err(|e| fail(e.to_string()))?;
    store(cache_dir, spec, &result)
}

fn progress_bar(total: usize, done: usize, show: bool) -> ProgressBar {
    let pb = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::hidden());
    if show && std::io::stderr().is_terminal() {
        pb.set_draw_target(ProgressDrawTarget::stderr());
    }
    if let Ok(style) = ProgressStyle::with_template(
        "{bar:40.cyan/blue} {pos}/{len} runs  {elapsed_precise} elapsed, ETA {eta_precise}",
    ) {
        pb.set_style(style);
    }
    pb.set_position(done as u64);
    pb.reset_eta();
    pb
}

/// Loads, expands and runs a plan into `out` (see the module docs and `output` for the
/// files). Runs already in `out/cache` are reused.
pub fn run_plan(plan_path: &Path, out: &Path, opts: &RunOptions) -> Result<PlanOutcome, LabError> {
    let plan_file = plan_path.display().to_string();
    let plan = load_plan(plan_path)?;
    let specs = expand(&plan, plan_path, opts.quick)?;
    let plan = if opts.quick { apply_quick(&plan) } else { plan };
    let cache_dir = out.join("cache");
    std::fs::create_dir_all(&cache_dir).map_err(|e| LabError::io(&cache_dir, e))?;

    // Distinct keys only: two runs with the same resolved scenario are one simulation.
    let mut seen = BTreeSet::new();
    let missing: Vec<&RunSpec> = specs
        .iter()
        .filter(|s| seen.insert(s.key.clone()) && read_entry(&cache_dir, &s.key).is_none())
        .collect();
    let unique = seen.len();
    let pb = progress_bar(unique, unique - missing.len(), opts.progress);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.jobs)
        .build()
        .map_err(|e| LabError::Run {
            label: plan_file.clone(),
            why: format!("cannot start {} worker threads: {e}", opts.jobs),
        })?;
    let result = pool.install(|| {
        missing.par_iter().try_for_each(|spec| {
            let r = run_one(spec, &plan_file, &cache_dir);
            pb.inc(1);
            r
        })
    });
    pb.finish_and_clear();
    result?;

    let sources = metric_sources(&plan);
    let mut rows = Vec::with_capacity(specs.len());
    for s in &specs {
        let result = load_run(&cache_dir, &s.key)?;
        let metrics = extract_metrics(&sources, &result, &s.params);
        rows.push(Row {
            point: s.point,
            rep: s.rep,
            seed: s.seed,
            params: s.params.clone(),
            metrics,
            expected: s.expected.clone(),
            key: s.key.clone(),
        });
    }
    rows.sort_by_key(|r| (r.point, r.rep));
    let summaries = summarise(&plan, &rows);
    write_outputs(plan_path, out, &plan, &rows, &summaries)?;
    Ok(PlanOutcome {
        plan,
        rows,
        summaries,
        cache_dir,
        ran: missing.len(),
        reused: unique - missing.len(),
    })
}

/// Where a metric comes from: a path into the result, or `= expression` over the run's
/// other metrics and the point's numeric axes (derived metrics such as bytes per ACK).
enum MetricSource {
    Path(MetricPath),
    Derived(Expr),
}

/// The plan's metrics, parsed (validation already rejected bad ones).
fn metric_sources(plan: &Plan) -> Vec<(String, MetricSource)> {
    plan.metrics
        .iter()
        .filter_map(|(m, src)| {
            let source = match src.trim().strip_prefix('=') {
                Some(e) => MetricSource::Derived(Expr::parse(e).ok()?),
                None => MetricSource::Path(MetricPath::parse(src).ok()?),
            };
            Some((m.clone(), source))
        })
        .collect()
}

/// One run's metrics: path metrics first, then derived ones (a derived metric whose
/// inputs are missing, or whose value is not finite, is missing too).
fn extract_metrics(
    sources: &[(String, MetricSource)],
    result: &serde_json::Value,
    params: &BTreeMap<String, AxisValue>,
) -> BTreeMap<String, f64> {
    let mut metrics: BTreeMap<String, f64> = sources
        .iter()
        .filter_map(|(m, s)| match s {
            MetricSource::Path(p) => Some((m.clone(), p.value_in(result)?)),
            MetricSource::Derived(_) => None,
        })
        .collect();
    let mut vars = numeric_vars(params);
    vars.extend(metrics.iter().map(|(k, v)| (k.clone(), *v)));
    for (m, s) in sources {
        if let MetricSource::Derived(e) = s {
            if let Some(v) = e.eval(&vars).ok().filter(|v| v.is_finite()) {
                metrics.insert(m.clone(), v);
            }
        }
    }
    metrics
}

/// Per-point statistics of every metric (rows sorted by point).
pub fn summarise(plan: &Plan, rows: &[Row]) -> Vec<PointSummary> {
    let mut out: Vec<PointSummary> = Vec::new();
    for chunk in rows.chunk_by(|a, b| a.point == b.point) {
        let first = &chunk[0];
        let stats = plan
            .metrics
            .keys()
            .filter_map(|m| {
                let v: Vec<f64> = chunk
                    .iter()
                    .filter_map(|r| r.metrics.get(m).copied())
                    .collect();
                Some((m.clone(), Stats::of(&v)?))
            })
            .collect();
        out.push(PointSummary {
            point: first.point,
            params: first.params.clone(),
            stats,
            expected: first.expected.clone(),
        });
    }
    out
}
