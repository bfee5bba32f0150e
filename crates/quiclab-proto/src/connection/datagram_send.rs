//! Sending DATAGRAM frames (RFC 9221): the application's call, the size that fits
//! now, and writing queued payloads into 1-RTT packets. Congestion control and pacing
//! apply as to stream data (§5.4: the send path asks the window before building a
//! data packet); the frames are ack-eliciting (§5.2) and count in flight, and are not
//! recorded for retransmission, so a lost one is gone.

use super::datagram_queue::DatagramError;
use super::send::OpenPacket;
use super::spaces::SpaceId;
use super::stats::tally;
use super::Connection;
use crate::crypto::TAG_LEN;
use crate::events::{DatagramDropReason, Event};
use crate::time::Instant;
use crate::wire::{varint, Frame, PathId};

/// Largest payload whose DATAGRAM frame (type, Length, data; RFC 9221 §4) is at most
/// `room` bytes.
fn payload_within(room: u64) -> u64 {
    [1u64, 2, 4, 8]
        .into_iter()
        .filter_map(|len_bytes| {
            let p = room.checked_sub(1 + len_bytes)?;
            (varint::len(p) as u64 <= len_bytes).then_some(p)
        })
        .max()
        .unwrap_or(0)
}

impl Connection {
    /// Queues `data` to go out in one DATAGRAM frame (RFC 9221) as soon as the
    /// congestion controller and the pacer allow; follow it with
    /// [`Connection::poll_transmit`]. Refused (nothing queued) when the peer accepts no
    /// DATAGRAM frame or this one would not fit (see
    /// [`Connection::max_datagram_payload`]). When the queue's bounds
    /// (`TransportConfig::datagram_send`) are reached the oldest queued payloads are
    /// dropped, counted in `stats().datagram_send_drops` and logged. Datagrams are
    /// sent in 1-RTT packets only, never retransmitted and not flow-controlled.
    pub fn send_datagram(&mut self, now: Instant, data: Vec<u8>) -> Result<(), DatagramError> {
        if self.is_closed() {
            return Err(DatagramError::Closed);
        }
        let max = self.max_datagram_payload()?;
        if data.len() > max {
            return Err(DatagramError::TooLarge {
                size: data.len(),
                max,
            });
        }
        // RFC 9221 §5: a sender may drop what the congestion controller holds back.
        let dropped = self.datagram_queue.push(data, &self.config.datagram_send);
        for length in dropped {
            self.on_datagram_dropped(now, length, DatagramDropReason::QueueFull);
        }
        Ok(())
    }

    /// The largest DATAGRAM payload [`Connection::send_datagram`] accepts now: within
    /// the peer's max_datagram_frame_size (RFC 9221 §3) and one otherwise empty 1-RTT
    /// packet at the current [`Connection::max_datagram_size`] (§5: not fragmented).
    /// It grows when PMTU discovery confirms a larger size.
    pub fn max_datagram_payload(&self) -> Result<usize, DatagramError> {
        let peer = self.params.peer().ok_or(DatagramError::PeerParamsUnknown)?;
        let frame_max = match peer.max_datagram_frame_size {
            None | Some(0) => return Err(DatagramError::UnsupportedByPeer),
            Some(m) => m,
        };
        // Short header: first byte, DCID, a packet number of up to 4 bytes (RFC 9000
        // §17.3.1); then the AEAD tag, and a byte the send path may keep for
        // IMMEDIATE_ACK.
        let header = 1 + self.cids.remote_cid().len() + 4;
        let room = self
            .max_datagram_size()
            .saturating_sub(header + TAG_LEN + 1);
        Ok(payload_within(frame_max).min(payload_within(room as u64)) as usize)
    }

    /// (payloads, bytes) queued for sending: within `TransportConfig::datagram_send`'s
    /// bounds (one payload may exceed the byte bound alone).
    pub fn datagram_send_queued(&self) -> (usize, usize) {
        self.datagram_queue.len()
    }

    /// Whether DATAGRAM payloads wait and may be sent now: not while the client still
    /// sends 0-RTT (the peer's parameter may arrive before the 1-RTT keys), so that no
    /// packet is built for frames it may not carry.
    pub(super) fn datagrams_pending(&self) -> bool {
        !self.datagram_queue.is_empty() && !self.sending_zero_rtt(SpaceId::Data)
    }

    /// Writes queued DATAGRAM frames into path 0's packet (or, path 0 abandoned, the
    /// carrier's), if that path is the one to carry them (`multipath_datagram.rs`).
    pub(super) fn write_datagram_frames(
        &mut self,
        now: Instant,
        buf: &mut Vec<u8>,
        p: &mut OpenPacket,
        max: usize,
    ) {
        // RFC 9221 §3 allows 0-RTT only with the server's remembered parameter, which
        // quiclab does not keep.
        if p.zero_rtt || self.datagram_queue.is_empty() {
            return;
        }
        let home = self.carrier_path().unwrap_or(PathId::INITIAL);
        if self.datagram_path() == Some(home)
            && self.write_datagrams(now, buf, p.payload_start, max)
        {
            p.ack_eliciting = true;
        }
    }

    /// Writes queued DATAGRAM frames, oldest first, while they fit below `max`, in a
    /// packet whose frames start at `payload_start`. A payload that no longer fits an
    /// empty packet (the path's size shrank) is dropped. Returns whether one was
    /// written.
    pub(super) fn write_datagrams(
        &mut self,
        now: Instant,
        buf: &mut Vec<u8>,
        payload_start: usize,
        max: usize,
    ) -> bool {
        let mut wrote = false;
        while let Some(len) = self.datagram_queue.front_len() {
            let frame_len = 1 + varint::len(len as u64) + len;
            if buf.len() + frame_len <= max {
                let data = self.datagram_queue.pop().expect("front exists");
                Frame::Datagram { data: &data }.encode(buf);
                wrote = true;
                tally(&mut self.stats.datagram_frames_sent, 1);
                continue;
            }
            if buf.len() > payload_start {
                break; // the next packet has more room
            }
            self.datagram_queue.pop();
            self.on_datagram_dropped(now, len, DatagramDropReason::TooLarge);
        }
        wrote
    }

    fn on_datagram_dropped(&mut self, now: Instant, length: usize, reason: DatagramDropReason) {
        tally(&mut self.stats.datagram_send_drops, 1);
        if self.logging() {
            self.emit(now, Event::DatagramDropped { length, reason });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::payload_within;

    #[test]
    fn the_payload_leaves_room_for_type_and_length() {
        assert_eq!(payload_within(0), 0);
        assert_eq!(payload_within(2), 0);
        assert_eq!(payload_within(65), 63); // 1-byte Length up to 63
        assert_eq!(payload_within(66), 63); // 64 needs a 2-byte Length
        assert_eq!(payload_within(67), 64);
        assert_eq!(payload_within(1200), 1197);
        assert_eq!(payload_within(65_535), 65_530); // 4-byte Length above 16383
    }
}
