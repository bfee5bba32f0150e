//! Link profiles in the simulator (issue 38 item 3): a scenario whose links follow a
//! profile (`trace = { profile = ... }`) gives exactly the results of the same scenario
//! over the profile's exported realisation (`quiclab link export`: Mahimahi traces plus
//! delay and loss CSVs, same seed), for every shipped profile; and a profile is
//! realised from the scenario's seed.

use crate::common;

use common::TempDir;
use quiclab_link::profile::Profile;
use quiclab_sim::{RunResult, Scenario, Simulation};
use std::path::Path;

/// An upload for the whole run and a download from 2 s on, over both directions of a
/// traced link; `TRACE_F` and `TRACE_R` are replaced with each direction's trace table.
/// The traces' delays replace `delay_ms`, which only bounds the run's work estimate.
const SCENARIO: &str = r#"
name = "profiled"
seed = SEED
[stop]
time_s = STOP
[topology]
kind = "point_to_point"
[topology.forward]
delay_ms = 1.0
queue = { discipline = "drop_tail", packets = 300 }
trace = TRACE_F
[topology.return]
delay_ms = 1.0
queue = { discipline = "drop_tail", packets = 300 }
trace = TRACE_R
[client]
flow = { initial_max_data = 16777216, initial_max_stream_data = 16777216 }
[server]
flow = { initial_max_data = 16777216, initial_max_stream_data = 16777216 }
[[flows]]
name = "upload"
workload = { kind = "bulk" }
[[flows]]
name = "download"
start_s = 2.0
workload = { kind = "request", size = 2000000 }
"#;

fn run(dir: &Path, seed: u64, stop: f64, fwd: &str, ret: &str) -> RunResult {
    let text = SCENARIO
        .replace("SEED", &seed.to_string())
        .replace("STOP", &stop.to_string())
        .replace("TRACE_F", fwd)
        .replace("TRACE_R", ret);
    let path = dir.join(format!("s{seed}.toml"));
    std::fs::write(&path, text).unwrap();
    let s = Scenario::load(&path).unwrap();
    Simulation::new(s, "profiled", None).unwrap().run().unwrap()
}

/// What the comparison covers: every flow's and link's results.
fn outcome(r: &RunResult) -> serde_json::Value {
    serde_json::json!({ "flows": r.flows, "links": r.links, "end_s": r.end_s })
}

#[test]
fn an_exported_realisation_replays_to_the_same_results() {
    let links = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/links");
    for (name, stop) in [
        ("leo", 18.0),
        ("geo", 14.0),
        ("cellular", 8.0),
        ("wifi", 8.0),
    ] {
        let dir = TempDir::new(&format!("profile-{name}"));
        let file = links.join(format!("{name}.toml"));
        let profile = format!(
            "{{ profile = {:?}, seconds = 30 }}",
            file.display().to_string()
        );
        let direct = run(dir.path(), 5, stop, &profile, &profile);
        // The export is longer than the run's realisation: its first 30 s are the same.
        let prefix = dir.path().join("exported/r");
        std::fs::create_dir_all(prefix.parent().unwrap()).unwrap();
        let [up, down, delay, loss] = Profile::load(&file)
            .unwrap()
            .realise(5, 60.0)
            .unwrap()
            .write(&prefix)
            .unwrap();
        let table = |mm: &Path| {
            format!(
                "{{ mahimahi = {:?}, delay = {:?}, loss = {:?} }}",
                mm.display().to_string(),
                delay.display().to_string(),
                loss.display().to_string()
            )
        };
        let replayed = run(dir.path(), 5, stop, &table(&up), &table(&down));
        assert_eq!(outcome(&direct), outcome(&replayed), "{name}");
        // The links carried traffic both ways and the download finished.
        assert!(
            direct.links.iter().all(|l| l.delivered_packets > 100),
            "{name}"
        );
        assert!(
            direct.flows[1].ttlb_s.is_some(),
            "{name}: {:?}",
            direct.flows[1]
        );
        // Another seed, another realisation (the GEO profile is constant).
        if name != "geo" {
            let other = run(dir.path(), 6, stop, &profile, &profile);
            assert_ne!(
                outcome(&direct)["links"],
                outcome(&other)["links"],
                "{name}"
            );
        }
    }
}

#[test]
fn profile_keys_are_checked() {
    let dir = TempDir::new("profile-keys");
    let write = |t: &str| {
        let p = dir.path().join("bad.toml");
        let text = SCENARIO
            .replace("SEED", "1")
            .replace("STOP", "1.0")
            .replace("TRACE_F", t)
            .replace("TRACE_R", "{ profile = \"p.toml\" }");
        std::fs::write(&p, text).unwrap();
        std::fs::write(dir.path().join("p.toml"), "model = \"geo\"\n").unwrap();
        Scenario::load(&p)
    };
    let e = write("{ profile = \"p.toml\", delay = \"d.csv\" }")
        .unwrap_err()
        .to_string();
    assert!(e.contains("topology.forward.trace.profile"), "{e}");
    let e = write("{ profile = \"p.toml\", seconds = 7200 }")
        .unwrap_err()
        .to_string();
    assert!(e.contains("topology.forward.trace.seconds"), "{e}");
    let e = write("{ mahimahi = \"m\", seconds = 10 }")
        .unwrap_err()
        .to_string();
    assert!(e.contains("topology.forward.trace.seconds"), "{e}");
    // A profile that does not parse is named when the links are built.
    std::fs::write(dir.path().join("q.toml"), "model = \"leo\"\nslot_s = -1\n").unwrap();
    let s = write("{ profile = \"q.toml\" }").unwrap();
    let e = Simulation::new(s, "bad", None).err().unwrap().to_string();
    assert!(
        e.contains("topology.forward.trace.profile") && e.contains("slot_s"),
        "{e}"
    );
}
