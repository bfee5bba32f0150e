//! A plan's modelling assumptions: what the model takes as given that a real deployment
//! may not, and which side of the comparison each favours (issue 28 item 4). A report
//! lists them, so a reader weighs a QUIC-vs-TCP number by what it rests on.
//!
//! Plans of one experiment usually share most of them: `assumptions_files` names TOML
//! files (relative to the plan) of `[[assumptions]]` entries that come, in order, before
//! the plan's own. Keep such files out of the experiment's top directory, where every `*.toml` is a
//! plan (e.g. `experiments/quic-vs-tcp/shared/assumptions.toml`).

use crate::error::LabError;
use crate::plan::locate::toml_error;
use crate::plan::Plan;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One modelling assumption.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Assumption {
    /// The assumption (e.g. "TCP is not paced (Linux without the fq qdisc)").
    pub what: String,
    /// The side it favours ("QUIC", "TCP", "neither", ...).
    pub favours: String,
    /// Why it favours that side, or why it is made.
    #[serde(default)]
    pub why: String,
}

/// A shared assumptions file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SharedFile {
    assumptions: Vec<Assumption>,
}

/// Puts the entries of `plan.assumptions_files` (relative to `plan_file`, in order)
/// before the plan's own and checks that none is blank. A missing or malformed file is
/// an error naming it.
pub fn resolve(plan: &mut Plan, plan_file: &Path) -> Result<(), LabError> {
    let mut all = Vec::new();
    for rel in &plan.assumptions_files {
        let path = plan_file.parent().unwrap_or(Path::new(".")).join(rel);
        let text = std::fs::read_to_string(&path).map_err(|e| LabError::io(&path, e))?;
        let file = path.display().to_string();
        let shared: SharedFile = toml::from_str(&text).map_err(|e| toml_error(&file, &text, &e))?;
        all.extend(shared.assumptions);
    }
    all.append(&mut plan.assumptions);
    plan.assumptions = all;
    for (i, a) in plan.assumptions.iter().enumerate() {
        if a.what.trim().is_empty() || a.favours.trim().is_empty() {
            return Err(LabError::Data {
                file: plan_file.display().to_string(),
                why: format!(
                    "assumption {}: `what` and `favours` must not be blank",
                    i + 1
                ),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan_with(file: Option<&str>, own: &[(&str, &str)]) -> Plan {
        let mut plan: Plan = toml::from_str(
            "name = \"p\"\ntitle = \"t\"\nquestion = \"q\"\nbase = \"b.toml\"\nmaster_seed = 1\n\
             [[axes]]\nname = \"x\"\nvalues = [1]\n[metrics]\nm = \"flows[0].ttlb_s\"\n",
        )
        .unwrap();
        plan.assumptions_files = file.map(str::to_string).into_iter().collect();
        plan.assumptions = own
            .iter()
            .map(|(w, f)| Assumption {
                what: w.to_string(),
                favours: f.to_string(),
                why: String::new(),
            })
            .collect();
        plan
    }

    /// A fresh directory for one test.
    fn scratch(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("quiclab-assume-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn shared_entries_come_first() {
        let dir = scratch("shared");
        std::fs::create_dir(dir.join("shared")).unwrap();
        std::fs::write(
            dir.join("shared/a.toml"),
            "[[assumptions]]\nwhat = \"TCP unpaced\"\nfavours = \"QUIC\"\nwhy = \"bursts\"\n",
        )
        .unwrap();
        let mut plan = plan_with(Some("shared/a.toml"), &[("own", "TCP")]);
        resolve(&mut plan, &dir.join("plan.toml")).unwrap();
        let whats: Vec<&str> = plan.assumptions.iter().map(|a| a.what.as_str()).collect();
        assert_eq!(whats, ["TCP unpaced", "own"]);
        assert_eq!(plan.assumptions[0].why, "bursts");
    }

    #[test]
    fn missing_file_and_blank_side_are_errors() {
        let dir = scratch("missing");
        let mut plan = plan_with(Some("nope.toml"), &[]);
        let err = resolve(&mut plan, &dir.join("plan.toml")).unwrap_err();
        assert!(err.to_string().contains("nope.toml"), "{err}");
        let mut plan = plan_with(None, &[("x", " ")]);
        assert!(resolve(&mut plan, &dir.join("plan.toml")).is_err());
    }

    #[test]
    fn unknown_keys_in_the_shared_file_are_errors() {
        let dir = scratch("unknown");
        std::fs::write(
            dir.join("a.toml"),
            "[[assumptions]]\nwhat = \"w\"\nfavors = \"QUIC\"\n",
        )
        .unwrap();
        let mut plan = plan_with(Some("a.toml"), &[]);
        let err = resolve(&mut plan, &dir.join("plan.toml")).unwrap_err();
        assert!(err.to_string().contains("a.toml"), "{err}");
    }
}
