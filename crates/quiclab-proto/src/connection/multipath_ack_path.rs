//! Which path carries each path's acknowledgments on a multipath connection
//! (`multipath.ack_path`; draft-ietf-quic-multipath §3.1: "PATH_ACK frames ... can be
//! returned on any path"; §5.4 ("Computing Path RTT"): an acknowledgment returned on
//! another path makes the RTT sample the sum of one path's forward and the other's
//! return delay).
//!
//! `any` (the default) keeps what the stack did before the knob: path 0's ACK and
//! every other path's PATH_ACK ride in path 0's 1-RTT packets. `same`: each path's
//! PATH_ACK goes on that path. `min_rtt`: every path's acknowledgment goes on the
//! path with the lowest smoothed RTT (path 0's as PATH_ACK with path ID 0). A carrier
//! that cannot send now (not validated, abandoned, without a connection ID or at its
//! anti-amplification limit) falls back to path 0. Once path 0 is abandoned
//! (`multipath_abandon0.rs`), the carrier of the connection's frames
//! (`multipath_carrier.rs`) takes path 0's place in all of this. A packet on a path above 0 that
//! carries only acknowledgments is not ack-eliciting and not in flight (RFC 9002 §2).

use super::send::MIN_PACKET_ROOM;
use super::spaces::SentRecord;
use super::Connection;
use crate::config::AckPath;
use crate::time::Instant;
use crate::wire::{Frame, MultipathFrame, PathId};

impl Connection {
    /// The path whose packets carry `acked`'s acknowledgments.
    pub(super) fn ack_carrier(&self, acked: PathId) -> PathId {
        if !self.multipath.is_negotiated() {
            return PathId::INITIAL;
        }
        // Path 0, or the path carrying its frames once it is abandoned.
        let home = self.carrier_path().unwrap_or(PathId::INITIAL);
        let carrier = match self.config.multipath.ack_path {
            AckPath::Any => return home,
            AckPath::Same => acked,
            AckPath::MinRtt => {
                let path0 = match self.multipath.path0_abandoned {
                    false => self.path.recovery.rtt().smoothed(),
                    true => std::time::Duration::MAX,
                };
                let mut best = (path0, home);
                for (id, s) in self.path_spaces.iter() {
                    let srtt = s.recovery.rtt().smoothed();
                    if self.can_carry_acks(id) && (srtt, id) < best {
                        best = (srtt, id);
                    }
                }
                best.1
            }
        };
        if self.can_carry_acks(carrier) {
            carrier
        } else {
            home
        }
    }

    /// Path 0 while not abandoned, or a path above 0 that can send a packet now.
    fn can_carry_acks(&self, path: PathId) -> bool {
        if path == PathId::INITIAL {
            return !self.multipath.path0_abandoned;
        }
        let (side, factor) = (self.side, self.config.amplification_factor);
        self.path_spaces.get(path).is_some_and(|s| {
            s.validated
                && !s.abandoned
                && !self.path_cids.remote_ids(path).is_empty()
                && s.amplification_budget(side, factor, self.validated_remote())
                    >= MIN_PACKET_ROOM as u64
        })
    }

    /// Whether an acknowledgment that `carrier` carries is due now (its deadline,
    /// RFC 9000 §13.2.1, passed).
    pub(super) fn acks_due_on(&self, now: Instant, carrier: PathId) -> bool {
        let due = |d: Option<Instant>| d.is_some_and(|t| t <= now);
        let data = &self.spaces[crate::connection::spaces::SpaceId::Data as usize];
        (due(data.acks.ack_deadline()) && self.ack_carrier(PathId::INITIAL) == carrier)
            || self
                .path_spaces
                .iter()
                .any(|(id, s)| due(s.acks.ack_deadline()) && self.ack_carrier(id) == carrier)
    }

    /// PATH_ACK frames (§4.1) for every path whose acknowledgments `carrier` carries
    /// and which has packets not yet acknowledged (path 0's only when `carrier` is
    /// another path: on path 0 it is the ACK frame, and `record` notes its largest
    /// acknowledged, RFC 9000 §13.2.4), while they fit below `max`. Returns whether
    /// one was written.
    pub(super) fn write_path_acks(
        &mut self,
        now: Instant,
        buf: &mut Vec<u8>,
        max: usize,
        carrier: PathId,
        record: &mut SentRecord,
    ) -> bool {
        let exp = self.config.ack.ack_delay_exponent;
        let ranges = self.config.ack.max_ack_ranges;
        let mut wrote = false;
        if carrier != PathId::INITIAL && self.ack_carrier(PathId::INITIAL) == carrier {
            let space = crate::connection::spaces::SpaceId::Data;
            let ecn = self.ecn.ack_counts(space);
            let acks = &mut self.spaces[space as usize].acks;
            if acks.has_new() {
                if let Some(ack) = acks.build_ack(now, exp, ranges, ecn) {
                    let (path_id, largest) = (PathId::INITIAL, ack.largest());
                    let frame = Frame::Multipath(MultipathFrame::PathAck { path_id, ack });
                    if buf.len().saturating_add(frame.encoded_len()) > max {
                        return wrote;
                    }
                    frame.encode(buf);
                    record.ack_largest = Some(largest);
                    wrote = true;
                }
            }
        }
        let mut next = None;
        loop {
            let id = self
                .path_spaces
                .iter()
                .map(|(id, _)| id)
                .find(|id| next.is_none_or(|n| *id >= n));
            let Some(path_id) = id else { return wrote };
            next = Some(PathId(path_id.0.saturating_add(1)));
            if self.ack_carrier(path_id) != carrier {
                continue;
            }
            let Some(sp) = self.path_spaces.get_mut(path_id) else {
                continue;
            };
            if !sp.acks.has_new() {
                continue;
            }
            // PATH_ACK_ECN once the path's space received a mark (draft §4.1).
            let ecn = sp.ecn.ack_counts(crate::connection::spaces::SpaceId::Data);
            let Some(ack) = sp.acks.build_ack(now, exp, ranges, ecn) else {
                continue;
            };
            let frame = Frame::Multipath(MultipathFrame::PathAck { path_id, ack });
            if buf.len().saturating_add(frame.encoded_len()) > max {
                return wrote;
            }
            frame.encode(buf);
            wrote = true;
        }
    }
}
