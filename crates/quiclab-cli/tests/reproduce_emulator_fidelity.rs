//! `quiclab reproduce emulator-fidelity --quick`: quiclab's client and server as
//! processes through `quiclab emulate` against the simulator, same scenarios (the
//! handshake-latency scenario, INET case C as a download).
//!
//! What is asserted: every claim and check is judged on data (no check without data, no
//! claim not run for lack of samples), and each real run
//! shows the scenario's link: a handshake no shorter than the simulated one (1 RTT:
//! without the emulator's delay it would take about a millisecond on loopback) and not
//! more than 50% longer, and a flow-control-limited goodput between 0.3 and 1.1 x
//! credit / RTT. The 10%/5% agreement statements themselves are reported, not asserted:
//! on this shared 2-core machine the emulator's and the processes' scheduling delays
//! (ms, depending on the load) decide them; see the plans' `discussion`.
//!
//! Exit status 77 (a build without the emulator) skips outside CI only.

mod common;

use std::path::Path;

/// runs.csv as (header, rows).
fn runs(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text
        .lines()
        .map(|l| l.split(',').map(String::from).collect::<Vec<_>>());
    let header = lines.next().expect("header");
    (header, lines.collect())
}

fn col(header: &[String], name: &str) -> usize {
    header
        .iter()
        .position(|c| c == name)
        .unwrap_or_else(|| panic!("no column {name}"))
}

fn num(row: &[String], i: usize) -> f64 {
    row[i]
        .parse()
        .unwrap_or_else(|_| panic!("not a number in {row:?}"))
}

#[test]
fn emulator_fidelity_quick() {
    let Some(dir) = common::reproduce_real("emulator-fidelity", &["--keep-going"]) else {
        return;
    };
    for plan in ["1-handshake", "2-flow-control"] {
        let read = |f: &str| std::fs::read_to_string(dir.join(plan).join(f)).unwrap_or_default();
        let (checks, claims) = (read("checks.csv"), read("claims.csv"));
        let statements = checks.lines().skip(1).count() + claims.lines().skip(1).count();
        assert!(statements > 0, "{plan}: no claims or checks");
        assert!(!checks.contains(",no data,"), "{plan}: {checks}");
        assert!(!claims.contains("lack a sample"), "{plan}: {claims}");
    }
    // Medians per RTT: a single real run may lose its first flight to the loaded
    // machine and take a PTO (seen once: 2.02 s at 200 ms RTT, its first Initial
    // answered only after the client's 1 s PTO); the plan reports it, the median is
    // the claim about the link.
    let (h, rows) = runs(&dir.join("1-handshake/runs.csv"));
    let (stack, rtt, hs) = (col(&h, "stack"), col(&h, "rtt_ms"), col(&h, "handshake_s"));
    let mut by_rtt: std::collections::BTreeMap<String, Vec<f64>> = Default::default();
    for r in rows.iter().filter(|r| r[stack] == "quiclab") {
        by_rtt.entry(r[rtt].clone()).or_default().push(num(r, hs));
    }
    assert!(!by_rtt.is_empty(), "no emulated runs");
    for (rtt_ms, mut v) in by_rtt {
        v.sort_by(f64::total_cmp);
        let median = v[v.len() / 2];
        let one_rtt: f64 = rtt_ms.parse::<f64>().expect("rtt") / 1e3;
        assert!(
            median >= one_rtt * 0.99 && median <= one_rtt * 1.5,
            "median handshake {median} s at {one_rtt} s RTT ({v:?})"
        );
    }
    let (h, rows) = runs(&dir.join("2-flow-control/runs.csv"));
    let (stack, rtt, gp) = (col(&h, "stack"), col(&h, "rtt_ms"), col(&h, "goodput_bps"));
    for r in rows.iter().filter(|r| r[stack] == "quiclab") {
        let analytic = 100_000.0 * 8.0 / (num(r, rtt) / 1e3);
        let v = num(r, gp);
        assert!(
            v >= 0.3 * analytic && v <= 1.1 * analytic,
            "goodput {v} bit/s vs credit/RTT {analytic}"
        );
    }
    let _ = std::fs::remove_dir_all(dir.parent().expect("the run's out directory"));
}
