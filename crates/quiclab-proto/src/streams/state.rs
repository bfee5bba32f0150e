//! The set of streams of one connection. (H4 splits this into send.rs, recv.rs, flow.rs.)

use crate::error::TransportError;
use crate::time::Instant;
use crate::wire::{Dir, Frame, Side, StreamId, TransportParameters};
use std::time::Duration;

/// Local stream and flow-control settings (from the transport config).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamParams {
    /// How many streams of each kind the peer may open (MAX_STREAMS, renewed as they close).
    pub max_streams_bidi: u64,
    pub max_streams_uni: u64,
    /// Initial per-stream receive window (initial_max_stream_data_*).
    pub stream_receive_window: u64,
    /// Initial connection receive window (initial_max_data).
    pub receive_window: u64,
    /// Auto-tuning grows windows up to these caps; off, the windows stay fixed.
    pub autotune: bool,
    pub max_stream_receive_window: u64,
    pub max_receive_window: u64,
    /// Bytes of unacknowledged data a stream buffers before `write` pushes back.
    pub send_buffer: u64,
}

/// Application API misuse, or a stream state that refuses the call.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StreamError {
    #[error("no such stream")]
    UnknownStream,
    #[error("the stream cannot be used in this direction")]
    WrongDirection,
    #[error("nothing can be done now; wait for an event")]
    Blocked,
    #[error("the peer asked us to stop sending (error code {0})")]
    Stopped(u64),
    #[error("the peer reset the stream (error code {0})")]
    Reset(u64),
    #[error("the stream was already finished or reset")]
    Closed,
}

/// A stream became usable in some way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamEvent {
    /// The peer opened streams of this direction; call `accept`.
    Opened { dir: Dir },
    /// Data (or FIN, or a reset) can be read.
    Readable { id: StreamId },
    /// Flow control or buffer space allows writing again.
    Writable { id: StreamId },
    /// Everything written, FIN included, was acknowledged.
    Finished { id: StreamId },
    /// The peer sent STOP_SENDING.
    Stopped { id: StreamId, error_code: u64 },
}

/// What `read` returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadOutcome {
    pub bytes: usize,
    /// The stream's data ended (FIN) and everything was read.
    pub fin: bool,
}

/// One stream-related frame a sent packet carried, to act on when it is acknowledged or
/// declared lost (RFC 9000 §13.3: retransmit information, not packets).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StreamFrameRecord {
    Stream {
        id: StreamId,
        offset: u64,
        len: u64,
        fin: bool,
    },
    ResetStream {
        id: StreamId,
    },
    StopSending {
        id: StreamId,
    },
    MaxData,
    MaxStreamData {
        id: StreamId,
    },
    MaxStreams {
        dir: Dir,
    },
    DataBlocked,
    StreamDataBlocked {
        id: StreamId,
    },
    StreamsBlocked {
        dir: Dir,
    },
}

/// All streams of a connection.
#[derive(Debug)]
pub struct Streams {
    _p: (),
}

impl Streams {
    pub fn new(side: Side, params: StreamParams) -> Self {
        let _ = (side, params);
        todo!("H4")
    }

    /// Fills the initial_max_* fields of our transport parameters.
    pub fn fill_transport_params(&self, tp: &mut TransportParameters) {
        let _ = tp;
        todo!("H4")
    }

    /// Applies the peer's limits once its transport parameters arrive.
    pub fn apply_peer_params(&mut self, tp: &TransportParameters) {
        let _ = tp;
        todo!("H4")
    }

    /// Opens a local stream; `None` when the peer's stream limit is reached (a
    /// STREAMS_BLOCKED is queued and `Opened`... no: wait for `Writable`-free capacity).
    pub fn open(&mut self, dir: Dir) -> Option<StreamId> {
        let _ = dir;
        todo!("H4")
    }

    /// The next stream the peer opened and the application has not accepted yet.
    pub fn accept(&mut self, dir: Dir) -> Option<StreamId> {
        let _ = dir;
        todo!("H4")
    }

    /// Buffers up to `data.len()` bytes; returns how many were taken (`Blocked` if none).
    pub fn write(&mut self, id: StreamId, data: &[u8]) -> Result<usize, StreamError> {
        let _ = (id, data);
        todo!("H4")
    }

    /// Marks the end of the stream's data (FIN).
    pub fn finish(&mut self, id: StreamId) -> Result<(), StreamError> {
        let _ = id;
        todo!("H4")
    }

    /// Abandons sending (RESET_STREAM).
    pub fn reset(&mut self, id: StreamId, error_code: u64) -> Result<(), StreamError> {
        let _ = (id, error_code);
        todo!("H4")
    }

    /// Asks the peer to stop sending (STOP_SENDING) and discards what arrives.
    pub fn stop_sending(&mut self, id: StreamId, error_code: u64) -> Result<(), StreamError> {
        let _ = (id, error_code);
        todo!("H4")
    }

    /// Reads in-order data; `Blocked` when none is available yet.
    pub fn read(&mut self, id: StreamId, buf: &mut [u8]) -> Result<ReadOutcome, StreamError> {
        let _ = (id, buf);
        todo!("H4")
    }

    /// Handles a stream-related frame from the peer (STREAM, RESET_STREAM, STOP_SENDING,
    /// MAX_DATA, MAX_STREAM_DATA, MAX_STREAMS, DATA_BLOCKED, STREAM_DATA_BLOCKED,
    /// STREAMS_BLOCKED); other frames are ignored. Peer violations are errors with the
    /// RFC's code (STREAM_STATE_ERROR, FLOW_CONTROL_ERROR, FINAL_SIZE_ERROR,
    /// STREAM_LIMIT_ERROR).
    pub fn on_frame(&mut self, frame: &Frame<'_>) -> Result<(), TransportError> {
        let _ = frame;
        todo!("H4")
    }

    /// Appends stream-related frames while `buf.len() < max_len`: control frames first,
    /// then lost data, then new data within flow control; records each in `records`.
    pub fn write_frames(
        &mut self,
        now: Instant,
        rtt: Duration,
        buf: &mut Vec<u8>,
        max_len: usize,
        records: &mut Vec<StreamFrameRecord>,
    ) {
        let _ = (now, rtt, buf, max_len, records);
        todo!("H4")
    }

    pub fn on_acked(&mut self, record: &StreamFrameRecord) {
        let _ = record;
        todo!("H4")
    }

    pub fn on_lost(&mut self, record: &StreamFrameRecord) {
        let _ = record;
        todo!("H4")
    }

    pub fn poll_event(&mut self) -> Option<StreamEvent> {
        todo!("H4")
    }

    /// Whether `write_frames` has anything to write.
    pub fn has_pending(&self) -> bool {
        todo!("H4")
    }
}
