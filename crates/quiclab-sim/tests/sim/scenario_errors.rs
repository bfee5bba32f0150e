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

/// RFC 9000 §9.6: a simulated host has one address, so a preferred address could
/// never be validated: refused rather than silently failing.
#[test]
fn a_preferred_address_is_not_simulated_yet() {
    assert_error(
        &with("FLOW", "server = { preferred_address = \"10.1.0.9:443\" }"),
        &["server.preferred_address", "not simulated yet"],
    );
}

#[test]
fn wrong_type() {
    let text = with("TOP", "").replace("seed = 1", "seed = \"x\"");
    assert_error(&text, &["seed"]);
}

/// Regression: a parser's message quotes the offending value (and toml's the whole
/// line, with a caret under it): a type error inside a 100 MB string printed 300 MB.
#[test]
fn a_type_error_in_a_100_mb_string_is_quoted_briefly() {
    let huge = format!("\"{}\"", "x".repeat(100_000_000));
    let top = with("TOP", "").replace("seed = 1", &format!("seed = {huge}"));
    let transport = with("CLIENT", &format!("pacing = {huge}"));
    for (text, key) in [(top, "seed"), (transport, "client.pacing")] {
        let err = error(&text);
        assert!(err.contains(FILE) && err.contains(key), "{err}");
        assert!(err.contains("invalid type: string \"xxx"), "{err}");
        assert!(err.len() < 1000, "{} bytes", err.len());
    }
}

/// The toml parser limits nesting itself (arrays, inline tables, dotted keys and
/// table headers, 80 levels): deep input is an error, not a stack overflow.
#[test]
fn deep_nesting_is_an_error() {
    let n = 100_000;
    let dotted = vec!["a"; n].join(".");
    for deep in [
        format!("x = {}{}", "[".repeat(n), "]".repeat(n)),
        format!("x = {}1{}", "{a=".repeat(n), "}".repeat(n)),
        format!("{dotted} = 1"),
        format!("[{dotted}]"),
        format!("[[{dotted}]]"),
    ] {
        let err = error(&with("TOP", &deep));
        assert!(err.contains("recursion limit exceeded"), "{err}");
        assert!(err.len() < 1000, "{} bytes", err.len());
    }
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

#[test]
fn bad_tls_choices() {
    // serde names only: the error lists them.
    assert_error(
        &with("TOP", "certificate_type = \"rsa\""),
        &["certificate_type", "rsa2048"],
    );
    let top = |t: &str| with("TOP", &format!("[tls]\n{t}\n"));
    assert_error(
        &top("cipher_suites = [\"des\"]"),
        &["tls.cipher_suites:", "\"des\"", "chacha20_poly1305"],
    );
    assert_error(&top("kx_groups = []"), &["tls.kx_groups:", "at least one"]);
    assert_error(
        &top("kx_groups = \" , \""),
        &["tls.kx_groups:", "at least one"],
    );
    assert_error(
        &top("kx_groups = \"p256, x25519, p256\""),
        &["tls.kx_groups:", "twice"],
    );
    assert_error(
        &top("cipher_suites = 3"),
        &["cipher_suites", "list of names"],
    );
    assert_error(&top("ciphers = [\"aes128_gcm\"]"), &["ciphers"]);
    assert_error(
        &top("server = { kx_groups = [\"x448\"] }"),
        &["tls.server.kx_groups:", "x448"],
    );
    // Per flow, named with the flow.
    assert_error(
        &with("FLOW", "tls = { client = { cipher_suites = \"aes_128\" } }"),
        &["flows[0] (get).tls.client.cipher_suites:", "aes_128"],
    );
    // A client and server that could never agree.
    assert_error(
        &top("cipher_suites = \"aes128_gcm\"\nserver = { cipher_suites = \"aes256_gcm\" }"),
        &["tls: flow \"get\":", "none in common", "aes256_gcm"],
    );
    assert_error(
        &with("FLOW", "tls = { server = { kx_groups = [\"p256\"] } }"),
        &[
            "flows[0] (get).tls:",
            "key exchange groups",
            "none in common",
        ],
    );
    // TLS-over-TCP keys on a QUIC flow, a TCP flow's TLS without its version.
    assert_error(
        &with("FLOW", "tls = { version = \"1.3\" }"),
        &["flows[0].tls.version:", "transport = \"tcp\""],
    );
    assert_error(
        &with(
            "FLOW",
            "transport = \"tcp\"\ntls = { cipher_suites = [\"aes128_gcm\"] }",
        ),
        &["flows[0].tls.version:", "1.3"],
    );
    // A resuming flow offers its source's choices (its ticket's config).
    let repeat = "[[flows]]\nname = \"again\"\nstart_s = 1.0\nsession_from = \"get\"\n\
                  workload = { kind = \"request\", size = 1000 }\n";
    assert_error(
        &with("FLOW", &format!("{repeat}tls = {{ kx_groups = \"p256\" }}")),
        &["flows[1] (again).tls:", "\"get\"", "session_from"],
    );
    // Valid: a flow override, a list as text, a per-side table.
    let ok = with(
        "TOP",
        "certificate_type = \"ecdsa_p256\"\n[tls]\n\
         cipher_suites = \"chacha20_poly1305, aes128_gcm\"\n\
         kx_groups = [\"x25519\", \"p256\"]\nserver = { kx_groups = \"p256\" }\n",
    )
    .replace(
        "#FLOW",
        &format!(
            "tls = {{ cipher_suites = [\"aes256_gcm\"] }}\n{repeat}\
             tls = {{ cipher_suites = \"aes256_gcm\" }}"
        ),
    );
    let s = Scenario::parse(&ok, FILE).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(format!("{:?}", s.certificate_type), "EcdsaP256");
}

/// The transport key `ecn` (RFC 9000 §13.4) reaches a flow's TransportConfig; a value
/// other than off / ect0 / ect1 is an error that names the key.
#[test]
fn ecn_transport_key() {
    use quiclab_proto::EcnMode;
    for (value, mode) in [
        ("off", EcnMode::Off),
        ("ect0", EcnMode::Ect0),
        ("ect1", EcnMode::Ect1),
    ] {
        let text = with("CLIENT", &format!("ecn = \"{value}\""));
        let s = Scenario::parse(&text, FILE).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.transport(0, false, FILE).expect("client").ecn, mode);
        assert_eq!(
            s.transport(0, true, FILE).expect("server").ecn,
            EcnMode::Off
        );
    }
    assert_error(
        &with("CLIENT", "ecn = \"ce\""),
        &["client.ecn", "unknown variant"],
    );
}

/// The transport key `multipath` (draft-ietf-quic-multipath) with its `scheduler`
/// reaches a flow's TransportConfig; an unknown scheduler is an error naming the key.
#[test]
fn multipath_scheduler_transport_key() {
    use quiclab_proto::MultipathScheduler;
    let text = with(
        "CLIENT",
        "multipath = { enabled = true, scheduler = \"round_robin\" }",
    );
    let s = Scenario::parse(&text, FILE).unwrap_or_else(|e| panic!("{e}"));
    let c = s.transport(0, false, FILE).expect("client");
    assert!(c.multipath.enabled);
    assert_eq!(c.multipath.scheduler, MultipathScheduler::RoundRobin);
    let server = s.transport(0, true, FILE).expect("server");
    assert_eq!(server.multipath.scheduler, MultipathScheduler::MinRtt);
    assert!(!server.multipath.enabled);
    assert_error(
        &with("CLIENT", "multipath = { scheduler = \"fastest\" }"),
        &["client.multipath", "unknown variant `fastest`"],
    );
}

/// `packet_protection` reaches every QUIC endpoint's TransportConfig; an unknown value
/// is an error naming the file and the allowed values, and a `[client]` table cannot
/// set it (the key is the whole run's, never a real endpoint's).
#[test]
fn packet_protection_key() {
    use quiclab_proto::PacketProtection;
    let s = Scenario::parse(&with("TOP", "packet_protection = \"checksum\""), FILE)
        .unwrap_or_else(|e| panic!("{e}"));
    for server in [false, true] {
        let t = s.transport(0, server, FILE).expect("transport");
        assert_eq!(t.packet_protection, PacketProtection::Checksum);
    }
    let s = Scenario::parse(BASE, FILE).unwrap_or_else(|e| panic!("{e}"));
    let t = s.transport(0, false, FILE).expect("transport");
    assert_eq!(t.packet_protection, PacketProtection::Aead);
    assert_error(
        &with("TOP", "packet_protection = \"null\""),
        &[FILE, "unknown variant `null`", "`aead` or `checksum`"],
    );
    assert_error(
        &with("CLIENT", "packet_protection = \"checksum\""),
        &["client.packet_protection", "unknown field"],
    );
}
