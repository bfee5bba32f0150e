//! Plans over trace-driven links (issue 38): a relative trace path resolves against the
//! file that wrote it (the base scenario's directory when the point inherits it, the
//! plan's directory when `[set]` writes it), and a changed trace file changes the run
//! key, so its runs are made again instead of reused from the cache.

use quiclab_lab::{expand, load_plan, run_plan, RunOptions};
use std::path::{Path, PathBuf};

/// A fresh directory under the target dir.
fn tmpdir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("lab-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A 30 kB request whose download direction follows a Mahimahi trace the base names
/// relative to its own directory.
const BASE: &str = r#"
name = "traced"
seed = 1

[stop]
time_s = 5.0
when_flows_done = true

[topology]
kind = "point_to_point"

[topology.forward]
delay_ms = 5.0

[topology.return]
delay_ms = 5.0
trace = { mahimahi = "traces/down.trace" }

[[flows]]
name = "get"
workload = { kind = "request", size = 30000 }
"#;

/// The plan (in another directory) sets the forward direction's delay trace, relative
/// to the plan file.
const PLAN: &str = r#"
name = "traced-plan"
title = "Traced"
question = "Do trace paths resolve?"
base = "../scen/base.toml"
master_seed = 3
repetitions = 1

[[axes]]
name = "x"
values = [1]

[set]
"topology.forward.trace.delay" = "'delay.csv'"

[metrics]
ttlb = "flows[0].ttlb_s"
"#;

struct Layout {
    plan: PathBuf,
    down: PathBuf,
    delay: PathBuf,
}

fn layout(name: &str) -> Layout {
    let dir = tmpdir(name);
    let (scen, plan_dir) = (dir.join("scen"), dir.join("plan"));
    std::fs::create_dir_all(scen.join("traces")).unwrap();
    std::fs::create_dir_all(&plan_dir).unwrap();
    std::fs::write(scen.join("base.toml"), BASE).unwrap();
    // One opportunity per ms: 12 Mbit/s.
    let down = scen.join("traces/down.trace");
    std::fs::write(&down, "1\n").unwrap();
    let delay = plan_dir.join("delay.csv");
    std::fs::write(&delay, "time_s,one_way_delay_ms\n0,5\n").unwrap();
    let plan = plan_dir.join("plan.toml");
    std::fs::write(&plan, PLAN).unwrap();
    Layout { plan, down, delay }
}

fn opts() -> RunOptions {
    RunOptions {
        jobs: 1,
        quick: false,
        progress: false,
    }
}

#[test]
fn trace_paths_resolve_against_the_file_that_names_them() {
    let l = layout("trace-paths");
    let plan = load_plan(&l.plan).unwrap();
    let runs = expand(&plan, &l.plan, false).unwrap();
    let mut s = runs[0].scenario.clone();
    let paths: Vec<(String, Option<String>)> = s
        .trace_paths_mut()
        .into_iter()
        .map(|(k, p)| (k, p.clone()))
        .collect();
    let abs = |p: &Path| std::fs::canonicalize(p).unwrap().display().to_string();
    assert!(paths.contains(&("topology.return.trace.mahimahi".into(), Some(abs(&l.down)))));
    assert!(paths.contains(&("topology.forward.trace.delay".into(), Some(abs(&l.delay)))));
    // The resolved scenario.toml holds them too, so it runs from any directory.
    assert!(runs[0].scenario_toml.contains(&abs(&l.down)));
    assert!(runs[0].scenario_toml.contains(&abs(&l.delay)));
}

#[test]
fn a_changed_trace_file_is_not_served_from_the_cache() {
    let l = layout("trace-cache");
    let out = l.plan.parent().unwrap().join("out");
    let a = run_plan(&l.plan, &out, &opts()).unwrap();
    assert_eq!((a.ran, a.reused), (1, 0));
    let b = run_plan(&l.plan, &out, &opts()).unwrap();
    assert_eq!(
        (b.ran, b.reused),
        (0, 1),
        "an unchanged trace reuses its run"
    );
    // Half the capacity: another key, a new run, a later last byte.
    std::fs::write(&l.down, "2\n").unwrap();
    let c = run_plan(&l.plan, &out, &opts()).unwrap();
    assert_eq!((c.ran, c.reused), (1, 0), "a changed trace must rerun");
    assert_ne!(a.rows[0].key, c.rows[0].key);
    let ttlb = |o: &quiclab_lab::PlanOutcome| o.rows[0].metrics["ttlb"];
    assert!(ttlb(&c) > ttlb(&a), "{} vs {}", ttlb(&c), ttlb(&a));
    // So does a changed delay trace (written by the plan).
    std::fs::write(&l.delay, "time_s,one_way_delay_ms\n0,25\n").unwrap();
    let d = run_plan(&l.plan, &out, &opts()).unwrap();
    assert_eq!(d.ran, 1);
    assert!(ttlb(&d) > ttlb(&c) + 0.03);
    // A missing trace file fails the expansion, naming the file and the key.
    std::fs::remove_file(&l.delay).unwrap();
    let e = run_plan(&l.plan, &out, &opts()).unwrap_err().to_string();
    assert!(
        e.contains("delay.csv") && e.contains("topology.forward.trace.delay"),
        "{e}"
    );
}
