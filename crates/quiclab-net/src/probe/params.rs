//! The server's transport parameters (RFC 9000 §18.2 and the extensions quiclab
//! decodes) as `name=value` pairs, for the table, CSV and JSON. Values the RFC
//! defaults when absent are listed with their (default) value; optional ones only when
//! present. Parameters quiclab's decoder does not know (GREASE, vendor ones) are
//! skipped by the decoder, so they do not appear.

use quiclab_proto::TransportParameters;
use std::net::{Ipv4Addr, Ipv6Addr};

/// `(name, value)` in RFC 9000 §18.2 order, then the extensions.
pub fn pairs(p: &TransportParameters) -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = Vec::new();
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    if let Some(c) = &p.original_destination_connection_id {
        out.push(("original_destination_connection_id", c.to_string()));
    }
    out.push(("max_idle_timeout", p.max_idle_timeout.to_string()));
    if let Some(t) = &p.stateless_reset_token {
        out.push(("stateless_reset_token", hex(t)));
    }
    let ints = [
        ("max_udp_payload_size", p.max_udp_payload_size),
        ("initial_max_data", p.initial_max_data),
        (
            "initial_max_stream_data_bidi_local",
            p.initial_max_stream_data_bidi_local,
        ),
        (
            "initial_max_stream_data_bidi_remote",
            p.initial_max_stream_data_bidi_remote,
        ),
        ("initial_max_stream_data_uni", p.initial_max_stream_data_uni),
        ("initial_max_streams_bidi", p.initial_max_streams_bidi),
        ("initial_max_streams_uni", p.initial_max_streams_uni),
        ("ack_delay_exponent", p.ack_delay_exponent),
        ("max_ack_delay", p.max_ack_delay),
    ];
    out.extend(ints.iter().map(|(n, v)| (*n, v.to_string())));
    out.push((
        "disable_active_migration",
        p.disable_active_migration.to_string(),
    ));
    if let Some(a) = &p.preferred_address {
        let v4 = a
            .ipv4
            .map(|(ip, port)| format!("{}:{port}", Ipv4Addr::from(ip)));
        let v6 = a
            .ipv6
            .map(|(ip, port)| format!("[{}]:{port}", Ipv6Addr::from(ip)));
        let addrs: Vec<String> = v4.into_iter().chain(v6).collect();
        out.push(("preferred_address", addrs.join(" ")));
    }
    out.push((
        "active_connection_id_limit",
        p.active_connection_id_limit.to_string(),
    ));
    if let Some(c) = &p.initial_source_connection_id {
        out.push(("initial_source_connection_id", c.to_string()));
    }
    if let Some(c) = &p.retry_source_connection_id {
        out.push(("retry_source_connection_id", c.to_string()));
    }
    if let Some(v) = p.max_datagram_frame_size {
        out.push(("max_datagram_frame_size", v.to_string())); // RFC 9221 §3
    }
    if let Some(v) = p.min_ack_delay {
        out.push(("min_ack_delay", v.to_string())); // draft-ietf-quic-ack-frequency
    }
    if let Some(vi) = &p.version_information {
        // RFC 9368 §3: chosen, then available versions.
        let avail: Vec<String> = vi.available.iter().map(|v| format!("{v:#x}")).collect();
        out.push((
            "version_information",
            format!("{:#x}/{}", vi.chosen, avail.join(" ")),
        ));
    }
    if let Some(v) = p.initial_max_path_id {
        out.push(("initial_max_path_id", v.to_string())); // draft-ietf-quic-multipath
    }
    out
}

/// `name=value;name=value` (the CSV's and table's form).
pub fn joined(p: &TransportParameters) -> String {
    pairs(p)
        .iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join(";")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_optionals() {
        let mut p = TransportParameters {
            initial_max_data: 12345,
            ..TransportParameters::default()
        };
        let s = joined(&p);
        assert!(s.contains("initial_max_data=12345"), "{s}");
        assert!(s.contains("max_ack_delay=25"), "{s}");
        assert!(!s.contains("max_datagram_frame_size"), "{s}");
        p.max_datagram_frame_size = Some(65535);
        assert!(joined(&p).contains("max_datagram_frame_size=65535"));
    }
}
