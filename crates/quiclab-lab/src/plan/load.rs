//! Loading a plan: from a plan file (parsed and validated; errors name the file, line,
//! column and key) or from a results directory (the plan as it ran).

use crate::error::LabError;
use crate::plan::locate::toml_error;
use crate::plan::validate::validate;
use crate::plan::Plan;
use std::path::Path;

/// Reads a plan. `path` is a plan file, which is parsed and validated, or a results
/// directory, whose `plan.resolved.json` is the plan as it ran (after `--quick`, so it is
/// not validated against the plan file again); without one, its copy `plan.toml` is
/// loaded like a plan file.
pub fn load_plan(path: &Path) -> Result<Plan, LabError> {
    if !path.is_dir() {
        return load_plan_file(path);
    }
    let json_path = path.join("plan.resolved.json");
    let toml_path = path.join("plan.toml");
    match std::fs::read_to_string(&json_path) {
        Ok(json) => serde_json::from_str(&json).map_err(|e| LabError::Data {
            file: json_path.display().to_string(),
            why: e.to_string(),
        }),
        Err(_) if toml_path.exists() => load_plan_file(&toml_path),
        Err(_) => Err(LabError::Data {
            file: path.display().to_string(),
            why: "neither plan.resolved.json nor plan.toml".into(),
        }),
    }
}

/// Warnings about a valid plan file: deprecated keys (`[[findings]]`,
/// `skip_findings`) and the replication rule where it is not yet an error. Each names
/// the file.
pub fn plan_warnings(plan: &Plan, path: &Path) -> Vec<String> {
    crate::plan::validate_statements::warnings(plan, &path.display().to_string())
}

fn load_plan_file(path: &Path) -> Result<Plan, LabError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| LabError::io(path, e))?;
    let mut plan: Plan = toml::from_str(&text).map_err(|e| toml_error(&file, &text, &e))?;
    validate(&plan, &text, &file)?;
    crate::plan::assumptions::resolve(&mut plan, path)?;
    Ok(plan)
}
