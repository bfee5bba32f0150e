//! 0-RTT's state (RFC 9001 §4.6): keys, status and, on a server, packets waiting for
//! their keys. The connection drives it from `zero_rtt.rs`.

use super::parsed::Parsed;
use crate::crypto::DirectionalKeys;
use crate::wire::TransportParameters;

/// Server: 0-RTT packets kept while their keys are not known yet.
pub(super) const MAX_PENDING: usize = 16;

/// Where 0-RTT stands for this connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ZeroRttStatus {
    /// Not attempted (client: no ticket allowing it, or not configured) / not offered
    /// (server: the ClientHello asked for none, or not configured).
    #[default]
    None,
    /// Client: 0-RTT keys installed, packets may go; the server's answer is unknown.
    Attempted,
    /// The server accepted the early data.
    Accepted,
    /// The server rejected it: 0-RTT data was resent in 1-RTT.
    Rejected,
}

/// The 0-RTT state of one connection.
#[derive(Default)]
pub(super) struct ZeroRtt {
    /// Client: keys to send with; server: keys to read with. Dropped when the client
    /// installs 1-RTT keys (RFC 9001 §4.9.3).
    pub keys: Option<DirectionalKeys>,
    pub status: ZeroRttStatus,
    /// Client: the server parameters remembered with the ticket (RFC 9000 §7.4.1).
    pub remembered: Option<Box<TransportParameters>>,
    /// Server: 0-RTT packets that came before the keys.
    pub pending: Vec<(Parsed, Vec<u8>)>,
    /// 0-RTT packets sent (client) or processed (server).
    pub packets: u64,
}

impl ZeroRtt {
    /// Client: whether the next application-data packet may be a 0-RTT one.
    pub fn can_send(&self) -> bool {
        self.keys.is_some() && self.status == ZeroRttStatus::Attempted
    }

    /// Server: bytes of the 0-RTT packets waiting for their keys.
    pub fn pending_bytes(&self) -> u64 {
        self.pending.iter().map(|(_, p)| p.len() as u64).sum()
    }

    /// Server: forgets the waiting 0-RTT packets (the connection closed).
    pub fn drop_pending(&mut self) {
        self.pending = Vec::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::initial::initial_keys;
    use crate::wire::{ConnectionId, PacketType, Side, VERSION_1};

    #[test]
    fn a_client_sends_0rtt_only_with_keys_while_attempted() {
        let mut z = ZeroRtt::default();
        assert!(!z.can_send());
        z.status = ZeroRttStatus::Attempted;
        assert!(!z.can_send(), "no keys");
        let keys = initial_keys(
            VERSION_1,
            &ConnectionId::new(&[3; 8]).unwrap(),
            Side::Client,
        );
        z.keys = Some(keys.local);
        assert!(z.can_send());
        z.status = ZeroRttStatus::Rejected;
        assert!(!z.can_send());
    }

    #[test]
    fn waiting_packets_are_counted_and_dropped() {
        let cid = ConnectionId::new(&[1; 8]).unwrap();
        let h = || Parsed {
            ty: PacketType::ZeroRtt,
            version: VERSION_1,
            dcid: cid,
            scid: cid,
            pn_offset: 20,
            packet_len: 100,
            ecn: crate::ecn::Ecn::NotEct,
        };
        let mut z = ZeroRtt::default();
        z.pending.push((h(), vec![0; 100]));
        z.pending.push((h(), vec![0; 50]));
        assert_eq!(z.pending_bytes(), 150);
        z.drop_pending();
        assert_eq!(z.pending_bytes(), 0);
    }
}
