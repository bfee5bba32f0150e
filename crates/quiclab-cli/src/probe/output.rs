//! The probe's outputs: the table on stdout, the CSV rows and the JSON reports, from
//! one list of columns so that the three agree.

use quiclab_net::probe::{params, ProbeReport};
use serde_json::{json, Value};

/// CSV columns, in order (documented in docs/book/src/guide/probe.md).
pub const COLUMNS: &[&str] = &[
    "input",
    "host",
    "port",
    "address",
    "error",
    "version",
    "versions_offered",
    "alpn",
    "handshake_us",
    "instant_ack",
    "iack_sh_gap_us",
    "first_datagram_us",
    "server_hello_us",
    "client_first_flight_bytes",
    "amplification_limit_bytes",
    "first_flight_bytes",
    "first_flight_datagrams",
    "amplification_exceeded",
    "cert_count",
    "cert_der_bytes",
    "cert_message_bytes",
    "server_initial_crypto_bytes",
    "server_handshake_crypto_bytes",
    "packets_dropped",
    "client_ptos",
    "transport_parameters",
];

/// A QUIC version as written: v1, v2 (RFC 9000, RFC 9369), else hex.
fn version_name(v: u32) -> String {
    match v {
        quiclab_proto::VERSION_1 => "v1".into(),
        quiclab_proto::VERSION_2 => "v2".into(),
        _ => format!("{v:#010x}"),
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

/// One report's values, in [`COLUMNS`] order (empty: not measured).
pub fn values(r: &ProbeReport) -> Vec<String> {
    let s = &r.shape;
    let reached = s.first_datagram_us.is_some();
    let measured = |v: u64| {
        if reached {
            v.to_string()
        } else {
            String::new()
        }
    };
    let certs = !r.chain.der_sizes.is_empty();
    vec![
        r.target.input.clone(),
        r.target.host.clone(),
        if r.target.host.is_empty() {
            String::new()
        } else {
            r.target.port.to_string()
        },
        opt(r.address),
        r.error.clone().unwrap_or_default(),
        if reached {
            opt(r.version.map(version_name))
        } else {
            String::new()
        },
        s.versions_offered
            .iter()
            .map(|v| version_name(*v))
            .collect::<Vec<_>>()
            .join(" "),
        r.alpn.clone().unwrap_or_default(),
        opt(s.handshake_us),
        if s.server_hello_us.is_some() {
            s.instant_ack.to_string()
        } else {
            String::new()
        },
        opt(s.iack_sh_gap_us),
        opt(s.first_datagram_us),
        opt(s.server_hello_us),
        if s.client_first_flight_bytes > 0 {
            s.client_first_flight_bytes.to_string()
        } else {
            String::new()
        },
        if s.client_first_flight_bytes > 0 {
            (3 * s.client_first_flight_bytes).to_string()
        } else {
            String::new()
        },
        measured(s.first_flight_bytes),
        measured(s.first_flight_datagrams),
        if reached {
            s.amplification_exceeded.to_string()
        } else {
            String::new()
        },
        if certs {
            r.chain.der_sizes.len().to_string()
        } else {
            String::new()
        },
        if certs {
            r.chain.der_sizes.iter().sum::<usize>().to_string()
        } else {
            String::new()
        },
        if certs {
            r.chain.message_bytes().to_string()
        } else {
            String::new()
        },
        measured(s.server_initial_crypto_bytes),
        measured(s.server_handshake_crypto_bytes),
        measured(s.packets_dropped),
        measured(u64::from(s.client_ptos)),
        r.params.as_ref().map(params::joined).unwrap_or_default(),
    ]
}

/// RFC 4180 quoting where a field needs it.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The CSV file: a header line, then one row per report.
pub fn csv(reports: &[ProbeReport]) -> String {
    let mut out = COLUMNS.join(",") + "\n";
    for r in reports {
        let row: Vec<String> = values(r).iter().map(|v| field(v)).collect();
        out += &row.join(",");
        out.push('\n');
    }
    out
}

/// The JSON reports: each column by name (numbers as numbers), the transport
/// parameters as an object.
pub fn json(reports: &[ProbeReport]) -> Value {
    let rows = reports.iter().map(|r| {
        let mut obj = serde_json::Map::new();
        for (name, v) in COLUMNS.iter().zip(values(r)) {
            let value = if *name == "transport_parameters" {
                let p = r.params.as_ref().map(params::pairs).unwrap_or_default();
                Value::Object(
                    p.into_iter()
                        .map(|(n, v)| (n.to_string(), json!(v)))
                        .collect(),
                )
            } else if v.is_empty() {
                Value::Null
            } else if let Ok(n) = v.parse::<u64>() {
                json!(n)
            } else if let Ok(b) = v.parse::<bool>() {
                json!(b)
            } else {
                json!(v)
            };
            obj.insert(name.to_string(), value);
        }
        Value::Object(obj)
    });
    Value::Array(rows.collect())
}

/// The stdout table: one line per server with the seed's questions first (instant
/// ACK and its gap, first flight against the amplification limit, certificates).
pub fn table(reports: &[ProbeReport]) -> String {
    let head = [
        "server",
        "ver",
        "alpn",
        "hs_ms",
        "iack",
        "gap_us",
        "flight/limit",
        "ptos",
        "certs",
        "cert_B",
        "max_data",
        "error",
    ];
    let mut rows: Vec<Vec<String>> = vec![head.iter().map(|s| s.to_string()).collect()];
    for r in reports {
        let v = values(r);
        let col = |name: &str| v[COLUMNS.iter().position(|c| *c == name).unwrap_or(0)].clone();
        let flight = match (col("first_flight_bytes"), col("amplification_limit_bytes")) {
            (f, l) if !f.is_empty() && !l.is_empty() => format!("{f}/{l}"),
            _ => String::new(),
        };
        let hs_ms = r
            .shape
            .handshake_us
            .map(|u| format!("{:.1}", u as f64 / 1000.0))
            .unwrap_or_default();
        rows.push(vec![
            col("input"),
            col("version"),
            col("alpn"),
            hs_ms,
            col("instant_ack"),
            col("iack_sh_gap_us"),
            flight,
            col("client_ptos"),
            col("cert_count"),
            col("cert_message_bytes"),
            opt(r.params.as_ref().map(|p| p.initial_max_data)),
            col("error"),
        ]);
    }
    let widths: Vec<usize> = (0..head.len())
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in rows {
        let cells: Vec<String> = r
            .iter()
            .zip(&widths)
            .map(|(s, w)| format!("{s:<w$}"))
            .collect();
        out += cells.join("  ").trim_end();
        out.push('\n');
    }
    out
}
