//! Plans from Python: load and expand (`_Plan`), run locally exactly as `quiclab lab
//! run` does, or hand the missing runs out as JSON ([`quiclab_lab::ResolvedRun`]) to
//! another executor (Dask) whose workers call [`execute`], file the entries they
//! return ([`_Plan::store`]) and write the results, figures and report ([`_Plan::finish`]).

use crate::py_err;
use pyo3::prelude::*;
use quiclab_lab::present::report::write_report;
use quiclab_lab::present::reproduce::draw_figures;
use quiclab_lab::present::statements;
use quiclab_lab::run::cache::store_entry;
use quiclab_lab::run::collect::collect;
use quiclab_lab::run::prepare::cache_dir;
use quiclab_lab::{run_plan, PlanOutcome, PreparedPlan, ResolvedRun, RunOptions};
use std::path::{Path, PathBuf};

/// A loaded, expanded plan.
#[pyclass(module = "quiclab._core", name = "_Plan", frozen)]
pub struct PyPlan {
    prepared: PreparedPlan,
    quick: bool,
}

/// Figures and report for a finished run (what `quiclab lab run` does after the runs).
fn present(outcome: &PlanOutcome, out: &Path) -> PyResult<String> {
    draw_figures(outcome, out).map_err(py_err)?;
    let report = write_report(out).map_err(|e| py_err(format!("{}: {e}", out.display())))?;
    Ok(report.display().to_string())
}

#[pymethods]
impl PyPlan {
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf, quick: bool) -> PyResult<PyPlan> {
        let prepared = py
            .detach(|| PreparedPlan::load(&path, quick))
            .map_err(py_err)?;
        for w in &prepared.warnings {
            eprintln!("warning: {w}");
        }
        Ok(PyPlan { prepared, quick })
    }

    /// The plan as run (after `[quick]`), as JSON (`plan.resolved.json`'s content).
    fn plan_json(&self) -> PyResult<String> {
        serde_json::to_string(&self.prepared.plan).map_err(py_err)
    }

    /// Every run (point, rep order; equal keys are one simulation) as a JSON list of
    /// resolved runs.
    fn runs_json(&self) -> PyResult<String> {
        let runs: Vec<ResolvedRun> = self
            .prepared
            .specs
            .iter()
            .map(|s| self.prepared.resolved(s))
            .collect();
        serde_json::to_string(&runs).map_err(py_err)
    }

    /// The distinct runs with no cache entry under `out/cache`, each as JSON.
    fn missing(&self, out: PathBuf) -> PyResult<Vec<(String, String)>> {
        let dir = cache_dir(&out).map_err(py_err)?;
        self.prepared
            .missing(&dir)
            .into_iter()
            .map(|s| {
                let json = serde_json::to_string(&self.prepared.resolved(s)).map_err(py_err)?;
                Ok((s.key.clone(), json))
            })
            .collect()
    }

    /// The number of distinct runs (simulations).
    fn unique(&self) -> usize {
        self.prepared.unique().len()
    }

    /// Files one cache entry returned by `execute` (checked: complete, for `key`).
    fn store(&self, out: PathBuf, key: &str, entry: &[u8]) -> PyResult<()> {
        let dir = cache_dir(&out).map_err(py_err)?;
        store_entry(&dir, key, entry).map_err(py_err)
    }

    /// All runs are cached: writes the result files, figures and report; returns
    /// (report path, ran, reused).
    fn finish(&self, py: Python<'_>, out: PathBuf, ran: usize) -> PyResult<(String, usize, usize)> {
        py.detach(|| {
            let outcome = collect(&self.prepared, &out, ran).map_err(py_err)?;
            let report = present(&outcome, &out)?;
            Ok((report, outcome.ran, outcome.reused))
        })
    }

    /// Runs the plan here, as `quiclab lab run --jobs JOBS` (0 = all cores), into `out`.
    fn run_local(
        &self,
        py: Python<'_>,
        out: PathBuf,
        jobs: usize,
    ) -> PyResult<(String, usize, usize)> {
        let opts = RunOptions {
            jobs,
            quick: self.quick,
            progress: true,
        };
        py.detach(|| {
            let outcome = run_plan(&self.prepared.plan_path, &out, &opts).map_err(py_err)?;
            let report = present(&outcome, &out)?;
            Ok((report, outcome.ran, outcome.reused))
        })
    }
}

/// Executes one resolved run (its JSON) and returns its cache entry's bytes: what a
/// Dask worker calls. A pure function of the run and the quiclab build.
#[pyfunction]
fn execute(py: Python<'_>, run_json: &str) -> PyResult<Vec<u8>> {
    let run: ResolvedRun = serde_json::from_str(run_json).map_err(py_err)?;
    py.detach(|| quiclab_lab::execute(&run)).map_err(py_err)
}

/// The claims and checks of results directories, as `quiclab lab run` prints them:
/// (counts text: the claims per source and the checks, the lines of the checks that
/// fail the run, whether there are any statements).
#[pyfunction]
fn checks_gate(dirs: Vec<PathBuf>) -> PyResult<(String, Vec<String>, bool)> {
    let gate = statements::gate(&dirs).map_err(py_err)?;
    Ok((
        gate.summary_lines().join("\n"),
        gate.failing.clone(),
        !gate.is_empty(),
    ))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyPlan>()?;
    m.add_function(wrap_pyfunction!(execute, m)?)?;
    m.add_function(wrap_pyfunction!(checks_gate, m)?)?;
    Ok(())
}
