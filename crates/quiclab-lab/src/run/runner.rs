//! Running a plan locally: the missing runs in parallel (rayon), each result cached
//! under its run key ([`crate::run::cache`]) so an interrupted sweep resumes where it
//! stopped, then the result files from the cache ([`crate::run::collect`]).
//!
//! The stages are public for other executors: [`PreparedPlan`] (expand a plan into
//! resolved runs), [`crate::run::execute::execute`] (one run, a pure function of its
//! resolved scenario) and [`collect`] (rows, statistics and files from the cache).

use crate::error::LabError;
use crate::plan::expand::RunSpec;
use crate::run::cache::write_entry;
use crate::run::collect::collect_in;
pub use crate::run::collect::PlanOutcome;
use crate::run::execute::{run_label, simulate_entry};
use crate::run::prepare::{cache_dir, PreparedPlan};
use crate::run::real::{check_stacks, run_real};
use crate::run::store::provenance::Invocation;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use std::io::IsTerminal;
use std::path::Path;

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

/// Runs one simulation and stores its cache entry.
fn run_one(spec: &RunSpec, plan_file: &str, cache_dir: &Path) -> Result<(), LabError> {
    let label = run_label(spec, plan_file);
    let bytes = simulate_entry(
        spec.scenario.clone(),
        &label,
        &spec.key,
        spec.seed,
        spec.rep,
        &spec.params,
    )?;
    write_entry(cache_dir, &spec.key, &bytes)
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
    let invocation = Invocation::start();
    let prepared = PreparedPlan::load(plan_path, opts.quick)?;
    for w in &prepared.warnings {
        eprintln!("warning: {w}");
    }
    let plan_file = prepared.plan_file();
    let cache_dir = cache_dir(out)?;
    let missing = prepared.missing(&cache_dir);
    let unique = prepared.unique().len();
    let pb = progress_bar(unique, unique - missing.len(), opts.progress);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.jobs)
        .build()
        .map_err(|e| LabError::Run {
            label: plan_file.clone(),
            why: format!("cannot start {} worker threads: {e}", opts.jobs),
        })?;
    let (real, sim): (Vec<&RunSpec>, Vec<&RunSpec>) =
        missing.iter().partition(|s| s.stack.is_some());
    let endpoints = prepared.plan.endpoints.as_ref();
    let plan_dir = plan_path.parent().unwrap_or(Path::new("."));
    // Real stacks are checked before anything runs: an unavailable one stops here.
    let fixed = match endpoints {
        Some(e) => check_stacks(e, &real, plan_dir)?,
        None => Default::default(),
    };
    let result = pool.install(|| {
        sim.par_iter().try_for_each(|spec| {
            let r = invocation.time(&spec.key, || run_one(spec, &plan_file, &cache_dir));
            pb.inc(1);
            r
        })
    });
    let result = result.and_then(|()| {
        // Real runs one at a time, in wall-clock time (see `run::real`).
        real.iter().try_for_each(|spec| {
            let label = run_label(spec, &plan_file);
            let e = endpoints.ok_or_else(|| LabError::Run {
                label: label.clone(),
                why: "a real-stack run without [endpoints]".into(),
            })?;
            let bytes =
                invocation.time(&spec.key, || run_real(spec, e, &fixed, &cache_dir, &label))?;
            pb.inc(1);
            write_entry(&cache_dir, &spec.key, &bytes)
        })
    });
    pb.finish_and_clear();
    result?;
    collect_in(&prepared, out, missing.len(), &invocation)
}
