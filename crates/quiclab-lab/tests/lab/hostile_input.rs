//! Local input that used to abort or flood: deeply nested expressions (a stack overflow,
//! exit 134, which kills a Python interpreter or a Dask worker) and a type error inside
//! a huge string (a message quoting it whole, three times) are typed errors that name
//! the key, with messages of bounded length.

use quiclab_lab::expr::ExprErrorKind;
use quiclab_lab::{apply_set, load_plan, LabError, PreparedPlan};
use std::path::{Path, PathBuf};

/// A fresh directory under the target dir.
fn tmpdir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("hostile-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn nested(depth: usize) -> String {
    format!("{}10{}", "(".repeat(depth), ")".repeat(depth))
}

/// The tiny scenario the plans sweep.
const BASE: &str = include_str!("../data/tiny_base.toml");

const PLAN: &str = r#"
name = "hostile"
title = "Hostile input"
question = "Are errors bounded?"
base = "base.toml"
master_seed = 7

[[axes]]
name = "delay"
values = [2]

[set]
"topology.forward.delay_ms" = "delay"

[metrics]
ttfb = "flows[0].ttfb_s"
"#;

fn write(dir: &Path, base: &str, plan: &str) -> PathBuf {
    std::fs::write(dir.join("base.toml"), base).unwrap();
    let p = dir.join("plan.toml");
    std::fs::write(&p, plan).unwrap();
    p
}

#[test]
fn nested_parentheses_in_a_set_name_the_key() {
    let mut table: toml::Table = toml::from_str(BASE).unwrap();
    let value = nested(10_000);
    let e = apply_set(&mut table, "topology.forward.delay_ms", &value).unwrap_err();
    assert!(
        matches!(&e, LabError::Set { key, .. } if key == "topology.forward.delay_ms"),
        "{e:?}"
    );
    let msg = e.to_string();
    assert!(msg.starts_with("topology.forward.delay_ms=(((("), "{msg}");
    assert!(msg.contains("nested deeper than 64 levels"), "{msg}");
    assert!(msg.len() < 1000, "{} bytes: {msg}", msg.len());
}

#[test]
fn nested_parentheses_in_expected_name_the_key() {
    let dir = tmpdir("expected");
    let plan = PLAN.replace(
        "[metrics]",
        &format!("[expected]\nttfb = \"{}\"\n\n[metrics]", nested(20_000)),
    );
    let path = write(&dir, BASE, &plan);
    let e = load_plan(&path).unwrap_err();
    let LabError::Expr { key, source, .. } = &e else {
        panic!("{e:?}");
    };
    assert_eq!(key, "expected.ttfb");
    assert_eq!(source.kind, ExprErrorKind::TooDeep);
    let msg = e.to_string();
    assert!(msg.contains("plan.toml:16: expected.ttfb: `(((("), "{msg}");
    assert!(msg.contains("…[40002 chars]…"), "{msg}");
    assert!(msg.len() < 1000, "{} bytes: {msg}", msg.len());
}

/// 100 MB of `x` between quotes where a number belongs.
fn huge_string() -> String {
    format!("\"{}\"", "x".repeat(100_000_000))
}

#[test]
fn a_type_error_in_a_100_mb_string_is_quoted_briefly() {
    let dir = tmpdir("huge-plan");
    let plan = PLAN.replace(
        "master_seed = 7",
        &format!("master_seed = {}", huge_string()),
    );
    let path = write(&dir, BASE, &plan);
    let e = load_plan(&path).unwrap_err();
    assert!(
        matches!(&e, LabError::Toml { key, .. } if key == "master_seed"),
        "{e:?}"
    );
    let msg = e.to_string();
    assert!(
        msg.contains("master_seed: invalid type: string \"xxx"),
        "{msg}"
    );
    // The run cut is `"xxx...xxx",`: the string with its quotes and the comma.
    assert!(msg.contains("…[100000003 chars]…"), "{msg}");
    assert!(msg.len() < 1000, "{} bytes", msg.len());

    // In the base scenario, through the simulator's loader.
    let dir = tmpdir("huge-base");
    let base = BASE.replace(
        "rate_mbps = 10.0\ndelay_ms = 5.0\n\n[topology.return]",
        &format!(
            "rate_mbps = {}\ndelay_ms = 5.0\n\n[topology.return]",
            huge_string()
        ),
    );
    let path = write(&dir, &base, PLAN);
    let e = PreparedPlan::load(&path, false).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("invalid type: string \"xxx"), "{msg}");
    assert!(msg.len() < 1000, "{} bytes", msg.len());
}
