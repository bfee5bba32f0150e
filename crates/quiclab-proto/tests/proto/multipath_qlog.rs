//! Packet events of multipath connections name their path (qlog `header.path_id`;
//! draft-ietf-quic-multipath §2.3: a packet number belongs to its path's space): on a
//! connection with path 1 open, the client logs packets sent and received on path 0
//! and path 1, each path's packet numbers counting from 0; a connection that did not
//! negotiate multipath logs none, so single-path traces keep their bytes.

use crate::misbehaving::{connected_with, DELAY};
use crate::multipath::{config, open_second_path, payload, upload};
use quiclab_proto::events::{Event, EventSink, SharedSink, VecSink};
use quiclab_proto::PacketType;
use quiclab_proto::QlogWriter;

/// (path_id, packet number) of the client's packet_sent and packet_received events.
type Logged = (Vec<(Option<u32>, u64)>, Vec<(Option<u32>, u64)>);

fn logged(events: &[(quiclab_proto::Instant, Event)]) -> Logged {
    let (mut sent, mut received) = (Vec::new(), Vec::new());
    for (_, e) in events {
        match e {
            Event::PacketSent { header, .. } if header.ty == PacketType::OneRtt => {
                sent.push((header.path_id, header.pn.unwrap_or(u64::MAX)));
            }
            Event::PacketReceived { header, .. } if header.ty == PacketType::OneRtt => {
                received.push((header.path_id, header.pn.unwrap_or(u64::MAX)));
            }
            _ => {}
        }
    }
    (sent, received)
}

#[test]
fn packets_on_both_paths_carry_their_path_id() {
    let mut p = connected_with(config(Some(3)), config(Some(3)), 45);
    let sink = SharedSink::new(VecSink::new());
    let now = p.now;
    p.client_conn().set_event_sink(now, Box::new(sink.clone()));
    open_second_path(&mut p, DELAY * 4, DELAY * 4);
    let data = payload();
    assert_eq!(upload(&mut p, &data, |_, _| {}).len(), data.len());
    let (sent, received) = logged(&sink.lock().events);
    for path in [0, 1] {
        let on = |l: &[(Option<u32>, u64)]| l.iter().filter(|(p, _)| *p == Some(path)).count();
        assert!(on(&sent) > 10, "path {path}: {} sent", on(&sent));
        assert!(on(&received) > 0, "path {path}: {} received", on(&received));
    }
    assert!(sent.iter().all(|(p, _)| p.is_some()), "every 1-RTT packet");
    // Path 1's own packet number space starts at 0 (its PATH_CHALLENGE).
    let first_on_1 = sent.iter().find(|(p, _)| *p == Some(1));
    assert_eq!(first_on_1, Some(&(Some(1), 0)));
    // In qlog: inside the header, after the packet number.
    let mut w = QlogWriter::new(Vec::new(), "t", quiclab_proto::Side::Client, None);
    for (t, e) in &sink.lock().events {
        w.event(*t, e);
    }
    let text = String::from_utf8(w.into_inner()).unwrap();
    assert!(text.contains(r#""packet_type":"1RTT","packet_number":0,"path_id":1,"dcid""#));
}

#[test]
fn single_path_connections_log_no_path_id() {
    let mut p = connected_with(config(None), config(Some(3)), 46);
    let sink = SharedSink::new(VecSink::new());
    let now = p.now;
    p.client_conn().set_event_sink(now, Box::new(sink.clone()));
    let data = payload();
    assert_eq!(upload(&mut p, &data, |_, _| {}).len(), data.len());
    let (sent, received) = logged(&sink.lock().events);
    assert!(sent.len() > 10 && !received.is_empty());
    assert!(sent.iter().chain(&received).all(|(p, _)| p.is_none()));
    for (_, e) in &sink.lock().events {
        if let Event::PacketLost { path_id, .. } = e {
            assert_eq!(*path_id, None);
        }
    }
}
