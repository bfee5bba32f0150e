//! `quiclab reproduce emulator-fidelity --quick`: quiclab's client and server as
//! processes through `quiclab emulate` against the simulator, same scenarios (the
//! handshake-latency scenario, INET case C as a download, a Prague download over
//! DualPI2 whose link statistics come from the emulator's links.json, a bulk download
//! with calibrated host profiles and with a CPU-limited server).
//!
//! What is asserted: the reproduction exits 0 (no `--keep-going`: a statement that
//! fails, is inconclusive or has no data fails the command) and every statement of the
//! plans with statements holds (`checks.csv`, or `findings.csv` before the plans' migration), so the
//! 5% agreement between emulated and simulated runs is asserted, not only reported. Then
//! the link itself: each RTT's median real handshake is no shorter than the simulated
//! one (1 RTT: without the emulator's delay it would take about a millisecond on
//! loopback) and not more than 50% longer; the simulated flow-control-limited goodput is
//! the formula's (below), and the real median is 0.8-1.1 x credit / RTT (the old
//! receive-window bug gave half of it).
//!
//! The plans are judged in wall-clock time, so the reproduction gets a second try when
//! the first fails (a run disturbed by the machine says nothing of the emulator); each
//! failed try prints its figures, the endpoints' scheduling class, the emulator's send
//! lateness and the load (tests/common/mod.rs, `diagnose`).
//!
//! Exit status 77 (a stack or the emulator missing) is a recorded skip only outside the
//! test command's setup (tests/skip.rs).

mod common;

use std::collections::BTreeMap;
use std::path::Path;

/// runs.csv's rows of `stack`: RTT (ms) -> the `metric` of each run.
fn by_rtt(runs: &Path, stack: &str, metric: &str) -> BTreeMap<u64, Vec<f64>> {
    by_column(runs, stack, "rtt_ms", metric)
}

/// runs.csv's rows of `stack`: the `axis` column's value -> the `metric` of each run.
fn by_column(runs: &Path, stack: &str, axis: &str, metric: &str) -> BTreeMap<u64, Vec<f64>> {
    let t = quiclab_lab::csv::read(runs).unwrap_or_else(|e| panic!("{e}"));
    let col = |name: &str| {
        t.header
            .iter()
            .position(|c| c == name)
            .unwrap_or_else(|| panic!("{}: no column {name}", runs.display()))
    };
    let (s, rtt, m) = (col("stack"), col(axis), col(metric));
    let num = |row: &[Option<String>], i: usize| -> f64 {
        let cell = row[i].as_deref().unwrap_or("");
        cell.parse()
            .unwrap_or_else(|_| panic!("{}: {metric} not a number in {row:?}", runs.display()))
    };
    let mut out: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    for r in t.rows.iter().filter(|r| r[s].as_deref() == Some(stack)) {
        out.entry(num(r, rtt) as u64).or_default().push(num(r, m));
    }
    assert!(!out.is_empty(), "{}: no {stack} runs", runs.display());
    out
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The plan's response (2,000,000 bytes) and the client's stream credit (100,000 bytes)
/// of scenarios/experiments/inet_c_download.toml, and its link rate (bit/s).
const RESPONSE: f64 = 2_000_000.0;
const CREDIT: f64 = 100_000.0;
const LINK_BPS: f64 = 1e9;

#[test]
fn emulator_fidelity_quick() {
    let Some(dir) = common::reproduce_real_tries("emulator-fidelity", &[], 2) else {
        return;
    };
    for plan in [
        "1-handshake",
        "2-flow-control",
        "3-prague-dualpi2",
        "4-hosts",
    ] {
        common::every_statement_holds(&dir.join(plan));
    }
    // 5-cpu-limited-server states nothing (its gap is reported, not explained): both
    // sides ran and measured goodput.
    let cpu = dir.join("5-cpu-limited-server/runs.csv");
    for stack in ["sim", "quiclab"] {
        let g = by_column(&cpu, stack, "rate_mbps", "goodput_bps");
        assert!(g.values().flatten().all(|&b| b > 0.0), "{stack}: {g:?}");
    }
    // Medians per RTT: a single real run may lose its first flight to the loaded
    // machine and take a PTO (seen once: 2.02 s at 200 ms RTT, its first Initial
    // answered only after the client's 1 s PTO); the plan reports it, the median is
    // the claim about the link.
    let runs = dir.join("1-handshake/runs.csv");
    for (rtt_ms, v) in by_rtt(&runs, "quiclab", "handshake_s") {
        let one_rtt = rtt_ms as f64 / 1e3;
        let m = median(v.clone());
        assert!(
            m >= one_rtt * 0.99 && m <= one_rtt * 1.5,
            "median handshake {m} s at {one_rtt} s RTT: expected 1-1.5 RTT ({v:?})"
        );
    }
    let runs = dir.join("2-flow-control/runs.csv");
    // The simulator (deterministic): the response is 20 credits; its first byte to its
    // last spans 19 round trips plus the sending of the credits at the link rate, at
    // most all 20 of them (0.8 ms each), so goodput lies between 8 S / (19 RTT + 20 W /
    // rate) and 8 S / (19 RTT), within 2% of credit / RTT x 20/19. The receive-window
    // bug that gave half a credit per round trip (21.0 Mbit/s at 20 ms) fails it.
    for (rtt_ms, v) in by_rtt(&runs, "sim", "goodput_bps") {
        let rtt = rtt_ms as f64 / 1e3;
        let rounds = RESPONSE / CREDIT - 1.0;
        let hi = RESPONSE * 8.0 / (rounds * rtt);
        let lo = RESPONSE * 8.0 / (rounds * rtt + (RESPONSE / CREDIT) * CREDIT * 8.0 / LINK_BPS);
        for g in v {
            assert!(
                (lo..=hi).contains(&g),
                "simulated goodput at {rtt_ms} ms RTT: {g} bit/s, expected {lo:.0}-{hi:.0} \
                 (19 round trips plus up to 20 credits' sending time for 20 credits of 100 kB)"
            );
        }
    }
    // The real processes: the median within 0.8-1.1 x credit / RTT (the 5% agreement
    // with the simulator is the plan's check, asserted above).
    for (rtt_ms, v) in by_rtt(&runs, "quiclab", "goodput_bps") {
        let analytic = CREDIT * 8.0 / (rtt_ms as f64 / 1e3);
        let m = median(v.clone());
        assert!(
            m >= 0.8 * analytic && m <= 1.1 * analytic,
            "median real goodput {m} bit/s at {rtt_ms} ms RTT vs credit/RTT {analytic}: \
             expected 0.8-1.1 x ({v:?})"
        );
    }
    common::done_with(dir.parent().expect("the run's out directory"));
}
