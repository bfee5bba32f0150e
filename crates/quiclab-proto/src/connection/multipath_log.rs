//! Packet events of a multipath connection (qlog `path_id`, draft-ietf-quic-multipath
//! §2.3: each path has its own packet number space, so a packet is named by its path
//! and number). Path 0's packets are logged where single-path ones are (`send.rs`,
//! `recv.rs`, `loss.rs`) with [`Connection::logged_path_id`]; the paths above 0 log
//! here. Nothing is built without a sink, and a connection that did not negotiate
//! multipath logs no `path_id`, so single-path traces keep their bytes.

use super::parsed::Parsed;
use super::Connection;
use crate::events::{Event, FrameSummary, LossTrigger, PacketHeaderInfo};
use crate::time::Instant;
use crate::wire::{decode_frames, ConnectionId, PacketType, PathId};

impl Connection {
    /// The `path_id` of a packet of type `ty` on `path`: only 1-RTT packets of a
    /// connection that negotiated multipath belong to a path's space (§2.3).
    pub(super) fn logged_path_id(&self, ty: PacketType, path: u32) -> Option<u32> {
        (self.multipath.is_negotiated() && ty == PacketType::OneRtt).then_some(path)
    }

    /// `packet_sent` for a packet on `path` (above 0) whose plaintext frames are
    /// `payload` (decoded again here, only with a sink).
    pub(super) fn log_path_sent(
        &mut self,
        now: Instant,
        (path, pn, dcid): (PathId, u64, ConnectionId),
        payload: &[u8],
        size: usize,
    ) {
        let Some(frames) = self.path_frame_list(payload) else {
            return;
        };
        let header = self.path_header(path, pn, dcid);
        let event = Event::PacketSent {
            header,
            size,
            frames,
        };
        self.emit_packet(now, event);
    }

    /// `packet_received` for an authenticated packet on `path` (above 0).
    pub(super) fn log_path_received(
        &mut self,
        now: Instant,
        (path, pn, h): (PathId, u64, &Parsed),
        payload: &[u8],
        size: usize,
    ) {
        let Some(frames) = self.path_frame_list(payload) else {
            return;
        };
        let header = self.path_header(path, pn, h.dcid);
        let event = Event::PacketReceived {
            header,
            size,
            frames,
        };
        self.emit_packet(now, event);
    }

    /// `packet_lost` for packet `pn` of `path` (above 0).
    pub(super) fn log_path_lost(&mut self, now: Instant, path: PathId, pn: u64, by_timer: bool) {
        if !self.logging() {
            return;
        }
        // RFC 9002 §6.1: a loss found on a timer is a time-threshold one; on an ACK it
        // may be either (the path's recovery does not say which): packet threshold.
        let trigger = if by_timer {
            LossTrigger::TimeThreshold
        } else {
            LossTrigger::ReorderingThreshold
        };
        let event = Event::PacketLost {
            ty: PacketType::OneRtt,
            pn,
            trigger,
            path_id: Some(path.0),
        };
        self.emit(now, event);
    }

    fn path_header(&self, path: PathId, pn: u64, dcid: ConnectionId) -> PacketHeaderInfo {
        PacketHeaderInfo {
            ty: PacketType::OneRtt,
            pn: Some(pn),
            dcid,
            scid: None,
            path_id: Some(path.0),
        }
    }

    /// The frames of `payload` as the sink reads them; `None` without a sink.
    fn path_frame_list(&mut self, payload: &[u8]) -> Option<Vec<FrameSummary>> {
        let detail = self.frame_detail()?;
        let mut list = self.take_frame_list();
        let decoded = decode_frames(payload).filter_map(Result::ok);
        list.extend(decoded.map(|f| FrameSummary::with_detail(&f, detail)));
        Some(list)
    }
}
