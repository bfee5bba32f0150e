//! The user guide's CLI reference (docs/book/src/reference/cli.md) is `quiclab
//! help-markdown`'s output: this fails when a command's help changed and the page did
//! not; `QUICLAB_UPDATE_DOCS=1` rewrites it.

use std::path::Path;
use std::process::Command;

#[test]
fn committed_cli_reference_is_current() {
    let out = Command::new(env!("CARGO_BIN_EXE_quiclab"))
        .arg("help-markdown")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.contains("## `quiclab sim run`"), "{page}");
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/book/src/reference/cli.md");
    if std::env::var_os("QUICLAB_UPDATE_DOCS").is_some() {
        std::fs::write(&path, &page).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == page,
        "docs/book/src/reference/cli.md differs from the CLI's help: run \
         QUICLAB_UPDATE_DOCS=1 cargo test --release -p quiclab-cli --test cli_reference"
    );
}
