//! `reproduce inet-validation --quick` and `reproduce handshake-latency --quick`: reports
//! and figures are written, and every point lies within the plan's tolerance of the
//! analytic result.

use quiclab_lab::reproduce::{list, reproduce};
use quiclab_lab::RunOptions;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../experiments")
}

fn out_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("quiclab-reproduce-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Runs `reproduce NAME --quick`, checks its reports and figures, and returns the
/// findings (all of which hold).
fn check(name: &str, plans: usize) -> Vec<(String, String)> {
    let out = out_dir(name);
    let opts = RunOptions {
        jobs: 0,
        quick: true,
        progress: false,
    };
    let index = reproduce(&root(), name, &out, &opts).unwrap_or_else(|e| panic!("{e}"));
    let index_text = std::fs::read_to_string(&index).unwrap();
    let reports: Vec<PathBuf> = walk(&out)
        .into_iter()
        .filter(|p| p.ends_with("report.md"))
        .collect();
    assert_eq!(reports.len(), plans, "one report per plan: {reports:?}");
    for r in &reports {
        let dir = r.parent().unwrap();
        let text = std::fs::read_to_string(r).unwrap();
        let pngs = walk(&dir.join("figures"))
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "png"))
            .count();
        assert!(pngs >= 1, "{}: no figure", dir.display());
        assert!(dir.join("report.html").exists());
        // Plans with a tolerance state a verdict; it must be "all points within".
        if let Some(line) = text.lines().find(|l| l.contains("points within")) {
            let nums: Vec<u64> = line
                .split(|c: char| !c.is_ascii_digit())
                .filter_map(|t| t.parse().ok())
                .collect();
            assert!(
                nums.len() >= 2 && nums[0] == nums[1],
                "{}: {line}",
                dir.display()
            );
        }
    }
    assert!(index_text.contains("report"), "the index links the reports");
    let findings = findings_of(&out);
    let _ = std::fs::remove_dir_all(&out);
    findings
}

/// Every finding in the results under `out` as (plan dir name, finding name) -> holds.
/// A finding that does not hold, or has no data, fails the test with its row.
fn findings_of(out: &std::path::Path) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for f in walk(out)
        .into_iter()
        .filter(|p| p.ends_with("findings.csv"))
    {
        let t = quiclab_lab::csvread::read(&f).unwrap();
        let (name, holds) = (t.require("name").unwrap(), t.require("holds").unwrap());
        for r in 0..t.rows.len() {
            let row = t.rows[r]
                .iter()
                .map(|c| c.clone().unwrap_or_default())
                .collect::<Vec<_>>();
            assert_eq!(t.get(r, holds), Some("true"), "{}: {row:?}", f.display());
            let dir = f
                .parent()
                .unwrap()
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            found.push((dir, t.get(r, name).unwrap_or("").to_string()));
        }
    }
    found
}

fn walk(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn experiments_are_listed() {
    let names: Vec<String> = list(&root()).unwrap().into_iter().map(|e| e.name).collect();
    assert!(
        names.contains(&"inet-validation".to_string())
            && names.contains(&"handshake-latency".to_string()),
        "{names:?}"
    );
}

#[test]
fn inet_validation_quick() {
    check("inet-validation", 4);
}

#[test]
fn handshake_latency_quick() {
    check("handshake-latency", 1);
}
