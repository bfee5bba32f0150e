//! Path events (qlog quic-events §tuple_assigned, §migration_state_updated): which
//! network tuple the connection uses, and the steps of a migration (RFC 9000 §9).

use super::json::Json;
use super::record::{begin, end};
use crate::events::MigrationPhase;
use crate::time::Instant;
use std::net::SocketAddr;

/// `quic:tuple_assigned`: tuple `tuple_id` ("" for the handshake's) goes to `remote`.
pub(super) fn tuple_assigned(
    buf: &mut Vec<u8>,
    now: Instant,
    tuple_id: u64,
    remote: SocketAddr,
    local: Option<SocketAddr>,
) {
    let mut j = begin(buf, now, "quic:tuple_assigned");
    j.key("tuple_id").str(&tuple_name(tuple_id));
    j.key("tuple_remote");
    endpoint_info(&mut j, remote);
    if let Some(local) = local {
        j.key("tuple_local");
        endpoint_info(&mut j, local);
    }
    end(j);
}

/// `quic:migration_state_updated` about the path to `remote`.
pub(super) fn migration_state_updated(
    buf: &mut Vec<u8>,
    now: Instant,
    new: MigrationPhase,
    remote: SocketAddr,
) {
    let mut j = begin(buf, now, "quic:migration_state_updated");
    j.key("new").lit(new.name());
    j.key("tuple_remote");
    endpoint_info(&mut j, remote);
    end(j);
}

/// The qlog TupleID: "" for the handshake's tuple, then the sequence number.
fn tuple_name(id: u64) -> String {
    if id == 0 {
        String::new()
    } else {
        id.to_string()
    }
}

/// TupleEndpointInfo: `ip_v4`/`port_v4` or `ip_v6`/`port_v6`.
fn endpoint_info(j: &mut Json<'_>, addr: SocketAddr) {
    j.begin_obj();
    let (ip, port) = if addr.is_ipv4() {
        ("ip_v4", "port_v4")
    } else {
        ("ip_v6", "port_v6")
    };
    j.key(ip).str(&addr.ip().to_string());
    j.key(port).u64(u64::from(addr.port()));
    j.end_obj();
}
