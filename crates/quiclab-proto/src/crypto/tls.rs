//! The TLS session of one connection: rustls's QUIC client or server, fed CRYPTO data
//! and asked for handshake bytes and key changes (RFC 9001 §4).

use crate::error::TransportError;
use crate::rng::DetRng;
use rustls::quic::KeyChange;
use std::sync::Arc;

/// One connection's TLS 1.3 state. All randomness comes from the seeded generator it
/// owns. Errors from the peer's handshake map to CRYPTO_ERROR (0x0100 + alert).
pub struct TlsSession {
    _rng: DetRng,
}

impl TlsSession {
    /// A client for `server_name`, sending `transport_params` (encoded) in its ClientHello.
    pub fn client(
        config: Arc<rustls::ClientConfig>,
        server_name: &str,
        transport_params: Vec<u8>,
        rng: DetRng,
    ) -> Result<Self, TransportError> {
        let _ = (config, server_name, transport_params, rng);
        todo!("H2")
    }

    /// A server sending `transport_params` in its EncryptedExtensions.
    pub fn server(
        config: Arc<rustls::ServerConfig>,
        transport_params: Vec<u8>,
        rng: DetRng,
    ) -> Result<Self, TransportError> {
        let _ = (config, transport_params, rng);
        todo!("H2")
    }

    /// Feeds handshake bytes received in CRYPTO frames of the current read level.
    pub fn read_handshake(&mut self, data: &[u8]) -> Result<(), TransportError> {
        let _ = data;
        todo!("H2")
    }

    /// Appends handshake bytes to send at the current write level; returns new keys when
    /// the write level changes (the bytes appended before the change belong to the old
    /// level: call again until it appends nothing and returns `None`).
    pub fn write_handshake(&mut self, out: &mut Vec<u8>) -> Option<KeyChange> {
        let _ = out;
        todo!("H2")
    }

    pub fn is_handshaking(&self) -> bool {
        todo!("H2")
    }

    /// The peer's encoded transport parameters, once received.
    pub fn peer_transport_parameters(&self) -> Option<&[u8]> {
        todo!("H2")
    }

    /// The negotiated ALPN protocol.
    pub fn alpn(&self) -> Option<&[u8]> {
        todo!("H2")
    }

    /// The server name the client asked for (server side).
    pub fn server_name(&self) -> Option<&str> {
        todo!("H2")
    }
}
