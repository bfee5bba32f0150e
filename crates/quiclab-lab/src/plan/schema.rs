//! The JSON Schemas of scenario and plan files, derived from their serde types
//! (schemars) and published as `docs/schema/{scenario,plan}.schema.json`, so TOML
//! editors (taplo, Even Better TOML) validate and complete keys (docs/schema/README.md).
//! The `schema` test fails when the committed files are stale and rewrites them with
//! `QUICLAB_UPDATE_SCHEMA=1`. Loading still checks what a schema cannot (values,
//! references, expressions); a file the loader accepts validates against the schema.

use crate::plan::Plan;
use quiclab_sim::Scenario;

/// (file name under docs/schema/, its JSON text) of each schema.
pub fn schema_files() -> Vec<(&'static str, String)> {
    let text = |schema: schemars::Schema| {
        // Serialising a Schema (a JSON value) cannot fail.
        serde_json::to_string_pretty(&sorted(schema.to_value())).unwrap_or_default() + "\n"
    };
    vec![
        (
            "scenario.schema.json",
            text(schemars::schema_for!(Scenario)),
        ),
        ("plan.schema.json", text(schemars::schema_for!(Plan))),
    ]
}

/// `value` with every object's keys in sorted order. serde_json's maps keep insertion
/// order when any crate of the build enables its `preserve_order` feature (quinn's qlog
/// does, in the workspace's test build), and sorted order otherwise: sorting here makes
/// the files the same whichever way the crate was built.
fn sorted(value: serde_json::Value) -> serde_json::Value {
    match value {
        serde_json::Value::Object(map) => {
            let mut entries: Vec<_> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            serde_json::Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        serde_json::Value::Array(items) => {
            serde_json::Value::Array(items.into_iter().map(sorted).collect())
        }
        other => other,
    }
}
