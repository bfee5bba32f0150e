//! The `datagram` workload: a real-time media-like sender of RFC 9221 DATAGRAM frames
//! at a fixed rate, and the receiver that measures them. Each payload starts with a
//! sequence number and its send time (8 bytes each, big-endian), so the receiver
//! counts distinct deliveries and one-way delays (application to application, the
//! sender's queueing included).

use crate::output::results::{DatagramResult, FlowResult};
use quiclab_link::quantile::percentile;
use quiclab_proto::{Connection, DatagramError, Instant};
use std::collections::BTreeSet;
use std::time::Duration;

pub use crate::scenario::DATAGRAM_STAMP_LEN as STAMP_LEN;

/// What the workload measured, for the flow's results.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DatagramMeasure {
    /// Payloads the sender handed to QUIC (accepted by `send_datagram`).
    pub sent: u64,
    /// Payloads QUIC refused (too large for the path or the peer's limit).
    pub refused: u64,
    /// Distinct payloads the receiver got, and their one-way delays.
    pub delivered: BTreeSet<u64>,
    pub delays: Vec<Duration>,
    /// Copies of payloads already received (the network duplicated a packet).
    pub duplicates: u64,
    /// The sender's QUIC statistics at the end: DATAGRAM frames sent and payloads
    /// dropped from its send queue (set by the sender on every call).
    pub frames_sent: u64,
    pub dropped_at_sender: u64,
}

impl DatagramMeasure {
    /// Writes the datagram metrics into a flow's result.
    pub fn fill(&self, r: &mut FlowResult) {
        let delivered = self.delivered.len() as u64;
        let mut ms: Vec<f64> = self.delays.iter().map(|d| d.as_secs_f64() * 1e3).collect();
        ms.sort_by(f64::total_cmp);
        // The project's one percentile definition (linear between closest ranks).
        let pick = |q: f64| (!ms.is_empty()).then(|| percentile(&ms, q));
        r.datagrams = Some(DatagramResult {
            sent: self.sent,
            refused: self.refused,
            frames_sent: self.frames_sent,
            dropped_at_sender: self.dropped_at_sender,
            delivered,
            lost: self.frames_sent.saturating_sub(delivered),
            duplicates: self.duplicates,
            owd_p50_ms: pick(0.5),
            owd_p90_ms: pick(0.9),
            owd_p99_ms: pick(0.99),
            owd_max_ms: ms.last().copied(),
        });
    }
}

/// The sending side: `rate_pps` payloads of `size` bytes per second for `duration`,
/// from when the handshake completes.
#[derive(Clone, Debug)]
pub struct DatagramSender {
    size: usize,
    interval: Duration,
    count: u64,
    /// When the first payload went (the handshake's completion).
    start: Option<Instant>,
    next_at: Option<Instant>,
    issued: u64,
}

impl DatagramSender {
    /// `size` is at least [`STAMP_LEN`] and `rate_pps` positive (scenario validation).
    pub fn new(rate_pps: f64, size: u64, duration_s: f64) -> Self {
        DatagramSender {
            size: size as usize,
            interval: Duration::from_secs_f64(1.0 / rate_pps),
            count: (rate_pps * duration_s).round() as u64,
            start: None,
            next_at: None,
            issued: 0,
        }
    }

    /// When the next payload is due (the simulator wakes the client then).
    pub fn wakeup(&self) -> Option<Instant> {
        self.next_at.filter(|_| self.issued < self.count)
    }

    /// Sends the payloads due by `now`; returns whether the workload is done: all
    /// sent and nothing left queued or in flight.
    pub fn drive(&mut self, now: Instant, conn: &mut Connection, m: &mut DatagramMeasure) -> bool {
        let first = *self.start.get_or_insert(now);
        while self.issued < self.count {
            let due = first + self.interval.mul_f64(self.issued as f64);
            if due > now {
                self.next_at = Some(due);
                break;
            }
            let mut payload = vec![0u8; self.size];
            payload[..8].copy_from_slice(&self.issued.to_be_bytes());
            payload[8..STAMP_LEN].copy_from_slice(&now.as_nanos().to_be_bytes());
            match conn.send_datagram(now, payload) {
                Ok(()) => m.sent += 1,
                Err(DatagramError::Closed) => return false,
                Err(_) => m.refused += 1,
            }
            self.issued += 1;
        }
        m.frames_sent = conn.stats().datagram_frames_sent;
        m.dropped_at_sender = conn.stats().datagram_send_drops;
        self.issued == self.count
            && conn.datagram_send_queued().0 == 0
            && conn.bytes_in_flight() == 0
    }
}

/// The receiving side: reads every payload and records its sequence number and delay.
/// Returns the bytes of the payloads delivered for the first time (the goodput).
pub fn receive(now: Instant, conn: &mut Connection, m: &mut DatagramMeasure) -> u64 {
    let mut bytes = 0;
    while let Some(p) = conn.recv_datagram() {
        let (Some(seq), Some(sent)) = (
            p.get(..8)
                .and_then(|b| b.try_into().ok())
                .map(u64::from_be_bytes),
            p.get(8..STAMP_LEN)
                .and_then(|b| b.try_into().ok())
                .map(u64::from_be_bytes),
        ) else {
            continue;
        };
        if !m.delivered.insert(seq) {
            m.duplicates += 1;
            continue;
        }
        let sent = Instant::from_nanos(sent);
        m.delays.push(now.saturating_duration_since(sent));
        bytes += p.len() as u64;
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_interpolate_and_lost_counts_frames_not_delivered() {
        let mut m = DatagramMeasure {
            sent: 12,
            frames_sent: 11,
            dropped_at_sender: 1,
            ..Default::default()
        };
        for i in 0..10u64 {
            m.delivered.insert(i);
            m.delays.push(Duration::from_millis(10 * (10 - i)));
        }
        let mut r = FlowResult::default();
        m.fill(&mut r);
        let d = r.datagrams.unwrap();
        assert_eq!((d.delivered, d.lost, d.dropped_at_sender), (10, 1, 1));
        // Delays 10..=100 ms: rank (n - 1)·q between the two closest samples.
        let close = |v: Option<f64>, want: f64| (v.unwrap() - want).abs() < 1e-9;
        assert!(close(d.owd_p50_ms, 55.0), "{:?}", d.owd_p50_ms);
        assert!(close(d.owd_p90_ms, 91.0), "{:?}", d.owd_p90_ms);
        assert!(close(d.owd_p99_ms, 99.1), "{:?}", d.owd_p99_ms);
        assert_eq!(d.owd_max_ms, Some(100.0));
        let mut empty = FlowResult::default();
        DatagramMeasure::default().fill(&mut empty);
        assert_eq!(empty.datagrams.unwrap().owd_p50_ms, None);
    }
}
