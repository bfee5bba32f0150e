//! The results store: each plan invocation writes one Parquet file in the long layout
//! with provenance, and leaves every other result file as it was.

use parquet::file::reader::SerializedFileReader;
use parquet::record::Field;
use quiclab_lab::{run_plan, RunOptions};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const BASE: &str = include_str!("../data/tiny_base.toml");

const PLAN: &str = r#"
name = "tiny-store"
title = "Tiny store"
question = "Does the store record every run?"
base = "base.toml"
master_seed = 7
repetitions = 2

[[axes]]
name = "delay"
values = [2, 10]

[[axes]]
name = "model"
values = ["bernoulli"]

[set]
"topology.forward.delay_ms" = "delay"
"topology.return.impairments.loss.model" = "model"
"topology.return.impairments.loss.p" = "0.01"

[metrics]
ttlb = "flows[0].ttlb_s"
missing = "flows[3].ttlb_s"

[expected]
ttlb = "4 * delay / 1000"
"#;

type Record = BTreeMap<String, Field>;

fn tmpdir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("store-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn results_files(out: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(out.join("results"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .collect();
    v.sort();
    v
}

fn records(file: &Path) -> Vec<Record> {
    let reader = SerializedFileReader::new(std::fs::File::open(file).unwrap()).unwrap();
    reader
        .into_iter()
        .map(|row| {
            row.unwrap()
                .get_column_iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .collect()
}

fn text(r: &Record, k: &str) -> Option<String> {
    match &r[k] {
        Field::Str(s) => Some(s.clone()),
        Field::Null => None,
        other => panic!("{k} is {other:?}"),
    }
}

fn git_head(dir: &Path) -> Option<String> {
    let out = Command::new("git")
        .args(["-C"])
        .arg(dir)
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[test]
fn each_invocation_writes_one_file_with_every_run_and_its_provenance() {
    let dir = tmpdir("runs");
    std::fs::write(dir.join("base.toml"), BASE).unwrap();
    let plan = dir.join("plan.toml");
    std::fs::write(&plan, PLAN).unwrap();
    let out = dir.join("out");
    let opts = RunOptions {
        jobs: 2,
        quick: false,
        progress: false,
    };
    run_plan(&plan, &out, &opts).unwrap();
    let summary = std::fs::read(out.join("summary.csv")).unwrap();
    let files = results_files(&out);
    assert_eq!(files.len(), 1);
    let rows = records(&files[0]);
    // 4 runs x (2 axes + 2 metrics + 1 expectation).
    assert_eq!(rows.len(), 4 * 5);
    let head = git_head(&dir);
    for r in &rows {
        assert_eq!(text(r, "plan").as_deref(), Some("tiny-store"));
        assert_eq!(text(r, "git_rev"), head);
        assert_eq!(text(r, "scenario_hash").map(|h| h.len()), Some(64));
        assert!(matches!(r["seed"], Field::ULong(_)));
        assert!(matches!(r["started_at"], Field::TimestampMicros(_)));
        assert!(
            matches!(r["run_wall_s"], Field::Double(w) if w > 0.0),
            "{r:?}"
        );
    }
    let cell = |run: i64, kind: &str, key: &str| {
        rows.iter()
            .find(|r| {
                r["run"] == Field::Long(run)
                    && text(r, "kind").as_deref() == Some(kind)
                    && text(r, "key").as_deref() == Some(key)
            })
            .unwrap()
    };
    assert_eq!(
        text(cell(0, "axis", "model"), "text").as_deref(),
        Some("bernoulli")
    );
    assert_eq!(cell(3, "axis", "delay")["value"], Field::Double(10.0));
    assert_eq!(cell(0, "metric", "missing")["value"], Field::Null);
    assert!(matches!(cell(0, "metric", "ttlb")["value"], Field::Double(v) if v > 0.0));
    assert_eq!(cell(3, "expected", "ttlb")["value"], Field::Double(0.04));
    // Points that differ in a scenario value have different scenario hashes.
    let hash = |run| text(cell(run, "metric", "ttlb"), "scenario_hash");
    assert_ne!(hash(0), hash(3));

    // A second invocation reuses the cache: a second file whose runs carry no time,
    // and the CSV summary is the same bytes.
    run_plan(&plan, &out, &opts).unwrap();
    let files = results_files(&out);
    assert_eq!(files.len(), 2);
    let again = records(&files[1]);
    assert_eq!(again.len(), rows.len());
    assert!(again.iter().all(|r| r["run_wall_s"] == Field::Null));
    assert_ne!(text(&again[0], "invocation"), text(&rows[0], "invocation"));
    assert_eq!(std::fs::read(out.join("summary.csv")).unwrap(), summary);
}
