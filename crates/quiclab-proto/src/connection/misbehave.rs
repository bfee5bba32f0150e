//! Test support for misbehaving-peer tests (cargo feature `testing`): a connection
//! sends a packet its send path would never build, or transport parameters its
//! encoder would never write, so that the peer's answer to an RFC violation can be
//! checked through the pair harness ([`crate::testing::Pair::send_crafted`],
//! [`crate::testing::with_tampered_transport_parameters`]).

use super::spaces::SpaceId;
use super::Connection;
use crate::crypto::TAG_LEN;
use crate::time::Instant;
use crate::wire::{decode_frames, ConnectionId};

impl Connection {
    /// One datagram holding one packet of `space` whose payload is `frames`, encoded by
    /// the caller and never checked, protected and numbered as this connection
    /// protects and numbers its packets, and recorded as sent. An Initial packet is
    /// padded to 1200 bytes (RFC 9000 §14.1), so that a server takes it. With
    /// `Some(scid)`, a long header carries that Source Connection ID instead of ours
    /// (it must be as long as ours); short headers have none. `None` when `space` has
    /// no keys (not yet, or discarded).
    ///
    /// # Panics
    /// If `scid` differs in length from our connection ID.
    pub fn craft_datagram(
        &mut self,
        now: Instant,
        space: SpaceId,
        frames: &[u8],
        scid: Option<ConnectionId>,
    ) -> Option<Vec<u8>> {
        if !self.space_sendable(space) {
            return None;
        }
        let mut buf = Vec::new();
        let mut p = self.open_packet(&mut buf, space);
        if let Some(scid) = scid.filter(|_| buf[0] & 0x80 != 0) {
            let ours = self.cids.local_cid();
            assert_eq!(scid.len(), ours.len(), "crafted SCID length");
            // RFC 9000 §17.2: flags, version, DCID length and DCID, SCID length.
            let at = 6 + usize::from(buf[5]) + 1;
            buf[at..at + scid.len()].copy_from_slice(scid.as_bytes());
        }
        buf.extend_from_slice(frames);
        p.ack_eliciting = decode_frames(frames).any(|f| f.map_or(true, |f| f.is_ack_eliciting()));
        let pad = if space == SpaceId::Initial {
            super::MIN_INITIAL_DATAGRAM.saturating_sub(buf.len() + TAG_LEN)
        } else {
            0
        };
        let in_flight = self.finish_packet(now, &mut buf, p, pad);
        self.datagram_done(now, 0, &buf, in_flight);
        Some(buf)
    }
}
