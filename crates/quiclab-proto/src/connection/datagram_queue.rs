//! DATAGRAM payloads waiting to be sent (RFC 9221 §5): a FIFO bounded by count and
//! bytes that drops the oldest when full, since a late real-time payload is worth
//! less than a fresh one. Payloads leave it once written into a packet and are never
//! kept for retransmission (RFC 9221 §5.2).

use crate::config::DatagramSendConfig;
use std::collections::VecDeque;

/// Why [`Connection::send_datagram`](crate::Connection::send_datagram) refused a
/// payload. Nothing was queued.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DatagramError {
    /// The peer's transport parameters are not known yet (before the handshake gives
    /// them): RFC 9221 §3 forbids DATAGRAM frames until they are. quiclab does not
    /// remember a server's value for 0-RTT (optional in §3).
    #[error("the peer's transport parameters are not known yet")]
    PeerParamsUnknown,
    /// The peer sent no max_datagram_frame_size, or 0: it accepts no DATAGRAM frame
    /// (RFC 9221 §3).
    #[error("the peer does not accept DATAGRAM frames")]
    UnsupportedByPeer,
    /// The frame would exceed the peer's max_datagram_frame_size or not fit one packet
    /// at the current path MTU (RFC 9221 §3, §5: DATAGRAM frames are not fragmented).
    /// `max` is the largest payload that fits now.
    #[error("datagram of {size} bytes exceeds the largest that fits, {max}")]
    TooLarge { size: usize, max: usize },
    /// The connection is closing or closed.
    #[error("the connection is closed")]
    Closed,
}

/// Payloads queued for sending, oldest first, within [`DatagramSendConfig`]'s bounds.
#[derive(Debug, Default)]
pub(super) struct DatagramQueue {
    queue: VecDeque<Vec<u8>>,
    bytes: usize,
}

impl DatagramQueue {
    /// Queues `payload`, first dropping the oldest payloads until it fits the bounds.
    /// Returns the lengths of the payloads dropped. A payload larger than the byte
    /// bound on its own is kept alone (the caller checked it fits a packet).
    pub fn push(&mut self, payload: Vec<u8>, bounds: &DatagramSendConfig) -> Vec<usize> {
        let mut dropped = Vec::new();
        while !self.queue.is_empty()
            && (self.queue.len() >= bounds.queue_datagrams
                || self.bytes + payload.len() > bounds.queue_bytes)
        {
            if let Some(old) = self.pop() {
                dropped.push(old.len());
            }
        }
        self.bytes += payload.len();
        self.queue.push_back(payload);
        dropped
    }

    /// Length of the oldest payload, if any.
    pub fn front_len(&self) -> Option<usize> {
        self.queue.front().map(Vec::len)
    }

    /// Removes the oldest payload.
    pub fn pop(&mut self) -> Option<Vec<u8>> {
        let p = self.queue.pop_front()?;
        self.bytes -= p.len();
        Some(p)
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// (payloads, bytes) queued.
    pub fn len(&self) -> (usize, usize) {
        (self.queue.len(), self.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds(count: usize, bytes: usize) -> DatagramSendConfig {
        DatagramSendConfig {
            queue_datagrams: count,
            queue_bytes: bytes,
        }
    }

    #[test]
    fn the_count_bound_drops_the_oldest() {
        let mut q = DatagramQueue::default();
        let b = bounds(3, 1000);
        for i in 0..3u8 {
            assert!(q.push(vec![i; 10], &b).is_empty());
        }
        assert_eq!(q.push(vec![9; 5], &b), vec![10]);
        assert_eq!(q.len(), (3, 25));
        assert_eq!(q.pop(), Some(vec![1; 10]));
    }

    #[test]
    fn the_byte_bound_drops_as_many_as_needed() {
        let mut q = DatagramQueue::default();
        let b = bounds(100, 100);
        for i in 0..4u8 {
            assert!(q.push(vec![i; 25], &b).is_empty());
        }
        assert_eq!(q.push(vec![7; 60], &b), vec![25, 25, 25]);
        assert_eq!(q.len(), (2, 85));
        assert_eq!(q.front_len(), Some(25));
        // A payload above the byte bound alone empties the queue and stays.
        assert_eq!(q.push(vec![8; 150], &b), vec![25, 60]);
        assert_eq!(q.len(), (1, 150));
    }
}
