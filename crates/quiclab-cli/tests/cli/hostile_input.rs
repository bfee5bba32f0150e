//! Local input that used to abort the CLI or flood its output: 10,000 nested parentheses
//! in `--set` and 20,000 in a plan's `[expected]` (a stack overflow, exit 134), and a
//! type error inside a 100 MB string in a scenario or a `--config` file (the message
//! quoted it whole). Each is now an error (exit 1) naming the key, under 1 KB.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A fresh directory under the target dir.
fn tmpdir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-hostile-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn quiclab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_quiclab"))
        .args(args)
        .output()
        .expect("runs quiclab")
}

/// Asserts `out` failed with status 1 and a message under 1 KB containing `needles`.
fn assert_failed(out: &Output, needles: &[&str]) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    for n in needles {
        assert!(err.contains(n), "no `{n}` in: {err}");
    }
    assert!(err.len() < 1000, "{} bytes: {err}", err.len());
}

fn nested(depth: usize) -> String {
    format!("{}10{}", "(".repeat(depth), ")".repeat(depth))
}

#[test]
fn nested_parentheses_in_set_name_the_key() {
    let dir = tmpdir("set");
    let scenario = repo().join("scenarios/validation/c_flow_control.toml");
    let set = format!("topology.forward.delay_ms={}", nested(10_000));
    let out = quiclab(&[
        "sim",
        "run",
        scenario.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
        "--set",
        &set,
    ]);
    assert_failed(
        &out,
        &[
            "topology.forward.delay_ms=((((",
            "nested deeper than 64 levels",
        ],
    );
}

#[test]
fn nested_parentheses_in_expected_name_the_key() {
    let dir = tmpdir("expected");
    let base = repo().join("scenarios/validation/c_flow_control.toml");
    std::fs::copy(base, dir.join("base.toml")).unwrap();
    let plan = format!(
        "name = \"deep\"\ntitle = \"t\"\nquestion = \"q\"\nbase = \"base.toml\"\n\
         master_seed = 1\n[[axes]]\nname = \"a\"\nvalues = [1]\n\
         [metrics]\nttlb = \"flows[0].ttlb_s\"\n[expected]\nttlb = \"{}\"\n",
        nested(20_000)
    );
    let path = dir.join("plan.toml");
    std::fs::write(&path, plan).unwrap();
    let out = quiclab(&[
        "lab",
        "run",
        path.to_str().unwrap(),
        "--out",
        dir.join("out").to_str().unwrap(),
    ]);
    assert_failed(
        &out,
        &["plan.toml:12: expected.ttlb: `((((", "nested deeper"],
    );
}

/// 100 MB of `x` between quotes where a number or a switch belongs.
fn huge_string() -> String {
    format!("\"{}\"", "x".repeat(100_000_000))
}

#[test]
fn a_type_error_in_a_100_mb_string_is_quoted_briefly() {
    let dir = tmpdir("huge");
    let text =
        std::fs::read_to_string(repo().join("scenarios/validation/c_flow_control.toml")).unwrap();
    let scenario = dir.join("huge.toml");
    let text = text.replacen(
        "[client]\n",
        &format!("[client]\npacing = {}\n", huge_string()),
        1,
    );
    std::fs::write(&scenario, text).unwrap();
    let out_dir = dir.join("out");
    let run = |sets: &[&str]| {
        let mut args = vec![
            "sim",
            "run",
            scenario.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
        ];
        for s in sets {
            args.extend(["--set", s]);
        }
        quiclab(&args)
    };
    let needles = ["client.pacing", "invalid type: string \"xxx"];
    assert_failed(&run(&[]), &needles);
    // With an override the table is reparsed and rewritten: the same bound.
    assert_failed(&run(&["seed=2"]), &needles[1..]);

    // A transport `--config` file.
    let config = dir.join("config.toml");
    std::fs::write(&config, format!("pacing = {}\n", huge_string())).unwrap();
    let out = quiclab(&[
        "client",
        "--config",
        config.to_str().unwrap(),
        "https://127.0.0.1:9/",
    ]);
    assert_failed(&out, &["config", "invalid type: string \"xxx"]);
}
