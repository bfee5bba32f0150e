//! A plan expanded into its resolved runs, ready to execute anywhere: locally
//! ([`crate::run::runner::run_plan`]) or on other machines (the Python package's Dask
//! executor ships each [`ResolvedRun`] to a worker). Which runs are still to do is
//! read from the run cache, so any executor resumes an interrupted sweep.

use crate::error::LabError;
use crate::plan::expand::{expand, RunSpec};
use crate::plan::load::{load_plan, plan_warnings};
use crate::plan::points::apply_quick;
use crate::plan::Plan;
use crate::run::cache::{entry_path, read_entry};
use crate::run::complete::Required;
use crate::run::execute::ResolvedRun;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// A loaded and expanded plan.
#[derive(Clone, Debug)]
pub struct PreparedPlan {
    pub plan_path: PathBuf,
    /// The plan as run (after `--quick` overrides when quick).
    pub plan: Plan,
    /// Every run in (point, rep) order; runs with equal keys are one simulation.
    pub specs: Vec<RunSpec>,
    /// Whether the plan's `[quick]` overrides were applied.
    pub quick: bool,
    /// Warnings about the plan file (deprecated keys; see
    /// [`crate::plan::load::plan_warnings`]), for the executor to show.
    pub warnings: Vec<String>,
}

impl PreparedPlan {
    /// Loads `plan_path` and expands it (`quick`: with its `[quick]` overrides).
    pub fn load(plan_path: &Path, quick: bool) -> Result<PreparedPlan, LabError> {
        let plan = load_plan(plan_path)?;
        let warnings = plan_warnings(&plan, plan_path);
        let specs = expand(&plan, plan_path, quick)?;
        let plan = if quick { apply_quick(&plan) } else { plan };
        Ok(PreparedPlan {
            plan_path: plan_path.to_path_buf(),
            plan,
            specs,
            quick,
            warnings,
        })
    }

    /// The plan file as errors name it.
    pub fn plan_file(&self) -> String {
        self.plan_path.display().to_string()
    }

    /// The distinct runs (the first spec of each key), in (point, rep) order.
    pub fn unique(&self) -> Vec<&RunSpec> {
        let mut seen = BTreeSet::new();
        self.specs
            .iter()
            .filter(|s| seen.insert(s.key.as_str()))
            .collect()
    }

    /// The distinct runs to execute, in (point, rep) order: those without a usable cache
    /// entry in `cache_dir`. An entry whose result lacks one of the plan's metrics
    /// ([`crate::run::complete`]) is redone, with a warning on stderr naming it.
    pub fn missing(&self, cache_dir: &Path) -> Vec<&RunSpec> {
        let (missing, warnings) = self.to_run(cache_dir);
        for w in warnings {
            eprintln!("warning: {w}");
        }
        missing
    }

    /// [`PreparedPlan::missing`], with the warnings returned instead of printed.
    pub fn to_run(&self, cache_dir: &Path) -> (Vec<&RunSpec>, Vec<String>) {
        let required = Required::of(&self.plan.metrics);
        let mut warnings = Vec::new();
        let missing = self
            .unique()
            .into_iter()
            .filter(|s| {
                let Some(entry) = read_entry(cache_dir, &s.key) else {
                    return true;
                };
                let lacking = required.lacking(&entry["result"], s.stack.is_some());
                if let Some((metric, path)) = lacking {
                    warnings.push(format!(
                        "{}: the cached result has no `{path}` (metric `{metric}`); running it again",
                        entry_path(cache_dir, &s.key).display(),
                    ));
                }
                lacking.is_some()
            })
            .collect();
        (missing, warnings)
    }

    /// The wire form of one of this plan's runs.
    pub fn resolved(&self, spec: &RunSpec) -> ResolvedRun {
        ResolvedRun::of(spec, &self.plan_file())
    }
}

/// The run cache of the results directory `out` (`out/cache`), created if missing.
pub fn cache_dir(out: &Path) -> Result<PathBuf, LabError> {
    let dir = out.join("cache");
    std::fs::create_dir_all(&dir).map_err(|e| LabError::io(&dir, e))?;
    Ok(dir)
}
