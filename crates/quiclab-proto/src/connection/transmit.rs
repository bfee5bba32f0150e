//! A datagram the connection asks its driver to send, and the smallest size of a
//! datagram carrying an Initial.

use crate::ecn::Ecn;
use std::net::SocketAddr;

/// A datagram to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmit {
    pub destination: SocketAddr,
    /// The local address to send from: `None` (always, unless the connection was told
    /// to [`migrate`](crate::Connection::migrate)) is the driver's default socket.
    /// `Endpoint::poll_transmit_burst` does not carry it: drivers of migrating
    /// connections use `poll_transmit`.
    pub source: Option<SocketAddr>,
    /// Bytes appended to the caller's buffer.
    pub size: usize,
    /// The ECN codepoint to set in the datagram's IP header.
    pub ecn: Ecn,
}

/// RFC 9000 §14.1: a client expands datagrams carrying Initial packets to at least this
/// size, and a server only creates a connection for (and only answers with Version
/// Negotiation) a datagram at least this large.
pub const MIN_INITIAL_DATAGRAM: usize = 1200;
