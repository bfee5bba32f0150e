//! docs/schema/ holds the current JSON Schemas of scenario and plan files: this fails
//! when a serde type changed and the committed schema did not; run it with
//! `QUICLAB_UPDATE_SCHEMA=1` to rewrite them.

use quiclab_lab::plan::schema::schema_files;
use std::path::Path;

#[test]
fn committed_schemas_are_current() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/schema");
    let update = std::env::var_os("QUICLAB_UPDATE_SCHEMA").is_some();
    let mut stale = Vec::new();
    for (name, text) in schema_files() {
        let path = dir.join(name);
        if update {
            std::fs::write(&path, &text).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            stale.push(name);
        }
    }
    assert!(
        stale.is_empty(),
        "docs/schema/{stale:?} differ from the serde types: run \
         QUICLAB_UPDATE_SCHEMA=1 cargo test --release -p quiclab-lab --test schema"
    );
}
