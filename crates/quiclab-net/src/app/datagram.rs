//! RFC 9221 DATAGRAM frames over real UDP: the client's exchange (send a number of
//! datagrams on each connection once its handshake completes, count what comes back)
//! wrapped around the hq-interop client, and the server's echo.

use crate::app::hq;
use crate::{AppError, Application};
use quiclab_proto::{Connection, ConnectionHandle, DatagramError, Endpoint, Instant};
use std::collections::BTreeMap;
use std::time::Duration;

/// Payloads kept queued in the connection at once: the exchange tops the queue up as
/// the congestion controller drains it, so none is dropped at the sender.
const QUEUED_AT_ONCE: usize = 64;
/// How long the client waits for echoes once every datagram it sent was acknowledged
/// (acknowledged means the peer's QUIC received it, RFC 9221 §5.2; its echo follows).
const LINGER: Duration = Duration::from_secs(1);

/// What to send on each connection: `count` payloads of `size` bytes, each starting
/// with its sequence number (8 bytes big-endian, cut short for smaller sizes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DatagramPlan {
    pub count: u64,
    pub size: usize,
}

impl DatagramPlan {
    /// `COUNT[:SIZE]` (the command line's `--datagrams`); SIZE defaults to 100.
    pub fn parse(s: &str) -> Result<DatagramPlan, String> {
        let (count, size) = s.split_once(':').unwrap_or((s, "100"));
        let count = count
            .parse()
            .map_err(|_| format!("--datagrams {s:?}: COUNT must be a whole number"))?;
        let size = size
            .parse()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("--datagrams {s:?}: SIZE must be a positive number"))?;
        Ok(DatagramPlan { count, size })
    }
}

/// One connection's exchange.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DatagramCounts {
    /// Payloads handed to the connection, and those it refused (too large, or the
    /// peer offers no DATAGRAM support).
    pub sent: u64,
    pub refused: u64,
    /// Payloads received from the peer (its echoes).
    pub received: u64,
    /// Dropped from our send queue (RFC 9221 §5), as the connection counted.
    pub dropped_at_sender: u64,
    /// When every payload had been sent and acknowledged.
    acked_at: Option<Instant>,
    done: bool,
}

/// The hq-interop client with a DATAGRAM exchange on each connection. The client
/// holds its connections open after their fetches; this closes each one once its
/// fetches are done and its exchange ended: every echo back, or [`LINGER`] after the
/// last datagram was acknowledged, or the peer refused datagrams.
pub struct DatagramClient {
    inner: hq::client::Client,
    plan: DatagramPlan,
    conns: BTreeMap<ConnectionHandle, DatagramCounts>,
}

impl DatagramClient {
    pub fn new(mut inner: hq::client::Client, plan: DatagramPlan) -> Self {
        inner.hold();
        DatagramClient {
            inner,
            plan,
            conns: BTreeMap::new(),
        }
    }

    /// Each connection's counts, by handle.
    pub fn counts(&self) -> &BTreeMap<ConnectionHandle, DatagramCounts> {
        &self.conns
    }

    pub fn failures(&self) -> usize {
        self.inner.failures()
    }

    /// Sends what is due and counts what arrived; returns whether the exchange ended.
    fn exchange(&self, conn: &mut Connection, c: &mut DatagramCounts, now: Instant) -> bool {
        while conn.recv_datagram().is_some() {
            c.received += 1;
        }
        while c.sent + c.refused < self.plan.count && conn.datagram_send_queued().0 < QUEUED_AT_ONCE
        {
            let seq = (c.sent + c.refused).to_be_bytes();
            let mut payload = vec![0u8; self.plan.size];
            let n = seq.len().min(payload.len());
            payload[..n].copy_from_slice(&seq[seq.len() - n..]);
            match conn.send_datagram(now, payload) {
                Ok(()) => c.sent += 1,
                Err(DatagramError::TooLarge { .. }) => c.refused += 1,
                // The peer does not accept any: nothing to exchange.
                Err(_) => {
                    c.refused = self.plan.count - c.sent;
                    break;
                }
            }
        }
        c.dropped_at_sender = conn.stats().datagram_send_drops;
        let all_sent = c.sent + c.refused == self.plan.count;
        if all_sent && conn.datagram_send_queued().0 == 0 && conn.bytes_in_flight() == 0 {
            c.acked_at.get_or_insert(now);
        }
        c.received >= c.sent && all_sent
            || c.acked_at
                .is_some_and(|t| now.saturating_duration_since(t) >= LINGER)
    }
}

impl Application for DatagramClient {
    fn drive(&mut self, endpoint: &mut Endpoint, now: Instant) -> Result<(), AppError> {
        self.inner.drive(endpoint, now)?;
        let handles: Vec<_> = endpoint.handles().collect();
        for h in handles {
            let Some(conn) = endpoint.connection_mut(h) else {
                continue;
            };
            let mut c = self.conns.remove(&h).unwrap_or_default();
            if conn.is_handshake_complete() && !conn.is_closed() && !c.done {
                c.done = self.exchange(conn, &mut c, now);
                if c.done {
                    note!(
                        "datagrams: sent {} received {} refused {} dropped at sender {}",
                        c.sent,
                        c.received,
                        c.refused,
                        c.dropped_at_sender
                    );
                }
            }
            if c.done && !self.inner.fetches_pending() && !conn.is_closed() {
                conn.close(now, 0, "done");
            }
            self.conns.insert(h, c);
        }
        Ok(())
    }

    fn finished(&self, endpoint: &Endpoint) -> bool {
        self.inner.finished(endpoint)
    }

    fn shutdown(&mut self, endpoint: &mut Endpoint, now: Instant) {
        self.inner.shutdown(endpoint, now)
    }
}

/// The server's echo: every DATAGRAM payload received goes back to its sender (RFC
/// 9221). Payloads arrive only when the server offers max_datagram_frame_size; the
/// echo fails quietly when the peer accepts none or the path shrank.
pub fn echo(conn: &mut Connection, now: Instant) {
    while let Some(d) = conn.recv_datagram() {
        if conn.send_datagram(now, d).is_err() {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::DatagramPlan;

    #[test]
    fn plans_parse() {
        let p = |s| DatagramPlan::parse(s);
        assert_eq!(
            p("10"),
            Ok(DatagramPlan {
                count: 10,
                size: 100
            })
        );
        assert_eq!(
            p("5:1000"),
            Ok(DatagramPlan {
                count: 5,
                size: 1000
            })
        );
        assert!(p("x").is_err());
        assert!(p("5:0").is_err());
        assert!(p("5:").is_err());
    }
}
