//! The transport parameters of both sides (RFC 9000 §7.4, §18): ours, the peer's once
//! received, and the original Destination Connection ID they authenticate (§7.3).

use crate::wire::{ConnectionId, TransportParameters};
use std::time::Duration;

/// Our transport parameters and the peer's.
pub(super) struct TransportParams {
    /// Client: the DCID of its first Initial. Server: the client's original DCID.
    pub original_dcid: ConnectionId,
    /// What we send (rewritten by a client restarting after Version Negotiation).
    pub local: TransportParameters,
    /// The peer's, once TLS delivered them.
    peer: Option<Box<TransportParameters>>,
}

impl TransportParams {
    pub fn new(original_dcid: ConnectionId, local: TransportParameters) -> Self {
        TransportParams {
            original_dcid,
            local,
            peer: None,
        }
    }

    /// The peer's parameters, once received.
    pub fn peer(&self) -> Option<&TransportParameters> {
        self.peer.as_deref()
    }

    pub fn set_peer(&mut self, params: TransportParameters) {
        self.peer = Some(Box::new(params));
    }

    /// Our parameters as TLS carries them.
    pub fn encode_local(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.local.encode(&mut out);
        out
    }

    /// The peer's max_ack_delay (RFC 9000 §18.2: 25 ms when absent or not yet known).
    pub fn peer_max_ack_delay(&self) -> Duration {
        Duration::from_millis(self.peer().map_or(25, |p| p.max_ack_delay))
    }

    /// The peer's ack_delay_exponent (RFC 9000 §18.2: 3 when absent or not yet known).
    pub fn peer_ack_delay_exponent(&self) -> u64 {
        self.peer().map_or(3, |p| p.ack_delay_exponent)
    }

    /// The peer's active_connection_id_limit (RFC 9000 §18.2: 2 when absent or not
    /// yet known).
    pub fn peer_active_connection_id_limit(&self) -> u64 {
        self.peer().map_or(2, |p| p.active_connection_id_limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> TransportParams {
        let dcid = ConnectionId::new(&[1, 2, 3, 4]).unwrap();
        TransportParams::new(dcid, TransportParameters::default())
    }

    #[test]
    fn peer_values_default_until_the_peer_sends_its_own() {
        let mut p = params();
        assert!(p.peer().is_none());
        assert_eq!(p.peer_max_ack_delay(), Duration::from_millis(25));
        assert_eq!(p.peer_ack_delay_exponent(), 3);
        assert_eq!(p.peer_active_connection_id_limit(), 2);
        p.set_peer(TransportParameters {
            max_ack_delay: 40,
            ack_delay_exponent: 5,
            active_connection_id_limit: 7,
            ..TransportParameters::default()
        });
        assert_eq!(p.peer_max_ack_delay(), Duration::from_millis(40));
        assert_eq!(p.peer_ack_delay_exponent(), 5);
        assert_eq!(p.peer_active_connection_id_limit(), 7);
    }

    #[test]
    fn local_parameters_encode_as_they_decode() {
        let mut p = params();
        p.local.max_idle_timeout = 30_000;
        let bytes = p.encode_local();
        let decoded = TransportParameters::decode(&bytes, crate::wire::Side::Client).unwrap();
        assert_eq!(decoded.max_idle_timeout, 30_000);
    }
}
