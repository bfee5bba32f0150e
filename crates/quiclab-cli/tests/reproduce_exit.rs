//! `quiclab reproduce` exits non-zero when a finding fails or has no data (unless
//! `--keep-going`), and a finding that `[quick] skip_findings` leaves out does not
//! count against a quick run.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scenario() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/validation/c_flow_control.toml")
}

/// A plan over two RTTs of the flow-control case (goodput = credit / RTT), with
/// `findings` appended.
fn plan(findings: &str) -> String {
    format!(
        r#"name = "claims"
title = "Claims"
question = "Does the exit status follow the findings?"
base = "{}"
master_seed = 1

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
{findings}
"#,
        scenario().display()
    )
}

const FALSE_CLAIM: &str = r#"
[[findings]]
name = "longer_rtt_raises_goodput"
claim = "A longer RTT raises the flow-control-limited goodput (false: it is credit / RTT)"
metric = "goodput_bps"
of = { delay_ms = 10 }
against = { delay_ms = 5 }
expect = "higher"
"#;

const NO_DATA: &str = r#"
[[findings]]
name = "nothing_measured"
claim = "A metric no run has"
metric = "absent"
of = { delay_ms = 10 }
against = { delay_ms = 5 }
expect = "lower"
"#;

const TRUE_CLAIM: &str = r#"
[[findings]]
name = "longer_rtt_halves_goodput"
claim = "Twice the RTT halves the goodput (within 1%)"
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
fn a_true_claim_exits_zero() {
    let d = tmp("true");
    let o = reproduce(&d, &plan(TRUE_CLAIM), &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("findings: 1 hold, 0 inconclusive, 0 fail, 0 no data"));
    let _ = std::fs::remove_dir_all(d);
}

#[test]
fn a_false_claim_exits_non_zero() {
    let d = tmp("false");
    let o = reproduce(&d, &plan(FALSE_CLAIM), &[]);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("longer_rtt_raises_goodput: fails"),
        "{}",
        text(&o)
    );
    let o = reproduce(&d, &plan(FALSE_CLAIM), &["--keep-going"]);
    assert!(o.status.success(), "{}", text(&o));
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
        "[quick]\nskip_findings = [\"nothing_measured\"]\n\n[metrics]",
    );
    let o = reproduce(&d, &skipped, &["--quick"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("1 left out (quick)"), "{}", text(&o));
    // Without --quick the same finding is judged, and has no data.
    let o = reproduce(&d, &skipped, &[]);
    assert!(!o.status.success(), "{}", text(&o));
    let _ = std::fs::remove_dir_all(d);
}
