//! The redundant scheduler's copies (`multipath_sched/redundant.rs`; the draft leaves
//! scheduling to the sender, draft-ietf-quic-multipath §5.5): after a packet of stream
//! data leaves on one path, the records of its STREAM frames wait in a queue per other
//! eligible path, and that path writes them (ahead of new data) when its own window and
//! pacer let a packet go, so copies count against each path's window and pacer and a
//! closed window on one path never holds back another.
//!
//! A copy repeats only what is still unacknowledged when it is written
//! (`Streams::write_copy`): an ACK of any copy acknowledges the data, and the other
//! copies of it shrink or vanish. A lost copy is a lost STREAM frame like any other: its
//! still unacknowledged parts are queued for retransmission (`SendStream::on_lost`
//! skips what another copy delivered).
//!
//! Bounded whatever the peer does: a queue holds at most `MAX_COPIES_PER_PATH`
//! records (one per STREAM frame, not the bytes: those stay in the stream's send
//! buffer), dropping its oldest when full (the oldest is the likeliest already
//! delivered by the faster path; the newest is what helps if that path just failed),
//! and only the current copy targets keep a queue: a path that failed, was abandoned or
//! became ineligible loses its copies at the next packet.

use super::spaces::{SentFrame, SentRecord};
use super::Connection;
use crate::multipath_sched::copy_targets;
use crate::streams::StreamFrameRecord;
use crate::wire::PathId;

impl Connection {
    /// The stream writer wrote `records` on `path`: under the redundant scheduler each
    /// STREAM frame among them is queued for every other eligible path (the candidates
    /// of this datagram, `multipath_schedule.rs`); queues of paths that are no longer
    /// targets are dropped.
    pub(super) fn queue_copies(&mut self, path: PathId, records: &[StreamFrameRecord]) {
        if !self.multipath.is_negotiated() || !self.sched.scheduler.copies() {
            return;
        }
        let targets: smallvec::SmallVec<[PathId; 4]> = copy_targets(&self.sched.candidates, path.0)
            .map(PathId)
            .collect();
        let copies = &mut self.sched.copies;
        copies.retain(|id| id == path || targets.contains(&id));
        for r in records {
            if matches!(r, StreamFrameRecord::Stream { .. }) {
                for t in &targets {
                    copies.push(*t, r.clone());
                }
            }
        }
    }

    /// Writes `path`'s queued copies while they fit before `max`, oldest first, into
    /// the packet whose record is `record`; a copy that does not fit whole keeps its
    /// rest at the front of the queue. Returns whether any frame was written (each is
    /// ack-eliciting). The caller checked the path's window and pacer.
    pub(super) fn write_copies_into(
        &mut self,
        path: PathId,
        buf: &mut Vec<u8>,
        record: &mut SentRecord,
        max: usize,
    ) -> bool {
        let mut records = std::mem::take(&mut self.scratch.stream_records);
        records.clear();
        self.write_copies(path, buf, max, &mut records);
        let wrote = !records.is_empty();
        record
            .frames
            .extend(records.drain(..).map(SentFrame::Stream));
        self.scratch.stream_records = records;
        wrote
    }

    fn write_copies(
        &mut self,
        path: PathId,
        buf: &mut Vec<u8>,
        max: usize,
        records: &mut Vec<StreamFrameRecord>,
    ) {
        while buf.len() < max {
            let Some(copy) = self.sched.copies.pop(path) else {
                break;
            };
            if let Some(rest) = self.streams.write_copy(&copy, buf, max, records) {
                self.sched.copies.put_back(path, rest);
                break;
            }
        }
    }
}
