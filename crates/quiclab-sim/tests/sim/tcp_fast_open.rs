//! TCP Fast Open (RFC 7413) and TLS 1.3 early data over it (RFC 8446 §2.3): a second
//! connection of the same client, holding the first one's TFO cookie and TLS ticket,
//! gets its first response byte after one round trip; without a cookie the SYN carries
//! no data and the handshake is the ordinary one.

use quiclab_sim::{RunResult, Scenario, Simulation};

/// Two flows of one client over a 50 ms RTT path without rate limit (so times are
/// whole round trips): `first` at 0 s, `second` at 1 s; `tcp_first` / `tcp_second` /
/// `tls_second` are the flows' extra table entries.
fn two_flows(tcp_first: &str, tcp_second: &str, tls_first: &str, tls_second: &str) -> RunResult {
    let text = format!(
        r#"
name = "tfo"
seed = 3
[stop]
time_s = 10.0
when_flows_done = true
[topology]
kind = "point_to_point"
[topology.forward]
delay_ms = 25.0
[topology.return]
delay_ms = 25.0
[[flows]]
name = "first"
transport = "tcp"
workload = {{ kind = "request", size = 1000 }}
tcp = {{ {tcp_first} }}
{tls_first}
[[flows]]
name = "second"
start_s = 1.0
transport = "tcp"
workload = {{ kind = "request", size = 1000 }}
tcp = {{ {tcp_second} }}
{tls_second}
"#
    );
    let s = Scenario::parse(&text, "tfo.toml").unwrap_or_else(|e| panic!("{e}"));
    Simulation::new(s, "tfo.toml", None)
        .unwrap_or_else(|e| panic!("{e}"))
        .run()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn ttfb_ms(r: &RunResult, i: usize) -> f64 {
    let f = &r.flows[i];
    assert_eq!(f.incomplete, None, "{}", f.name);
    // ttfb_s counts from the flow's start.
    let t = f
        .ttfb_s
        .unwrap_or_else(|| panic!("{}: no first byte", f.name));
    (t * 1000.0 * 1000.0).round() / 1000.0
}

const TLS13: &str = r#"tls = { version = "1.3" }"#;
const TLS13_EARLY: &str =
    "session_from = \"first\"\ntls = { version = \"1.3\", early_data = true }";

/// The issue's done-when: TFO + TLS 1.3 early data, first response byte at 1 RTT.
#[test]
fn tfo_with_tls13_early_data_answers_in_one_round_trip() {
    let r = two_flows("fast_open = true", "fast_open = true", TLS13, TLS13_EARLY);
    // The first connection: no cookie, no ticket: TCP 1 RTT + TLS 1 RTT + request.
    assert_eq!(ttfb_ms(&r, 0), 150.0);
    // The second: ClientHello + early data in the SYN, the response with the SYN-ACK.
    assert_eq!(ttfb_ms(&r, 1), 50.0);
    assert_eq!(r.flows[1].goodput_bytes, 1000);
}

/// Plain TCP: the request rides in the SYN once the client holds a cookie.
#[test]
fn tfo_cookie_from_the_first_connection_opens_the_second() {
    let r = two_flows("fast_open = true", "fast_open = true", "", "");
    // No cookie yet: the SYN asks for one and the handshake is the normal one (the
    // request leaves with the ACK of the SYN-ACK).
    assert_eq!(ttfb_ms(&r, 0), 100.0);
    assert_eq!(ttfb_ms(&r, 1), 50.0);
}

/// Without a cookie (the first flow did not use TFO, so none was issued) the SYN
/// carries no data: resumption with early data still saves TLS's round trip, not TCP's.
#[test]
fn tfo_without_a_cookie_falls_back_to_a_normal_handshake() {
    let r = two_flows("", "fast_open = true", TLS13, TLS13_EARLY);
    assert_eq!(ttfb_ms(&r, 0), 150.0);
    assert_eq!(ttfb_ms(&r, 1), 100.0);
    // And without TFO at all the result is the same.
    let plain = two_flows("", "", TLS13, TLS13_EARLY);
    assert_eq!(ttfb_ms(&plain, 1), 100.0);
}

/// Same seed, same result, with cookies and tickets in play.
#[test]
fn fast_open_runs_are_deterministic() {
    let a = two_flows("fast_open = true", "fast_open = true", TLS13, TLS13_EARLY);
    let b = two_flows("fast_open = true", "fast_open = true", TLS13, TLS13_EARLY);
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
}

#[test]
fn session_from_errors_name_the_key() {
    let bad = |tls_second: &str, needle: &str| {
        let text = format!(
            "name = \"x\"\nseed = 1\n[stop]\ntime_s = 1.0\n[topology]\nkind = \"point_to_point\"\n\
             [topology.forward]\ndelay_ms = 1.0\n[topology.return]\ndelay_ms = 1.0\n\
             [[flows]]\nname = \"first\"\ntransport = \"tcp\"\nworkload = {{ kind = \"request\", size = 10 }}\n\
             tls = {{ version = \"1.3\" }}\n\
             [[flows]]\nname = \"second\"\ntransport = \"tcp\"\nworkload = {{ kind = \"request\", size = 10 }}\n{tls_second}\n"
        );
        let e = Scenario::parse(&text, "x.toml").unwrap_err().to_string();
        assert!(e.contains(needle), "{e}");
    };
    bad(
        "session_from = \"nope\"\ntls = { version = \"1.3\" }",
        "no flow named",
    );
    bad(
        r#"tls = { version = "1.3", early_data = true }"#,
        "early_data",
    );
    bad(
        "session_from = \"first\"\ntls = { version = \"1.2\" }",
        "1.3",
    );
    bad("session_from = \"first\"", "1.3");
    bad(
        "session_from = \"second\"\ntls = { version = \"1.3\" }",
        "earlier",
    );
}
