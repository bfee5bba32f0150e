//! `quiclab sim run --set`: overrides reach the simulation, and bad keys or values are
//! errors that name them.

use std::path::PathBuf;
use std::process::Command;

fn scenario() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/validation/c_flow_control.toml")
}

fn sim_run(out: &str, sets: &[&str]) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_quiclab"));
    cmd.args(["sim", "run"]).arg(scenario());
    for s in sets {
        cmd.args(["--set", s]);
    }
    let out = std::env::temp_dir().join(format!("quiclab-sim-set-{}-{out}", std::process::id()));
    cmd.arg("--out").arg(&out).output().expect("runs quiclab")
}

/// The handshake time of the run written to `out`.
fn handshake_s(out: &str) -> f64 {
    let dir = std::env::temp_dir().join(format!("quiclab-sim-set-{}-{out}", std::process::id()));
    let json = std::fs::read_to_string(dir.join("results.json")).unwrap();
    let _ = std::fs::remove_dir_all(dir);
    // The first flow's value (the CLI has no JSON parser as a dependency).
    let rest = &json[json.find("\"handshake_done_s\":").unwrap() + 19..];
    let end = rest.find([',', '}']).unwrap();
    rest[..end].trim().parse().unwrap()
}

#[test]
fn override_changes_the_rtt() {
    assert!(sim_run("base", &[]).status.success());
    // The file's RTT is 10 + 10 ms; 33 ms forward makes it 43 ms (one RTT handshake).
    let r = sim_run("d33", &["topology.forward.delay_ms=3*11"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!((handshake_s("base") - 0.020).abs() < 1e-9);
    assert!((handshake_s("d33") - 0.043).abs() < 1e-9);
}

#[test]
fn bad_keys_and_values_are_named() {
    for (set, want) in [
        ("topology.forward.delay_mss=3", "delay_mss"),
        (
            "topology.forward.delay_ms=abc",
            "topology.forward.delay_ms=abc",
        ),
        ("topology.forward.delay_ms", "expected KEY=VALUE"),
    ] {
        let r = sim_run("bad", &[set]);
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(!r.status.success(), "{set} succeeded");
        assert!(err.contains(want), "{set}: {err}");
    }
}
