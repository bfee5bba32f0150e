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

/// quiclab's own stack runs in-process (quiclab-net): no binary is set, yet the real
/// run completes through the emulator's 25 ms each way, its result has the client's
/// times from its qlog, and the emulator's files are written.
/// A plan whose one real point is quiclab's stack, in-process, with `extra` keys in
/// `[endpoints]`; returns its directory and the outcome.
fn run_in_process(
    name: &str,
    extra: &str,
) -> (PathBuf, Result<quiclab_lab::PlanOutcome, LabError>) {
    std::env::remove_var("QUICLAB_BIN");
    let base = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/experiments/handshake_latency_1rtt.toml");
    let text = format!(
        "name = \"in-process\"\ntitle = \"t\"\nquestion = \"q\"\nbase = \"{}\"\n\
         master_seed = 1\n[[axes]]\nname = \"stack\"\nvalues = [\"quiclab\"]\n\
         [metrics]\nhandshake_s = \"flows[0].handshake_done_s\"\nttlb_s = \"flows[0].ttlb_s\"\n\
         [endpoints]\naxis = \"stack\"\nrealtime = false\n{extra}\n[endpoints.stacks.quiclab]\n",
        base.display()
    );
    let dir = std::env::temp_dir().join(format!("quiclab-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let plan = dir.join("plan.toml");
    std::fs::write(&plan, text).unwrap();
    let opts = RunOptions {
        jobs: 1,
        quick: false,
        progress: false,
    };
    let outcome = run_plan(&plan, &dir.join("out"), &opts);
    (dir, outcome)
}

#[test]
fn quiclab_runs_in_process_through_the_emulator() {
    let (dir, outcome) = run_in_process("inproc", "");
    let outcome = outcome.unwrap();
    assert_eq!(outcome.rows.len(), 1);
    let m = &outcome.rows[0].metrics;
    // One round trip through the emulator is 50 ms; the handshake takes at least one,
    // the response a second.
    assert!(m["handshake_s"] >= 0.05, "{m:?}");
    assert!(m["ttlb_s"] >= 0.1 && m["ttlb_s"] < 1.0, "{m:?}");
    let run_dir = dir.join("out/real").join(&outcome.rows[0].key);
    assert!(run_dir.join("emulator/links.csv").is_file());
    assert!(run_dir.join("emulator/emulate.json").is_file());
    let keylog = std::fs::read_to_string(run_dir.join("keylog.txt")).unwrap();
    assert!(
        keylog.contains("SERVER_HANDSHAKE_TRAFFIC_SECRET"),
        "{keylog}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// An in-process client past the plan's time limit is stopped and the run fails with
/// a message naming the limit (the emulator's 50 ms round trip outlasts 10 ms).
#[test]
fn an_in_process_client_past_its_limit_fails_the_run() {
    let (dir, outcome) = run_in_process("inproc-limit", "timeout_s = 0.01");
    let e = outcome.map(|_| ()).unwrap_err();
    assert!(
        matches!(&e, LabError::Run { why, .. } if why.contains("did not finish within")),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A stack's `repetitions` caps its points' repetitions and leaves its run keys as
/// they were without it (existing caches stay valid); 0 is a typed error.
#[test]
fn a_stack_repetitions_cap_keeps_run_keys() {
    let stack = "[endpoints]\naxis = \"stack\"\n[endpoints.stacks.mine]\nclient = \"true {url}\"\n";
    let runs = |name: &str, extra: &str| {
        let path = write_plan(name, &format!("{stack}{extra}"));
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(
            &path,
            text.replace("master_seed = 1", "master_seed = 1\nrepetitions = 3"),
        )
        .unwrap();
        let plan = quiclab_lab::load_plan(&path).unwrap();
        quiclab_lab::expand(&plan, &path, false).unwrap()
    };
    let all = runs("uncapped", "");
    let capped = runs("capped", "repetitions = 1\n");
    let of = |r: &[quiclab_lab::RunSpec], s: Option<&str>| -> Vec<String> {
        r.iter()
            .filter(|x| x.stack.as_deref() == s)
            .map(|x| x.key.clone())
            .collect()
    };
    assert_eq!(of(&all, Some("mine")).len(), 3);
    assert_eq!(
        of(&capped, Some("mine")),
        of(&all, Some("mine"))[..1].to_vec()
    );
    assert_eq!(of(&capped, None), of(&all, None));
    assert_eq!(of(&capped, None).len(), 3);
    match run("zero", &format!("{stack}repetitions = 0\n")).unwrap_err() {
        LabError::Invalid { key, .. } => assert_eq!(key, "endpoints.stacks.mine.repetitions"),
        other => panic!("{other}"),
    }
}
