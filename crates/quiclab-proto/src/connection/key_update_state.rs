//! The 1-RTT key phase (RFC 9001 §6): current, next and previous keys and the counts
//! the AEAD limits need (§6.6). The connection drives it from `key_update.rs`.

use crate::crypto::{NextSecrets, PacketKey, PacketKeySet};
use crate::error::{TransportError, TransportErrorCode};

/// Key phase state of the 1-RTT keys.
#[derive(Default)]
pub struct KeyUpdate {
    /// rustls's, or derived with the labels of the version a server moved a client to
    /// ("quicv2 ku" in v2, RFC 9369 §3.3.2).
    pub secrets: Option<NextSecrets>,
    /// The key phase bit of the current keys.
    pub phase: bool,
    /// Keys of the next phase, derived ahead of time.
    pub next: Option<PacketKeySet>,
    /// The previous phase's receive key, for packets reordered across the update,
    /// with the lowest packet number the peer sent in the current phase (`u64::MAX`
    /// until one arrives after our own update).
    pub previous: Option<(Box<dyn PacketKey>, u64)>,
    /// The first packet number we send in the current phase: once the peer
    /// acknowledges it or a later one, we may update again (§6.1).
    pub first_sent_pn: u64,
    /// `stats.packets_sent[Data]` when the current phase began.
    pub sent_at_phase_start: u64,
    /// 1-RTT packets that failed authentication over the connection (§6.6).
    pub failed_authentications: u64,
    /// A violation found while decrypting, for the receive path to close with.
    pub error: Option<TransportError>,
    /// The key phase changed and qlog has not been told yet.
    pub log_pending: bool,
}

impl KeyUpdate {
    /// Takes the secrets TLS hands over with the 1-RTT keys.
    pub fn install(&mut self, mut secrets: NextSecrets) {
        self.next = Some(secrets.next_packet_keys());
        self.secrets = Some(secrets);
    }

    /// A violation found while decrypting (KEY_UPDATE_ERROR, AEAD_LIMIT_REACHED).
    pub fn take_error(&mut self) -> Option<TransportError> {
        self.error.take()
    }
}

pub(super) fn aead_limit(reason: &str) -> TransportError {
    TransportError::new(TransportErrorCode::AEAD_LIMIT_REACHED, reason)
}

pub(super) fn key_update_error(reason: &str) -> TransportError {
    TransportError::new(TransportErrorCode::KEY_UPDATE_ERROR, reason)
}
