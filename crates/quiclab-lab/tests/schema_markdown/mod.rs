//! The user guide's key references (docs/book/src/reference/{scenario,plan}-keys.md),
//! written from the JSON Schemas so they cannot drift from the serde types: one section
//! per type (the file's top level, then every `$defs` entry), one table row per key.

use serde_json::{Map, Value};
use std::fmt::Write;

/// The reference page for one schema; `title` heads it, `source` names the schema file.
pub fn page(schema: &Value, title: &str, source: &str) -> String {
    let mut out = format!(
        "# {title}\n\n<!-- Generated from docs/schema/{source} by `QUICLAB_UPDATE_SCHEMA=1 \
         cargo test --release -p quiclab-lab --test schema`; do not edit. -->\n\n\
         Every key the file accepts, by table. Unknown keys are errors. A type in a link is \
         described in its own section below. Generated from \
         [`docs/schema/{source}`](../../../schema/{source}).\n"
    );
    if title == "Scenario keys" {
        out.push_str(
            "\nThe `client` and `server` tables (and a flow's) take the [transport \
             keys](transport-keys.md).\n",
        );
    }
    section(&mut out, "Top level", schema);
    if let Some(defs) = schema.get("$defs").and_then(Value::as_object) {
        for (name, def) in defs {
            section(&mut out, name, def);
        }
    }
    out
}

fn section(out: &mut String, name: &str, def: &Value) {
    let _ = write!(out, "\n## {name}\n\n");
    if let Some(d) = text(def, "description") {
        let _ = write!(out, "{d}\n\n");
    }
    if let Some(props) = def.get("properties").and_then(Value::as_object) {
        table(out, props, def);
        return;
    }
    if let Some(variants) = def.get("oneOf").and_then(Value::as_array) {
        out.push_str("One of:\n\n");
        for variant in variants {
            let _ = write!(out, "- {}", variant_name(variant));
            if let Some(d) = text(variant, "description") {
                let _ = write!(out, ": {d}");
            }
            out.push('\n');
        }
        for variant in variants {
            if let Some(props) = variant.get("properties").and_then(Value::as_object) {
                let _ = write!(out, "\n### {}\n\n", variant_name(variant));
                table(out, props, variant);
            }
        }
        return;
    }
    let _ = writeln!(out, "A value of type {}.", type_of(def));
}

/// A variant of a tagged enum by its tag (`kind = "bulk"`), or a plain value.
fn variant_name(variant: &Value) -> String {
    if let Some(props) = variant.get("properties").and_then(Value::as_object) {
        for (key, p) in props {
            if let Some(c) = p.get("const") {
                return format!("`{key} = {c}`");
            }
        }
        return "a table".into();
    }
    if let Some(c) = variant.get("const") {
        return format!("`{c}`");
    }
    if let Some(e) = variant.get("enum").and_then(Value::as_array) {
        let names: Vec<String> = e.iter().map(|v| format!("`{v}`")).collect();
        return names.join(", ");
    }
    type_of(variant)
}

/// One row per key of `props`; `owner` (the object schema) says which are required.
fn table(out: &mut String, props: &Map<String, Value>, owner: &Value) {
    let required: Vec<&str> = owner
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    out.push_str("| key | type | default | meaning |\n|---|---|---|---|\n");
    for (key, p) in props {
        let key = if required.contains(&key.as_str()) {
            format!("`{key}` (required)")
        } else {
            format!("`{key}`")
        };
        let default = p.get("default").map(short_json).unwrap_or_default();
        let meaning = text(p, "description").unwrap_or_default();
        let _ = writeln!(
            out,
            "| {key} | {} | {} | {} |",
            cell(&type_of(p)),
            cell(&default),
            cell(&meaning)
        );
    }
}

/// A type in words: a `$ref` becomes a link to its section.
fn type_of(v: &Value) -> String {
    if let Some(r) = v.get("$ref").and_then(Value::as_str) {
        let name = r.rsplit('/').next().unwrap_or(r);
        return format!("[{name}](#{})", name.to_lowercase());
    }
    if let Some(c) = v.get("const") {
        return format!("`{c}`");
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(alts) = v.get(key).and_then(Value::as_array) {
            let words: Vec<String> = alts.iter().map(type_of).collect();
            return words.join(" or ");
        }
    }
    if let Some(e) = v.get("enum").and_then(Value::as_array) {
        let names: Vec<String> = e.iter().map(|x| format!("`{x}`")).collect();
        return names.join(" or ");
    }
    let kind = match v.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => {
            let ts: Vec<&str> = ts.iter().filter_map(Value::as_str).collect();
            ts.join(" or ")
        }
        _ => "any".into(),
    };
    if let Some(items) = v.get("items") {
        return kind.replace("array", &format!("array of {}", type_of(items)));
    }
    if let Some(extra) = v.get("additionalProperties").filter(|x| x.is_object()) {
        return kind.replace("object", &format!("table of {}", type_of(extra)));
    }
    kind
}

fn text(v: &Value, key: &str) -> Option<String> {
    let t = v.get(key)?.as_str()?;
    Some(t.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// A default as compact JSON; a long one (a whole table) is left to the schema.
fn short_json(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 {
        "(a table: see the schema)".into()
    } else {
        format!("`{s}`")
    }
}

/// Text for one table cell: pipes escaped (also inside code spans), one line.
fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// The transport keys page: `TransportConfig` (a scenario's `[client]`/`[server]`, a
/// flow's `client`/`server`, the CLI's `--config`) has no JSON Schema, so the page shows
/// its defaults and each controller's, serialized by serde: every key, its default.
pub fn transport_page() -> String {
    use quiclab_proto::cc::{BbrConfig, CongestionControl, CubicConfig, FixedConfig, PragueConfig};
    use quiclab_proto::TransportConfig;
    let mut out = String::from(
        "# Transport keys\n\n<!-- Generated from quiclab-proto's TransportConfig by \
         `QUICLAB_UPDATE_SCHEMA=1 cargo test --release -p quiclab-lab --test schema`; do \
         not edit. -->\n\n\
         The keys of a scenario's `[client]` and `[server]` tables, a flow's `client` and \
         `server` tables and `quiclab client|server --config FILE`: every key with its \
         default, as serde writes it. Unknown keys are errors; what each key means is in \
         its doc comment in `crates/quiclab-proto/src/config.rs` and `src/cc/`. An absent \
         optional key (one with no default value) is not shown.\n\n\
         ## Defaults\n\n```toml\n",
    );
    out += &toml_text(&TransportConfig::default());
    out += "```\n";
    let controllers = [
        ("cubic", CongestionControl::Cubic(CubicConfig::default())),
        ("bbr", CongestionControl::Bbr(BbrConfig::default())),
        ("fixed", CongestionControl::Fixed(FixedConfig::default())),
        ("prague", CongestionControl::Prague(PragueConfig::default())),
    ];
    for (name, cc) in controllers {
        let _ = write!(
            out,
            "\n## `congestion_control = {{ algorithm = \"{name}\" }}`\n\n\
             Its keys and defaults (`none` has no keys; `new_reno`'s are above).\n\n```toml\n"
        );
        out += &toml_text(&Wrapper {
            congestion_control: cc,
        });
        out += "```\n";
    }
    out += &multipath_section();
    out
}

/// The `multipath` table, left out of the defaults above (not written at its default).
fn multipath_section() -> String {
    use quiclab_proto::{AckPath, CoupledCongestionControl, MultipathConfig, MultipathScheduler};
    let mut out = String::from(
        "\n## `multipath`\n\n\
         The multipath extension (draft-ietf-quic-multipath; `config/multipath.rs`), off by \
         default and not written at its default: `enabled` (default false), `max_path_id` \
         (default 3, at most 255), `scheduler` (default \"min_rtt\", or \"round_robin\", or \
         \"redundant\": every packet of stream data also copied onto each other path not \
         marked backup, through a bounded queue per path, for latency at the cost of \
         capacity; not written at its default; `src/multipath_sched/`), `coupled`, `ack_path` \
         and `abandon_after_ptos` (below). For example:\n\n```toml\n",
    );
    out += &toml_text(&MultipathWrapper {
        multipath: MultipathConfig {
            enabled: true,
            scheduler: MultipathScheduler::RoundRobin,
            coupled: CoupledCongestionControl::Lia,
            ack_path: AckPath::Same,
            ..MultipathConfig::default()
        },
    });
    out += "```\n";
    out += MULTIPATH_KEYS;
    out
}

/// The coupled-controller and ACK-path keys (`config/multipath.rs`).
const MULTIPATH_KEYS: &str = r#"
- `coupled` (default "none"; not written at its default): coupled congestion control across the paths. "none": each path runs `congestion_control` on its own. "lia": RFC 6356's Linked Increases Algorithm; every path runs NewReno (the configured NewReno's knobs, or NewReno's defaults when `congestion_control` names another algorithm: LIA replaces CUBIC or BBR, which favours the single-path flows it shares a bottleneck with), and in congestion avoidance an ACK of `bytes_acked` on path i grows cwnd_i by min(alpha · bytes_acked · MSS / cwnd_total, bytes_acked · MSS / cwnd_i), alpha = cwnd_total · max_i(cwnd_i / rtt_i²) / (Σ_i cwnd_i / rtt_i)², over path 0 (unless abandoned) and every validated path not abandoned, with smoothed RTTs. Slow start and the halving on loss stay per path. On two equal paths alpha = 1/2: the total window grows MSS/2 per RTT (one Reno flow: MSS; two uncoupled paths: 2 MSS). "olia": the Opportunistic Linked Increases Algorithm (Khalili et al., IEEE/ACM ToN 2013; draft-khalili-mptcp-congestion-control; `cc/olia.rs`), on NewReno as LIA: an ACK of `bytes_acked` on path r changes cwnd_r by bytes_acked · MSS · ((cwnd_r / rtt_r²) / (Σ_p cwnd_p / rtt_p)² + alpha_r / cwnd_r), where alpha_r moves window from the paths with the largest window (in whole packets) to the best paths (the most bytes acknowledged between losses per rtt², counted per path over the last two loss intervals): 1 / (n · |best not largest|) on those, -1 / (n · |largest|) on the largest, 0 otherwise or when every best path is a largest one. On two equal paths alpha is 0 and the total window grows MSS/2 per RTT, as LIA.
- `ack_path` (default "any"; not written at its default): which path carries each path's acknowledgments (draft §3.1: "can be returned on any path"). "any": every ACK and PATH_ACK rides on path 0's packets (a path's RTT samples then include path 0's return delay, §5.4). "same": each path's PATH_ACK on that path. "min_rtt": all of them on the path with the lowest smoothed RTT (path 0's as PATH_ACK with path ID 0). A carrier that cannot send (unvalidated, abandoned, no connection ID) falls back to path 0, or once path 0 is abandoned to the path that carries its frames (the lowest validated path above 0). Packets that carry only PATH_ACKs are not ack-eliciting.
- `abandon_after_ptos` (default none: never; not written at its default; at least 2): abandon a path on our own (PATH_ABANDON with PATH_UNSTABLE_OR_POOR, draft §3.4: "implicit signals such as an idle time-out ... or packet losses") once this many probe timeouts in a row expired on it, path 0 included, while another path is usable and has not failed (fewer than 2 PTOs in a row, or failed only because this path carries its acknowledgments, as path 0 does under `ack_path = "any"`). Without it an endpoint not told that an interface went down keeps the dead path; under `ack_path = "any"` a dead path 0 then stalls every path, whose PATH_ACKs it carried.
"#;

#[derive(serde::Serialize)]
struct Wrapper {
    congestion_control: quiclab_proto::cc::CongestionControl,
}

#[derive(serde::Serialize)]
struct MultipathWrapper {
    multipath: quiclab_proto::MultipathConfig,
}

/// TOML text of a serializable value (a failure shows in the page and so in its diff).
fn toml_text<T: serde::Serialize>(value: &T) -> String {
    toml::to_string(value).unwrap_or_else(|e| format!("# not serializable: {e}\n"))
}
