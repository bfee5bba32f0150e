//! The server's certificate chain as the client's TLS saw it: a verifier that records
//! each certificate's DER size, then accepts the chain (a measurement tool does not
//! judge certificates) while still checking the CertificateVerify signature, as
//! `quiclab client --insecure` does.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use std::sync::{Arc, Mutex};

/// The chain a server sent: DER sizes, leaf first, and the OCSP response's size.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Chain {
    pub der_sizes: Vec<usize>,
    pub ocsp_bytes: usize,
}

impl Chain {
    /// Bytes of the TLS 1.3 Certificate message carrying this chain (RFC 8446 §4.4.2):
    /// 4 (handshake header) + 1 (empty request context) + 3 (list length) and, per
    /// entry, 3 (cert_data length) + DER + 2 (extensions length), plus a
    /// status_request extension on the leaf when an OCSP response came (RFC 8446
    /// §4.4.2.1: 4 extension header + 1 status type + 3 length + response). Entry
    /// extensions other than OCSP (e.g. SCTs) are not seen here and not counted;
    /// quiclab's client offers no certificate compression (RFC 8879), so no
    /// CompressedCertificate replaces this message.
    pub fn message_bytes(&self) -> usize {
        if self.der_sizes.is_empty() {
            return 0;
        }
        let entries: usize = self.der_sizes.iter().map(|d| 3 + d + 2).sum();
        let ocsp = if self.ocsp_bytes > 0 {
            4 + 1 + 3 + self.ocsp_bytes
        } else {
            0
        };
        4 + 1 + 3 + entries + ocsp
    }
}

/// Records the chain into a shared [`Chain`]; accepts any certificate.
#[derive(Debug)]
pub struct RecordingVerifier {
    chain: Arc<Mutex<Chain>>,
    algorithms: rustls::crypto::WebPkiSupportedAlgorithms,
}

impl RecordingVerifier {
    /// A verifier and the handle its records are read from after the handshake.
    pub fn new() -> (Arc<RecordingVerifier>, Arc<Mutex<Chain>>) {
        let chain = Arc::new(Mutex::new(Chain::default()));
        let v = RecordingVerifier {
            chain: chain.clone(),
            algorithms: rustls::crypto::ring::default_provider().signature_verification_algorithms,
        };
        (Arc::new(v), chain)
    }
}

impl ServerCertVerifier for RecordingVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let mut c = self.chain.lock().unwrap_or_else(|e| e.into_inner());
        c.der_sizes = std::iter::once(end_entity)
            .chain(intermediates)
            .map(|d| d.len())
            .collect();
        c.ocsp_bytes = ocsp_response.len();
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_bytes_follow_rfc_8446_layout() {
        assert_eq!(Chain::default().message_bytes(), 0);
        let one = Chain {
            der_sizes: vec![300],
            ocsp_bytes: 0,
        };
        assert_eq!(one.message_bytes(), 8 + 305);
        let two = Chain {
            der_sizes: vec![300, 1000],
            ocsp_bytes: 100,
        };
        assert_eq!(two.message_bytes(), 8 + 305 + 1005 + 108);
    }
}
