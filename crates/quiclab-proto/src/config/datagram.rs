//! The DATAGRAM send queue's bounds (RFC 9221 §5: datagrams the congestion controller
//! holds back wait in it; past a bound the oldest is dropped).

use serde::{Deserialize, Serialize};

/// How many DATAGRAM payloads, and how many bytes of them, the application may have
/// waiting to be sent before the oldest is dropped. A late media frame is worth less
/// than a fresh one, so the queue drops from the front.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DatagramSendConfig {
    /// Payloads queued at most (default 1024, the receive queue's bound).
    pub queue_datagrams: usize,
    /// Payload bytes queued at most (default 1 MiB).
    pub queue_bytes: usize,
}

impl Default for DatagramSendConfig {
    fn default() -> Self {
        DatagramSendConfig {
            queue_datagrams: 1024,
            queue_bytes: 1 << 20,
        }
    }
}

impl DatagramSendConfig {
    /// Left out when serialized at its default, so recorded configs keep their bytes.
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}
