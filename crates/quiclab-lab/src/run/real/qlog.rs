//! A client's qlog read into the times the simulator reports for a flow, so a real
//! run's metrics have the same paths (`flows[0].ttfb_s`, ...) as a simulated one.
//!
//! Two encodings are read: JSON-SEQ (`.sqlog`, quiclab and quic-go: records after 0x1E;
//! the header record has no `name` and is skipped) and the JSON form (`.qlog`, aioquic:
//! `traces[0].events`). Event names are matched on what follows the category
//! (`quic:packet_sent` and `transport:packet_sent` alike; quiclab's
//! `quic:recovery_metrics_updated`, aioquic's and quic-go's `recovery:metrics_updated`).
//! quic-go (v0.65, draft-14 schema) logs only the changed fields in each
//! `metrics_updated`: its first ones carry no RTT, so the first with both
//! `smoothed_rtt` and `rtt_variance` is the first sample, as for the others. Times are
//! relative to the client's first sent packet (its first Initial), which is the
//! simulator's flow start.

use serde_json::Value;
use std::path::{Path, PathBuf};

/// RFC 9002 §6.1.2 kGranularity, ms: the floor of 4 x rttvar in the PTO.
const GRANULARITY_MS: f64 = 1.0;

/// What a client's qlog tells about one GET.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClientTimes {
    /// The client's first 1-RTT packet: it has the 1-RTT keys, i.e. it completed the
    /// handshake (seconds from its first packet).
    pub handshake_done_s: Option<f64>,
    /// The first response byte: the first received STREAM frame with data on a
    /// client-initiated bidirectional stream.
    pub ttfb_s: Option<f64>,
    /// The response's FIN.
    pub ttlb_s: Option<f64>,
    /// The PTO right after the first RTT sample: smoothed_rtt + max(4 rttvar, 1 ms)
    /// from the first recovery metrics with an RTT (RFC 9002 §6.2.1; no max_ack_delay
    /// in the handshake spaces): the seed's "first PTO".
    pub first_sample_pto_ms: Option<f64>,
    /// When the client first resent its ClientHello (an Initial with CRYPTO at offset
    /// 0 after the first): its first PTO firing, as seen on the wire. `None` if it
    /// never did.
    pub first_retransmit_ms: Option<f64>,
    /// Bytes of response data received (stream frames on bidirectional streams).
    pub response_bytes: u64,
    /// Some sent packet lists its frames. Without them (quinn logs packets only) a
    /// retransmitted ClientHello cannot be seen here, and the caller reads
    /// `first_retransmit_ms` from the capture.
    pub sent_frames_logged: bool,
}

/// The one qlog file (`*.sqlog` or `*.qlog`) in `dir`; `None` if there is none (the
/// caller may fall back to the capture); several are an error.
pub fn find_qlog(dir: &Path) -> Result<Option<PathBuf>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut found: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "sqlog" || x == "qlog"))
        .collect();
    found.sort();
    match found.len() {
        0 => Ok(None),
        1 => Ok(Some(found.remove(0))),
        n => Err(format!(
            "{}: {n} qlog files; expected one connection",
            dir.display()
        )),
    }
}

/// The events of a qlog file, in file order.
pub fn read_events(path: &Path) -> Result<Vec<Value>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let bad = |e: serde_json::Error| format!("{}: {e}", path.display());
    if bytes.first() == Some(&0x1e) {
        let mut events = Vec::new();
        for rec in bytes.split(|b| *b == 0x1e).filter(|r| !r.is_empty()) {
            let v: Value = serde_json::from_slice(rec).map_err(bad)?;
            if v.get("name").is_some() {
                events.push(v);
            }
        }
        return Ok(events);
    }
    let v: Value = serde_json::from_slice(&bytes).map_err(bad)?;
    v.pointer("/traces/0/events")
        .and_then(Value::as_array)
        .cloned()
        .ok_or_else(|| format!("{}: no traces[0].events", path.display()))
}

fn event_name(e: &Value) -> &str {
    let name = e.get("name").and_then(Value::as_str).unwrap_or("");
    name.rsplit(':').next().unwrap_or(name)
}

fn packet_type(e: &Value) -> &str {
    e.pointer("/data/header/packet_type")
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn frames(e: &Value) -> impl Iterator<Item = &Value> {
    e.pointer("/data/frames")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn is_frame(f: &Value, ty: &str) -> bool {
    f.get("frame_type").and_then(Value::as_str) == Some(ty)
}

fn u64_of(f: &Value, key: &str) -> Option<u64> {
    f.get(key).and_then(Value::as_u64)
}

/// A STREAM frame on a client-initiated bidirectional stream (the GET's response).
fn response_frame(f: &Value) -> bool {
    is_frame(f, "stream") && u64_of(f, "stream_id").is_some_and(|id| id % 4 == 0)
}

/// The times of one client connection's events (see [`ClientTimes`]).
pub fn client_times(events: &[Value]) -> Result<ClientTimes, String> {
    let time = |e: &Value| e.get("time").and_then(Value::as_f64);
    let t0 = events
        .iter()
        .find(|e| event_name(e) == "packet_sent")
        .and_then(time)
        .ok_or("the qlog has no sent packet")?;
    let mut out = ClientTimes::default();
    let mut hello_sent = false;
    let mut received = false;
    for e in events {
        let Some(t) = time(e).map(|t| t - t0) else {
            continue;
        };
        match event_name(e) {
            "packet_sent" => {
                let ty = packet_type(e);
                out.sent_frames_logged |= e.pointer("/data/frames").is_some_and(Value::is_array);
                if ty == "1RTT" && out.handshake_done_s.is_none() {
                    out.handshake_done_s = Some(t / 1e3);
                }
                let hello = ty == "initial"
                    && frames(e).any(|f| is_frame(f, "crypto") && u64_of(f, "offset") == Some(0));
                if hello && hello_sent && out.first_retransmit_ms.is_none() {
                    out.first_retransmit_ms = Some(t);
                }
                hello_sent |= hello;
            }
            "packet_received" => {
                received = true;
                for f in frames(e).filter(|f| response_frame(f)) {
                    let len = u64_of(f, "length").unwrap_or(0);
                    out.response_bytes += len;
                    if len > 0 && out.ttfb_s.is_none() {
                        out.ttfb_s = Some(t / 1e3);
                    }
                    if f.get("fin").and_then(Value::as_bool) == Some(true) {
                        out.ttlb_s.get_or_insert(t / 1e3);
                    }
                }
            }
            "metrics_updated" | "recovery_metrics_updated"
                if received && out.first_sample_pto_ms.is_none() =>
            {
                let ms = |k: &str| e.pointer(&format!("/data/{k}")).and_then(Value::as_f64);
                if let (Some(srtt), Some(var)) = (ms("smoothed_rtt"), ms("rtt_variance")) {
                    out.first_sample_pto_ms = Some(srtt + (4.0 * var).max(GRANULARITY_MS));
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sent(t: f64, ty: &str, frames: Value) -> Value {
        json!({"time": t, "name": "transport:packet_sent",
               "data": {"header": {"packet_type": ty}, "frames": frames}})
    }

    #[test]
    fn times_from_events() {
        let hello = json!([{"frame_type": "crypto", "offset": 0, "length": 300}]);
        let events = vec![
            sent(1000.0, "initial", hello.clone()),
            json!({"time": 1030.0, "name": "transport:packet_received",
                   "data": {"header": {"packet_type": "initial"}, "frames": [{"frame_type": "ack"}]}}),
            json!({"time": 1030.0, "name": "recovery:metrics_updated",
                   "data": {"smoothed_rtt": 30.0, "rtt_variance": 15.0}}),
            sent(1090.0, "initial", hello),
            sent(1100.0, "1RTT", json!([])),
            json!({"time": 1130.0, "name": "quic:packet_received",
                   "data": {"header": {"packet_type": "1RTT"}, "frames": [
                       {"frame_type": "stream", "stream_id": 3, "length": 10, "fin": false},
                       {"frame_type": "stream", "stream_id": 0, "length": 100, "fin": true}]}}),
        ];
        let t = client_times(&events).unwrap();
        assert_eq!(t.first_sample_pto_ms, Some(90.0));
        assert_eq!(t.first_retransmit_ms, Some(90.0));
        assert_eq!(t.handshake_done_s, Some(0.1));
        assert_eq!(t.ttfb_s, Some(0.13));
        assert_eq!(t.ttlb_s, Some(0.13));
        assert_eq!(t.response_bytes, 100);
        assert!(t.sent_frames_logged);
        assert!(client_times(&[]).is_err());
    }

    /// quinn 0.11 logs its initial estimate (333 ms, var 166.5 ms) with its first sent
    /// packet, and no frames: the first PTO is from the metrics after the first received
    /// packet, and the caller is told that no frames were logged.
    #[test]
    fn metrics_before_any_received_packet_are_no_sample() {
        let bare = |t: f64, name: &str| json!({"time": t, "name": name, "data": {"header": {"packet_type": "initial"}}});
        let metrics = |t: f64, srtt: f64, var: f64| {
            json!({"time": t, "name": "recovery:metrics_updated",
                   "data": {"smoothed_rtt": srtt, "rtt_variance": var}})
        };
        let events = vec![
            bare(0.5, "transport:packet_sent"),
            metrics(0.6, 333.0, 166.5),
            bare(20.4, "transport:packet_received"),
            metrics(20.5, 20.0, 10.0),
        ];
        let t = client_times(&events).unwrap();
        assert_eq!(t.first_sample_pto_ms, Some(60.0));
        assert!(!t.sent_frames_logged);
        assert_eq!(t.first_retransmit_ms, None);
    }

    /// Records as quic-go v0.65 writes them (abridged from a real client qlog): the
    /// JSON-SEQ header, metrics updates without an RTT before the first sample, and
    /// `key_phase_bit` / `datagram_payload_checksum` fields the reader ignores.
    #[test]
    fn quic_go_records() {
        let text = [
            r#"{"file_schema":"urn:ietf:params:qlog:file:sequential","title":"quic-go qlog","trace":{"vantage_point":{"type":"client"}}}"#,
            r#"{"time":1.02,"name":"transport:packet_sent","data":{"header":{"packet_type":"initial","packet_number":0,"version":"1"},"datagram_payload_checksum":1,"frames":[{"frame_type":"crypto","offset":0,"length":1229}]}}"#,
            r#"{"time":1.03,"name":"recovery:metrics_updated","data":{"congestion_window":40960,"bytes_in_flight":1280,"packets_in_flight":1}}"#,
            r#"{"time":21.1,"name":"transport:packet_received","data":{"header":{"packet_type":"initial","packet_number":0},"frames":[{"frame_type":"ack","acked_ranges":[[0,0]]}]}}"#,
            r#"{"time":21.2,"name":"recovery:metrics_updated","data":{"min_rtt":20.2,"smoothed_rtt":20.2,"latest_rtt":20.2,"rtt_variance":10.1,"congestion_window":40960}}"#,
            r#"{"time":71.5,"name":"transport:packet_sent","data":{"header":{"packet_type":"1RTT","packet_number":4,"key_phase_bit":false},"frames":[{"frame_type":"stream","stream_id":0,"offset":0,"length":16,"fin":true}]}}"#,
            r#"{"time":91.6,"name":"transport:packet_received","data":{"header":{"packet_type":"1RTT","packet_number":1,"key_phase_bit":false},"frames":[{"frame_type":"stream","stream_id":0,"offset":0,"length":1176}]}}"#,
            r#"{"time":91.7,"name":"transport:packet_received","data":{"header":{"packet_type":"1RTT","packet_number":2},"frames":[{"frame_type":"stream","stream_id":0,"offset":1176,"length":920,"fin":true}]}}"#,
        ]
        .iter()
        .map(|r| format!("\u{1e}{r}\n"))
        .collect::<String>();
        let path =
            std::env::temp_dir().join(format!("quiclab-qlog-quic-go-{}.sqlog", std::process::id()));
        std::fs::write(&path, text).unwrap();
        let events = read_events(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        assert_eq!(events.len(), 7, "the header record is not an event");
        let t = client_times(&events).unwrap();
        let pto = t.first_sample_pto_ms.unwrap();
        assert!((pto - 60.6).abs() < 1e-9, "{pto}");
        assert!((t.handshake_done_s.unwrap() - 0.07048).abs() < 1e-9);
        assert!((t.ttfb_s.unwrap() - 0.09058).abs() < 1e-9);
        assert!((t.ttlb_s.unwrap() - 0.09068).abs() < 1e-9);
        assert_eq!(t.response_bytes, 2096);
        assert_eq!(t.first_retransmit_ms, None);
    }
}
