//! No scenario makes the simulator panic: scenarios built by mutating valid ones key by
//! key with extreme values (zero, negative, huge, NaN, inf, empty, wrong type) and
//! structurally (keys removed, many flows, extra sections) either run or fail with a
//! typed error naming the key. Each accepted case runs with its stop time cut to
//! [`RUN_STOP_S`] and at most [`RUN_MAX_EVENTS`] events, so a case is quick.
//!
//! `QUICLAB_FUZZ_CASES=100000 cargo test --release -p quiclab-sim --test sim scenario_fuzz`
//! runs more cases than the default 256. With `QUICLAB_FUZZ_LAST=<file>` each case is
//! written there before it runs, so a case that aborts the process (out of memory, which
//! `catch_unwind` cannot report) is left behind.

use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};
use quiclab_sim::scenario::ScenarioError;
use quiclab_sim::{Scenario, SimError, Simulation};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::OnceLock;
use toml::{Table, Value};

const FILE: &str = "fuzz.toml";
const RUN_STOP_S: f64 = 2.0;
const RUN_MAX_EVENTS: u64 = 30_000;

/// Inline bases covering keys the scenario files do not use.
const INLINE_BASES: &[&str] = &[
    r#"
name = "p2p-bulk"
seed = 3
[stop]
time_s = 1.0
[measure]
from_s = 0.2
to_s = 0.8
interval_s = 0.1
traces = true
[topology]
kind = "point_to_point"
[topology.forward]
rate_mbps = 10.0
delay_ms = 5.0
mtu = 1500
queue = { discipline = "drop_tail", packets = 20, bytes = 30000 }
impairments = { loss = { model = "bernoulli", p = 0.01 }, duplicate = 0.01, jitter = { max_ms = 1.0, reorder = true } }
[topology.return]
rate_mbps = 10.0
delay_ms = 5.0
queue = { discipline = "codel", packets = 100, target_ms = 5.0, interval_ms = 100.0 }
impairments = { loss = { model = "periodic", p = 0.1 }, drops = [{ datagrams = [1, 3] }] }
[client]
max_udp_payload_size = 1400
flow = { initial_max_data = 1000000, initial_max_stream_data = 500000 }
[[flows]]
name = "bulk"
start_s = 0.1
workload = { kind = "bulk", bytes = 200000, stop_s = 0.9 }
[[schedule]]
at_s = 0.5
link = "forward"
rate_mbps = 5.0
delay_ms = 10.0
loss = { model = "gilbert_elliott", p_good_bad = 0.01, p_bad_good = 0.5, loss_good = 0.0, loss_bad = 0.5 }
outage_s = 0.05
"#,
    r#"
name = "dumbbell"
seed = 9
[stop]
time_s = 1.0
when_flows_done = false
[topology]
kind = "dumbbell"
pairs = 2
access_delay_ms = [1.0, 2.0]
[topology.forward]
rate_mbps = 5.0
delay_ms = 10.0
[topology.return]
rate_mbps = 5.0
delay_ms = 10.0
[[flows]]
name = "get"
pair = 0
workload = { kind = "request", size = 20000, count = 3, parallel = 2, think_ms = 10.0 }
[[cross_traffic]]
name = "udp"
pair = 1
size_min = 100
size_max = 1000
interval_min_ms = 5.0
interval_max_ms = 20.0
start_s = 0.1
stop_s = 0.9
"#,
];

/// Extra keys a mutation may set even where the base lacks them.
const EXTRA_PATHS: &[&str] = &[
    "stop.max_events",
    "stop.when_flows_done",
    "measure.to_s",
    "measure.from_s",
    "measure.interval_s",
    "certificate_padding",
    "certificate_type",
    "tls.cipher_suites",
    "tls.kx_groups",
    "tls.server.cipher_suites",
    "flows[0].tls.kx_groups",
    "flows[0].tls.client.cipher_suites",
    "topology.pairs",
    "topology.access_delay_ms",
    "topology.forward.rate_mbps",
    "topology.forward.mtu",
    "topology.forward.queue.packets",
    "topology.forward.queue.bytes",
    "topology.return.impairments.duplicate",
    "topology.return.impairments.jitter.max_ms",
    "topology.forward.impairments.loss.p",
    "flows[0].start_s",
    "flows[0].pair",
    "flows[0].workload.bytes",
    "flows[0].workload.stop_s",
    "flows[0].workload.size",
    "flows[0].workload.count",
    "flows[0].workload.parallel",
    "flows[0].workload.think_ms",
    "client.max_udp_payload_size",
    "server.max_udp_payload_size",
    "client.flow.initial_max_data",
    "server.flow.send_buffer",
    "client.flow.send_buffer",
    "cross_traffic[0].interval_min_ms",
    "cross_traffic[0].size_max",
    "schedule[0].at_s",
    "schedule[0].rate_mbps",
];

/// Every base: the inline ones and the repository's scenario files (read once).
fn bases() -> &'static [(String, String)] {
    static BASES: OnceLock<Vec<(String, String)>> = OnceLock::new();
    BASES.get_or_init(read_bases)
}

fn read_bases() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = INLINE_BASES
        .iter()
        .enumerate()
        .map(|(i, t)| (format!("inline[{i}]"), t.to_string()))
        .collect();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut files: Vec<PathBuf> = ["examples", "experiments", "validation"]
        .iter()
        .flat_map(|d| std::fs::read_dir(root.join(d)).expect("scenarios dir"))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("scenario file");
        let text = with_absolute_host_profiles(&text, f.parent().expect("a directory"));
        out.push((f.display().to_string(), text));
    }
    out
}

/// A base file's `host = { profile = "relative/path" }` tables made absolute: bases are
/// parsed as text with no directory, so a path relative to the file would not resolve
/// (the `load` path resolves it; `scenario/hosts.rs`).
fn with_absolute_host_profiles(text: &str, dir: &std::path::Path) -> String {
    fn walk(v: &mut Value, dir: &std::path::Path) {
        let Value::Table(t) = v else { return };
        if let Some(Value::Table(host)) = t.get_mut("host") {
            if let Some(Value::String(p)) = host.get_mut("profile") {
                if std::path::Path::new(p.as_str()).is_relative() {
                    *p = dir.join(&*p).display().to_string();
                }
            }
        }
        for (_, child) in t.iter_mut() {
            walk(child, dir);
        }
    }
    if !text.contains("profile") {
        return text.to_string();
    }
    let mut v: Value = toml::from_str(text).expect("a base file parses");
    walk(&mut v, dir);
    toml::to_string(&v).expect("serializes")
}

/// Extreme values; a mutation picks one (mostly of the key's own type).
fn extreme(original: Option<&Value>, pick: usize) -> Value {
    let floats = [
        0.0,
        -0.0,
        -1.0,
        1e-300,
        1e-12,
        1e-9,
        1e-6,
        0.5,
        1.0,
        1e9,
        1e12,
        1e18,
        1e300,
        f64::MAX,
        f64::MIN_POSITIVE,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    let ints = [
        0,
        -1,
        1,
        2,
        27,
        67,
        68,
        1199,
        1200,
        65507,
        65535,
        65536,
        1 << 20,
        1 << 32,
        i64::MAX,
        i64::MIN,
    ];
    let others = [
        Value::String(String::new()),
        Value::Boolean(true),
        Value::Array(Vec::new()),
        Value::Table(Table::new()),
    ];
    // One pick in eight ignores the key's type.
    let wild = pick.is_multiple_of(8);
    match original {
        Some(Value::Float(_)) if !wild => Value::Float(floats[pick % floats.len()]),
        Some(Value::Integer(_)) if !wild => Value::Integer(ints[pick % ints.len()]),
        Some(Value::Boolean(b)) if !wild => Value::Boolean(!b),
        Some(Value::Array(a)) if !wild => match pick % 3 {
            0 => Value::Array(Vec::new()),
            1 => Value::Array(a.iter().chain(a.iter()).cloned().collect()),
            _ => Value::Array(vec![Value::Float(floats[pick % floats.len()]); 3]),
        },
        _ => match pick % 3 {
            0 => Value::Float(floats[pick % floats.len()]),
            1 => Value::Integer(ints[pick % ints.len()]),
            _ => others[pick % others.len()].clone(),
        },
    }
}

#[derive(Clone, Debug)]
enum Seg {
    Key(String),
    Index(usize),
}

fn parse_path(p: &str) -> Vec<Seg> {
    let mut out = Vec::new();
    for part in p.split('.') {
        match part.split_once('[') {
            Some((k, i)) => {
                out.push(Seg::Key(k.to_string()));
                out.push(Seg::Index(i.trim_end_matches(']').parse().expect("index")));
            }
            None => out.push(Seg::Key(part.to_string())),
        }
    }
    out
}

/// Every leaf path of a value (tables and arrays of tables are descended).
fn leaves(v: &Value, prefix: &mut Vec<Seg>, out: &mut Vec<Vec<Seg>>) {
    match v {
        Value::Table(t) => {
            for (k, v) in t {
                prefix.push(Seg::Key(k.clone()));
                leaves(v, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(a) if a.iter().any(Value::is_table) => {
            for (i, v) in a.iter().enumerate() {
                prefix.push(Seg::Index(i));
                leaves(v, prefix, out);
                prefix.pop();
            }
        }
        _ => out.push(prefix.clone()),
    }
}

/// The value at `path`, creating missing tables on the way (`None` when the path runs
/// through something else, such as a missing array element).
fn slot<'a>(root: &'a mut Value, path: &[Seg]) -> Option<&'a mut Value> {
    let mut cur = root;
    for seg in path {
        cur = match (seg, cur) {
            (Seg::Key(k), Value::Table(t)) => t
                .entry(k.clone())
                .or_insert_with(|| Value::Table(Table::new())),
            (Seg::Index(i), Value::Array(a)) => a.get_mut(*i)?,
            _ => return None,
        };
    }
    Some(cur)
}

fn remove(root: &mut Value, path: &[Seg]) {
    let Some((last, parent)) = path.split_last() else {
        return;
    };
    let Some(p) = slot(root, parent) else { return };
    match (last, p) {
        (Seg::Key(k), Value::Table(t)) => {
            t.remove(k);
        }
        (Seg::Index(i), Value::Array(a)) if *i < a.len() => {
            a.remove(*i);
        }
        _ => {}
    }
}

/// Repeats flow 0 `n` times under new names (many flows).
fn many_flows(root: &mut Value, n: usize) {
    let Some(Value::Array(flows)) = slot(root, &parse_path("flows")) else {
        return;
    };
    let Some(first) = flows.first().cloned() else {
        return;
    };
    for i in 0..n {
        let mut f = first.clone();
        if let Value::Table(t) = &mut f {
            t.insert("name".into(), Value::String(format!("copy{i}")));
        }
        flows.push(f);
    }
}

/// One mutation: (what, where, which value).
type Op = (u8, usize, usize);

/// The mutated scenario text (`None` if the toml crate cannot write the mutated tree,
/// e.g. an array mixing tables and numbers).
fn mutate(base: &str, ops: &[Op]) -> Option<String> {
    let mut root = Value::Table(toml::from_str::<Table>(base).expect("base parses"));
    for &(kind, at, pick) in ops {
        let mut paths = Vec::new();
        leaves(&root, &mut Vec::new(), &mut paths);
        paths.extend(EXTRA_PATHS.iter().map(|p| parse_path(p)));
        let path = &paths[at % paths.len()];
        match kind % 8 {
            0..=4 => {
                if let Some(v) = slot(&mut root, path) {
                    let original = (!v.as_table().is_some_and(Table::is_empty)).then(|| v.clone());
                    *v = extreme(original.as_ref(), pick);
                }
            }
            5 => remove(&mut root, path),
            6 => many_flows(&mut root, [1, 2, 10, 50][pick % 4]),
            _ => {
                // Empty a list of sections.
                let list = ["flows", "cross_traffic", "schedule"][pick % 3];
                if let Some(v) = slot(&mut root, &parse_path(list)) {
                    *v = Value::Array(Vec::new());
                }
            }
        }
    }
    toml::to_string(&root).ok()
}

/// What one case did; `Err` describes a failure.
fn check(text: &str) -> Result<(), String> {
    let scenario = match Scenario::parse(text, FILE) {
        Ok(s) => s,
        Err(ScenarioError::Parse { message, .. }) if !message.is_empty() => return Ok(()),
        Err(ScenarioError::Invalid { key, why, .. }) if !key.is_empty() && !why.is_empty() => {
            return Ok(())
        }
        Err(e) => return Err(format!("untyped or unnamed error: {e:?}")),
    };
    let mut s = scenario;
    s.stop.time_s = s.stop.time_s.min(RUN_STOP_S);
    s.stop.max_events = Some(s.stop.max_events.unwrap_or(u64::MAX).min(RUN_MAX_EVENTS));
    let result = Simulation::new(s, FILE, None).and_then(Simulation::run);
    match result {
        Ok(r) if r.end_s <= RUN_STOP_S => Ok(()),
        Ok(r) => Err(format!("ran past its stop time: {}", r.end_s)),
        Err(SimError::Scenario(ScenarioError::Invalid { key, .. })) if !key.is_empty() => Ok(()),
        Err(SimError::EventLimit { .. }) => Ok(()),
        Err(e) => Err(format!("run failed: {e}")),
    }
}

fn cases() -> u32 {
    std::env::var("QUICLAB_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

#[test]
fn bases_are_valid_and_run() {
    for (name, text) in bases() {
        let mutated = mutate(text, &[]).expect("serializes");
        check(&mutated).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            Scenario::parse(&mutated, FILE).is_ok(),
            "{name} does not parse"
        );
    }
}

#[test]
fn the_issue_case_is_a_typed_error() {
    let text = INLINE_BASES[0]
        .replacen("delay_ms = 5.0", "delay_ms = 1e12", 1)
        .replacen("rate_mbps = 10.0", "rate_mbps = 1e-9", 1);
    let err = Scenario::parse(&text, FILE).expect_err("a 1e-9 Mbit/s link is refused");
    assert!(
        err.to_string().contains("topology.forward.rate_mbps"),
        "{err}"
    );
}

/// Found by this test (the process ran out of memory): a server buffering a huge
/// response through a huge send buffer.
#[test]
fn a_huge_send_buffer_is_a_typed_error() {
    let text = INLINE_BASES[1]
        .replacen("size = 20000", "size = 4611686018427387903", 1)
        .replacen(
            "[[flows]]",
            "[server]\nflow = { send_buffer = 4611686018427387903 }\n[[flows]]",
            1,
        );
    let err = Scenario::parse(&text, FILE).expect_err("refused");
    assert!(
        err.to_string().contains("flows[0].server.flow.send_buffer"),
        "{err}"
    );
}

proptest! {
    #![proptest_config(Config {
        cases: cases(),
        failure_persistence: Some(Box::new(FileFailurePersistence::Off)),
        ..Config::default()
    })]

    #[test]
    fn no_scenario_panics(
        base in 0usize..64,
        ops in proptest::collection::vec((any::<u8>(), any::<usize>(), any::<usize>()), 1..5),
    ) {
        let bases = bases();
        let (name, text) = &bases[base % bases.len()];
        let Some(mutated) = mutate(text, &ops) else {
            return Ok(());
        };
        if let Ok(last) = std::env::var("QUICLAB_FUZZ_LAST") {
            std::fs::write(last, format!("# base {name}\n{mutated}")).expect("QUICLAB_FUZZ_LAST");
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| check(&mutated)));
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(why)) => panic!("{why}\nbase {name}, scenario:\n{mutated}"),
            Err(_) => panic!("panicked; base {name}, scenario:\n{mutated}"),
        }
    }
}
