//! A TLS-over-TCP download must not stall once every byte has arrived. After a loss is
//! repaired a whole window becomes readable at once; rustls takes part of it and the
//! rest waits as ciphertext (`TlsLayer::pending_in`) until the application has read the
//! plaintext. The flow's read loop stopped when the waiting ciphertext did not shrink,
//! but the same pass had fed the old ciphertext and refilled the buffer from TCP, so it
//! stopped with ciphertext waiting and no packet left to come: with the seed below the
//! 1 MB response lacked its last 35 KB until the run ended (found by the quic-vs-tcp
//! country plan, South Korea-like path, repetition 18).

use quiclab_sim::{Scenario, Simulation};
use std::path::Path;

fn set(t: &mut toml::Table, path: &[&str], v: toml::Value) {
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

#[test]
fn tls_over_tcp_download_completes_after_a_repaired_window() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/experiments/quic_vs_tcp_country.toml");
    let text = std::fs::read_to_string(&file).expect("the country scenario");
    let mut t: toml::Table = toml::from_str(&text).expect("TOML");
    // The South Korea-like path of the plan (38 ms RTT, 1% loss on the download).
    t.insert(
        "seed".into(),
        toml::Value::Integer(3_899_240_094_374_187_653),
    );
    for side in ["forward", "return"] {
        set(
            &mut t,
            &["topology", side, "delay_ms"],
            toml::Value::Float(19.0),
        );
    }
    set(
        &mut t,
        &["topology", "return", "impairments", "loss", "p"],
        toml::Value::Float(0.01),
    );
    set(
        &mut t,
        &["topology", "return", "queue", "packets"],
        toml::Value::Integer(63),
    );
    // The TCP flows only (the QUIC ones start at 300 s).
    t["flows"].as_array_mut().expect("flows").truncate(2);
    set(&mut t, &["stop", "time_s"], toml::Value::Float(60.0));
    let s = Scenario::parse(&toml::to_string(&t).expect("TOML"), "stall.toml")
        .unwrap_or_else(|e| panic!("{e}"));
    let r = Simulation::new(s, "stall.toml", None)
        .unwrap_or_else(|e| panic!("{e}"))
        .run()
        .unwrap_or_else(|e| panic!("{e}"));
    let tcp = r
        .flows
        .iter()
        .find(|f| f.name == "tcp")
        .expect("the tcp flow");
    assert_eq!(tcp.incomplete, None, "{:?}", tcp.close);
    let ttlb = tcp.ttlb_s.expect("the GET completes");
    assert!(ttlb < 5.0, "ttlb {ttlb} s");
}
