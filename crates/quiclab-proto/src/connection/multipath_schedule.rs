//! Which path carries the next packet of new stream data on a multipath connection
//! (draft-ietf-quic-multipath §5.5: "a packet scheduler is needed to decide which path
//! to use for sending the next packet, among those paths with an open congestion
//! window"). Before each datagram the connection describes every path not abandoned,
//! path 0 included, as a `multipath_sched::Candidate` and asks the configured
//! scheduler (`TransportConfig::multipath.scheduler`); only the picked path writes
//! STREAM frames (and the stream-level flow control frames the stream writer adds),
//! unless it is a PTO probe (RFC 9002 §6.2.4). Control frames, ACKs and path
//! validation are not scheduled. Without multipath nothing here runs and path 0 sends
//! as before.

use super::path::pacing_rate;
use super::send::MIN_PACKET_ROOM;
use super::Connection;
use crate::multipath_sched::Candidate;
use crate::time::Instant;
use crate::wire::PathId;

impl Connection {
    /// Asks the scheduler which path may carry new stream data in this datagram.
    pub(super) fn schedule_stream_data(&mut self, now: Instant) {
        if !self.multipath.is_negotiated() {
            return;
        }
        self.sched.choice = None;
        if !self.may_send_app_data() || !self.streams.has_pending() {
            // No stream data is written: the copy targets are not asked for.
            self.sched.candidates.clear();
            return;
        }
        let mut c = std::mem::take(&mut self.sched.candidates);
        c.clear();
        let size = self.max_datagram_size() as u64;
        let pacing = self.config.pacing;
        let ready = |t: Option<Instant>| !pacing || t.is_none_or(|t| t <= now);
        // §3.3: backup if either side marked it (`multipath_status.rs`).
        let backup = |id: PathId| self.path_is_backup(id);
        let r = &self.path.recovery;
        // §3.4: an abandoned path 0 is never used again.
        let path0 = (!self.multipath.path0_abandoned).then(|| Candidate {
            path_id: 0,
            srtt: r.rtt().smoothed(),
            // Path 0 is the handshake's path: validated by it (or bound by the
            // anti-amplification limit, RFC 9000 §8.1, as without multipath).
            validated: true,
            window_open: r.bytes_in_flight() < r.cc().window(),
            pacer_ready: ready(
                self.path
                    .pacer
                    .next_send_time(now, size, self.path.pacing_rate()),
            ),
            backup: backup(PathId::INITIAL),
            pto_count: r.pto_count(),
            bytes_in_flight: r.bytes_in_flight(),
            cwnd: r.cc().window(),
        });
        c.extend(path0);
        let (side, factor) = (self.side, self.config.amplification_factor);
        let known = self.validated_remote();
        for (id, s) in self.path_spaces.iter() {
            if s.abandoned {
                continue; // §3.4: never used again
            }
            let r = &s.recovery;
            let reachable = !self.path_cids.remote_ids(id).is_empty()
                && s.amplification_budget(side, factor, known) >= MIN_PACKET_ROOM as u64;
            c.push(Candidate {
                path_id: id.0,
                srtt: r.rtt().smoothed(),
                validated: s.validated && reachable,
                window_open: r.bytes_in_flight() < r.cc().window(),
                pacer_ready: ready(s.pacer.next_send_time(now, size, pacing_rate(r))),
                backup: backup(id),
                pto_count: r.pto_count(),
                bytes_in_flight: r.bytes_in_flight(),
                cwnd: r.cc().window(),
            });
        }
        self.sched.choice = self.sched.scheduler.pick(&c).map(PathId);
        self.sched.candidates = c;
    }

    /// Whether `path` may write new stream data in this datagram: always without
    /// multipath, else when the scheduler picked it.
    pub(super) fn stream_data_allowed_on(&self, path: PathId) -> bool {
        !self.multipath.is_negotiated() || self.sched.choice == Some(path)
    }

    /// Whether `path` has copies of stream data waiting (the redundant scheduler,
    /// `multipath_copies.rs`).
    pub(super) fn copies_pending_on(&self, path: PathId) -> bool {
        self.sched.copies.has(path)
    }

    /// New stream data left on `path`: the scheduler is told if it picked the path.
    pub(super) fn on_stream_data_sent(&mut self, path: PathId) {
        if self.multipath.is_negotiated() && self.sched.choice == Some(path) {
            self.sched.scheduler.on_sent(path.0);
            // One packet per pick: the next datagram asks again.
            self.sched.choice = None;
        }
    }
}
