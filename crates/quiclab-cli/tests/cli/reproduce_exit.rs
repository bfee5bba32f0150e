//! `quiclab reproduce` and `quiclab lab run` exit non-zero when a check fails or has no
//! data (unless `--keep-going`), never because of a claim, and a check that `[quick]
//! skip` leaves out does not count against a quick run.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scenario() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/validation/c_flow_control.toml")
}

/// A plan over two RTTs of the flow-control case (goodput = credit / RTT, lossless:
/// deterministic), with `statements` appended.
fn plan(statements: &str) -> String {
    format!(
        r#"name = "claims"
title = "Claims"
question = "Does the exit status follow the checks, and only them?"
base = "{}"
master_seed = 1
deterministic = true

[[axes]]
name = "delay_ms"
values = [5, 10]

[set]
"topology.forward.delay_ms" = "delay_ms"
"topology.return.delay_ms" = "delay_ms"
"stop.time_s" = "2"

[metrics]
goodput_bps = "flows[0].goodput_bps"
absent = "flows[5].ttlb_s"
{statements}
"#,
        scenario().display()
    )
}

const FALSE_CHECK: &str = r#"
[[checks]]
name = "longer_rtt_raises_goodput"
check = "A longer RTT raises the flow-control-limited goodput (false: it is credit / RTT)"
basis = "model prediction"
metric = "goodput_bps"
of = { delay_ms = 10 }
against = { delay_ms = 5 }
expect = "higher"
"#;

const FALSE_CLAIM: &str = r#"
[[claims]]
name = "longer_rtt_raises_goodput"
source = "A made-up source"
where = "Fig. 1"
claim = "A longer RTT raises the flow-control-limited goodput (false: it is credit / RTT)"
metric = "goodput_bps"
of = { delay_ms = 10 }
against = { delay_ms = 5 }
expect = "higher"
statistic = "ratio of means"
"#;

const NO_DATA: &str = r#"
[[checks]]
name = "nothing_measured"
check = "A metric no run has"
basis = "regression"
metric = "absent"
of = { delay_ms = 10 }
against = { delay_ms = 5 }
expect = "lower"
"#;

const TRUE_CHECK: &str = r#"
[[checks]]
name = "longer_rtt_halves_goodput"
check = "Twice the RTT halves the goodput (within 1%)"
basis = "analytic: credit / RTT"
metric = "goodput_bps"
of = { delay_ms = 10 }
against = { delay_ms = 5 }
between = [-0.51, -0.49]
"#;

fn reproduce(dir: &Path, text: &str, extra: &[&str]) -> Output {
    let exp = dir.join("experiments");
    std::fs::create_dir_all(&exp).unwrap();
    std::fs::write(exp.join("claims.toml"), text).unwrap();
    Command::new(env!("CARGO_BIN_EXE_quiclab"))
        .args(["reproduce", "claims", "--jobs", "1", "--experiments"])
        .arg(&exp)
        .arg("--out")
        .arg(dir.join("out"))
        .args(extra)
        .output()
        .expect("runs quiclab")
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("quiclab-exit-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn a_true_check_exits_zero() {
    let d = tmp("true");
    let o = reproduce(&d, &plan(TRUE_CHECK), &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("checks: 1 hold, 0 fail, 0 inconclusive, 0 no data, 0 not run"),
        "{}",
        text(&o)
    );
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn a_false_check_exits_non_zero() {
    let d = tmp("false");
    let o = reproduce(&d, &plan(FALSE_CHECK), &[]);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("longer_rtt_raises_goodput: fails"),
        "{}",
        text(&o)
    );
    let o = reproduce(&d, &plan(FALSE_CHECK), &["--keep-going"]);
    assert!(o.status.success(), "{}", text(&o));
    // `lab run` gates the same way.
    let p = d.join("experiments/claims.toml");
    let o = Command::new(env!("CARGO_BIN_EXE_quiclab"))
        .args(["lab", "run", "--jobs", "1", "--out"])
        .arg(d.join("lab"))
        .arg(&p)
        .output()
        .expect("runs quiclab");
    assert!(!o.status.success(), "{}", text(&o));
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn a_false_claim_is_not_reproduced_and_exits_zero() {
    let d = tmp("claim");
    let o = reproduce(&d, &plan(FALSE_CLAIM), &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains(
            "A made-up source: 0 reproduced, 0 direction only, 1 not reproduced, 0 inconclusive, 0 not run"
        ),
        "{}",
        text(&o)
    );
    let index = std::fs::read_to_string(d.join("out/index.md")).unwrap();
    assert!(index.contains("### A made-up source"), "{index}");
    assert!(index.contains("| not reproduced |"), "{index}");
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn no_data_exits_non_zero_unless_quick_leaves_it_out() {
    let d = tmp("nodata");
    let o = reproduce(&d, &plan(NO_DATA), &["--quick"]);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("nothing_measured: no data"),
        "{}",
        text(&o)
    );
    let skipped = plan(NO_DATA).replace(
        "[metrics]",
        "[quick]\nskip = { nothing_measured = \"the metric is absent on purpose\" }\n\n[metrics]",
    );
    let o = reproduce(&d, &skipped, &["--quick"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("0 no data, 1 not run"), "{}", text(&o));
    let index = std::fs::read_to_string(d.join("out/index.md")).unwrap();
    assert!(
        index.contains(
            "check nothing_measured (claims): left out of quick: the metric is absent on purpose"
        ),
        "{index}"
    );
    // Without --quick the same check is judged, and has no data.
    let o = reproduce(&d, &skipped, &[]);
    assert!(!o.status.success(), "{}", text(&o));
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn record_is_for_full_runs() {
    let d = tmp("record");
    let o = reproduce(&d, &plan(TRUE_CHECK), &["--quick", "--record"]);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("does not go with --quick"),
        "{}",
        text(&o)
    );
    let o = reproduce(&d, &plan(FALSE_CLAIM), &["--record"]);
    assert!(o.status.success(), "{}", text(&o));
    let rec = std::fs::read_to_string(d.join("experiments/last-full-run.csv")).unwrap();
    let lines: Vec<&str> = rec.lines().collect();
    assert_eq!(
        lines[0],
        "experiment,kind,name,source,where,status,ours,reason,date,revision"
    );
    assert!(
        lines[1].starts_with(
            "claims,claim,longer_rtt_raises_goodput,A made-up source,Fig. 1,not reproduced,"
        ),
        "{rec}"
    );
    // The index shows it as the last full run.
    let index = std::fs::read_to_string(d.join("out/index.md")).unwrap();
    assert!(
        index.contains("| not reproduced: -50.0% (deterministic) ("),
        "{index}"
    );
    let _ = std::fs::remove_dir_all(d);
}
