//! `reproduce NAME --quick` for every experiment under `experiments/` (those with
//! real-stack `[endpoints]` are run by the CLI's tests): one report per plan with its
//! figures; every plan with a tolerance states "N of N points within" it; every check of
//! every plan holds (an inconclusive check fails: checks are designed to be decisive),
//! or is left out of quick with a reason; every claim has a status and every "not run"
//! a reason, and no claim the last full run did not reproduce is left out of quick but
//! for a stated cost (the index shows the full run's status beside it); the index links
//! every report and lists every claim under its source. Generic: nothing here names a
//! plan's claims or checks, so plans change without editing this file.

use quiclab_lab::csv::{self, Table};
use quiclab_lab::plan::load::load_plan;
use quiclab_lab::plan::Plan;
use quiclab_lab::present::judge::ClaimStatus;
use quiclab_lab::present::record::{experiment_path, LastFullRun};
use quiclab_lab::present::reproduce::{list, reproduce, LAST_FULL_RUN};
use quiclab_lab::present::sources::source_title;
use quiclab_lab::RunOptions;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../experiments")
}

/// Where reproductions are kept after their checks, when set (scripts/test.sh sets it:
/// tests/reports/check_reports.py then checks these outputs in a browser instead of
/// reproducing everything a second time).
const KEEP_REPRODUCTIONS: &str = "QUICLAB_KEEP_REPRODUCTIONS";

fn out_dir(name: &str) -> PathBuf {
    let d = match std::env::var_os(KEEP_REPRODUCTIONS) {
        Some(dir) => PathBuf::from(dir).join(name),
        None => {
            std::env::temp_dir().join(format!("quiclab-reproduce-{name}-{}", std::process::id()))
        }
    };
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// The experiments this file runs, and those the CLI's tests run (they need real
/// stacks or the quiclab binary).
const EXPERIMENTS: [&str; 14] = [
    "ack-ratio",
    "careful-resume",
    "cc-compete",
    "cc-validation",
    "cpu-limited-peer",
    "handshake-latency",
    "inet-validation",
    "instant-ack",
    "l4s",
    "leo",
    "multipath",
    "paths",
    "quic-vs-tcp",
    "satellite-ack",
];
const WITH_REAL_STACKS: [&str; 3] = ["emulator-fidelity", "instant-ack-foreign", "linux-tcp"];

#[test]
fn every_experiment_is_tested() {
    let mut names: Vec<String> = list(&root()).unwrap().into_iter().map(|e| e.name).collect();
    names.sort();
    let mut known: Vec<&str> = EXPERIMENTS
        .iter()
        .chain(&WITH_REAL_STACKS)
        .copied()
        .collect();
    known.sort();
    assert_eq!(
        names, known,
        "add the experiment to EXPERIMENTS (or WITH_REAL_STACKS)"
    );
}

/// Runs `reproduce NAME --quick`, checks everything the module docs list, then lets
/// `inspect` look at the output directory before it is removed.
fn check(name: &str, inspect: impl FnOnce(&Path)) {
    let out = out_dir(name);
    let opts = RunOptions {
        jobs: 0,
        quick: true,
        progress: false,
    };
    let done = reproduce(&root(), name, &out, &opts).unwrap_or_else(|e| panic!("{e}"));
    let plans = list(&root())
        .unwrap()
        .into_iter()
        .find(|e| e.name == name)
        .unwrap()
        .plans
        .len();
    assert_eq!(done.dirs.len(), plans, "one results directory per plan");
    let full = LastFullRun::read(&root().join(LAST_FULL_RUN)).unwrap();
    let index = std::fs::read_to_string(&done.index).unwrap();
    for dir in &done.dirs {
        let plan = load_plan(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let path = experiment_path(&out, dir);
        check_report(dir, &plan);
        check_checks(dir);
        check_claims(dir, &path, &full, &index);
        assert!(!dir.join("findings.csv").exists(), "{path}: a findings.csv");
        for file in ["report.md", "report.html"] {
            assert!(dir.join(file).exists(), "{path}: no {file}");
        }
        assert!(
            index.contains(&format!("]({path}/report.md) — ")),
            "the index does not link {path}'s report:\n{index}"
        );
    }
    inspect(&out);
    if std::env::var_os(KEEP_REPRODUCTIONS).is_none() {
        let _ = std::fs::remove_dir_all(&out);
    }
}

/// Figures are drawn, and a plan with a tolerance states how many points lie within it.
/// Every point must lie within unless claims judge the expected curve: a claim not
/// reproduced is a result to report (docs/CLAIMS.md), not a failure.
fn check_report(dir: &Path, plan: &Plan) {
    let text = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let pngs = walk(&dir.join("figures"))
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "png"))
        .count();
    assert!(
        plan.figures.is_empty() || pngs >= 1,
        "{}: no figure",
        dir.display()
    );
    if plan.tolerance.is_some() && !plan.expected.is_empty() {
        let line = text
            .lines()
            .find(|l| l.starts_with("Overall: ") && l.contains("points within"))
            .unwrap_or_else(|| panic!("{}: no \"points within\" verdict", dir.display()));
        let nums: Vec<u64> = line
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|t| t.parse().ok())
            .collect();
        let claimed = plan.claims.iter().any(|c| {
            c.against.is_empty()
                && c.metric
                    .as_ref()
                    .is_some_and(|m| plan.expected.contains_key(m))
        });
        assert!(
            nums.len() >= 2 && (claimed || nums[0] == nums[1]) && !line.contains("without data"),
            "{}: {line}",
            dir.display()
        );
    }
}

/// (column index, rows as strings) of a results CSV, if the plan wrote it.
fn rows(file: &Path, cols: &[&str]) -> Vec<Vec<String>> {
    if !file.exists() {
        return Vec::new();
    }
    let t: Table = csv::read(file).unwrap_or_else(|e| panic!("{e}"));
    let idx: Vec<usize> = cols.iter().map(|c| t.require(c).unwrap()).collect();
    (0..t.rows.len())
        .map(|r| {
            idx.iter()
                .map(|&c| t.get(r, c).unwrap_or("").to_string())
                .collect()
        })
        .collect()
}

/// Every check holds, or is left out of quick with its reason.
fn check_checks(dir: &Path) {
    for r in rows(&dir.join("checks.csv"), &["name", "verdict", "reason"]) {
        let ok = r[1] == "holds" || (r[1] == "not run" && r[2].starts_with("left out of quick"));
        assert!(ok, "{}: check {} {} ({})", dir.display(), r[0], r[1], r[2]);
    }
}

/// How a skip for the run's cost reads in claims.csv (`[quick] skip = { name = "cost: ..." }`).
const COST_SKIP: &str = "left out of quick: cost:";

/// Every claim has a status, a "not run" has its reason, a claim the last full run did
/// not reproduce is not left out of quick (unless for its stated cost), and the index
/// lists the claim under its source.
fn check_claims(dir: &Path, path: &str, full: &LastFullRun, index: &str) {
    let cols = ["name", "source", "status", "reason"];
    for r in rows(&dir.join("claims.csv"), &cols) {
        let (name, source, status, reason) = (&r[0], &r[1], &r[2], &r[3]);
        let parsed = ClaimStatus::parse(status);
        assert!(parsed.is_some(), "{path}: claim {name}: status `{status}`");
        if parsed == Some(ClaimStatus::NotRun) {
            assert!(
                !reason.is_empty(),
                "{path}: claim {name} not run without a reason"
            );
        }
        // A cost reason is the one exception: the index shows the full run's status
        // beside the quick run's "not run" (docs/CLAIMS.md, "Quick runs").
        if reason.starts_with("left out of quick") && !reason.starts_with(COST_SKIP) {
            let last = full.get(path, "claim", name).map(|r| r.status.as_str());
            assert_ne!(
                last,
                Some(ClaimStatus::NotReproduced.as_str()),
                "{path}: claim {name} is not reproduced in the full run and left out of quick"
            );
        }
        assert!(
            index.contains(&format!("### {}", source_title(source))),
            "the index has no table for source {source}"
        );
        assert!(
            index.contains(&format!("({path}: {name})")),
            "the index does not list claim {name} of {path}"
        );
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
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
fn inet_validation_quick() {
    check("inet-validation", |_| {});
}

#[test]
fn handshake_latency_quick() {
    check("handshake-latency", |_| {});
}

#[test]
fn ack_ratio_quick() {
    check("ack-ratio", |_| {});
}

#[test]
fn satellite_ack_quick() {
    check("satellite-ack", |_| {});
}

#[test]
fn cc_validation_quick() {
    check("cc-validation", |_| {});
}

#[test]
fn l4s_quick() {
    check("l4s", |_| {});
}

#[test]
fn cc_compete_quick() {
    check("cc-compete", |_| {});
}

#[test]
fn instant_ack_quick() {
    check("instant-ack", |_| {});
}

/// Issue 37: a CPU-limited peer (host model).
#[test]
fn cpu_limited_peer_quick() {
    check("cpu-limited-peer", |_| {});
}

/// Issue 32: handover with and without migration, NAT rebindings.
#[test]
fn paths_quick() {
    check("paths", |_| {});
}

#[test]
fn multipath_quick() {
    check("multipath", |_| {});
}

#[test]
fn leo_quick() {
    check("leo", |_| {});
}

#[test]
fn quic_vs_tcp_quick() {
    check("quic-vs-tcp", |_| {});
}

/// Careful Resume (seed 004); its headline's cwnd figure shows both modes' windows and
/// Careful Resume's phase changes (from the server's careful_resume_phase_updated
/// events).
#[test]
fn careful_resume_quick() {
    check("careful-resume", |out| {
        let svg = out.join("careful-resume/headline/figures/cwnd_over_time.svg");
        let svg =
            std::fs::read_to_string(&svg).unwrap_or_else(|e| panic!("{}: {e}", svg.display()));
        for label in [
            "slow_start",
            "careful_resume",
            "reconnaissance",
            "unvalidated",
            "validating",
            "normal",
        ] {
            assert!(svg.contains(label), "cwnd figure lacks {label}");
        }
    });
}
