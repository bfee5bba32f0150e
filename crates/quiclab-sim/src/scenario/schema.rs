//! JSON Schema (docs/schema/) of the scenario fields whose types live in quiclab-proto,
//! which has no schema of its own: they are described as what TOML holds, and the
//! scenario's loading checks their content.

use schemars::{json_schema, Schema, SchemaGenerator};

/// A transport config table (`[client]`, `[server]`, a flow's overrides):
/// TransportConfig's keys, checked when the scenario loads.
pub(crate) fn transport_table(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "object",
        "description": "TransportConfig keys (quiclab-proto); absent keys take its defaults"
    })
}

/// A name quiclab-proto parses (a certificate type, cipher suite or group).
pub(crate) fn proto_name(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "string" })
}
