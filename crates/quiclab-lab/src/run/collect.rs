//! From cached runs to result files: each run's metrics as a row, the per-point
//! statistics, and the deterministic files ([`crate::run::output`]). Whatever executed
//! the runs (the local runner, Dask workers), the files are made here from the cache,
//! so they are the same bytes.
//!
//! Metrics: each `[metrics]` path is read from `result`; a missing step, `null` or a
//! non-number makes the metric absent for that run (an empty CSV cell, `null` in JSON),
//! and statistics are over the runs where it is present.

use crate::error::LabError;
use crate::expr::Expr;
use crate::plan::path::MetricPath;
use crate::plan::points::numeric_vars;
use crate::plan::{AxisValue, Plan};
use crate::run::cache::load_run;
use crate::run::output::write_outputs;
use crate::run::prepare::{cache_dir, PreparedPlan};
use crate::run::rows::{PointSummary, Row};
use crate::run::stats::Stats;
use crate::run::store::provenance::Invocation;
use crate::run::store::write_store;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

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

/// Reads every run of `prepared` from `out/cache` (all must be there), writes the
/// result files into `out` and returns the outcome; `ran` is how many runs this
/// invocation executed (the other distinct runs count as reused). The results
/// store's file ([`crate::run::store`]) records no run times and only this call's time.
pub fn collect(prepared: &PreparedPlan, out: &Path, ran: usize) -> Result<PlanOutcome, LabError> {
    collect_in(prepared, out, ran, &Invocation::start())
}

/// [`collect`] for an executor that timed its runs and itself in `invocation`.
pub fn collect_in(
    prepared: &PreparedPlan,
    out: &Path,
    ran: usize,
    invocation: &Invocation,
) -> Result<PlanOutcome, LabError> {
    let plan = &prepared.plan;
    let cache_dir = cache_dir(out)?;
    let sources = metric_sources(plan);
    let mut rows = Vec::with_capacity(prepared.specs.len());
    for s in &prepared.specs {
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
    let summaries = summarise(plan, &rows);
    write_outputs(&prepared.plan_path, out, plan, &rows, &summaries)?;
    write_store(prepared, &rows, invocation, out)?;
    let unique = prepared.unique().len();
    Ok(PlanOutcome {
        plan: plan.clone(),
        rows,
        summaries,
        cache_dir,
        ran,
        reused: unique.saturating_sub(ran),
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
