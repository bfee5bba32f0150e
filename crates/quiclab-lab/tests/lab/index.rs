//! The reproduction index over synthetic results directories: one table per source,
//! seeds first, with the last full run's outcome; the counts per source and status;
//! the checks counted per experiment; every statement not run with its reason (and a
//! flag on a claim left out of quick that the full run did not reproduce); the reports.

use quiclab_lab::present::index::write_index;
use quiclab_lab::present::record::{record_full_run, LastFullRun};
use quiclab_lab::present::report::write_report;
use std::path::{Path, PathBuf};

fn tmpdir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("index-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

const RUNS: &str = "point,rep,delay,tp\n0,0,10,100\n1,0,20,50\n";
const SUMMARY: &str = "point,delay,tp_n,tp_mean,tp_median,tp_p5,tp_p95,tp_ci_lo,tp_ci_hi\n0,10,1,100,100,100,100,100,100\n1,20,1,50,50,50,50,50,50\n";

fn plan(title: &str, statements: &str) -> String {
    format!(
        r#"name = "p"
title = "{title}"
question = "q"
base = "b.toml"
master_seed = 1
deterministic = true

[[axes]]
name = "delay"
values = [10, 20]

[metrics]
tp = "flows[0].goodput_bps"
{statements}
"#
    )
}

fn claim(name: &str, source: &str, expect: &str) -> String {
    format!(
        r#"
[[claims]]
name = "{name}"
source = "{source}"
where = "Fig. 1"
claim = "{name} in the source's words"
metric = "tp"
of = {{ delay = 20 }}
against = {{ delay = 10 }}
expect = "{expect}"
statistic = "ratio of means"
published = {{ change = -0.5 }}
"#
    )
}

const CHECK: &str = r#"
[[checks]]
name = "halves"
check = "twice the delay halves the goodput"
basis = "analytic"
metric = "tp"
of = { delay = 20 }
against = { delay = 10 }
within = 0.6
"#;

/// A results directory `root/path` with the plan as a quick run ran it.
fn results(root: &Path, path: &str, text: &str, quick: bool) -> PathBuf {
    let d = root.join(path);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("plan.toml"), text).unwrap();
    let mut plan = quiclab_lab::load_plan(&d.join("plan.toml")).unwrap();
    plan.quick_run = quick;
    std::fs::write(
        d.join("plan.resolved.json"),
        serde_json::to_string(&plan).unwrap(),
    )
    .unwrap();
    std::fs::write(d.join("runs.csv"), RUNS).unwrap();
    std::fs::write(d.join("summary.csv"), SUMMARY).unwrap();
    write_report(&d).unwrap();
    d
}

#[test]
fn the_index_reads_like_a_review() {
    let root = tmpdir("review");
    let a = plan(
        "Plan A",
        &format!(
            "{}{}{CHECK}\n[quick]\nskip = {{ left_out = \"its points are not in quick\" }}\n",
            claim("lower_003", "003", "lower"),
            claim("left_out", "003", "lower")
        ),
    );
    let b = plan(
        "Plan B",
        &format!(
            "{}{}",
            claim("higher_000", "000", "higher"),
            claim("named", "Mathis et al., CCR 1997", "lower")
        ),
    );
    let full_dirs = [
        results(&root.join("full"), "exp-a/one", &a, false),
        results(&root.join("full"), "exp-b", &b, false),
    ];
    // The full run: `left_out` made not reproduced (its record edited as if so).
    let record = root.join("last-full-run.csv");
    record_full_run(
        &record,
        &root.join("full"),
        &full_dirs,
        "2025-11-26",
        "abc1234",
    )
    .unwrap();
    let text = std::fs::read_to_string(&record).unwrap();
    let edited = text.replace(
        "exp-a/one,claim,left_out,003,Fig. 1,reproduced,",
        "exp-a/one,claim,left_out,003,Fig. 1,not reproduced,",
    );
    assert_ne!(text, edited, "{text}");
    std::fs::write(&record, edited).unwrap();

    let out = root.join("quick");
    let dirs = [
        results(&out, "exp-a/one", &a, true),
        results(&out, "exp-b", &b, true),
    ];
    let md = std::fs::read_to_string(
        write_index(&out, &dirs, &LastFullRun::read(&record).unwrap()).unwrap(),
    )
    .unwrap();
    let at = |s: &str| md.find(s).unwrap_or_else(|| panic!("no {s:?} in\n{md}"));
    // Seeds in order, then the publication; then counts, checks, not run, reports.
    let order = [
        "### seed 000: Instant ACK",
        "### seed 003: The QUIC Transport Protocol",
        "### Mathis et al., CCR 1997",
        "### Counts by source",
        "## Checks",
        "## Not run",
        "## Reports",
    ];
    let positions: Vec<usize> = order.iter().map(|s| at(s)).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{md}");
    assert!(md.contains(
        "| claim | where | source's number | ours (quick) | last full run | status | why |"
    ));
    assert!(md.contains(
        "| lower_003 in the source's words (exp-a/one: lower_003) | Fig. 1 | -50.0% | -50.0% (deterministic) | reproduced: -50.0% (deterministic) (2025-11-26) | reproduced |"
    ), "{md}");
    assert!(
        md.contains("| higher_000 in the source's words (exp-b: higher_000) | Fig. 1 | -50.0% |"),
        "{md}"
    );
    assert!(md.contains("| not reproduced |"), "{md}");
    // Counts: source, reproduced, direction only, not reproduced, inconclusive, not run, claims.
    assert!(md.contains("| seed 003: The QUIC Transport Protocol: Design and Internet-Scale Deployment (SIGCOMM '17) | 1 | 0 | 0 | 0 | 1 | 2 |"), "{md}");
    assert!(
        md.contains(
            "| seed 000: Instant ACK in QUIC handshakes (IMC '24) | 0 | 0 | 1 | 0 | 0 | 1 |"
        ),
        "{md}"
    );
    assert!(md.contains("| exp-a | 1 | 0 | 0 | 0 | 0 |"), "{md}");
    assert!(md.contains(
        "- claim left_out (exp-a/one): left out of quick: its points are not in quick — not reproduced in the last full run"
    ), "{md}");
    assert!(
        md.contains("- [Plan A](exp-a/one/report.md) — claims: 1 reproduced"),
        "{md}"
    );
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        html.contains("<a href=\"exp-b/report.html\">Plan B</a>"),
        "{html}"
    );
}
