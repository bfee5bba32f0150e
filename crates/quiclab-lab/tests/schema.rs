//! docs/schema/ holds the current JSON Schemas of scenario and plan files, and the user
//! guide's key references (docs/book/src/reference/) are written from them: this fails
//! when a serde type changed and a committed file did not; run it with
//! `QUICLAB_UPDATE_SCHEMA=1` to rewrite them.

#[path = "schema_markdown/mod.rs"]
mod schema_markdown;

use quiclab_lab::plan::schema::schema_files;
use std::path::Path;

#[test]
fn committed_schemas_and_key_references_are_current() {
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs");
    let update = std::env::var_os("QUICLAB_UPDATE_SCHEMA").is_some();
    let mut stale = Vec::new();
    let mut check = |path: String, text: &str| {
        let file = docs.join(&path);
        if update {
            std::fs::write(&file, text).unwrap();
        } else if std::fs::read_to_string(&file).ok().as_deref() != Some(text) {
            stale.push(format!("docs/{path}"));
        }
    };
    for (name, text) in schema_files() {
        check(format!("schema/{name}"), &text);
        let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
        let (page, title) = match name {
            "scenario.schema.json" => ("scenario-keys.md", "Scenario keys"),
            _ => ("plan-keys.md", "Plan keys"),
        };
        let markdown = schema_markdown::page(&schema, title, name);
        check(format!("book/src/reference/{page}"), &markdown);
    }
    check(
        "book/src/reference/transport-keys.md".into(),
        &schema_markdown::transport_page(),
    );
    assert!(
        stale.is_empty(),
        "{stale:?} differ from the serde types: run \
         QUICLAB_UPDATE_SCHEMA=1 cargo test --release -p quiclab-lab --test schema"
    );
}
