//! `quiclab reproduce linux-tcp --quick`: Linux TCP (a bulk server on the host, curl
//! inside `quiclab shell`, `[endpoints] emulator = "shell"`) against quiclab-tcp in the
//! simulator on the same scenario files (GEO, a lossy 100 ms path, LEO; the quick run
//! makes Linux runs on the lossy path only). Asserts that every check run holds (the
//! handshake takes the scenario's round trip), that each side measured a time to last
//! byte, that each Linux run recorded the sysctls in effect on both ends, and that the
//! server's connections ran CUBIC. The Linux-vs-simulator agreement
//! is a claim, reported, not asserted: it depends on mechanisms the plan's discussion
//! analyses, not on the lab.
//!
//! Root only (network namespaces and TUN devices): without root the test says so and
//! returns, as tests/shell.rs does; with root, the lab's exit 77 (a `requires` failed:
//! no curl, python3 or CUBIC) is a skip only outside the test command's setup.

mod common;

use std::path::Path;

fn column(header: &str, name: &str) -> usize {
    header
        .split(',')
        .position(|c| c == name)
        .unwrap_or_else(|| panic!("no column {name} in {header}"))
}

/// (where, TTLB mean) of every row of summary.csv.
fn ttlb(summary: &Path) -> Vec<(String, f64)> {
    let text = std::fs::read_to_string(summary).expect("summary.csv");
    let mut lines = text.lines();
    let header = lines.next().expect("header");
    let (w, t) = (column(header, "where"), column(header, "ttlb_s_mean"));
    lines
        .map(|l| {
            let c: Vec<&str> = l.split(',').collect();
            let v = c[t].parse().unwrap_or_else(|_| panic!("no TTLB in {l}"));
            (c[w].to_string(), v)
        })
        .collect()
}

/// Every run directory of a Linux run (those with a curl times file).
fn linux_runs(dir: &Path) -> Vec<std::path::PathBuf> {
    let real = std::fs::read_dir(dir.join("real")).expect("real/");
    real.filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("times.json").is_file())
        .collect()
}

#[test]
fn linux_tcp_quick() {
    // SAFETY: geteuid has no failure mode.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipping linux_tcp_quick: not root (quiclab shell needs root)");
        return;
    }
    let Some(dir) = common::reproduce_real("linux-tcp", &[]) else {
        return;
    };
    // Quick runs make Linux runs on the lossy path only (one size; the GEO and LEO
    // plans' quick runs are simulated only, for CI's time).
    for (plan, sides) in [
        ("plan", &["sim"][..]),
        ("lossy", &["sim", "linux"][..]),
        ("leo", &["sim"][..]),
    ] {
        // A directory of several plans reproduces each into its file's stem.
        let d = dir.join(plan);
        let checks = std::fs::read_to_string(d.join("checks.csv")).expect("checks.csv");
        assert!(checks.lines().count() > 1, "no checks: {checks}");
        for line in checks.lines().skip(1) {
            let verdict = line.split(',').nth(1);
            assert!(matches!(verdict, Some("holds" | "not run")), "{line}");
        }
        let rows = ttlb(&d.join("summary.csv"));
        for side in sides {
            assert!(
                rows.iter().any(|(w, t)| w == side && *t > 0.0),
                "{plan}: no {side} TTLB in {rows:?}"
            );
        }
    }
    let runs = linux_runs(&dir.join("lossy"));
    assert!(!runs.is_empty(), "no Linux runs in {}", dir.display());
    for run in runs {
        for side in ["server", "client"] {
            let f = run.join(format!("sysctls-{side}.txt"));
            let text = std::fs::read_to_string(&f).expect("the sysctls file");
            assert!(text.contains("net.ipv4.tcp_rmem = "), "{}", f.display());
        }
        let log = std::fs::read_to_string(run.join("server.err")).expect("server.err");
        assert!(log.contains("congestion control cubic"), "{log}");
    }
    common::done_with(dir.parent().expect("the run's out directory"));
}
