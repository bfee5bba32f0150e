//! `quiclab calibrate --quick --out FILE`: the command measures this machine (a real
//! loopback transfer, real timers) and writes a profile and its wake-up samples; the
//! profile loads through the simulator's own parser (as `host = { profile = FILE }`
//! would load it) with every measured key present and plausible, and a scenario naming
//! it runs in the simulator.

use quiclab_sim::host::{HostConfig, Latency};
use std::process::Command;

#[test]
fn calibrate_writes_a_loadable_profile() {
    let dir = std::env::temp_dir().join(format!("quiclab-calibrate-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("here.toml");
    let run = Command::new(env!("CARGO_BIN_EXE_quiclab"))
        .args(["calibrate", "--quick", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "calibrate failed: {stderr}");
    let text = std::fs::read_to_string(&out).unwrap();
    for needed in [
        "# Machine:",
        "# Date:",
        "# Command:",
        "CLOCK_THREAD_CPUTIME_ID",
    ] {
        assert!(text.contains(needed), "header lacks {needed}:\n{text}");
    }
    let p = HostConfig::from_profile(&out).unwrap_or_else(|e| panic!("{e}\n{text}"));
    // A datagram costs this machine more than nothing and less than 1 ms each way; the
    // AEAD between 0.01 and 100 ns per byte. A quick run on a loaded machine can fit a
    // negative cost from noise: the profile then says so and writes 0, never a negative.
    let clamped = text.contains("came out negative");
    for (k, v) in [("recv", p.recv_cost_us), ("send", p.send_cost_us)] {
        let plausible = (v > 0.0 || (v == 0.0 && clamped)) && v < 1000.0;
        assert!(plausible, "{k}_cost_us = {v}\n{text}");
    }
    assert!(
        p.crypto_per_byte_ns > 0.01 && p.crypto_per_byte_ns < 100.0,
        "{}",
        p.crypto_per_byte_ns
    );
    match &p.wakeup_latency {
        Some(Latency::Empirical { file, samples }) => {
            assert!(file.ends_with("here.wake.txt"), "{file}");
            assert!(samples.len() >= 100, "{} samples", samples.len());
        }
        other => panic!("wakeup_latency {other:?}"),
    }
    // A scenario naming the profile runs with it.
    let scenario = dir.join("s.toml");
    std::fs::write(
        &scenario,
        "name = \"c\"\nseed = 1\n[stop]\ntime_s = 5.0\nwhen_flows_done = true\n\
         [topology]\nkind = \"point_to_point\"\n\
         [topology.forward]\nrate_mbps = 10.0\ndelay_ms = 10.0\n\
         [topology.return]\nrate_mbps = 10.0\ndelay_ms = 10.0\n\
         [server]\nhost = { profile = \"here.toml\" }\n\
         [[flows]]\nname = \"get\"\nworkload = { kind = \"request\", size = 100000 }\n",
    )
    .unwrap();
    let sim = Command::new(env!("CARGO_BIN_EXE_quiclab"))
        .args(["sim", "run"])
        .arg(&scenario)
        .arg("--out")
        .arg(dir.join("sim"))
        .output()
        .unwrap();
    assert!(
        sim.status.success(),
        "sim run with the profile failed: {}",
        String::from_utf8_lossy(&sim.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
