//! Transport errors: what a peer violation maps to on the wire (RFC 9000 §20.1).

use std::fmt;

/// A QUIC transport error code (RFC 9000 §20.1), carried in CONNECTION_CLOSE (0x1c).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TransportErrorCode(pub u64);

impl TransportErrorCode {
    pub const NO_ERROR: Self = Self(0x00);
    pub const INTERNAL_ERROR: Self = Self(0x01);
    pub const CONNECTION_REFUSED: Self = Self(0x02);
    pub const FLOW_CONTROL_ERROR: Self = Self(0x03);
    pub const STREAM_LIMIT_ERROR: Self = Self(0x04);
    pub const STREAM_STATE_ERROR: Self = Self(0x05);
    pub const FINAL_SIZE_ERROR: Self = Self(0x06);
    pub const FRAME_ENCODING_ERROR: Self = Self(0x07);
    pub const TRANSPORT_PARAMETER_ERROR: Self = Self(0x08);
    pub const CONNECTION_ID_LIMIT_ERROR: Self = Self(0x09);
    pub const PROTOCOL_VIOLATION: Self = Self(0x0a);
    pub const INVALID_TOKEN: Self = Self(0x0b);
    pub const APPLICATION_ERROR: Self = Self(0x0c);
    pub const CRYPTO_BUFFER_EXCEEDED: Self = Self(0x0d);
    pub const KEY_UPDATE_ERROR: Self = Self(0x0e);
    pub const AEAD_LIMIT_REACHED: Self = Self(0x0f);
    pub const NO_VIABLE_PATH: Self = Self(0x10);
    /// RFC 9368 §4: version downgrade detected or version_information inconsistent.
    pub const VERSION_NEGOTIATION_ERROR: Self = Self(0x11);

    /// CRYPTO_ERROR carrying a TLS alert (RFC 9001 §4.8: 0x0100 + alert).
    pub const fn crypto(alert: u8) -> Self {
        Self(0x0100 + alert as u64)
    }

    /// The RFC's name for this code, for logs and qlog.
    pub fn name(self) -> &'static str {
        match self.0 {
            0x00 => "no_error",
            0x01 => "internal_error",
            0x02 => "connection_refused",
            0x03 => "flow_control_error",
            0x04 => "stream_limit_error",
            0x05 => "stream_state_error",
            0x06 => "final_size_error",
            0x07 => "frame_encoding_error",
            0x08 => "transport_parameter_error",
            0x09 => "connection_id_limit_error",
            0x0a => "protocol_violation",
            0x0b => "invalid_token",
            0x0c => "application_error",
            0x0d => "crypto_buffer_exceeded",
            0x0e => "key_update_error",
            0x0f => "aead_limit_reached",
            0x10 => "no_viable_path",
            0x11 => "version_negotiation_error",
            0x0100..=0x01ff => "crypto_error",
            _ => "unknown",
        }
    }
}

impl fmt::Debug for TransportErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if (0x0100..=0x01ff).contains(&self.0) {
            write!(f, "CRYPTO_ERROR(alert {})", self.0 - 0x100)
        } else {
            write!(f, "{}", self.name().to_ascii_uppercase())
        }
    }
}

impl fmt::Display for TransportErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// A peer violation (or local failure) that closes the connection with `code`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {reason}")]
pub struct TransportError {
    pub code: TransportErrorCode,
    /// The frame type that triggered the error, when known (RFC 9000 §19.19).
    pub frame_type: Option<u64>,
    pub reason: String,
}

impl TransportError {
    pub fn new(code: TransportErrorCode, reason: impl Into<String>) -> Self {
        TransportError {
            code,
            frame_type: None,
            reason: reason.into(),
        }
    }
    pub fn with_frame(mut self, frame_type: u64) -> Self {
        self.frame_type = Some(frame_type);
        self
    }
    pub fn frame_encoding(reason: impl Into<String>) -> Self {
        Self::new(TransportErrorCode::FRAME_ENCODING_ERROR, reason)
    }
    pub fn protocol_violation(reason: impl Into<String>) -> Self {
        Self::new(TransportErrorCode::PROTOCOL_VIOLATION, reason)
    }
    pub fn transport_parameter(reason: impl Into<String>) -> Self {
        Self::new(TransportErrorCode::TRANSPORT_PARAMETER_ERROR, reason)
    }
    pub fn flow_control(reason: impl Into<String>) -> Self {
        Self::new(TransportErrorCode::FLOW_CONTROL_ERROR, reason)
    }
    pub fn stream_state(reason: impl Into<String>) -> Self {
        Self::new(TransportErrorCode::STREAM_STATE_ERROR, reason)
    }
    pub fn stream_limit(reason: impl Into<String>) -> Self {
        Self::new(TransportErrorCode::STREAM_LIMIT_ERROR, reason)
    }
    pub fn final_size(reason: impl Into<String>) -> Self {
        Self::new(TransportErrorCode::FINAL_SIZE_ERROR, reason)
    }
    pub fn internal(reason: impl Into<String>) -> Self {
        Self::new(TransportErrorCode::INTERNAL_ERROR, reason)
    }
}
