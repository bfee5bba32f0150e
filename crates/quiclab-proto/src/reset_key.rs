//! The static key stateless reset tokens derive from (RFC 9000 §10.3.2): token =
//! HMAC-SHA256(key, connection ID) truncated to 16 bytes, so an endpoint that lost its
//! state (a restarted server with the same key) can still compute the token of a
//! connection ID it issued and reset the peer that keeps sending to it.
//!
//! # Call contract
//! The key is an input: the core never draws it. A driver reads or generates it (the
//! CLI's `--stateless-reset-key FILE`) and puts it in
//! [`crate::TransportConfig::stateless_reset_key`]; without one, tokens stay random
//! draws from the connection's seeded generator (the simulator's bytes do not change).

use crate::wire::ConnectionId;
use ring::hmac;

/// Length of a key in bytes (the HMAC-SHA256 block-size-friendly 256 bits).
pub const STATELESS_RESET_KEY_LEN: usize = 32;

/// A secret: `Debug` does not print it and serde never writes it.
#[derive(Clone, PartialEq, Eq)]
pub struct StatelessResetKey([u8; STATELESS_RESET_KEY_LEN]);

impl StatelessResetKey {
    pub fn new(bytes: [u8; STATELESS_RESET_KEY_LEN]) -> Self {
        StatelessResetKey(bytes)
    }

    /// RFC 9000 §10.3.2: HMAC(static_key, connection_id), truncated to 16 bytes.
    pub fn token(&self, cid: &ConnectionId) -> [u8; 16] {
        let key = hmac::Key::new(hmac::HMAC_SHA256, &self.0);
        let tag = hmac::sign(&key, cid.as_bytes());
        let mut token = [0u8; 16];
        token.copy_from_slice(&tag.as_ref()[..16]);
        token
    }
}

impl std::fmt::Debug for StatelessResetKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StatelessResetKey(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_is_the_truncated_hmac_of_the_connection_id() {
        // Known answer, from Python's hmac module:
        // hmac.new(key, bytes([1..=8]), sha256).hexdigest()[:32].
        let key = StatelessResetKey::new(*b"0123456789abcdef0123456789abcdef");
        let cid = ConnectionId::new(&[1, 2, 3, 4, 5, 6, 7, 8]).unwrap();
        let hex: String = key.token(&cid).iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, "ff90ab8019aacc708c9674d0634ecf18");
        let other = ConnectionId::new(&[1, 2, 3, 4, 5, 6, 7, 9]).unwrap();
        assert_ne!(
            key.token(&cid),
            key.token(&other),
            "one token per ID (§10.3.2)"
        );
        let key2 = StatelessResetKey::new([7; 32]);
        assert_ne!(key.token(&cid), key2.token(&cid));
        assert_eq!(format!("{key:?}"), "StatelessResetKey(..)");
    }
}
