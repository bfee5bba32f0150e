//! A reader that closes quiclab's stdout early (`quiclab sim run ... | head`) neither
//! makes it panic nor costs the run its results.

use std::path::PathBuf;
use std::process::{Command, Stdio};

#[test]
fn sim_run_into_a_closed_pipe_writes_its_results_without_a_panic() {
    let scenario = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/validation/c_flow_control.toml");
    let out = std::env::temp_dir().join(format!("quiclab-closed-stdout-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    // The read end is dropped before the child writes: its first print meets EPIPE.
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let run = Command::new(env!("CARGO_BIN_EXE_quiclab"))
        .args(["sim", "run"])
        .arg(&scenario)
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .output()
        .expect("runs quiclab");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        out.join("results.json").is_file(),
        "no results.json: {stderr}"
    );
    let _ = std::fs::remove_dir_all(&out);
}
