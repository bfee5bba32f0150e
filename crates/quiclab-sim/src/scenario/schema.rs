//! JSON Schema (docs/schema/) of the scenario fields whose types live in quiclab-proto,
//! which has no schema of its own: they are described as what TOML holds, and the
//! scenario's loading checks their content.

use schemars::{json_schema, Schema, SchemaGenerator};

/// A transport config table (`[client]`, `[server]`, a flow's overrides):
/// TransportConfig's keys, checked when the scenario loads, and the endpoint's `host`
/// table (`host/config.rs`), typed here.
pub(crate) fn transport_table(g: &mut SchemaGenerator) -> Schema {
    let host = g.subschema_for::<crate::host::HostConfig>();
    json_schema!({
        "type": "object",
        "description": "TransportConfig keys (quiclab-proto); absent keys take its defaults. `host`: the endpoint's host model (CPU, timers, socket buffers; guide/hosts.md), absent = an ideal host",
        "properties": { "host": host }
    })
}

/// A name quiclab-proto parses (a certificate type, cipher suite or group).
pub(crate) fn proto_name(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "string" })
}

/// `packet_protection`: quiclab-proto's `PacketProtection` by its serde names.
pub(crate) fn packet_protection(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "string", "enum": ["aead", "checksum"], "default": "aead" })
}
