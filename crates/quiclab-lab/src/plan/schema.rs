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
        serde_json::to_string_pretty(&schema).unwrap_or_default() + "\n"
    };
    vec![
        (
            "scenario.schema.json",
            text(schemars::schema_for!(Scenario)),
        ),
        ("plan.schema.json", text(schemars::schema_for!(Plan))),
    ]
}
