//! quinn-hq's exit statuses as the interop runner reads them: 127 for a test case it
//! does not support, 1 for a failure (here a URL it cannot parse), before any network
//! traffic. Also makes `cargo test --workspace` build the binary with the workspace's
//! features, which tests/interop/run.sh then uses (QUINN_HQ_BIN, set by scripts/test.sh).

use std::process::Command;

fn quinn_hq(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_quinn-hq"))
        .args(args)
        .env_remove("TESTCASE")
        .env_remove("REQUESTS")
        .output()
        .expect("quinn-hq runs")
}

#[test]
fn an_unsupported_test_case_exits_127() {
    let out = quinn_hq(&["--testcase", "zerortt", "https://127.0.0.1:4433/a"]);
    assert_eq!(out.status.code(), Some(127), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("unsupported test case"));
}

#[test]
fn a_bad_url_exits_1() {
    let out = quinn_hq(&["--testcase", "transfer", "not a url"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
}
