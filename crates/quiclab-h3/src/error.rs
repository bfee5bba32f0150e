//! HTTP/3 and QPACK error codes (RFC 9114 §8.1, RFC 9204 §6) and the typed error every
//! decoder returns: peer input never panics, it yields one of these codes.

/// RFC 9114 §8.1 and RFC 9204 §6 application error codes.
pub mod code {
    pub const H3_NO_ERROR: u64 = 0x100;
    pub const H3_GENERAL_PROTOCOL_ERROR: u64 = 0x101;
    pub const H3_INTERNAL_ERROR: u64 = 0x102;
    pub const H3_STREAM_CREATION_ERROR: u64 = 0x103;
    pub const H3_CLOSED_CRITICAL_STREAM: u64 = 0x104;
    pub const H3_FRAME_UNEXPECTED: u64 = 0x105;
    pub const H3_FRAME_ERROR: u64 = 0x106;
    pub const H3_EXCESSIVE_LOAD: u64 = 0x107;
    pub const H3_ID_ERROR: u64 = 0x108;
    pub const H3_SETTINGS_ERROR: u64 = 0x109;
    pub const H3_MISSING_SETTINGS: u64 = 0x10a;
    pub const H3_REQUEST_REJECTED: u64 = 0x10b;
    pub const H3_REQUEST_CANCELLED: u64 = 0x10c;
    pub const H3_REQUEST_INCOMPLETE: u64 = 0x10d;
    pub const H3_MESSAGE_ERROR: u64 = 0x10e;
    pub const QPACK_DECOMPRESSION_FAILED: u64 = 0x200;
    pub const QPACK_ENCODER_STREAM_ERROR: u64 = 0x201;
    pub const QPACK_DECODER_STREAM_ERROR: u64 = 0x202;
}

/// A protocol error with the code to close (or reset) with and a reason for logs.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("h3 error {code:#x}: {reason}")]
pub struct H3Error {
    pub code: u64,
    pub reason: String,
}

impl H3Error {
    pub fn new(code: u64, reason: impl Into<String>) -> Self {
        H3Error {
            code,
            reason: reason.into(),
        }
    }
}

/// The name of an error code, for logs and qlog.
pub fn code_name(c: u64) -> &'static str {
    use code::*;
    match c {
        H3_NO_ERROR => "no_error",
        H3_GENERAL_PROTOCOL_ERROR => "general_protocol_error",
        H3_INTERNAL_ERROR => "internal_error",
        H3_STREAM_CREATION_ERROR => "stream_creation_error",
        H3_CLOSED_CRITICAL_STREAM => "closed_critical_stream",
        H3_FRAME_UNEXPECTED => "frame_unexpected",
        H3_FRAME_ERROR => "frame_error",
        H3_EXCESSIVE_LOAD => "excessive_load",
        H3_ID_ERROR => "id_error",
        H3_SETTINGS_ERROR => "settings_error",
        H3_MISSING_SETTINGS => "missing_settings",
        H3_REQUEST_REJECTED => "request_rejected",
        H3_REQUEST_CANCELLED => "request_cancelled",
        H3_REQUEST_INCOMPLETE => "request_incomplete",
        H3_MESSAGE_ERROR => "message_error",
        QPACK_DECOMPRESSION_FAILED => "qpack_decompression_failed",
        QPACK_ENCODER_STREAM_ERROR => "qpack_encoder_stream_error",
        QPACK_DECODER_STREAM_ERROR => "qpack_decoder_stream_error",
        _ => "unknown",
    }
}
