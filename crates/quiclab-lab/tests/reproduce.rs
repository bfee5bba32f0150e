//! `reproduce inet-validation --quick` and `reproduce handshake-latency --quick`: reports
//! and figures are written, and every point lies within the plan's tolerance of the
//! analytic result.

use quiclab_lab::present::reproduce::{list, reproduce};
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
/// findings (none of which fails or lacks data).
fn check(name: &str, plans: usize) -> Vec<(String, String, String)> {
    check_with(name, plans, |_| {})
}

/// `check`, then `inspect` looks at the output directory before it is removed.
fn check_with(
    name: &str,
    plans: usize,
    inspect: impl FnOnce(&std::path::Path),
) -> Vec<(String, String, String)> {
    let out = out_dir(name);
    let opts = RunOptions {
        jobs: 0,
        quick: true,
        progress: false,
    };
    let done = reproduce(&root(), name, &out, &opts).unwrap_or_else(|e| panic!("{e}"));
    let index_text = std::fs::read_to_string(&done.index).unwrap();
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
    inspect(&out);
    let _ = std::fs::remove_dir_all(&out);
    findings
}

/// The findings in the results under `out`, as (plan dir name, finding name, verdict):
/// the dir is the experiment's name, or the plan file's stem in a directory of plans.
/// A finding that fails, or that has no data without `[quick] skip_findings` leaving it
/// out, fails the test with its row; "inconclusive" is allowed (a quick run has few
/// repetitions), and the tests name the findings that must hold even so.
fn findings_of(out: &std::path::Path) -> Vec<(String, String, String)> {
    let mut found = Vec::new();
    for f in walk(out)
        .into_iter()
        .filter(|p| p.ends_with("findings.csv"))
    {
        let t = quiclab_lab::csv::read(&f).unwrap();
        let (name, verdict) = (t.require("name").unwrap(), t.require("verdict").unwrap());
        for r in 0..t.rows.len() {
            let row = t.rows[r]
                .iter()
                .map(|c| c.clone().unwrap_or_default())
                .collect::<Vec<_>>();
            let v = t.get(r, verdict).unwrap_or("").to_string();
            assert!(
                v != "fails" && v != "no data",
                "{}: a finding {v}: {row:?}",
                f.display()
            );
            let dir = f
                .parent()
                .unwrap()
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            found.push((dir, t.get(r, name).unwrap_or("").to_string(), v));
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

/// INET case D: Jain's index of the active senders is at least 0.99 in every phase
/// with more than one sender.
#[test]
fn inet_validation_quick() {
    let found = check("inet-validation", 4);
    assert_found(
        &found,
        "d_shared_link",
        &["fair_phase2", "fair_phase3", "fair_phase4"],
    );
}

#[test]
fn handshake_latency_quick() {
    let found = check("handshake-latency", 1);
    // The 0-RTT curve (a repeat connection resuming a session) against the 1-RTT one.
    assert_found(
        &found,
        "handshake-latency",
        &["zero_rtt_first_byte_at_1rtt", "one_rtt_first_byte_at_2rtt"],
    );
}

/// Asserts that each named finding of plan `dir` holds in `found` (from [`check`]).
fn assert_found(found: &[(String, String, String)], dir: &str, names: &[&str]) {
    for n in names {
        assert!(
            found
                .iter()
                .any(|(d, f, v)| d == dir && f == n && v == "holds"),
            "{dir}: finding {n} does not hold: {found:?}"
        );
    }
}

/// INET Fig. 7 and §V.B: thinner ACKs cost throughput under random loss, and
/// IMMEDIATE_ACK in the last packet before the sender is window-blocked removes the cost.
#[test]
fn ack_ratio_quick() {
    let found = check("ack-ratio", 2);
    assert_found(
        &found,
        "fig7",
        &[
            "ratio2_lowers",
            "ratio10_lowers",
            "ratio10_loses_more_than_ratio2",
            "fix_helps_ratio10",
            "fix_removes_loss_ratio10",
            "fix_removes_loss_ratio2",
        ],
    );
    // With 5 quick repetitions the fix's ±1% band is still inconclusive at p = 0.02%
    // (CI about ±2%); the full run decides it.
    assert_found(&found, "lower-loss", &["ratio10_p002"]);
}

/// Seed 001: on a GEO path 1:10 cuts return-path ACK bytes below a third of 1:2's
/// without slowing the download, 1:2 limits the forward rate on very asymmetric paths,
/// and QUIC's return traffic exceeds a TCP receiver's (the model and, in `tcp.toml`,
/// a simulated TCP).
#[test]
fn satellite_ack_quick() {
    let found = check("satellite-ack", 4);
    assert_found(
        &found,
        "satellite-ack",
        &[
            "quic_vs_tcp",
            "ack10_cuts_return",
            "ack10_same_download",
            "ack2_limits_asymmetric",
            "schedule_cuts_return",
            "ack_frequency_cuts_return",
        ],
    );
    // The CUBIC runs of the 1%-loss case (issue 11).
    assert_found(
        &found,
        "cubic-lossy",
        &["cubic_faster_lossy", "cubic_ack10_cuts_return_lossy"],
    );
    // QUIC against simulated TCP end to end (issue 15).
    assert_found(
        &found,
        "tcp",
        &[
            "quic_return_above_tcp",
            "quic_download_vs_tcp",
            "quic_slower_when_ack_limited",
        ],
    );
    // ... and against TCP split by a PEP at the gateway (issue 15 item 4; seed 001's
    // "QUIC is worse than H2/TCP with a PEP").
    assert_found(
        &found,
        "pep",
        &[
            "seed_quic_worse_than_tcp_pep",
            "seed_quic_worse_than_tcp_pep_lossy",
            "pep_faster_than_end_to_end_tcp",
            "quic_faster_than_end_to_end_tcp",
            "pep_leaves_return_volume",
            "quic_return_above_tcp_pep",
        ],
    );
}

/// RFC 9438 Tables 1 and 2 (the quick subset, p = 1e-2 to 1e-4 at both RTTs: within
/// 10%), utilisation and queueing delay by controller, buffer and AQM, and random loss
/// against the Mathis formula and BBRv3's loss threshold.
#[test]
fn cc_validation_quick() {
    let found = check("cc-validation", 3);
    assert_found(
        &found,
        "1-cubic-response",
        &[
            "table1_p1e-2",
            "table1_p1e-3",
            "table1_p1e-4",
            "table2_p1e-2",
            "table2_p1e-3",
            "table2_p1e-4",
        ],
    );
    assert_found(
        &found,
        "2-utilization",
        &[
            "reno_full_at_bdp",
            "cubic_shallow_better",
            "reno_bufferbloat",
            "codel_cuts_delay_reno",
            "cubic_less_sensitive_to_aqm",
            "bbr_full_2bdp",
            "bbr_low_queue_2bdp",
        ],
    );
    assert_found(
        &found,
        "3-random-loss",
        &[
            "reno_mathis",
            "bbr_keeps_link_p1",
            "bbr_backs_off_above_threshold",
        ],
    );
}

/// Two flows of one controller share fairly, CUBIC against NewReno and BBRv3 against
/// CUBIC by buffer, RTT unfairness, and a late starter.
#[test]
fn cc_compete_quick() {
    let found = check("cc-compete", 5);
    assert_found(
        &found,
        "1-same-controller",
        &["reno_fair", "cubic_fair", "bbr_fair"],
    );
    assert_found(&found, "2-cubic-vs-reno", &["fair_at_bdp"]);
    assert_found(&found, "3-bbr-vs-cubic", &["no_starvation_at_bdp"]);
    assert_found(
        &found,
        "4-rtt-unfairness",
        &["cubic_fairer_than_reno", "bbr_favours_long"],
    );
    assert_found(
        &found,
        "5-late-starter",
        &["reno_converges", "bbr_converges"],
    );
}

/// Seed 000: the report pages state the instant-ACK findings, and they hold (the
/// per-point directions are asserted in `reproduce_instant_ack.rs`).
#[test]
fn instant_ack_quick_report_findings() {
    let found = check("instant-ack", 4);
    assert_found(
        &found,
        "1-no-loss",
        &[
            "iack_shorter_first_pto",
            "same_first_pto_without_delay",
            "iack_faster_at_amplification_limit",
        ],
    );
    assert_found(
        &found,
        "3-client-flight-lost",
        &["iack_recovers_client_flight_faster"],
    );
    assert_found(
        &found,
        "4-server-flight-lost",
        &["wfc_recovers_server_flight_faster"],
    );
}

/// Careful Resume (issue 12, seed 004): the headline (TTLB at most 60% of slow
/// start's), speedup vs object size and BDP, Safe Retreat with stale parameters, harm
/// to background flows and pacing of the jump.
#[test]
fn careful_resume_quick() {
    // The headline's cwnd figure: both modes' windows and Careful Resume's phase
    // changes (recorded from the server's careful_resume_phase_updated events).
    let found = check_with("careful-resume", 6, |out| {
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
    assert_found(
        &found,
        "headline",
        &[
            "cr_ttlb_at_most_60pct",
            "cr_ttlb_near_seed",
            "ss_ttlb_near_seed",
        ],
    );
    assert_found(
        &found,
        "speedup-size",
        &[
            "cr_faster_1bdp_geo",
            "geo_gains_more_than_fiber",
            "speedup_larger_at_1bdp_than_quarter_fiber",
        ],
    );
    assert_found(
        &found,
        "speedup-bdp",
        &[
            "speedup_grows_with_rtt",
            "speedup_grows_with_rate",
            "large_bdp_benefits",
        ],
    );
    assert_found(
        &found,
        "safe-retreat",
        &[
            "stale_cr_losses_bounded",
            "stale_cr_ttlb_bounded",
            "fresh_cr_faster",
        ],
    );
    assert_found(
        &found,
        "harm",
        &["bg_losses_n1", "bg_losses_n16", "bg_goodput_n16"],
    );
    assert_found(
        &found,
        "pacing",
        &[
            "unpaced_jump_drops_shallow",
            "unpaced_jump_queues",
            "paced_faster_shallow",
        ],
    );
}

/// Seed 003 (issue 15), QUIC against TLS/TCP in one simulator: Fig. 7's handshake
/// round trips per transport, Fig. 11's 64 KB receive-window cap, Fig. 13's loss
/// epochs and Table 3's per-country latency reduction.
#[test]
fn quic_vs_tcp_quick() {
    let found = check("quic-vs-tcp", 6);
    assert_found(
        &found,
        "1-handshake",
        &[
            "quic_1rtt_first_byte_at_2rtt",
            "quic_0rtt_first_byte_at_1rtt",
            "tls13_tcp_first_byte_at_3rtt",
            "tls12_tcp_first_byte_at_4rtt",
            "tfo_early_data_first_byte_at_1rtt",
            "quic_0rtt_below_tls13_tcp",
            "quic_1rtt_below_tls13_tcp",
        ],
    );
    assert_found(
        &found,
        "2-rwnd-limited",
        &[
            "tcp_capped_at_64kb_per_rtt",
            "quic_not_capped_200ms",
            "quic_not_capped_400ms",
            "no_cap_below_64kb_bdp",
        ],
    );
    // Loss epochs: random loss leaves mostly single-loss epochs, bursts and buffer
    // overflow do not (the seed's "under 30%" itself is inconclusive at our burst model).
    assert_found(
        &found,
        "3-loss-epochs",
        &[
            "random_loss_mostly_single",
            "random_loss_3pct_mostly_single",
            "bursts_fewer_single_than_random",
            "overflow_epochs_multi_loss",
        ],
    );
    // Per country: QUIC's one-RTT-shorter handshake wins the 100 KB page on the short
    // path; loss-limited downloads scale with QUIC's packet size. The seed's growth
    // from South Korea to India is not reproduced (inconclusive, see the report).
    assert_found(
        &found,
        "4-countries",
        &[
            "south_korea_page_quic_faster",
            "smaller_packets_slower_under_loss",
        ],
    );
    // Search: QUIC's one-RTT-shorter handshake wins at every RTT without loss (its
    // relative reduction shrinks with the RTT here, unlike the seed's, see the report).
    assert_found(
        &found,
        "5-search",
        &["quic_faster_at_20ms", "quic_faster_at_300ms"],
    );
    // Video: one plain-CUBIC QUIC connection rebuffers longer than TCP's two (the seed's
    // QUIC emulated two flows; the finding records the disagreement).
    assert_found(&found, "6-video", &["quic_rebuffers_vs_two_tcp"]);
}
