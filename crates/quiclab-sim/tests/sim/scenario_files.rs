//! Every scenario file in the repository parses, and the examples run to completion.

use quiclab_sim::{Scenario, Simulation};
use std::path::{Path, PathBuf};

fn scenario_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("scenarios dir")
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            scenario_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "toml") {
            out.push(p);
        }
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios")
}

#[test]
fn every_scenario_file_parses() {
    let mut files = Vec::new();
    scenario_files(&root(), &mut files);
    assert!(files.len() >= 7, "found {files:?}");
    for f in files {
        // scenarios/links/ holds link profiles (quiclab-link's `profile`), not scenarios.
        if f.parent().is_some_and(|d| d.ends_with("links")) {
            let text = std::fs::read_to_string(&f).unwrap();
            quiclab_link::profile::Profile::parse(&text)
                .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            continue;
        }
        // scenarios/hosts/ holds host profiles (`host = { profile = ... }`).
        if f.parent().is_some_and(|d| d.ends_with("hosts")) {
            let h =
                quiclab_sim::host::HostConfig::from_profile(&f).unwrap_or_else(|e| panic!("{e}"));
            assert!(
                !h.is_off(),
                "{}: a profile that changes nothing",
                f.display()
            );
            continue;
        }
        Scenario::load(&f).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn examples_run() {
    let mut files = Vec::new();
    scenario_files(&root().join("examples"), &mut files);
    for f in files {
        let s = Scenario::load(&f).unwrap();
        let name = s.name.clone();
        let r = Simulation::new(s, &f.display().to_string(), None)
            .unwrap()
            .run()
            .unwrap();
        assert!(
            r.flows.iter().all(|fl| fl.handshake_done_s.is_some()),
            "{name}: a handshake did not complete"
        );
        assert!(
            r.flows.iter().all(|fl| fl.goodput_bytes > 0),
            "{name}: no data delivered"
        );
    }
}
