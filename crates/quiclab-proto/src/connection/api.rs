//! The application's and the driver's calls: streams, close, events, the event sink,
//! and what they may read about the connection.

use super::lifecycle::{CloseReason, State};
use super::outbox::{ConnectionEvent, EndpointEvent};
use super::stats::ConnectionStats;
use super::Connection;
use crate::cc::CongestionController;
use crate::events::EventSink;
use crate::events::{ConnectionState, Event, Owner};
use crate::recovery::RttEstimator;
use crate::streams::{ReadOutcome, SendData, StreamError};
use crate::time::Instant;
use crate::wire::{ConnectionId, Side, TransportParameters};
use crate::wire::{Dir, StreamId};
use std::net::SocketAddr;

impl Connection {
    /// Attaches an event sink (qlog writer, metric collector). Events before this call
    /// are not replayed, so attach it right after creation.
    pub fn set_event_sink(&mut self, now: Instant, sink: Box<dyn EventSink>) {
        self.outbox.attach_sink(sink);
        let ev = Event::ConnectionStarted {
            side: self.side,
            version: self.versions.current,
            local_cid: self.cids.local_cid(),
            remote_cid: self.cids.remote_cid(),
        };
        self.emit(now, ev);
        let params = Box::new(self.params.local.clone());
        self.emit(
            now,
            Event::ParametersSet {
                owner: Owner::Local,
                params,
                alpn: None,
                tls_cipher: None,
                resumption: Default::default(),
            },
        );
    }

    /// Takes the event sink back (for example to flush a qlog file).
    pub fn take_event_sink(&mut self) -> Option<Box<dyn EventSink>> {
        self.outbox.take_sink()
    }

    pub(super) fn emit(&mut self, now: Instant, event: Event) {
        self.outbox.log(now, &event);
    }

    /// Whether an event sink is attached (so callers can skip building events).
    pub(super) fn logging(&self) -> bool {
        self.outbox.logging()
    }

    pub(super) fn set_state_event(&mut self, now: Instant, new: ConnectionState) {
        if self.logging() {
            self.emit(now, Event::ConnectionStateUpdated { new });
        }
    }

    pub fn side(&self) -> Side {
        self.side
    }
    pub fn remote_address(&self) -> SocketAddr {
        self.path.remote
    }
    /// The client's original Destination Connection ID (for logs and qlog group IDs).
    pub fn original_dcid(&self) -> ConnectionId {
        self.params.original_dcid
    }
    /// The connection ID we currently put in packets we send.
    pub fn local_cid(&self) -> ConnectionId {
        self.cids.local_cid()
    }
    pub fn is_handshake_complete(&self) -> bool {
        self.handshake.complete
    }
    pub fn is_handshake_confirmed(&self) -> bool {
        self.handshake.confirmed
    }
    /// True once CONNECTION_CLOSE was sent or received (or the idle timer fired).
    pub fn is_closed(&self) -> bool {
        self.lifecycle.is_closed()
    }
    /// True when the connection's state can be dropped.
    pub fn is_drained(&self) -> bool {
        self.lifecycle.state() == State::Drained
    }
    /// Whether a datagram ending in `tail` (its last 16 bytes) is a Stateless Reset
    /// from the peer (RFC 9000 §10.3.1), for the endpoint to route one whose
    /// connection ID it does not know.
    pub(crate) fn is_stateless_reset(&self, tail: &[u8]) -> bool {
        self.cids.is_stateless_reset(tail) | self.path_cids.is_stateless_reset(tail)
    }
    pub fn close_reason(&self) -> Option<&CloseReason> {
        self.lifecycle.reason()
    }
    pub fn stats(&self) -> &ConnectionStats {
        &self.stats
    }
    pub fn rtt(&self) -> &RttEstimator {
        self.path.recovery.rtt()
    }
    pub fn congestion_window(&self) -> u64 {
        self.path.recovery.cc().window()
    }
    pub fn congestion_controller(&self) -> &dyn CongestionController {
        self.path.recovery.cc()
    }
    /// STREAM data bytes this side sent more than once (lost ranges resent, PTO
    /// probes' copies): the cost of losses in stream data, for drivers' metrics.
    pub fn stream_bytes_retransmitted(&self) -> u64 {
        self.streams.retransmitted_bytes()
    }
    /// STREAM data bytes sent as the redundant scheduler's copies on further paths
    /// (draft-ietf-quic-multipath §5.5, `multipath.scheduler = "redundant"`).
    pub fn stream_bytes_copied(&self) -> u64 {
        self.streams.copied_bytes()
    }
    /// Copies the redundant scheduler dropped unsent because a path's queue was full
    /// (`MAX_COPIES_PER_PATH`: the path lagged that far behind the others).
    pub fn multipath_copies_dropped(&self) -> u64 {
        self.sched.copies.dropped
    }
    /// Bytes in flight over all packet number spaces.
    pub fn bytes_in_flight(&self) -> u64 {
        self.path.recovery.bytes_in_flight()
    }
    /// The peer's transport parameters, once received.
    pub fn peer_params(&self) -> Option<&TransportParameters> {
        self.params.peer()
    }
    /// The QUIC version in use (after any Version Negotiation or compatible upgrade).
    pub fn version(&self) -> u32 {
        self.versions.current
    }
    /// The negotiated TLS cipher suite, once chosen.
    pub fn cipher_suite(&self) -> Option<rustls::CipherSuite> {
        self.tls.cipher_suite().map(|s| s.suite())
    }
    /// The negotiated ALPN protocol.
    pub fn alpn(&self) -> Option<&[u8]> {
        self.tls.alpn()
    }

    // ----- application API -----

    /// Opens a stream; `None` when the peer's stream limit is reached.
    pub fn open_stream(&mut self, dir: Dir) -> Option<StreamId> {
        if !self.handshake.complete && self.side == Side::Server {
            return None;
        }
        self.streams.open(dir)
    }
    /// The next stream the peer opened.
    pub fn accept_stream(&mut self, dir: Dir) -> Option<StreamId> {
        self.streams.accept(dir)
    }
    /// Buffers data for a stream; returns how much was taken.
    pub fn write(&mut self, id: StreamId, data: &[u8]) -> Result<usize, StreamError> {
        self.write_from(id, SendData::Copied(data))
    }
    /// [`Self::write`] without a copy: the stream keeps a reference to `data` until it
    /// is acknowledged (for generated bodies; the simulator's bulk senders).
    pub fn write_static(
        &mut self,
        id: StreamId,
        data: &'static [u8],
    ) -> Result<usize, StreamError> {
        self.write_from(id, SendData::Static(data))
    }
    /// [`Self::write`] of data copied or kept by reference, as `data` says.
    pub fn write_from(&mut self, id: StreamId, data: SendData) -> Result<usize, StreamError> {
        if self.is_closed() {
            return Err(StreamError::Closed);
        }
        self.streams.write_from(id, data)
    }
    pub fn finish(&mut self, id: StreamId) -> Result<(), StreamError> {
        self.streams.finish(id)
    }
    pub fn reset_stream(&mut self, id: StreamId, error_code: u64) -> Result<(), StreamError> {
        self.streams.reset(id, error_code)
    }
    pub fn stop_sending(&mut self, id: StreamId, error_code: u64) -> Result<(), StreamError> {
        self.streams.stop_sending(id, error_code)
    }
    pub fn read(&mut self, id: StreamId, buf: &mut [u8]) -> Result<ReadOutcome, StreamError> {
        self.streams.read(id, buf)
    }

    /// Closes the connection with an application error code (CONNECTION_CLOSE 0x1d).
    pub fn close(&mut self, now: Instant, code: u64, reason: &str) {
        let reason = CloseReason::Application {
            owner: Owner::Local,
            code,
            reason: reason.to_string(),
        };
        self.start_closing(now, reason);
    }

    /// The next event for the application.
    pub fn poll_event(&mut self) -> Option<ConnectionEvent> {
        if let Some(e) = self.outbox.pop_event() {
            return Some(e);
        }
        self.streams.poll_event().map(ConnectionEvent::Stream)
    }

    /// The next DATAGRAM frame payload received (RFC 9221); to send, see
    /// [`Connection::send_datagram`].
    pub fn recv_datagram(&mut self) -> Option<Vec<u8>> {
        self.outbox.pop_datagram()
    }

    /// The next event for the endpoint.
    pub fn poll_endpoint_event(&mut self) -> Option<EndpointEvent> {
        self.outbox.pop_endpoint_event()
    }
}
