//! Shared by the tests that reproduce a real-stack experiment (processes through
//! `quiclab emulate`).

use std::path::PathBuf;
use std::process::Command;

/// Runs `quiclab reproduce NAME --quick ARGS` into a fresh temp directory and returns
/// the experiment's output directory, or `None` when the lab answered with exit 77
/// ("not available": a stack or the emulator is missing), which is accepted only
/// outside CI (`CI` unset). Any other failure panics with quiclab's stderr.
pub fn reproduce_real(name: &str, args: &[&str]) -> Option<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    let out = std::env::temp_dir().join(format!("quiclab-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let run = Command::new(env!("CARGO_BIN_EXE_quiclab"))
        .args(["reproduce", name, "--quick"])
        .args(args)
        .arg("--experiments")
        .arg(&root)
        .arg("--out")
        .arg(&out)
        .output()
        .expect("quiclab runs");
    let stderr = String::from_utf8_lossy(&run.stderr);
    if run.status.code() == Some(77) {
        assert!(stderr.contains("not available"), "{stderr}");
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have every stack and the emulator: {stderr}"
        );
        eprintln!("SKIPPED (not available here): {stderr}");
        return None;
    }
    assert!(run.status.success(), "reproduce failed: {stderr}");
    Some(out.join(name))
}
