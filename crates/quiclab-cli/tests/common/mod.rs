//! Shared by the tests that reproduce a real-stack experiment (processes through
//! `quiclab emulate`).
#![allow(dead_code)] // each test binary uses part of it

use std::path::PathBuf;
use std::process::Command;

#[path = "../../../../tests/skip.rs"]
mod skip;

/// Runs `quiclab reproduce NAME --quick ARGS` into a fresh temp directory and returns
/// the experiment's output directory, or `None` when the lab answered with exit 77
/// ("not available": a stack or the emulator is missing), which is a recorded skip
/// only when the test command did not run its setup (tests/skip.rs: a failure with
/// `QUICLAB_TEST_SETUP` or `CI` set). Any other failure panics with quiclab's stderr.
pub fn reproduce_real(name: &str, args: &[&str]) -> Option<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    let out = reproduction_dir(name);
    let _ = std::fs::remove_dir_all(&out);
    let run = Command::new(env!("CARGO_BIN_EXE_quiclab"))
        .args(["reproduce", name, "--quick"])
        .args(args)
        .arg("--experiments")
        .arg(&root)
        .arg("--out")
        .arg(&out)
        .output()
        .expect("quiclab runs");
    let stderr = String::from_utf8_lossy(&run.stderr);
    if run.status.code() == Some(77) {
        assert!(stderr.contains("not available"), "{stderr}");
        let missing = stderr
            .lines()
            .find(|l| l.contains("not available"))
            .unwrap_or("a stack or the emulator is not available");
        skip::skip(
            &format!("reproduce {name}"),
            missing.trim(),
            "the venv's aioquic, Go >= 1.26 for quic-go",
        );
        return None;
    }
    assert!(run.status.success(), "reproduce failed: {stderr}");
    Some(out.join(name))
}

/// Where a test's reproduction of `name` goes: `$QUICLAB_KEEP_REPRODUCTIONS/NAME` when
/// that variable is set (scripts/test.sh sets it, so tests/reports/check_reports.py
/// checks these outputs in a browser instead of reproducing everything a second time),
/// else a fresh temp directory.
pub fn reproduction_dir(name: &str) -> PathBuf {
    match std::env::var_os(KEEP_REPRODUCTIONS) {
        Some(dir) => PathBuf::from(dir).join(name),
        None => std::env::temp_dir().join(format!("quiclab-{name}-{}", std::process::id())),
    }
}

/// The variable naming the directory where reproductions are kept.
pub const KEEP_REPRODUCTIONS: &str = "QUICLAB_KEEP_REPRODUCTIONS";

/// Removes a reproduction's output once checked, unless it is kept
/// (`QUICLAB_KEEP_REPRODUCTIONS`).
pub fn done_with(out: &std::path::Path) {
    if std::env::var_os(KEEP_REPRODUCTIONS).is_none() {
        let _ = std::fs::remove_dir_all(out);
    }
}

/// Asserts that every statement the lab judged for the plan whose output is `dir` holds:
/// the rows of `checks.csv` (what `[[checks]]` write) or, for plans still on the old
/// schema, `findings.csv`, whose `status` (or `verdict`) must be "holds". A file with no
/// rows fails too: the test is about the statements.
pub fn every_statement_holds(dir: &std::path::Path) {
    let file = ["checks.csv", "findings.csv"]
        .iter()
        .map(|f| dir.join(f))
        .find(|p| p.exists())
        .unwrap_or_else(|| panic!("{}: neither checks.csv nor findings.csv", dir.display()));
    let t = quiclab_lab::csv::read(&file).unwrap_or_else(|e| panic!("{e}"));
    let col = |names: &[&str]| {
        t.header
            .iter()
            .position(|h| names.contains(&h.as_str()))
            .unwrap_or_else(|| panic!("{}: no column {names:?}", file.display()))
    };
    let (name, status) = (col(&["name"]), col(&["status", "verdict"]));
    assert!(!t.rows.is_empty(), "{}: no statements", file.display());
    let cell = |row: &[Option<String>], i: usize| row[i].clone().unwrap_or_default();
    let not_holding: Vec<String> = t
        .rows
        .iter()
        .filter(|r| cell(r, status) != "holds")
        .map(|r| format!("{}: {}", cell(r, name), cell(r, status)))
        .collect();
    assert!(
        not_holding.is_empty(),
        "{}: statements that do not hold: {not_holding:?}\n{}",
        file.display(),
        std::fs::read_to_string(&file).unwrap_or_default()
    );
}
