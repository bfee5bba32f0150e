//! Tests that need a tool the project's test command installs (tshark, a foreign QUIC
//! stack, the emulator): shared by the crates' integration tests through
//! `#[path = "../../../../tests/skip.rs"] mod skip;` in their `tests/common/mod.rs`.
//!
//! `scripts/test.sh` runs `scripts/setup-tests.sh` first and then sets
//! `QUICLAB_TEST_SETUP=1`: everything these tests need was installed, so a missing tool
//! is a failure (as it is under `CI`). Without it (a developer running `cargo test`
//! alone) the test skips: it says so and appends one line to the skip list,
//! `QUICLAB_TEST_SKIPS` (scripts/test.sh prints it in its final summary), else
//! `target/test-skips.txt` of the workspace.

use std::io::Write;
use std::path::PathBuf;

/// Whether a missing tool must fail the test: the test command ran its own setup, or CI.
pub fn tools_required() -> bool {
    std::env::var_os("QUICLAB_TEST_SETUP").is_some() || std::env::var_os("CI").is_some()
}

/// The file skips are recorded in.
pub fn skips_file() -> PathBuf {
    match std::env::var_os("QUICLAB_TEST_SKIPS") {
        Some(path) => PathBuf::from(path),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/test-skips.txt"),
    }
}

/// `test` cannot run: `missing` names what is missing, `install` how to get it. Panics
/// when tools are required ([`tools_required`]); otherwise prints and records the skip,
/// and the caller returns.
pub fn skip(test: &str, missing: &str, install: &str) {
    assert!(
        !tools_required(),
        "{test}: {missing}; scripts/setup-tests.sh installs it ({install}), \
         so with QUICLAB_TEST_SETUP or CI set this is a failure, not a skip"
    );
    let line = format!("SKIPPED {test}: {missing} ({install})");
    eprintln!("{line}");
    let file = skips_file();
    if let Some(dir) = file.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&file)
        .and_then(|mut f| writeln!(f, "{line}"));
    if let Err(e) = written {
        eprintln!("(could not record the skip in {}: {e})", file.display());
    }
}
