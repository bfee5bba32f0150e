//! HTTP/3 events for observability (the qlog HTTP/3 event schema,
//! draft-ietf-quic-qlog-h3-events): what a [`crate::H3Connection`] reports to an
//! optional [`H3Sink`], stamped with the driver's time. No sink, no cost.

use quiclab_proto::Instant;

/// Which side did something.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    Local,
    Remote,
}

/// A frame as logged (payload summarized).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FrameInfo {
    Data {
        length: u64,
    },
    /// Decoded fields (name, value), lossily as text.
    Headers {
        fields: Vec<(String, String)>,
    },
    Settings {
        settings: Vec<(u64, u64)>,
    },
    GoAway {
        id: u64,
    },
    CancelPush {
        id: u64,
    },
    MaxPushId {
        id: u64,
    },
    PushPromise {
        id: u64,
    },
    Unknown {
        frame_type: u64,
    },
}

/// An HTTP/3 event (qlog `http:` category).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum H3LogEvent {
    /// `http:parameters_set`.
    ParametersSet {
        owner: Owner,
        settings: Vec<(u64, u64)>,
    },
    /// `http:stream_type_set`: "control", "request", "push", "qpack_encode",
    /// "qpack_decode" or "unknown".
    StreamTypeSet {
        owner: Owner,
        stream: u64,
        stream_type: &'static str,
    },
    /// `http:frame_created`.
    FrameCreated {
        stream: u64,
        length: u64,
        frame: FrameInfo,
    },
    /// `http:frame_parsed`.
    FrameParsed {
        stream: u64,
        length: u64,
        frame: FrameInfo,
    },
}

/// Receives a connection's HTTP/3 events in order.
pub trait H3Sink: Send {
    fn event(&mut self, now: Instant, event: &H3LogEvent);
}

/// Collects events in memory (tests, the simulator).
#[derive(Default)]
pub struct VecH3Sink(pub Vec<(Instant, H3LogEvent)>);

impl H3Sink for VecH3Sink {
    fn event(&mut self, now: Instant, event: &H3LogEvent) {
        self.0.push((now, event.clone()));
    }
}

/// A sink shared with whoever reads it afterwards.
impl<S: H3Sink> H3Sink for std::sync::Arc<std::sync::Mutex<S>> {
    fn event(&mut self, now: Instant, event: &H3LogEvent) {
        if let Ok(mut s) = self.lock() {
            s.event(now, event);
        }
    }
}

/// Fields as logged text.
pub fn fields_info(fields: &[crate::qpack::Field]) -> FrameInfo {
    FrameInfo::Headers {
        fields: fields
            .iter()
            .map(|f| {
                (
                    String::from_utf8_lossy(&f.name).into_owned(),
                    String::from_utf8_lossy(&f.value).into_owned(),
                )
            })
            .collect(),
    }
}
