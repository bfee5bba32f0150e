//! Writes [`H3LogEvent`]s as a qlog JSON-SEQ file (RFC 7464 records, qlog main schema
//! `JSON-SEQ` serialization) with the HTTP/3 event names and fields of
//! draft-ietf-quic-qlog-h3-events. Times are milliseconds of the driver's clock.

use crate::log::{FrameInfo, H3LogEvent, H3Sink, Owner};
use quiclab_proto::Instant;
use std::io::Write;

/// A qlog writer for one connection's HTTP/3 events.
pub struct H3QlogWriter<W: Write + Send> {
    out: W,
    failed: bool,
}

/// A JSON string literal, escaped by serde_json (RFC 8259 §7).
fn esc(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

fn owner(o: Owner) -> &'static str {
    match o {
        Owner::Local => "local",
        Owner::Remote => "remote",
    }
}

fn settings_json(s: &[(u64, u64)]) -> String {
    let items: Vec<String> = s
        .iter()
        .map(|(id, v)| {
            let name = match id {
                0x01 => "settings_qpack_max_table_capacity".to_string(),
                0x06 => "settings_max_field_section_size".to_string(),
                0x07 => "settings_qpack_blocked_streams".to_string(),
                _ => format!("unknown_{id:#x}"),
            };
            format!("{{\"name\":{},\"value\":{v}}}", esc(&name))
        })
        .collect();
    format!("[{}]", items.join(","))
}

fn frame_json(f: &FrameInfo) -> String {
    match f {
        FrameInfo::Data { .. } => "{\"frame_type\":\"data\"}".into(),
        FrameInfo::Headers { fields } => {
            let h: Vec<String> = fields
                .iter()
                .map(|(n, v)| format!("{{\"name\":{},\"value\":{}}}", esc(n), esc(v)))
                .collect();
            format!(
                "{{\"frame_type\":\"headers\",\"headers\":[{}]}}",
                h.join(",")
            )
        }
        FrameInfo::Settings { settings } => format!(
            "{{\"frame_type\":\"settings\",\"settings\":{}}}",
            settings_json(settings)
        ),
        FrameInfo::GoAway { id } => format!("{{\"frame_type\":\"goaway\",\"id\":{id}}}"),
        FrameInfo::CancelPush { id } => {
            format!("{{\"frame_type\":\"cancel_push\",\"push_id\":{id}}}")
        }
        FrameInfo::MaxPushId { id } => {
            format!("{{\"frame_type\":\"max_push_id\",\"push_id\":{id}}}")
        }
        FrameInfo::PushPromise { id } => {
            format!("{{\"frame_type\":\"push_promise\",\"push_id\":{id}}}")
        }
        FrameInfo::Unknown { frame_type } => {
            format!("{{\"frame_type\":\"unknown\",\"frame_type_value\":{frame_type}}}")
        }
    }
}

/// The qlog (name, data) of an event.
pub fn event_json(ev: &H3LogEvent) -> (&'static str, String) {
    match ev {
        H3LogEvent::ParametersSet { owner: o, settings } => (
            "http:parameters_set",
            format!(
                "{{\"owner\":\"{}\",\"settings\":{}}}",
                owner(*o),
                settings_json(settings)
            ),
        ),
        H3LogEvent::StreamTypeSet {
            owner: o,
            stream,
            stream_type,
        } => (
            "http:stream_type_set",
            format!(
                "{{\"owner\":\"{}\",\"stream_id\":{stream},\"stream_type\":\"{stream_type}\"}}",
                owner(*o)
            ),
        ),
        H3LogEvent::FrameCreated {
            stream,
            length,
            frame,
        } => (
            "http:frame_created",
            format!(
                "{{\"stream_id\":{stream},\"length\":{length},\"frame\":{}}}",
                frame_json(frame)
            ),
        ),
        H3LogEvent::FrameParsed {
            stream,
            length,
            frame,
        } => (
            "http:frame_parsed",
            format!(
                "{{\"stream_id\":{stream},\"length\":{length},\"frame\":{}}}",
                frame_json(frame)
            ),
        ),
    }
}

impl<W: Write + Send> H3QlogWriter<W> {
    /// Starts the file with the qlog header record.
    pub fn new(mut out: W, title: &str, vantage: &str) -> Self {
        let header = format!(
            "\u{1e}{{\"qlog_version\":\"0.4\",\"qlog_format\":\"JSON-SEQ\",\"title\":{},\
             \"trace\":{{\"vantage_point\":{{\"type\":{}}},\"common_fields\":{{\"time_format\":\"relative_to_epoch\",\
             \"reference_time\":{{\"clock_type\":\"monotonic\",\"epoch\":\"unknown\"}}}}}}}}\n",
            esc(title),
            esc(vantage)
        );
        let failed = out.write_all(header.as_bytes()).is_err();
        H3QlogWriter { out, failed }
    }
}

impl<W: Write + Send> H3Sink for H3QlogWriter<W> {
    fn event(&mut self, now: Instant, ev: &H3LogEvent) {
        if self.failed {
            return;
        }
        let (name, data) = event_json(ev);
        let ms = now.as_millis_f64();
        let line = format!("\u{1e}{{\"time\":{ms:.3},\"name\":\"{name}\",\"data\":{data}}}\n");
        self.failed = self.out.write_all(line.as_bytes()).is_err();
    }
}

impl<W: Write + Send> Drop for H3QlogWriter<W> {
    fn drop(&mut self) {
        let _ = self.out.flush();
    }
}
