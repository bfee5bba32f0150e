//! What the connection hands out: events for the application and the endpoint,
//! received DATAGRAM payloads, and the event log.

use super::lifecycle::CloseReason;
use crate::events::{Event, EventSink, FrameDetail};
use crate::streams::StreamEvent;
use crate::time::Instant;
use crate::wire::ConnectionId;
use std::collections::VecDeque;

/// DATAGRAM frame payloads kept for the application before the oldest is dropped
/// (RFC 9221 §5: a receiver may drop what it cannot process). At the largest frame
/// size this bounds the queue to about 64 MB per connection; `recv_datagram` drains it.
pub const MAX_QUEUED_DATAGRAMS: usize = 1024;

/// What the application learns from a connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConnectionEvent {
    /// The TLS handshake completed (RFC 9001 §4.1.1); streams can be used.
    HandshakeCompleted,
    /// The handshake is confirmed (RFC 9001 §4.1.2).
    HandshakeConfirmed,
    Stream(StreamEvent),
    /// The connection closed (by either side, or idle timeout); no more data flows.
    Closed(CloseReason),
}

/// What the endpoint must learn from a connection: connection IDs to route or forget,
/// and when the connection's state can be dropped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EndpointEvent {
    NewConnectionId(ConnectionId),
    RetireConnectionId(ConnectionId),
    /// The connection is closed and drained: remove it.
    Drained,
    /// Client: the server sent a NEW_TOKEN token for a later connection (RFC 9000
    /// §8.1.3).
    NewToken(Vec<u8>),
}

/// What the connection hands to others, in the order it happened: events for the
/// application, DATAGRAM payloads received (RFC 9221), events for the endpoint, and the
/// event log (qlog writer, metric collector) when one is attached.
#[derive(Default)]
pub(super) struct Outbox {
    events: VecDeque<ConnectionEvent>,
    datagrams: VecDeque<Vec<u8>>,
    endpoint_events: VecDeque<EndpointEvent>,
    sink: Option<Box<dyn EventSink>>,
}

impl Outbox {
    pub fn push_event(&mut self, event: ConnectionEvent) {
        self.events.push_back(event);
    }

    pub fn pop_event(&mut self) -> Option<ConnectionEvent> {
        self.events.pop_front()
    }

    /// Application events not yet collected.
    pub fn pending_events(&self) -> usize {
        self.events.len()
    }

    pub fn push_endpoint_event(&mut self, event: EndpointEvent) {
        self.endpoint_events.push_back(event);
    }

    pub fn pop_endpoint_event(&mut self) -> Option<EndpointEvent> {
        self.endpoint_events.pop_front()
    }

    /// Queues a DATAGRAM frame's payload. DATAGRAM frames have no flow control; a
    /// receiver that cannot keep them may drop them (RFC 9221 §5): past
    /// [`MAX_QUEUED_DATAGRAMS`] the oldest unread one goes. Returns whether one was
    /// dropped.
    pub fn push_datagram(&mut self, payload: &[u8]) -> bool {
        let dropped = self.datagrams.len() >= MAX_QUEUED_DATAGRAMS;
        if dropped {
            self.datagrams.pop_front();
        }
        self.datagrams.push_back(payload.to_vec());
        dropped
    }

    pub fn pop_datagram(&mut self) -> Option<Vec<u8>> {
        self.datagrams.pop_front()
    }

    /// (payloads, bytes) of the DATAGRAM payloads not yet read.
    pub fn queued_datagrams(&self) -> (usize, usize) {
        let bytes = self.datagrams.iter().map(Vec::len).sum();
        (self.datagrams.len(), bytes)
    }

    pub fn attach_sink(&mut self, sink: Box<dyn EventSink>) {
        self.sink = Some(sink);
    }

    pub fn take_sink(&mut self) -> Option<Box<dyn EventSink>> {
        self.sink.take()
    }

    /// Whether an event sink is attached (so callers can skip building events).
    pub fn logging(&self) -> bool {
        self.sink.is_some()
    }

    /// Hands `event` to the sink, if one is attached.
    pub fn log(&mut self, now: Instant, event: &Event) {
        if let Some(s) = self.sink.as_mut() {
            s.event(now, event);
        }
    }

    /// What the sink reads of packets' frames; `None` without a sink.
    pub fn frame_detail(&self) -> Option<FrameDetail> {
        self.sink.as_ref().map(|s| s.frame_detail())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{SharedSink, VecSink};

    #[test]
    fn queues_keep_their_order_and_are_separate() {
        let mut o = Outbox::default();
        o.push_event(ConnectionEvent::HandshakeCompleted);
        o.push_event(ConnectionEvent::HandshakeConfirmed);
        o.push_endpoint_event(EndpointEvent::Drained);
        assert_eq!(o.pending_events(), 2);
        assert_eq!(o.pop_event(), Some(ConnectionEvent::HandshakeCompleted));
        assert_eq!(o.pop_event(), Some(ConnectionEvent::HandshakeConfirmed));
        assert_eq!(o.pop_event(), None);
        assert_eq!(o.pop_endpoint_event(), Some(EndpointEvent::Drained));
        assert_eq!(o.pop_endpoint_event(), None);
    }

    #[test]
    fn datagrams_are_bounded_and_the_oldest_is_dropped() {
        let mut o = Outbox::default();
        for i in 0..MAX_QUEUED_DATAGRAMS {
            assert!(!o.push_datagram(&(i as u32).to_be_bytes()));
        }
        assert!(o.push_datagram(b"last"));
        assert_eq!(
            o.queued_datagrams(),
            (MAX_QUEUED_DATAGRAMS, 4 * MAX_QUEUED_DATAGRAMS)
        );
        assert_eq!(o.pop_datagram(), Some(1u32.to_be_bytes().to_vec()));
    }

    #[test]
    fn events_reach_the_sink_only_while_attached() {
        let mut o = Outbox::default();
        let sink = SharedSink::new(VecSink::new());
        let event = Event::KeyDiscarded {
            key: crate::events::KeyType::OneRtt,
        };
        o.log(Instant::ZERO, &event);
        assert!(!o.logging() && o.frame_detail().is_none());
        o.attach_sink(Box::new(sink.clone()));
        assert!(o.logging());
        o.log(Instant::ZERO, &event);
        assert!(o.take_sink().is_some() && !o.logging());
        o.log(Instant::ZERO, &event);
        assert_eq!(sink.lock().events.len(), 1);
    }
}
