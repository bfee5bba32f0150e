//! Running a plan: the missing runs in parallel (rayon), each result cached under its
//! run key so an interrupted sweep resumes where it stopped, then the metrics of every
//! run and the per-point statistics, written as deterministic files.
//!
//! Cache: `out/cache/<key>.json` = `{"key", "seed", "rep", "params", "result"}` where
//! `result` is the simulator's `RunResult`. It is written to a temporary file and renamed,
//! so a killed sweep leaves either a complete entry or a stray `*.tmp-*` file, which is
//! ignored. An entry that does not parse is treated as missing and re-run.
//!
//! Metrics: each `[metrics]` path is read from `result`; a missing step, `null` or a
//! non-number makes the metric absent for that run (an empty CSV cell, `null` in JSON),
//! and statistics are over the runs where it is present.

use crate::error::LabError;
use crate::expand::{apply_quick, expand, load_plan, RunSpec};
use crate::expr::Expr;
use crate::output::write_outputs;
use crate::path::MetricPath;
use crate::plan::{AxisValue, Plan};
use crate::stats::Stats;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use quiclab_sim::Simulation;
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

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

/// One run's row of the results.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub point: usize,
    pub rep: u32,
    pub seed: u64,
    pub params: BTreeMap<String, AxisValue>,
    /// Metrics present in this run.
    pub metrics: BTreeMap<String, f64>,
    /// The point's expected values.
    pub expected: BTreeMap<String, f64>,
    /// Cache key: `load_run(cache_dir, key)` gives the full result.
    pub key: String,
}

/// One point's statistics over its repetitions.
#[derive(Clone, Debug, PartialEq)]
pub struct PointSummary {
    pub point: usize,
    pub params: BTreeMap<String, AxisValue>,
    /// Metrics present in at least one run.
    pub stats: BTreeMap<String, Stats>,
    pub expected: BTreeMap<String, f64>,
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

fn cache_path(cache_dir: &Path, key: &str) -> PathBuf {
    cache_dir.join(format!("{key}.json"))
}

/// A cache entry's full JSON, if present and readable.
fn read_entry(cache_dir: &Path, key: &str) -> Option<serde_json::Value> {
    let text = std::fs::read(cache_path(cache_dir, key)).ok()?;
    let v: serde_json::Value = serde_json::from_slice(&text).ok()?;
    (v.get("key")?.as_str()? == key && v.get("result")?.is_object()).then_some(v)
}

/// The cached result of one run (the simulator's `RunResult` as JSON), e.g. for a
/// figure of its goodput time series.
pub fn load_run(cache_dir: &Path, key: &str) -> Result<serde_json::Value, LabError> {
    let path = cache_path(cache_dir, key);
    let text = std::fs::read(&path).map_err(|e| LabError::io(&path, e))?;
    let mut v: serde_json::Value = serde_json::from_slice(&text).map_err(|e| LabError::Data {
        file: path.display().to_string(),
        why: e.to_string(),
    })?;
    v.get_mut("result")
        .map(serde_json::Value::take)
        .ok_or_else(|| LabError::Data {
            file: path.display().to_string(),
            why: "no `result` in cache entry".into(),
        })
}

/// Writes `bytes` to `path` via a temporary file in the same directory and a rename,
/// so readers never see a partial file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), LabError> {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("out");
    let tmp = path.with_file_name(format!("{name}.tmp-{}-{n}", std::process::id()));
    std::fs::write(&tmp, bytes).map_err(|e| LabError::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        LabError::io(path, e)
    })
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
    let entry = serde_json::json!({
        "key": spec.key,
        "seed": spec.seed,
        "rep": spec.rep,
        "params": spec.params,
        "result": result,
    });
    let bytes = serde_json::to_vec(&entry).map_err(|e| fail(e.to_string()))?;
    write_atomic(&cache_path(cache_dir, &spec.key), &bytes)
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
    let mut vars = crate::expand::numeric_vars(params);
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
