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

#[cfg(test)]
mod tests {
    use crate::events::{Event, EventSink, MigrationPhase};
    use crate::qlog::QlogWriter;
    use crate::time::Instant;
    use crate::wire::Side;
    use serde_json::Value;

    fn records(events: &[Event]) -> Vec<Value> {
        let mut w = QlogWriter::new(Vec::new(), "t", Side::Server, None);
        for e in events {
            w.event(Instant::from_millis(5), e);
        }
        let bytes = w.into_inner();
        let text = String::from_utf8(bytes).unwrap();
        text.split('\u{1e}')
            .filter(|r| !r.trim().is_empty())
            .map(|r| serde_json::from_str(r).unwrap())
            .collect()
    }

    #[test]
    fn path_events_use_the_drafts_names_and_fields() {
        let recs = records(&[
            Event::TupleAssigned {
                tuple_id: 1,
                remote: "192.0.2.1:4433".parse().unwrap(),
                local: Some("[2001:db8::1]:5000".parse().unwrap()),
            },
            Event::MigrationStateUpdated {
                new: MigrationPhase::ProbingStarted,
                remote: "192.0.2.2:1".parse().unwrap(),
            },
        ]);
        let tuple = recs
            .iter()
            .find(|r| r["name"] == "quic:tuple_assigned")
            .expect("tuple_assigned");
        let data = &tuple["data"];
        assert_eq!(data["tuple_id"], "1");
        assert_eq!(data["tuple_remote"]["ip_v4"], "192.0.2.1");
        assert_eq!(data["tuple_remote"]["port_v4"], 4433);
        assert_eq!(data["tuple_local"]["ip_v6"], "2001:db8::1");
        assert_eq!(data["tuple_local"]["port_v6"], 5000);
        let m = recs
            .iter()
            .find(|r| r["name"] == "quic:migration_state_updated")
            .expect("migration_state_updated");
        assert_eq!(m["data"]["new"], "probing_started");
        assert_eq!(m["data"]["tuple_remote"]["port_v4"], 1);
    }
}
