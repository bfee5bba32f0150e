//! `simulate`: one scenario (a file, TOML text or a table as JSON), with optional seed
//! and `[set]`-style overrides, run in the simulator with the GIL released.

use crate::py_err;
use pyo3::prelude::*;
use quiclab_sim::output::tables::{
    flows_csv, goodput_csv, links_csv, summary_table, write_results,
};
use quiclab_sim::scenario::ScenarioError;
use quiclab_sim::{RunResult, Scenario, Simulation};
use std::path::PathBuf;

/// The scenario's source: how the Python caller gave it.
fn load_table(kind: &str, source: &str) -> PyResult<toml::Table> {
    match kind {
        "path" => {
            let text =
                std::fs::read_to_string(source).map_err(|e| py_err(format!("{source}: {e}")))?;
            toml::from_str(&text).map_err(|e| py_err(format!("{source}: {e}")))
        }
        "toml" => toml::from_str(source).map_err(|e| py_err(format!("<toml>: {e}"))),
        "json" => serde_json::from_str(source).map_err(|e| py_err(format!("<dict>: {e}"))),
        other => Err(py_err(format!("unknown scenario source kind `{other}`"))),
    }
}

/// The scenario from `source` with each override applied by the lab's `[set]` rule
/// (as `quiclab sim run --set`), validated by the simulator's parser.
fn scenario(
    kind: &str,
    source: &str,
    label: &str,
    overrides: &[(String, String)],
) -> PyResult<Scenario> {
    // Unchanged files and text parse directly, so errors keep their own line numbers.
    match (kind, overrides.is_empty()) {
        ("path", true) => return Scenario::load(&PathBuf::from(source)).map_err(py_err),
        ("toml", true) => return Scenario::parse(source, label).map_err(py_err),
        _ => {}
    }
    let mut table = load_table(kind, source)?;
    for (key, value) in overrides {
        quiclab_lab::apply_set(&mut table, key, value).map_err(py_err)?;
    }
    let text = toml::to_string(&table).map_err(py_err)?;
    // The schema's reason (e.g. an unknown key) without toml's excerpt of the generated
    // text, whose line numbers are not the caller's (as `quiclab sim run --set`).
    Scenario::parse(&text, label).map_err(|e| match e {
        ScenarioError::Parse { file, message } => {
            let reason = message.lines().rev().find(|l| !l.trim().is_empty());
            py_err(format!("{file}: {}", reason.unwrap_or_default().trim()))
        }
        e => py_err(e),
    })
}

/// Runs one scenario. `kind` is "path", "toml" or "json" (a dict's JSON); `overrides`
/// are `(key, value)` pairs in a plan's `[set]` syntax; `seed` replaces the scenario's.
#[pyfunction]
#[pyo3(signature = (kind, source, label, seed=None, overrides=Vec::new()))]
fn simulate(
    py: Python<'_>,
    kind: &str,
    source: &str,
    label: &str,
    seed: Option<u64>,
    overrides: Vec<(String, String)>,
) -> PyResult<SimResult> {
    let mut sc = scenario(kind, source, label, &overrides)?;
    if let Some(seed) = seed {
        sc.seed = seed;
    }
    let label = label.to_string();
    let result = py
        .detach(move || Simulation::new(sc, &label, None).and_then(Simulation::run))
        .map_err(py_err)?;
    Ok(SimResult { result })
}

/// One simulation's results (the CLI's `results.json` and CSVs, as text).
#[pyclass(module = "quiclab._core", frozen)]
pub struct SimResult {
    result: RunResult,
}

#[pymethods]
impl SimResult {
    /// `results.json` (pretty-printed, as `quiclab sim run` writes it).
    fn json(&self) -> PyResult<String> {
        serde_json::to_string_pretty(&self.result).map_err(py_err)
    }
    fn flows_csv(&self) -> String {
        flows_csv(&self.result)
    }
    fn links_csv(&self) -> String {
        links_csv(&self.result)
    }
    fn goodput_csv(&self) -> String {
        goodput_csv(&self.result)
    }
    /// The table `quiclab sim run` prints.
    fn summary(&self) -> String {
        summary_table(&self.result)
    }
    /// Writes the files `quiclab sim run --out DIR` writes (results.json, CSVs, traces).
    fn write(&self, dir: PathBuf) -> PyResult<()> {
        write_results(&dir, &self.result).map_err(|e| py_err(format!("{}: {e}", dir.display())))
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_class::<SimResult>()?;
    Ok(())
}
