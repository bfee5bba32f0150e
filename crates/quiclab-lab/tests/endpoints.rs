//! `[endpoints]` in plans: typed errors for unknown placeholders, keys and stack
//! names, and the "not available" state when a real stack cannot run here.

use quiclab_lab::{run_plan, LabError, RunOptions};
use std::path::PathBuf;

fn write_plan(name: &str, endpoints: &str) -> PathBuf {
    let base = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/experiments/handshake_latency.toml");
    let text = format!(
        r#"name = "endpoints-test"
title = "t"
question = "q"
base = "{}"
master_seed = 1

[[axes]]
name = "stack"
values = ["sim", "mine"]

[metrics]
handshake_s = "flows[0].handshake_done_s"

{endpoints}
"#,
        base.display()
    );
    let dir = std::env::temp_dir().join(format!("quiclab-endpoints-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

fn run(name: &str, endpoints: &str) -> Result<(), LabError> {
    let plan = write_plan(name, endpoints);
    let out = plan.with_extension("out");
    let opts = RunOptions {
        jobs: 1,
        quick: false,
        progress: false,
    };
    run_plan(&plan, &out, &opts).map(|_| ())
}

#[test]
fn unknown_placeholder_names_the_key() {
    let e = run(
        "placeholder",
        "[endpoints]\naxis = \"stack\"\n[endpoints.stacks.mine]\nclient = \"{quiclab} client {uri}\"\n",
    )
    .unwrap_err();
    match &e {
        LabError::Invalid { key, why, .. } => {
            assert_eq!(key, "endpoints.stacks.mine.client");
            assert!(why.contains("`{uri}`") && why.contains("url"), "{why}");
        }
        other => panic!("{other}"),
    }
}

#[test]
fn unknown_key_is_a_toml_error() {
    let e = run(
        "key",
        "[endpoints]\naxis = \"stack\"\n[endpoints.stacks.mine]\nclinet = \"x\"\n",
    )
    .unwrap_err();
    assert!(
        matches!(&e, LabError::Toml { message, .. } if message.contains("clinet")),
        "{e}"
    );
}

#[test]
fn axis_values_must_be_stacks() {
    let e = run(
        "axis",
        "[endpoints]\naxis = \"stack\"\n[endpoints.stacks.other]\n",
    )
    .unwrap_err();
    assert!(
        matches!(&e, LabError::Invalid { key, why, .. }
            if key == "endpoints.axis" && why.contains("\"mine\"")),
        "{e}"
    );
}

#[test]
fn a_missing_stack_is_not_available_before_any_run() {
    // No quiclab binary is set in this test process (and QUICLAB_BIN is not a file).
    std::env::remove_var("QUICLAB_BIN");
    let e = run(
        "unavailable",
        "[endpoints]\naxis = \"stack\"\n[endpoints.stacks.mine]\nrequires = \"false\"\n",
    )
    .unwrap_err();
    assert!(
        matches!(&e, LabError::Unavailable { stack, .. } if stack == "mine"),
        "{e}"
    );
    assert!(e.to_string().contains("not available"), "{e}");
}
