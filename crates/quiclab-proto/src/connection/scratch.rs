//! Buffers the connection reuses across calls.

use crate::error::TransportError;

/// Buffers reused across calls, so the hot paths do not allocate.
#[derive(Default)]
pub(super) struct Scratch {
    /// CRYPTO data handed to TLS.
    pub bytes: Vec<u8>,
    /// Stream frames written into one packet.
    pub stream_records: Vec<crate::streams::StreamFrameRecord>,
    /// The frame list of packet events (`event_log`).
    pub frames: Vec<crate::events::FrameSummary>,
    /// A received packet's decoded frames while a sink is attached (`recv`); empty
    /// between packets, kept for its buffer.
    pub decoded: Vec<Result<crate::wire::Frame<'static>, TransportError>>,
}
