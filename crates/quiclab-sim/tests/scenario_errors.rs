//! Bad scenario files fail with errors that name the file and the offending key, so a
//! user can find the mistake without reading the simulator's source. Each case edits
//! one thing in a valid base scenario.

use quiclab_sim::{Scenario, Simulation};

const FILE: &str = "bad_scenario.toml";

/// A valid scenario with a marker line after each table, where the cases insert keys.
const BASE: &str = r#"
name = "base"
seed = 1
#TOP

[stop]
time_s = 5.0

[topology]
kind = "point_to_point"

[topology.forward]
rate_mbps = 10.0
delay_ms = 10.0
mtu = 1500
#FORWARD

[topology.return]
rate_mbps = 10.0
delay_ms = 10.0
#RETURN

[client]
#CLIENT

[[flows]]
name = "get"
workload = { kind = "request", size = 1000 }
#FLOW
"#;

/// The base with `marker` replaced by `text`.
fn with(marker: &str, text: &str) -> String {
    let m = format!("#{marker}");
    assert!(BASE.contains(&m), "no marker {m}");
    BASE.replace(&m, text)
}

/// The error loading `text` gives (parse and validation, then building the
/// simulation: both run before anything is simulated).
fn error(text: &str) -> String {
    let err = match Scenario::parse(text, FILE) {
        Err(e) => e.to_string(),
        Ok(s) => match Simulation::new(s, FILE, None) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("accepted:\n{text}"),
        },
    };
    println!("{err}");
    err
}

/// Asserts the error names the file and contains every one of `needles`.
fn assert_error(text: &str, needles: &[&str]) {
    let err = error(text);
    assert!(err.contains(FILE), "error does not name the file: {err}");
    for n in needles {
        assert!(err.contains(n), "error does not mention `{n}`: {err}");
    }
}

#[test]
fn base_is_valid() {
    for m in ["TOP", "FORWARD", "RETURN", "CLIENT", "FLOW"] {
        let text = with(m, "");
        Scenario::parse(&text, FILE).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn unknown_top_level_key() {
    assert_error(&with("TOP", "sed = 2"), &["sed"]);
}

#[test]
fn unknown_link_key() {
    // The topology is an internally tagged enum, so toml loses the span of the inner
    // table: the error points at `[topology]` and names the unknown field.
    assert_error(&with("FORWARD", "dealy_ms = 3.0"), &["dealy_ms"]);
}

#[test]
fn unknown_transport_key() {
    assert_error(
        &with("CLIENT", "ack = { threshold = 2 }"),
        &["client.ack:", "unknown field `threshold`"],
    );
    // Also when no flow would use the table (cross traffic only).
    let no_flows = BASE[..BASE.find("[[flows]]").expect("flows")].to_string()
        + "[[cross_traffic]]\nname = \"udp\"\nsize_min = 100\nsize_max = 200\n\
           interval_min_ms = 10.0\ninterval_max_ms = 20.0\n";
    let text = no_flows.replace("#CLIENT", "ack = { threshold = 2 }");
    assert_error(&text, &["client.ack:", "unknown field `threshold`"]);
    // A flow's override is named with the flow.
    let text = with("FLOW", "server = { congestion = 1 }");
    assert_error(
        &text,
        &["flows[0] (get).server.congestion:", "unknown field"],
    );
}

#[test]
fn wrong_type() {
    let text = with("TOP", "").replace("seed = 1", "seed = \"x\"");
    assert_error(&text, &["seed"]);
}

#[test]
fn negative_delay() {
    let text = with("TOP", "").replacen("delay_ms = 10.0", "delay_ms = -1.0", 1);
    assert_error(&text, &["topology.forward.delay_ms"]);
}

#[test]
fn loss_probability_above_one() {
    assert_error(
        &with(
            "RETURN",
            "impairments = { loss = { model = \"bernoulli\", p = 1.5 } }",
        ),
        &["topology.return.impairments: loss.p"],
    );
}

#[test]
fn bad_queue() {
    assert_error(
        &with(
            "FORWARD",
            "queue = { discipline = \"drop_tail\", packets = 0 }",
        ),
        &["topology.forward: queue.packets"],
    );
}

#[test]
fn flow_on_missing_pair() {
    assert_error(&with("FLOW", "pair = 1"), &["flows[0].pair"]);
}

#[test]
fn duplicate_flow_names() {
    let extra = "[[flows]]\nname = \"get\"\nworkload = { kind = \"request\", size = 5 }";
    assert_error(&with("FLOW", extra), &["flows[1].name"]);
}

#[test]
fn payload_larger_than_mtu() {
    // mtu 1500 leaves 1472 bytes of UDP payload.
    assert_error(
        &with("CLIENT", "max_udp_payload_size = 1473"),
        &["client.max_udp_payload_size", "1500"],
    );
    let ok = with("CLIENT", "max_udp_payload_size = 1472");
    Scenario::parse(&ok, FILE).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn no_flows() {
    let text = BASE[..BASE.find("[[flows]]").expect("flows")].to_string();
    assert_error(&text, &["flows"]);
}

#[test]
fn invalid_scheduled_loss() {
    let change =
        "[[schedule]]\nat_s = 1.0\nlink = \"forward\"\nloss = { model = \"bernoulli\", p = 2.0 }";
    assert_error(&with("FLOW", change), &["schedule[0].loss: loss.p"]);
}
