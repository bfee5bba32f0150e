//! The quic-vs-tcp country scenario on one of its paths, edited as TOML: the regression
//! tests for bugs that the country plan found at one seed start from here.
//!
//! Each test binary compiles this module separately.

use quiclab_sim::{Scenario, Simulation};
use std::path::Path;

/// Sets `path` (table keys, created as needed) to `v`.
pub fn set(t: &mut toml::Table, path: &[&str], v: toml::Value) {
    let (last, head) = path.split_last().expect("a key");
    let mut cur = t;
    for k in head {
        cur = cur
            .entry(k.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            .as_table_mut()
            .expect("a table");
    }
    cur.insert(last.to_string(), v);
}

/// `scenarios/experiments/quic_vs_tcp_country.toml` with the plan's path: `one_way_ms`
/// each way, loss `p` on the download (return) link and its queue in packets, and the
/// run's seed.
pub fn country(seed: i64, one_way_ms: f64, p: f64, queue_packets: i64) -> toml::Table {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/experiments/quic_vs_tcp_country.toml");
    let text = std::fs::read_to_string(&file).expect("the country scenario");
    let mut t: toml::Table = toml::from_str(&text).expect("TOML");
    t.insert("seed".into(), toml::Value::Integer(seed));
    for side in ["forward", "return"] {
        set(
            &mut t,
            &["topology", side, "delay_ms"],
            toml::Value::Float(one_way_ms),
        );
    }
    set(
        &mut t,
        &["topology", "return", "impairments", "loss", "p"],
        toml::Value::Float(p),
    );
    set(
        &mut t,
        &["topology", "return", "queue", "packets"],
        toml::Value::Integer(queue_packets),
    );
    t
}

/// Runs the edited scenario to its end.
pub fn run(t: &toml::Table, name: &str) -> quiclab_sim::RunResult {
    let s =
        Scenario::parse(&toml::to_string(t).expect("TOML"), name).unwrap_or_else(|e| panic!("{e}"));
    Simulation::new(s, name, None)
        .unwrap_or_else(|e| panic!("{e}"))
        .run()
        .unwrap_or_else(|e| panic!("{e}"))
}
