//! End-to-end sweeps over a tiny, fast scenario: reruns reuse the cache and give
//! identical files, `--jobs` does not change results, an interrupted sweep finishes only
//! the missing runs, and bad plans fail with the file, line and key named.

use quiclab_lab::{run_plan, LabError, RunOptions};
use std::path::{Path, PathBuf};

/// The tiny scenario the plans sweep.
const BASE: &str = include_str!("../data/tiny_base.toml");

const PLAN: &str = r#"
name = "tiny-sweep"
title = "Tiny sweep"
question = "Does the lab work?"
base = "base.toml"
master_seed = 7
repetitions = 2

[[axes]]
name = "delay"
values = [2, 10]
label = "one-way delay (ms)"

[[axes]]
name = "loss"
values = [0.0, 0.2]

[set]
"topology.forward.delay_ms" = "delay"
"topology.return.delay_ms" = "delay"
"topology.return.impairments.loss.model" = "model"
"topology.return.impairments.loss.p" = "loss"

[metrics]
ttlb = "flows[0].ttlb_s"
ttfb = "flows[0].ttfb_s"
missing = "flows[3].ttlb_s"

[expected]
ttfb = "4 * delay / 1000"
"#;

/// A fresh directory under the target dir (no tempfile dependency).
fn tmpdir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("lab-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Writes the base and a plan (with an extra "model" text axis value) into `dir`.
fn write_plan(dir: &Path, plan: &str) -> PathBuf {
    std::fs::write(dir.join("base.toml"), BASE).unwrap();
    let p = dir.join("plan.toml");
    std::fs::write(&p, plan).unwrap();
    p
}

fn good_plan() -> String {
    // The loss model is a text axis with one value, so it can be written as a string.
    PLAN.replace(
        "[set]",
        "[[axes]]\nname = \"model\"\nvalues = [\"bernoulli\"]\n\n[set]",
    )
}

fn opts(jobs: usize) -> RunOptions {
    RunOptions {
        jobs,
        quick: false,
        progress: false,
    }
}

fn read(out: &Path, f: &str) -> String {
    std::fs::read_to_string(out.join(f)).unwrap()
}

fn outputs(out: &Path) -> Vec<String> {
    [
        "runs.csv",
        "runs.jsonl",
        "summary.csv",
        "plan.toml",
        "plan.resolved.json",
    ]
    .iter()
    .map(|f| read(out, f))
    .collect()
}

fn cache_files(out: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(out.join("cache"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    v.sort();
    v
}

#[test]
fn rerun_jobs_and_resume_give_identical_files() {
    let dir = tmpdir("sweep");
    let plan = write_plan(&dir, &good_plan());
    let out1 = dir.join("out1");

    // First run, one worker.
    let a = run_plan(&plan, &out1, &opts(1)).unwrap();
    assert_eq!((a.ran, a.reused), (8, 0));
    assert_eq!(a.rows.len(), 8);
    assert_eq!(a.summaries.len(), 4);
    let first = outputs(&out1);
    let csv = &first[0];
    assert!(
        csv.starts_with("point,rep,seed,delay,loss,model,missing,ttfb,ttlb,expected_ttfb,key\n")
    );
    // Every run completed its request; the absent metric is an empty cell.
    for r in &a.rows {
        assert!(r.metrics.contains_key("ttlb"), "{r:?}");
        assert!(!r.metrics.contains_key("missing"));
    }
    // Points: last axis fastest.
    let pts: Vec<String> = a
        .summaries
        .iter()
        .map(|s| format!("{:?}/{:?}", s.params["delay"], s.params["loss"]))
        .collect();
    assert_eq!(pts[1], "Number(2.0)/Number(0.2)");
    assert_eq!(pts[2], "Number(10.0)/Number(0.0)");
    // Longer delay -> later first byte; expectation written.
    let ttfb = |i: usize| a.summaries[i].stats["ttfb"].mean;
    assert!(ttfb(2) > ttfb(0));
    // 20% loss on the data path costs time (the seeds are fixed, so this is not flaky).
    let ttlb = |i: usize| a.summaries[i].stats["ttlb"].mean;
    assert!(ttlb(1) > ttlb(0) && ttlb(3) > ttlb(2), "{:?}", a.summaries);
    assert!(first[2].contains("ttfb_expected,ttfb_deviation"));
    // Reps of one point have different seeds; the cached run has the time series.
    assert_ne!(a.rows[0].seed, a.rows[1].seed);
    let run = quiclab_lab::load_run(&a.cache_dir, &a.rows[0].key).unwrap();
    assert!(run["flows"][0]["goodput_series"].is_array());

    // (a) rerun: nothing runs, files byte-identical.
    let b = run_plan(&plan, &out1, &opts(1)).unwrap();
    assert_eq!((b.ran, b.reused), (0, 8));
    assert_eq!(outputs(&out1), first);

    // (b) two workers into a fresh directory: identical files.
    let out2 = dir.join("out2");
    let c = run_plan(&plan, &out2, &opts(2)).unwrap();
    assert_eq!(c.ran, 8);
    assert_eq!(outputs(&out2), first);

    // (c) "killed midway": half the cache gone, a partial temp file and a truncated
    // entry left behind. Only the missing (and unreadable) runs are run again.
    let files = cache_files(&out1);
    assert_eq!(files.len(), 8);
    for f in files.iter().step_by(2) {
        std::fs::remove_file(f).unwrap();
    }
    let name = files[1].file_name().unwrap().to_str().unwrap().to_string();
    std::fs::write(
        out1.join("cache").join(format!("{name}.tmp-1-0")),
        b"{\"key\":",
    )
    .unwrap();
    std::fs::remove_file(out1.join("runs.csv")).unwrap();
    let d = run_plan(&plan, &out1, &opts(2)).unwrap();
    assert_eq!((d.ran, d.reused), (4, 4));
    assert_eq!(outputs(&out1), first);
    std::fs::write(&files[1], b"{\"key\": \"trunc").unwrap();
    let e = run_plan(&plan, &out1, &opts(2)).unwrap();
    assert_eq!((e.ran, e.reused), (1, 7));
    assert_eq!(outputs(&out1), first);
}

/// Regression: an entry `{"key": K, "result": {}}` was reused, and its point silently
/// had no data. An entry must hold every metric the plan extracts (as far as a result
/// always has it), or its run is redone with a warning; a complete entry is reused.
#[test]
fn entries_lacking_a_metric_are_redone_with_a_warning() {
    let dir = tmpdir("incomplete");
    let plan = write_plan(&dir, &good_plan());
    let out = dir.join("out");
    run_plan(&plan, &out, &opts(2)).unwrap();
    let first = outputs(&out);
    let prepared = quiclab_lab::PreparedPlan::load(&plan, false).unwrap();
    let cache = out.join("cache");
    let (todo, warnings) = prepared.to_run(&cache);
    assert!(todo.is_empty() && warnings.is_empty(), "{warnings:?}");

    // One entry emptied, one without its flow's `ttfb_s`.
    let files = cache_files(&out);
    let entry = |f: &PathBuf| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap()
    };
    let mut empty = entry(&files[0]);
    empty["result"] = serde_json::json!({});
    std::fs::write(&files[0], empty.to_string()).unwrap();
    let mut partial = entry(&files[1]);
    partial["result"]["flows"][0]
        .as_object_mut()
        .unwrap()
        .remove("ttfb_s");
    std::fs::write(&files[1], partial.to_string()).unwrap();

    let (todo, warnings) = prepared.to_run(&cache);
    let mut keys: Vec<&str> = todo.iter().map(|s| s.key.as_str()).collect();
    keys.sort_unstable();
    let damaged = [&empty, &partial].map(|e| e["key"].as_str().unwrap().to_string());
    let mut expected: Vec<&str> = damaged.iter().map(String::as_str).collect();
    expected.sort_unstable();
    assert_eq!(keys, expected);
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    let about = |key: &str| warnings.iter().find(|w| w.contains(key)).unwrap().clone();
    // The emptied entry has no `flows` at all: the first metric (in name order) lacks.
    assert!(about(&damaged[0]).contains("no `flows[3].ttlb_s` (metric `missing`)"));
    assert!(about(&damaged[1]).contains("no `flows[0].ttfb_s` (metric `ttfb`)"));
    assert!(about(&damaged[1]).contains("running"), "{warnings:?}");

    // Running the plan redoes exactly those two and gives the files of the first run.
    let again = run_plan(&plan, &out, &opts(2)).unwrap();
    assert_eq!((again.ran, again.reused), (2, 6));
    assert_eq!(outputs(&out), first);
    assert!(prepared.to_run(&cache).0.is_empty());
}

#[test]
fn quick_overrides() {
    let dir = tmpdir("quick");
    let text = good_plan() + "\n[quick]\nrepetitions = 1\naxes = { delay = [3] }\n";
    let plan = write_plan(&dir, &text);
    let o = run_plan(
        &plan,
        &dir.join("out"),
        &RunOptions {
            jobs: 2,
            quick: true,
            progress: false,
        },
    )
    .unwrap();
    assert_eq!(o.rows.len(), 2);
    assert_eq!(o.plan.repetitions, 1);
    let resolved = read(&dir.join("out"), "plan.resolved.json");
    assert!(resolved.contains("\"repetitions\": 1"));
}

/// The error text of running a bad plan.
fn bad(name: &str, plan: &str) -> (LabError, String) {
    let dir = tmpdir(name);
    let p = write_plan(&dir, plan);
    let e = run_plan(&p, &dir.join("out"), &opts(1)).unwrap_err();
    let msg = e.to_string();
    eprintln!("{name}: {msg}");
    assert!(msg.contains("plan.toml"), "{msg}");
    (e, msg)
}

#[test]
fn bad_plans_name_file_line_and_key() {
    let (_, m) = bad(
        "unknown",
        &good_plan().replace("repetitions = 2", "repetitions = 2\nrepetition = 3"),
    );
    assert!(
        m.contains("repetition") && m.contains("plan.toml:8:"),
        "{m}"
    );

    let (_, m) = bad(
        "empty",
        &good_plan().replace("values = [2, 10]", "values = []"),
    );
    assert!(
        m.contains("axes[0] (delay)") && m.contains("at least one value"),
        "{m}"
    );
    assert!(m.contains("plan.toml:9:"), "{m}");

    let (e, m) = bad(
        "type",
        &good_plan().replace("repetitions = 2", "repetitions = \"x\""),
    );
    assert!(matches!(e, LabError::Toml { line: Some(7), .. }), "{m}");
    assert!(m.contains("repetitions"), "{m}");

    let (_, m) = bad(
        "axisref",
        &good_plan().replace(
            "= \"delay\"\n\"topology.return",
            "= \"delay * rtt\"\n\"topology.return",
        ),
    );
    assert!(
        m.contains("set.topology.forward.delay_ms") && m.contains("unknown variable `rtt`"),
        "{m}"
    );

    let (_, m) = bad(
        "setkey",
        &good_plan().replace("forward.delay_ms", "forward.delay_msx"),
    );
    assert!(m.contains("delay_msx") && m.contains("point 0"), "{m}");

    let (_, m) = bad(
        "both",
        &good_plan().replace(
            "values = [0.0, 0.2]",
            "values = [0.0]\nrange = { from = 0, to = 1, steps = 2 }",
        ),
    );
    assert!(m.contains("exactly one of"), "{m}");

    let (_, m) = bad(
        "steps",
        &good_plan().replace(
            "values = [0.0, 0.2]",
            "range = { from = 0.1, to = 1, steps = 1, scale = \"log\" }",
        ),
    );
    assert!(m.contains("range.steps"), "{m}");

    let (_, m) = bad(
        "logrange",
        &good_plan().replace(
            "values = [0.0, 0.2]",
            "range = { from = 0, to = 1, steps = 3, scale = \"log\" }",
        ),
    );
    assert!(m.contains("positive"), "{m}");

    let (_, m) = bad(
        "zip",
        &good_plan().replace("master_seed = 7", "master_seed = 7\ncombine = \"zip\""),
    );
    assert!(m.contains("same number of values"), "{m}");

    let (_, m) = bad(
        "dup",
        &good_plan().replace("name = \"loss\"", "name = \"delay\""),
    );
    assert!(m.contains("duplicate axis name"), "{m}");

    let (_, m) = bad(
        "expmetric",
        &good_plan().replace("ttfb = \"4 *", "ttfbx = \"4 *"),
    );
    assert!(
        m.contains("expected.ttfbx") && m.contains("no such metric"),
        "{m}"
    );

    let (_, m) = bad(
        "reps0",
        &good_plan().replace("repetitions = 2", "repetitions = 0"),
    );
    assert!(
        m.contains("repetitions") && m.contains("plan.toml:7"),
        "{m}"
    );

    let (_, m) = bad(
        "intkey",
        &good_plan().replace(
            "[metrics]",
            "\"flows[0].workload.size\" = \"delay / 4\"\n\n[metrics]",
        ),
    );
    assert!(
        m.contains("set.flows[0].workload.size") && m.contains("round"),
        "{m}"
    );

    // An absent key written as a float where the scenario wants an integer: the culprit
    // is found by trying each [set] entry alone.
    let (_, m) = bad(
        "absentkey",
        &good_plan().replace(
            "[metrics]",
            "\"topology.forward.mtu\" = \"delay / 4 + 1000\"\n\n[metrics]",
        ),
    );
    assert!(
        m.contains("set.topology.forward.mtu") && m.contains("u32"),
        "{m}"
    );

    let (_, m) = bad(
        "textarith",
        &good_plan().replace(
            "\"loss\"\n\n[metrics]",
            "\"loss\"\n\"stop.time_s\" = \"model + 1\"\n\n[metrics]",
        ),
    );
    assert!(m.contains("text"), "{m}");

    let (_, m) = bad(
        "badpath",
        &good_plan().replace("flows[3].ttlb_s", "flows[x].ttlb_s"),
    );
    assert!(m.contains("metrics.missing"), "{m}");
}

/// `[cases]`, quoted literals, common random numbers, derived metrics and (deprecated)
/// findings work together: each case writes its keys, the compared points share seeds,
/// the derived metric is computed per run, and the findings, read as checks, land in
/// `checks.csv`.
#[test]
fn cases_common_seeds_derived_metrics_and_findings() {
    let dir = tmpdir("cases");
    let text = r#"
name = "cases"
title = "Cases"
question = "Do cases, CRN, derived metrics and findings work?"
base = "base.toml"
master_seed = 3
repetitions = 2
min_pairs = 4
common_random_numbers = ["variant"]

[[axes]]
name = "variant"
values = ["near", "far"]

[[axes]]
name = "loss"
values = [0.0, 0.1]

[set]
"topology.return.impairments.loss.p" = "loss"

[cases.variant."near"]
"topology.forward.delay_ms" = "2"
"topology.return.impairments.loss.model" = "'bernoulli'"

[cases.variant."far"]
"topology.forward.delay_ms" = "20"
"topology.return.impairments.loss.model" = "'bernoulli'"

[metrics]
ttlb = "flows[0].ttlb_s"
ttfb = "flows[0].ttfb_s"
tail = "= ttlb - ttfb"

[[findings]]
name = "far_is_slower"
claim = "A longer forward delay lengthens the transfer"
metric = "ttlb"
of = { variant = "far" }
against = { variant = "near" }
expect = "higher"

[[findings]]
name = "wrong_way"
claim = "A claim that must not hold"
metric = "ttlb"
of = { variant = "far" }
against = { variant = "near" }
expect = "lower"
"#;
    let plan = write_plan(&dir, text);
    let out = dir.join("out");
    let o = run_plan(&plan, &out, &opts(2)).unwrap();
    // Seeds ignore the `variant` axis: the same (loss, rep) runs with the same seed.
    for r in &o.rows {
        let twin = o
            .rows
            .iter()
            .find(|x| x.params["loss"] == r.params["loss"] && x.rep == r.rep && x.point != r.point)
            .unwrap();
        assert_eq!(r.seed, twin.seed);
        let (ttlb, ttfb, tail) = (r.metrics["ttlb"], r.metrics["ttfb"], r.metrics["tail"]);
        assert!((tail - (ttlb - ttfb)).abs() < 1e-12);
    }
    let resolved: Vec<String> = std::fs::read_to_string(out.join("runs.csv"))
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(resolved.len(), 1 + 8);
    quiclab_lab::present::report::write_report(&out).unwrap();
    // The deprecated [[findings]] are read as checks, pooled over the loss axis: 2 loss
    // values x 2 repetitions, paired by seed.
    let f = read(&out, "checks.csv");
    assert!(
        f.contains("far_is_slower,holds,,ttlb,mean of ratios,pooled"),
        "{f}"
    );
    assert!(
        f.contains("wrong_way,fails,,ttlb,mean of ratios,pooled"),
        "{f}"
    );
    let f = read(&out, "checks_points.csv");
    assert!(f.contains("far_is_slower,all points,holds,4,"), "{f}");
    assert!(!out.join("findings.csv").exists());
    let report = read(&out, "report.md");
    assert!(
        report.contains("## Checks")
            && report.contains("Checks: 1 hold, 1 fail, 0 inconclusive, 0 no data, 0 not run."),
        "{report}"
    );
    // The far variant really ran with a 20 ms forward delay.
    let far = o
        .rows
        .iter()
        .find(|r| r.params["variant"] == quiclab_lab::plan::AxisValue::Text("far".into()))
        .unwrap();
    let near = o
        .rows
        .iter()
        .find(|r| r.params["variant"] == quiclab_lab::plan::AxisValue::Text("near".into()))
        .unwrap();
    assert!(far.metrics["ttfb"] > near.metrics["ttfb"] + 0.03);
}

#[test]
fn bad_cases_and_findings_are_named() {
    let (_, m) = bad(
        "case_axis",
        &(good_plan() + "\n[cases.nope.\"x\"]\n\"stop.time_s\" = \"1\"\n"),
    );
    assert!(
        m.contains("cases") && m.contains("`nope` is not an axis"),
        "{m}"
    );

    let (_, m) = bad(
        "case_value",
        &(good_plan() + "\n[cases.model.\"gilbert\"]\n\"stop.time_s\" = \"1\"\n"),
    );
    assert!(m.contains("no text value \"gilbert\""), "{m}");

    let (_, m) = bad(
        "crn",
        &good_plan().replace(
            "master_seed = 7",
            "master_seed = 7\ncommon_random_numbers = [\"rtt\"]",
        ),
    );
    assert!(
        m.contains("common_random_numbers") && m.contains("`rtt`"),
        "{m}"
    );

    let (_, m) = bad(
        "derived",
        &good_plan().replace(
            "missing = \"flows[3].ttlb_s\"",
            "missing = \"= ttlb / nothing\"",
        ),
    );
    assert!(
        m.contains("metrics.missing") && m.contains("nothing"),
        "{m}"
    );

    let finding =
        |body: &str| good_plan() + "\n[[findings]]\nname = \"f\"\nclaim = \"c\"\n" + body + "\n";
    let (_, m) = bad(
        "f_metric",
        &finding(
            "metric = \"nope\"\nof = { delay = 2 }\nagainst = { delay = 10 }\nexpect = \"lower\"",
        ),
    );
    assert!(m.contains("findings[0] (f).metric"), "{m}");
    let (_, m) = bad(
        "f_expect",
        &finding(
            "metric = \"ttlb\"\nof = { delay = 2 }\nagainst = { delay = 10 }\nexpect = \"smaller\"",
        ),
    );
    assert!(m.contains("findings[0] (f).expect"), "{m}");
    let (_, m) = bad(
        "f_value",
        &finding(
            "metric = \"ttlb\"\nof = { delay = 3 }\nagainst = { delay = 10 }\nexpect = \"lower\"",
        ),
    );
    assert!(m.contains("axis `delay` has no value 3"), "{m}");
    let (_, m) = bad(
        "f_axes",
        &finding(
            "metric = \"ttlb\"\nof = { delay = 2 }\nagainst = { loss = 0.2 }\nexpect = \"lower\"",
        ),
    );
    assert!(m.contains("same axes"), "{m}");
    let (_, m) = bad(
        "f_expected",
        &finding("metric = \"ttlb\"\nof = { delay = 2 }\nexpect = \"lower\""),
    );
    assert!(m.contains("[expected]"), "{m}");
}
