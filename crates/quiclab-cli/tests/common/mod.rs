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
/// `QUICLAB_TEST_SETUP` or `CI` set). Any other failure panics with quiclab's stderr
/// and what the output tells of the machine (see [`diagnose`]).
pub fn reproduce_real(name: &str, args: &[&str]) -> Option<PathBuf> {
    reproduce_real_tries(name, args, 1)
}

/// As [`reproduce_real`], up to `tries` times while the reproduction fails. For plans
/// judged in wall-clock time: a woken process waiting for a CPU on a loaded machine only
/// ever adds time, so a run disturbed by the machine says nothing of the emulator or the
/// stacks, and one clean run shows what they do (as the emulate test's three attempts).
/// Each failed try is printed with its diagnosis; a failure on every try fails the test.
pub fn reproduce_real_tries(name: &str, args: &[&str], tries: u32) -> Option<PathBuf> {
    let mut failures = Vec::new();
    for i in 1..=tries {
        match reproduce_once(name, args) {
            Ok(out) => return out,
            Err(why) => {
                eprintln!("reproduce {name}, try {i} of {tries} failed:\n{why}");
                failures.push(why);
            }
        }
    }
    panic!("reproduce {name} failed on every try: {failures:#?}")
}

fn reproduce_once(name: &str, args: &[&str]) -> Result<Option<PathBuf>, String> {
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
        return Ok(None);
    }
    if !run.status.success() {
        return Err(format!("{stderr}\n{}", diagnose(&out.join(name))));
    }
    Ok(Some(out.join(name)))
}

/// What a failed real-time reproduction in `dir` tells of its figures and of the
/// machine, per plan: its judged statements with our figures (checks.csv's `ours`), the
/// scheduling class each real run's endpoints got (cache entries' `server_sched` and
/// `client_sched`: FIFO unless the machine refused it), the emulator's send lateness
/// (each run's emulate.json: the largest p50 and p99 over the runs); then the load
/// average.
pub fn diagnose(dir: &std::path::Path) -> String {
    let mut out = String::new();
    let plans = std::fs::read_dir(dir).into_iter().flatten().flatten();
    for plan in plans.map(|e| e.path()).filter(|p| p.is_dir()) {
        out += &format!("{}:\n", plan.display());
        if let Ok(t) = quiclab_lab::csv::read(plan.join("checks.csv")) {
            let col = |n: &str| t.header.iter().position(|h| h == n);
            let cell = |r: &[Option<String>], i: Option<usize>| {
                i.and_then(|i| r[i].clone()).unwrap_or_default()
            };
            for r in &t.rows {
                let (name, verdict) = (cell(r, col("name")), cell(r, col("verdict")));
                out += &format!("  {name}: {verdict}, ours {}\n", cell(r, col("ours")));
            }
        }
        let mut classes = std::collections::BTreeMap::<String, u32>::new();
        let entries = std::fs::read_dir(plan.join("cache")).into_iter().flatten();
        for text in entries
            .flatten()
            .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        {
            for key in ["server_sched", "client_sched"] {
                let quoted = format!("\"{key}\":");
                if let Some(at) = text.find(&quoted) {
                    let rest = &text[at + quoted.len()..];
                    let value = rest.split([',', '}']).next().unwrap_or("");
                    *classes.entry(format!("{key} {value}")).or_default() += 1;
                }
            }
        }
        let (mut p50, mut p99) = (0.0f64, 0.0f64);
        let runs = std::fs::read_dir(plan.join("real")).into_iter().flatten();
        for run in runs.flatten() {
            let json = std::fs::read_to_string(run.path().join("emulator/emulate.json"));
            let v: serde_json::Value = json
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok())
                .unwrap_or_default();
            p50 = p50.max(v["send_lateness"]["p50_us"].as_f64().unwrap_or(0.0));
            p99 = p99.max(v["send_lateness"]["p99_us"].as_f64().unwrap_or(0.0));
        }
        out += &format!(
            "  endpoints' classes (runs): {classes:?}\n  emulator send lateness: p50 up to {p50} µs, p99 up to {p99} µs\n"
        );
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    out + &format!("load average: {load}")
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
