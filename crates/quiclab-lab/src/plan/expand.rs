//! From a loaded plan to runs: apply `--quick`, take the points (cartesian or zip), and
//! for each point and repetition build the fully resolved scenario, its seed and its
//! cache key.
//!
//! Values are written by the `[set]` rule of [`crate::plan::points`].
//!
//! Seeds: `seed` = the first 8 bytes (big-endian) of SHA-256 over the master seed, the
//! point's parameters (sorted by name, exact float bits) and the repetition index, with
//! the top bit cleared so it fits a TOML integer. A run's seed therefore depends only on
//! what it is, not on run order, `--jobs` or the other points of the plan. Axes listed
//! in `common_random_numbers` are left out of the hash, so points differing only in
//! them share seeds.

use crate::error::LabError;
use crate::expr::Expr;
use crate::plan::locate::{line_of_key, toml_error};
use crate::plan::points::{
    apply_quick, canonical_params, numeric_vars, points, write_set, SetError,
};
use crate::plan::validate::validate;
use crate::plan::{host_files, trace_files};
use crate::plan::{AxisValue, Plan};
use quiclab_sim::scenario::ScenarioError;
use quiclab_sim::Scenario;
use ring::digest::{digest, SHA256};
use std::collections::BTreeMap;
use std::path::Path;

/// One run: a point, a repetition, and everything needed to execute and identify it.
#[derive(Clone, Debug)]
pub struct RunSpec {
    /// Index of the point (cartesian: last axis fastest).
    pub point: usize,
    /// Repetition index, 0-based.
    pub rep: u32,
    /// The point's axis values.
    pub params: BTreeMap<String, AxisValue>,
    pub seed: u64,
    /// The resolved, validated scenario.
    pub scenario: Scenario,
    /// The resolved scenario as TOML (a file anyone can run on its own).
    pub scenario_toml: String,
    /// Hex SHA-256 of the canonical resolved scenario and the crate version.
    pub key: String,
    /// `[expected]` values at this point (non-finite results are left out).
    pub expected: BTreeMap<String, f64>,
    /// The real stack this run uses (`[endpoints]`), or `None` for the simulator.
    pub stack: Option<String>,
}

/// The seed of one run (see the module docs).
pub fn derive_seed(master_seed: u64, params: &BTreeMap<String, AxisValue>, rep: u32) -> u64 {
    let text = format!(
        "quiclab-lab seed v1\nmaster={master_seed}\n{}\nrep={rep}",
        canonical_params(params)
    );
    let d = digest(&SHA256, text.as_bytes());
    let mut b = [0u8; 8];
    b.copy_from_slice(&d.as_ref()[..8]);
    u64::from_be_bytes(b) & (i64::MAX as u64)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The cache key of a resolved scenario: what the simulator runs (each trace file by
/// the hash of its contents, `plan/trace_files.rs`), plus the lab's version and the
/// build ([`code_id`]): other code may measure differently.
pub fn run_key(scenario: &Scenario) -> Result<String, LabError> {
    let mut keyed = trace_files::keyed(scenario)?;
    host_files::keyed(&mut keyed)?;
    let json = serde_json::to_string(&keyed).map_err(|e| LabError::Data {
        file: scenario.name.clone(),
        why: e.to_string(),
    })?;
    let text = format!(
        "quiclab-lab run v2\n{}\n{}\n{json}",
        env!("CARGO_PKG_VERSION"),
        code_id()
    );
    Ok(hex(digest(&SHA256, text.as_bytes()).as_ref()))
}

/// The cache key of a run with a real stack: the scenario's key plus the stack's name
/// and every command template that produces it, so a changed command reruns.
fn real_run_key(
    scenario: &Scenario,
    name: &str,
    stack: &crate::plan::endpoints::Stack,
    plan: &Plan,
) -> Result<String, LabError> {
    let emulator = plan
        .endpoints
        .as_ref()
        .map(|e| e.emulator_template())
        .unwrap_or_default();
    let text = format!(
        "quiclab-lab real run v1\n{}\n{name}\n{}\n{}\n{emulator}",
        run_key(scenario)?,
        stack.client_template(),
        stack.server_template(),
    );
    Ok(hex(digest(&SHA256, text.as_bytes()).as_ref()))
}

static CODE_ID: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Sets the build id of [`code_id`] for code embedded in another executable (the
/// Python extension, whose executable is the interpreter: it passes a hash of its own
/// library file). Call before any run key is made; false if the id was already fixed.
pub fn set_code_id(id: String) -> bool {
    CODE_ID.set(id).is_ok()
}

/// A hash of the running executable, part of every cache key: results cached by one
/// build are never reused by another (a changed controller or bug fix reruns the
/// sweep instead of silently reporting the old numbers). "unknown" if the executable
/// cannot be read, which only shares the cache among such runs.
pub fn code_id() -> &'static str {
    CODE_ID.get_or_init(|| {
        std::env::current_exe()
            .and_then(std::fs::read)
            .map(|bytes| hex(&digest(&SHA256, &bytes).as_ref()[..8]))
            .unwrap_or_else(|_| "unknown".into())
    })
}

fn params_text(params: &BTreeMap<String, AxisValue>) -> String {
    params
        .iter()
        .map(|(k, v)| match v {
            AxisValue::Number(n) => format!("{k}={n}"),
            AxisValue::Text(s) => format!("{k}={s}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

struct Resolver<'a> {
    plan: &'a Plan,
    file: String,
    text: String,
    base_file: String,
    /// The base scenario, its trace paths resolved against its directory.
    base: toml::Table,
    /// The plan file's directory: trace paths `[set]` writes resolve against it.
    plan_dir: &'a Path,
}

impl Resolver<'_> {
    fn set_error(
        &self,
        key: &str,
        point: usize,
        params: &BTreeMap<String, AxisValue>,
        why: String,
    ) -> LabError {
        LabError::Scenario {
            file: self.file.clone(),
            line: line_of_key(&self.text, "set", key),
            key: format!("set.{key}"),
            why: format!(
                "point {point} ({}): the resolved scenario (base {}) is invalid: {why}",
                params_text(params),
                self.base_file
            ),
        }
    }

    /// The base table with every `[set]` and matching `[cases]` entry applied for this
    /// point.
    fn point_table(
        &self,
        point: usize,
        params: &BTreeMap<String, AxisValue>,
    ) -> Result<toml::Table, LabError> {
        let mut table = self.base.clone();
        // `[set]` first, then each text axis's `[cases]` entry for this point's value.
        let mut entries: Vec<(&String, &String)> = self.plan.set.iter().collect();
        for (axis, cases) in &self.plan.cases {
            if let Some(AxisValue::Text(v)) = params.get(axis) {
                entries.extend(cases.get(v).into_iter().flatten());
            }
        }
        for (key, src) in entries {
            write_set(&mut table, key, src, params).map_err(|e| match e {
                SetError::Expr(source) => LabError::Expr {
                    file: self.file.clone(),
                    line: line_of_key(&self.text, "set", key),
                    key: format!("set.{key}"),
                    expr: src.clone(),
                    source: Box::new(source),
                },
                SetError::Invalid(why) => self.set_error(key, point, params, why),
            })?;
        }
        trace_files::resolve_written(&mut table, &self.base, self.plan_dir);
        host_files::resolve_written(&mut table, &self.base, self.plan_dir);
        Ok(table)
    }

    /// The `[set]` key an invalid-scenario message is most likely about.
    fn culprit(&self, message: &str) -> Option<String> {
        let keys = self.plan.set.keys();
        keys.clone()
            .find(|k| message.contains(k.as_str()))
            .cloned()
            .or_else(|| {
                keys.clone()
                    .find(|k| {
                        k.split(['.', '['])
                            .any(|seg| message.contains(&format!("`{seg}`")))
                    })
                    .cloned()
            })
    }

    /// The first `[set]` key that alone makes the scenario invalid with the same message
    /// (error path only).
    fn bisect(
        &self,
        point: usize,
        params: &BTreeMap<String, AxisValue>,
        why: &str,
    ) -> Option<String> {
        self.plan.set.iter().find_map(|(k, v)| {
            let mut plan = self.plan.clone();
            plan.set = BTreeMap::from([(k.clone(), v.clone())]);
            let one = Resolver {
                plan: &plan,
                file: self.file.clone(),
                text: self.text.clone(),
                base_file: self.base_file.clone(),
                base: self.base.clone(),
                plan_dir: self.plan_dir,
            };
            let mut t = one.point_table(point, params).ok()?;
            t.insert("seed".into(), toml::Value::Integer(0));
            let text = toml::to_string(&t).ok()?;
            let e = Scenario::parse(&text, "").err()?;
            (reason(e) == why).then(|| k.clone())
        })
    }

    fn scenario_error(
        &self,
        point: usize,
        params: &BTreeMap<String, AxisValue>,
        e: ScenarioError,
    ) -> LabError {
        let why = reason(e);
        match self
            .culprit(&why)
            .or_else(|| self.bisect(point, params, &why))
        {
            Some(key) => self.set_error(&key, point, params, why),
            None => match self.set_error("", point, params, why) {
                LabError::Scenario { file, why, .. } => LabError::Scenario {
                    file,
                    line: None,
                    key: "set".into(),
                    why,
                },
                e => e,
            },
        }
    }
}

/// The essence of a scenario error, without our generated text's line numbers.
fn reason(e: ScenarioError) -> String {
    match e {
        // toml's message quotes the generated text; its last line is the reason.
        ScenarioError::Parse { message, .. } => message
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or_default()
            .trim()
            .to_string(),
        ScenarioError::Invalid { key, why, .. } => format!("{key}: {why}"),
        ScenarioError::Io { source, .. } => source.to_string(),
    }
}

/// Expands a (loaded) plan into its runs, in (point, rep) order. `quick` applies the
/// plan's `[quick]` overrides first. Every resolved scenario is validated by the
/// simulator's own parser, so a `[set]` path with an unknown key fails here.
pub fn expand(plan: &Plan, plan_path: &Path, quick: bool) -> Result<Vec<RunSpec>, LabError> {
    let file = plan_path.display().to_string();
    let text = std::fs::read_to_string(plan_path).unwrap_or_default();
    validate(plan, &text, &file)?;
    let plan = if quick {
        apply_quick(plan)
    } else {
        plan.clone()
    };
    let plan_dir = plan_path.parent().unwrap_or(Path::new("."));
    let base_path = plan_dir.join(&plan.base);
    let base_file = base_path.display().to_string();
    let base_text = std::fs::read_to_string(&base_path).map_err(|e| LabError::Invalid {
        file: file.clone(),
        line: line_of_key(&text, "", "base"),
        key: "base".into(),
        why: format!("cannot read {base_file}: {e}"),
    })?;
    let mut base: toml::Table =
        toml::from_str(&base_text).map_err(|e| toml_error(&base_file, &base_text, &e))?;
    let base_dir = base_path.parent().unwrap_or(Path::new("."));
    trace_files::resolve_base(&mut base, base_dir);
    host_files::resolve_base(&mut base, base_dir);
    let r = Resolver {
        plan: &plan,
        file,
        text,
        base_file,
        base,
        plan_dir,
    };
    let expected: Vec<(String, Expr)> = plan
        .expected
        .iter()
        .filter_map(|(m, src)| Some((m.clone(), Expr::parse(src).ok()?)))
        .collect();
    let mut runs = Vec::new();
    for (point, params) in points(&plan).into_iter().enumerate() {
        let table = r.point_table(point, &params)?;
        let vars = numeric_vars(&params);
        let mut seed_params = params.clone();
        seed_params.retain(|axis, _| !plan.common_random_numbers.contains(axis));
        let exp: BTreeMap<String, f64> = expected
            .iter()
            .filter_map(|(m, e)| Some((m.clone(), e.eval(&vars).ok().filter(|v| v.is_finite())?)))
            .collect();
        let stack = plan.endpoints.as_ref().and_then(|e| e.stack_of(&params));
        let cap = stack.and_then(|(_, s)| s.repetitions);
        let reps = cap.map_or(plan.repetitions, |c| c.min(plan.repetitions));
        for rep in 0..reps {
            let seed = derive_seed(plan.master_seed, &seed_params, rep);
            let mut t = table.clone();
            t.insert("seed".into(), toml::Value::Integer(seed as i64));
            let scenario_toml = toml::to_string(&t)
                .map_err(|e| r.set_error("seed", point, &params, e.to_string()))?;
            let label = format!("{} (point {point}, rep {rep})", r.file);
            let scenario = Scenario::parse(&scenario_toml, &label)
                .map_err(|e| r.scenario_error(point, &params, e))?;
            let key = match stack {
                Some((name, s)) => real_run_key(&scenario, name, s, &plan)?,
                None => run_key(&scenario)?,
            };
            runs.push(RunSpec {
                point,
                rep,
                params: params.clone(),
                seed,
                scenario,
                scenario_toml,
                key,
                expected: exp.clone(),
                stack: stack.map(|(name, _)| name.to_string()),
            });
        }
    }
    Ok(runs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_depend_only_on_the_run() {
        let p = |x: f64| BTreeMap::from([("a".to_string(), AxisValue::Number(x))]);
        assert_eq!(derive_seed(1, &p(2.0), 0), derive_seed(1, &p(2.0), 0));
        assert_ne!(derive_seed(1, &p(2.0), 0), derive_seed(1, &p(2.0), 1));
        assert_ne!(derive_seed(1, &p(2.0), 0), derive_seed(2, &p(2.0), 0));
        assert_ne!(derive_seed(1, &p(2.0), 0), derive_seed(1, &p(3.0), 0));
        assert!(derive_seed(1, &p(2.0), 0) <= i64::MAX as u64);
    }
}
