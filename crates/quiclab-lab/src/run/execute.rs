//! One run as a pure function of its resolved scenario (which carries its seed): the
//! unit a distributed executor ships to a worker. A [`ResolvedRun`] is plain data
//! (serde), so it crosses a process or machine boundary as JSON; [`execute`] turns it
//! into the bytes of its cache entry, identical to what the local runner would cache.
//!
//! The worker recomputes the run key from the scenario it parsed: a worker running a
//! different quiclab build (whose key differs, see [`crate::plan::expand::run_key`])
//! is refused instead of mixing two builds' numbers in one sweep.

use crate::error::LabError;
use crate::plan::expand::{run_key, RunSpec};
use crate::plan::AxisValue;
use crate::run::cache::entry_bytes;
use quiclab_sim::{Scenario, Simulation};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A run, fully resolved: what to simulate and how its result is filed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResolvedRun {
    pub point: usize,
    pub rep: u32,
    pub seed: u64,
    pub params: BTreeMap<String, AxisValue>,
    /// The cache key the planner computed.
    pub key: String,
    /// Names the run in errors ("plan.toml point 3 rep 1 (key)").
    pub label: String,
    /// The resolved scenario (with `seed`), a file anyone can run on its own.
    pub scenario_toml: String,
    /// A real stack (`[endpoints]`): such runs execute only locally, in the runner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack: Option<String>,
}

impl ResolvedRun {
    /// The wire form of `spec` from the plan file `plan_file`.
    pub fn of(spec: &RunSpec, plan_file: &str) -> ResolvedRun {
        ResolvedRun {
            point: spec.point,
            rep: spec.rep,
            seed: spec.seed,
            params: spec.params.clone(),
            key: spec.key.clone(),
            label: run_label(spec, plan_file),
            scenario_toml: spec.scenario_toml.clone(),
            stack: spec.stack.clone(),
        }
    }
}

/// How errors name a run: the plan file, point, repetition and key.
pub(crate) fn run_label(spec: &RunSpec, plan_file: &str) -> String {
    format!(
        "{plan_file} point {} rep {} ({})",
        spec.point, spec.rep, spec.key
    )
}

/// Simulates `scenario` (errors carry `label`) and returns its cache entry's bytes.
pub(crate) fn simulate_entry(
    scenario: Scenario,
    label: &str,
    key: &str,
    seed: u64,
    rep: u32,
    params: &BTreeMap<String, AxisValue>,
) -> Result<Vec<u8>, LabError> {
    let fail = |why: String| LabError::Run {
        label: label.to_string(),
        why,
    };
    let result = Simulation::new(scenario, label, None)
        .and_then(Simulation::run)
        .map_err(|e| fail(e.to_string()))?;
    entry_bytes(key, seed, rep, params, &result)
}

/// Runs one resolved run and returns its cache entry's bytes
/// ([`crate::run::cache::store_entry`] files them). Depends on nothing but `run` and
/// the quiclab build.
pub fn execute(run: &ResolvedRun) -> Result<Vec<u8>, LabError> {
    let fail = |why: String| LabError::Run {
        label: run.label.clone(),
        why,
    };
    if let Some(stack) = &run.stack {
        return Err(fail(format!(
            "runs with the real stack `{stack}` execute only in the local runner \
             (`quiclab lab run`), one at a time"
        )));
    }
    let scenario =
        Scenario::parse(&run.scenario_toml, &run.label).map_err(|e| fail(e.to_string()))?;
    if scenario.seed != run.seed {
        return Err(fail(format!(
            "the scenario's seed {} is not the run's seed {}",
            scenario.seed, run.seed
        )));
    }
    let key = run_key(&scenario)?;
    if key != run.key {
        return Err(fail(format!(
            "this worker's run key is {key}: it runs another quiclab build than the \
             planner (install the same build everywhere)"
        )));
    }
    simulate_entry(
        scenario,
        &run.label,
        &run.key,
        run.seed,
        run.rep,
        &run.params,
    )
}
