//! The set of streams of one connection: stream IDs and limits (RFC 9000 §2.1, §4.6),
//! connection-level flow control (§4.1), frame scheduling and events. The halves of a
//! stream live in `send.rs` and `recv.rs`, receive credit in `flow.rs`.
// Peer values pass through here: arithmetic is checked, saturating or wrapping
// by the rule in CONTRIBUTING.md ("Arithmetic on wire values").
#![deny(clippy::arithmetic_side_effects)]

use super::flow::RecvWindow;
use super::recv::RecvStream;
use super::sched::{self, Membership};
use super::send::{CopyOutcome, SendStream, Sent};
use super::send_buf::SendData;
use crate::error::TransportError;
use crate::time::Instant;
use crate::wire::{Dir, Frame, Side, StreamId, TransportParameters};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Duration;

/// Local stream and flow-control settings (from the transport config).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamParams {
    /// How many streams of each kind the peer may open (MAX_STREAMS, renewed as they close).
    pub max_streams_bidi: u64,
    pub max_streams_uni: u64,
    /// Initial per-stream receive window (initial_max_stream_data_*).
    pub stream_receive_window: u64,
    /// Initial connection receive window (initial_max_data).
    pub receive_window: u64,
    /// Auto-tuning grows windows up to these caps; off, the windows stay fixed.
    pub autotune: bool,
    pub max_stream_receive_window: u64,
    pub max_receive_window: u64,
    /// Bytes of unacknowledged data a stream buffers before `write` pushes back.
    pub send_buffer: u64,
    /// Bytes written but not yet sent a stream holds before `write` pushes back; 0: no
    /// such limit (see [`crate::config::FlowConfig::notsent_lowat`]).
    pub notsent_lowat: u64,
}

/// Application API misuse, or a stream state that refuses the call.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StreamError {
    #[error("no such stream")]
    UnknownStream,
    #[error("the stream cannot be used in this direction")]
    WrongDirection,
    #[error("nothing can be done now; wait for an event")]
    Blocked,
    #[error("the peer asked us to stop sending (error code {0})")]
    Stopped(u64),
    #[error("the peer reset the stream (error code {0})")]
    Reset(u64),
    #[error("the stream was already finished or reset")]
    Closed,
}

/// A stream became usable in some way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamEvent {
    /// The peer opened streams of this direction; call `accept`.
    Opened { dir: Dir },
    /// Data (or FIN, or a reset) can be read.
    Readable { id: StreamId },
    /// Flow control or buffer space allows writing again.
    Writable { id: StreamId },
    /// Everything written, FIN included, was acknowledged.
    Finished { id: StreamId },
    /// The peer sent STOP_SENDING.
    Stopped { id: StreamId, error_code: u64 },
}

/// What `read` returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadOutcome {
    pub bytes: usize,
    /// The stream's data ended (FIN) and everything was read.
    pub fin: bool,
}

/// One stream-related frame a sent packet carried, to act on when it is acknowledged or
/// declared lost (RFC 9000 §13.3: retransmit information, not packets).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StreamFrameRecord {
    Stream {
        id: StreamId,
        offset: u64,
        len: u64,
        fin: bool,
    },
    ResetStream {
        id: StreamId,
    },
    StopSending {
        id: StreamId,
    },
    MaxData,
    MaxStreamData {
        id: StreamId,
    },
    MaxStreams {
        dir: Dir,
    },
    DataBlocked,
    StreamDataBlocked {
        id: StreamId,
    },
    StreamsBlocked {
        dir: Dir,
    },
}

impl StreamFrameRecord {
    /// The record of one STREAM frame just written for stream `id`.
    fn of_sent(id: StreamId, f: Sent) -> Self {
        StreamFrameRecord::Stream {
            id,
            offset: f.offset,
            len: f.len,
            fin: f.fin,
        }
    }
}

/// Index of per-direction arrays.
fn di(dir: Dir) -> usize {
    match dir {
        Dir::Bi => 0,
        Dir::Uni => 1,
    }
}

const DIRS: [Dir; 2] = [Dir::Bi, Dir::Uni];

/// §4.6, §19.11: a stream count above 2^60 has no encodable stream ID.
const MAX_STREAM_COUNT: u64 = 1 << 60;

/// One stream: a send part, a receive part, or both (§2.1).
#[derive(Debug)]
struct Stream {
    send: Option<SendStream>,
    recv: Option<RecvStream>,
    /// The scheduling sets it is in (`sched.rs`).
    sched: Membership,
}

impl Stream {
    /// Both parts reached a terminal state (or do not exist): the stream can go.
    fn is_done(&self) -> bool {
        self.send.as_ref().is_none_or(|s| s.is_done())
            && self.recv.as_ref().is_none_or(|r| r.is_done())
    }
}

/// `Streams::release` for a receive part already looked up: hands the bytes read since
/// the last call back to the connection window (§4.2) and queues MAX_STREAM_DATA in
/// `stream_pending` when the stream's window wants an update. Returns whether the
/// connection's window wants MAX_DATA.
fn release_part(
    r: &mut RecvStream,
    id: StreamId,
    stream_pending: &mut BTreeSet<StreamId>,
    conn_recv: &mut RecvWindow,
) -> bool {
    let n = r.take_release();
    if r.wants_credit() && r.flow.wants_update() {
        stream_pending.insert(id);
    }
    conn_recv.consumed = conn_recv.consumed.saturating_add(n);
    n > 0 && conn_recv.wants_update()
}

/// Test builds: runs `release_part` where `Streams::read` skips it after a read that
/// found nothing, and checks that it changes nothing: `released == read` on a part
/// neither reset nor stopped, and a stream whose window wants MAX_STREAM_DATA is queued
/// for it already (the two invariants the skip rests on).
#[cfg(any(test, feature = "invariants"))]
fn assert_release_idle(
    r: &mut RecvStream,
    id: StreamId,
    stream_pending: &mut BTreeSet<StreamId>,
    conn_recv: &mut RecvWindow,
) {
    let (released, queued, consumed) = (r.released, stream_pending.len(), conn_recv.consumed);
    let max_data = release_part(r, id, stream_pending, conn_recv);
    assert_eq!(r.released, released, "{id:?}: `released == read` broken");
    assert_eq!(
        stream_pending.len(),
        queued,
        "{id:?}: wants MAX_STREAM_DATA but was not queued"
    );
    assert_eq!(conn_recv.consumed, consumed, "{id:?}: released credit");
    assert!(!max_data, "{id:?}: a blocked read wants MAX_DATA");
}

/// The peer's initial per-stream limits (§18.2), applied to streams as they open.
#[derive(Clone, Copy, Debug, Default)]
struct PeerStreamData {
    bidi_local: u64,
    bidi_remote: u64,
    uni: u64,
}

/// Appends `frame` if it fits under `max_len`.
fn put(frame: &Frame<'_>, buf: &mut Vec<u8>, max_len: usize) -> bool {
    if buf.len().saturating_add(frame.encoded_len()) > max_len {
        return false;
    }
    frame.encode(buf);
    true
}

/// The first element of `set` at or after `cursor`, wrapping around (round-robin).
fn next_after(set: &BTreeSet<StreamId>, cursor: StreamId) -> Option<StreamId> {
    if set.len() == 1 {
        // One stream with something to send (a bulk transfer's steady state): it is
        // the answer whatever the cursor, found in one step instead of a range search
        // that comes back empty and then the wrap-around one.
        return set.first().copied();
    }
    set.range(cursor..)
        .next()
        .or_else(|| set.iter().next())
        .copied()
}

/// All streams of a connection.
#[derive(Debug)]
pub struct Streams {
    side: Side,
    params: StreamParams,
    streams: BTreeMap<StreamId, Stream>,
    events: VecDeque<StreamEvent>,

    /// Per direction: the next local stream index to open.
    next_local: [u64; 2],
    /// Per direction: one past the highest peer stream index seen (§3.2 implicit opening).
    next_remote: [u64; 2],
    /// Per direction: the next peer stream `accept` returns.
    next_accept: [u64; 2],
    /// The peer's MAX_STREAMS: how many streams we may open (§4.6).
    peer_max_streams: [u64; 2],
    streams_blocked_sent: [Option<u64>; 2],
    streams_blocked_pending: [bool; 2],
    /// Our advertised MAX_STREAMS, and how many peer streams closed (to renew it).
    local_max_streams: [u64; 2],
    remote_closed: [u64; 2],
    max_streams_pending: [bool; 2],

    peer_stream_data: PeerStreamData,
    /// Connection send credit: the peer's MAX_DATA and the new bytes sent (§4.1).
    conn_send_max: u64,
    conn_sent: u64,
    /// STREAM data bytes sent again (after a loss or as a PTO probe's copy).
    retransmitted: u64,
    /// STREAM data bytes repeated as the redundant scheduler's copies on other paths.
    copied: u64,
    data_blocked_sent: Option<u64>,
    /// Connection receive credit and the sum of the streams' highest offsets (§4.1, §4.5).
    conn_recv: RecvWindow,
    conn_received: u64,
    max_data_pending: bool,

    /// Streams with lost data or FIN to resend, with new data or FIN within their
    /// credit, and owing STREAM_DATA_BLOCKED (`sched.rs`); the first two each have a
    /// round-robin cursor.
    sets: sched::Sets,
    retx_cursor: StreamId,
    fresh_cursor: StreamId,
    /// Control frames due per stream.
    max_stream_data_pending: BTreeSet<StreamId>,
    reset_pending: BTreeSet<StreamId>,
    stop_pending: BTreeSet<StreamId>,
}

impl Streams {
    /// STREAM data bytes sent more than once so far: lost ranges resent and the copies
    /// PTO probes carry (RFC 9002 §6.2.4), counted in bytes of stream data.
    pub fn retransmitted_bytes(&self) -> u64 {
        self.retransmitted
    }

    /// STREAM data bytes written as copies ([`Self::write_copy`]) so far.
    pub fn copied_bytes(&self) -> u64 {
        self.copied
    }

    /// Repeats the parts of `copy` (the record of a STREAM frame sent before) not yet
    /// acknowledged, as STREAM frames while they fit before `max_len`, each recorded in
    /// `records` (draft-ietf-quic-multipath §5.5: the redundant scheduler's copy on
    /// another path). Acknowledged parts are skipped, so a copy never repeats what any
    /// path delivered. Returns what is left of it to repeat later (no room), or `None`
    /// when nothing is (acknowledged, reset, or all written). Other records are `None`.
    pub fn write_copy(
        &mut self,
        copy: &StreamFrameRecord,
        buf: &mut Vec<u8>,
        max_len: usize,
        records: &mut Vec<StreamFrameRecord>,
    ) -> Option<StreamFrameRecord> {
        let StreamFrameRecord::Stream {
            id,
            mut offset,
            mut len,
            fin,
        } = *copy
        else {
            return None;
        };
        let s = self.streams.get_mut(&id).and_then(|st| st.send.as_mut())?;
        loop {
            let room = max_len.saturating_sub(buf.len());
            match s.emit_copy(id, (offset, len, fin), room, buf) {
                CopyOutcome::Done => return None,
                CopyOutcome::NoRoom => {
                    return Some(StreamFrameRecord::Stream {
                        id,
                        offset,
                        len,
                        fin,
                    })
                }
                CopyOutcome::Sent(f) => {
                    self.copied = self.copied.saturating_add(f.len);
                    records.push(StreamFrameRecord::of_sent(id, f));
                    let stop = offset.saturating_add(len);
                    let next = f.offset.saturating_add(f.len);
                    if f.fin || (next >= stop && !fin) {
                        return None;
                    }
                    len = stop.saturating_sub(next);
                    offset = next.max(offset);
                }
            }
        }
    }

    pub fn new(side: Side, params: StreamParams) -> Self {
        let conn_recv = RecvWindow::new(
            params.receive_window,
            params.max_receive_window,
            params.autotune,
        );
        Streams {
            side,
            streams: BTreeMap::new(),
            events: VecDeque::new(),
            next_local: [0; 2],
            next_remote: [0; 2],
            next_accept: [0; 2],
            peer_max_streams: [0; 2],
            streams_blocked_sent: [None; 2],
            streams_blocked_pending: [false; 2],
            local_max_streams: [params.max_streams_bidi, params.max_streams_uni],
            remote_closed: [0; 2],
            max_streams_pending: [false; 2],
            peer_stream_data: PeerStreamData::default(),
            conn_send_max: 0,
            conn_sent: 0,
            retransmitted: 0,
            copied: 0,
            data_blocked_sent: None,
            conn_recv,
            conn_received: 0,
            max_data_pending: false,
            sets: sched::Sets::default(),
            retx_cursor: StreamId(0),
            fresh_cursor: StreamId(0),
            max_stream_data_pending: BTreeSet::new(),
            reset_pending: BTreeSet::new(),
            stop_pending: BTreeSet::new(),
            params,
        }
    }

    /// Fills the initial_max_* fields of our transport parameters.
    #[cfg(test)]
    pub fn fill_transport_params(&self, tp: &mut TransportParameters) {
        let p = &self.params;
        tp.initial_max_data = p.receive_window;
        tp.initial_max_stream_data_bidi_local = p.stream_receive_window;
        tp.initial_max_stream_data_bidi_remote = p.stream_receive_window;
        tp.initial_max_stream_data_uni = p.stream_receive_window;
        tp.initial_max_streams_bidi = p.max_streams_bidi;
        tp.initial_max_streams_uni = p.max_streams_uni;
    }

    /// Applies the peer's limits once its transport parameters arrive.
    pub fn apply_peer_params(&mut self, tp: &TransportParameters) {
        self.conn_send_max = self.conn_send_max.max(tp.initial_max_data);
        let counts = [tp.initial_max_streams_bidi, tp.initial_max_streams_uni];
        for (max, n) in self.peer_max_streams.iter_mut().zip(counts) {
            *max = (*max).max(n.min(MAX_STREAM_COUNT));
        }
        self.peer_stream_data = PeerStreamData {
            bidi_local: tp.initial_max_stream_data_bidi_local,
            bidi_remote: tp.initial_max_stream_data_bidi_remote,
            uni: tp.initial_max_stream_data_uni,
        };
        // Streams opened before the parameters arrived (0-RTT) get the new credit too.
        let ids: Vec<StreamId> = self.streams.keys().copied().collect();
        for id in ids {
            let limit = self.initial_send_max(id);
            if let Some(s) = self.streams.get_mut(&id).and_then(|st| st.send.as_mut()) {
                s.max = s.max.max(limit);
            }
            self.update_sched(id);
        }
    }

    /// §18.2: our send credit on a new stream, from the peer's point of view of it.
    fn initial_send_max(&self, id: StreamId) -> u64 {
        let p = self.peer_stream_data;
        match (id.dir(), id.initiator() == self.side) {
            (Dir::Bi, true) => p.bidi_remote,
            (Dir::Bi, false) => p.bidi_local,
            (Dir::Uni, _) => p.uni,
        }
    }

    fn new_stream(&self, id: StreamId) -> Stream {
        let local = id.initiator() == self.side;
        let bidi = id.dir() == Dir::Bi;
        let p = &self.params;
        Stream {
            sched: Membership::default(),
            send: (bidi || local).then(|| SendStream::new(self.initial_send_max(id))),
            recv: (bidi || !local).then(|| {
                RecvStream::new(RecvWindow::new(
                    p.stream_receive_window,
                    p.max_stream_receive_window,
                    p.autotune,
                ))
            }),
        }
    }

    /// Opens a local stream; `None` when the peer's stream limit is reached (a
    /// STREAMS_BLOCKED is queued, §4.6); retry after the peer raises MAX_STREAMS.
    pub fn open(&mut self, dir: Dir) -> Option<StreamId> {
        let d = di(dir);
        if self.next_local[d] >= self.peer_max_streams[d] {
            if self.streams_blocked_sent[d] != Some(self.peer_max_streams[d]) {
                self.streams_blocked_pending[d] = true;
            }
            return None;
        }
        let id = StreamId::new(self.side, dir, self.next_local[d]);
        self.next_local[d] = self.next_local[d].saturating_add(1);
        let st = self.new_stream(id);
        self.streams.insert(id, st);
        Some(id)
    }

    /// The next stream the peer opened and the application has not accepted yet.
    pub fn accept(&mut self, dir: Dir) -> Option<StreamId> {
        let d = di(dir);
        if self.next_accept[d] >= self.next_remote[d] {
            return None;
        }
        let id = StreamId::new(self.side.peer(), dir, self.next_accept[d]);
        self.next_accept[d] = self.next_accept[d].saturating_add(1);
        Some(id)
    }

    fn send_mut(&mut self, id: StreamId) -> Result<&mut SendStream, StreamError> {
        let st = self
            .streams
            .get_mut(&id)
            .ok_or(StreamError::UnknownStream)?;
        st.send.as_mut().ok_or(StreamError::WrongDirection)
    }

    /// A send part the application may still write to or finish.
    fn writable_mut(&mut self, id: StreamId) -> Result<&mut SendStream, StreamError> {
        let s = self.send_mut(id)?;
        if let Some(code) = s.stopped {
            return Err(StreamError::Stopped(code));
        }
        if s.reset.is_some() || s.fin {
            return Err(StreamError::Closed);
        }
        Ok(s)
    }

    /// Buffers up to `data.len()` bytes; returns how many were taken (`Blocked` if none).
    #[cfg(test)]
    pub fn write(&mut self, id: StreamId, data: &[u8]) -> Result<usize, StreamError> {
        self.write_from(id, SendData::Copied(data))
    }

    /// [`Self::write`] of copied or `'static` (zero-copy) data.
    pub fn write_from(&mut self, id: StreamId, data: SendData) -> Result<usize, StreamError> {
        let (limit, lowat) = (self.params.send_buffer, self.params.notsent_lowat);
        let s = self.writable_mut(id)?;
        if data.is_empty() {
            return Ok(0);
        }
        let n = s.write(data, limit, lowat);
        if n < data.len() {
            s.want_writable = true;
        }
        if n == 0 {
            return Err(StreamError::Blocked);
        }
        self.update_sched(id);
        Ok(n)
    }

    /// Marks the end of the stream's data (FIN).
    pub fn finish(&mut self, id: StreamId) -> Result<(), StreamError> {
        self.writable_mut(id)?.fin = true;
        self.update_sched(id);
        Ok(())
    }

    /// Abandons sending (RESET_STREAM).
    pub fn reset(&mut self, id: StreamId, error_code: u64) -> Result<(), StreamError> {
        let s = self.send_mut(id)?;
        if s.reset.is_some() || s.all_acked() {
            return Err(StreamError::Closed);
        }
        self.do_reset(id, error_code);
        Ok(())
    }

    /// §3.1 "Reset Sent": queue RESET_STREAM and stop (re)transmitting data.
    fn do_reset(&mut self, id: StreamId, error_code: u64) {
        if let Some(s) = self.streams.get_mut(&id).and_then(|st| st.send.as_mut()) {
            s.reset(error_code);
            self.reset_pending.insert(id);
        }
        self.update_sched(id);
    }

    /// Asks the peer to stop sending (STOP_SENDING) and discards what arrives.
    pub fn stop_sending(&mut self, id: StreamId, error_code: u64) -> Result<(), StreamError> {
        let st = self
            .streams
            .get_mut(&id)
            .ok_or(StreamError::UnknownStream)?;
        let r = st.recv.as_mut().ok_or(StreamError::WrongDirection)?;
        if r.stopped.is_some() {
            return Err(StreamError::Closed);
        }
        r.stop(error_code);
        // §3.5: only useful while the peer may still send; a reset or full data makes it moot.
        if r.peer_may_send() {
            self.stop_pending.insert(id);
        }
        self.max_stream_data_pending.remove(&id);
        self.release(id);
        self.maybe_close(id);
        Ok(())
    }

    /// Reads in-order data; `Blocked` when none is available yet. `Readable` is
    /// edge-triggered: after an event, read until `Blocked` (or FIN / reset).
    pub fn read(&mut self, id: StreamId, buf: &mut [u8]) -> Result<ReadOutcome, StreamError> {
        let st = self
            .streams
            .get_mut(&id)
            .ok_or(StreamError::UnknownStream)?;
        let r = st.recv.as_mut().ok_or(StreamError::WrongDirection)?;
        let res = r.read(buf);
        if matches!(res, Err(StreamError::Blocked)) {
            // The read found nothing (the application reads until `Blocked`, so this is
            // every other read, issue 29), and what follows would change nothing:
            // - `take_release` returns 0: `released == read` on a part neither reset nor
            //   stopped, as `read` moves only in `RecvStream::read`, whose every other
            //   outcome goes through `release_part` below, and `released` only there;
            //   this read moved neither.
            // - `stream_pending` holds `id` already if its window wants MAX_STREAM_DATA:
            //   `wants_update` turns true only as `consumed` grows (a read, then
            //   `release_part`) or a STREAM_DATA_BLOCKED sets `blocked_at` (`on_frame`
            //   queues it); `write_control` dequeues it after the update, which makes
            //   `wants_update` false (`flow.rs`), and the others once it no longer
            //   wants credit.
            // - No MAX_DATA: nothing was released. No close: a `Blocked` part has not
            //   read its FIN and is neither reset nor stopped, so it is not done.
            // Test builds run the skipped work and check it did nothing.
            #[cfg(any(test, feature = "invariants"))]
            {
                let (pending, conn) = (&mut self.max_stream_data_pending, &mut self.conn_recv);
                assert_release_idle(r, id, pending, conn);
                assert!(
                    !r.is_done(),
                    "{id:?}: a blocked read ended the receive part"
                );
            }
            return res;
        }
        // `release` then `maybe_close` on the stream already in hand: the application
        // reads after every delivered packet, and looking the stream up three times
        // was most of the bookkeeping of a read (issue 29).
        if release_part(
            r,
            id,
            &mut self.max_stream_data_pending,
            &mut self.conn_recv,
        ) {
            self.max_data_pending = true;
        }
        if st.is_done() {
            self.close(id);
        }
        res
    }

    /// Returns consumed credit to the connection window and queues MAX_DATA /
    /// MAX_STREAM_DATA once more than half of a window was consumed (§4.2).
    fn release(&mut self, id: StreamId) {
        let Some(r) = self.streams.get_mut(&id).and_then(|st| st.recv.as_mut()) else {
            return;
        };
        if release_part(
            r,
            id,
            &mut self.max_stream_data_pending,
            &mut self.conn_recv,
        ) {
            self.max_data_pending = true;
        }
    }

    /// Removes a stream both of whose parts reached a terminal state.
    fn maybe_close(&mut self, id: StreamId) {
        if self.streams.get(&id).is_some_and(Stream::is_done) {
            self.close(id);
        }
    }

    /// Removes a finished stream; a closed peer stream lets us raise MAX_STREAMS (§4.6).
    fn close(&mut self, id: StreamId) {
        self.streams.remove(&id);
        self.sets.remove(id);
        for set in [
            &mut self.max_stream_data_pending,
            &mut self.reset_pending,
            &mut self.stop_pending,
        ] {
            set.remove(&id);
        }
        if id.initiator() != self.side {
            let d = di(id.dir());
            self.remote_closed[d] = self.remote_closed[d].saturating_add(1);
            let limit = [self.params.max_streams_bidi, self.params.max_streams_uni][d];
            let target = self.remote_closed[d].saturating_add(limit);
            // Renew once half of the configured credit can be handed back (what was
            // advertised is at most an earlier target).
            if target.saturating_sub(self.local_max_streams[d]) >= (limit / 2).max(1) {
                self.max_streams_pending[d] = true;
            }
        }
    }

    /// Keeps a stream's membership in the scheduling sets in line with its send state;
    /// a set is touched only when the membership changes (`sched.rs`).
    /// A closed stream is in no set already (`close`, and its ID never comes back:
    /// `sched.rs`), so there is nothing to do for one.
    fn update_sched(&mut self, id: StreamId) {
        if let Some(st) = self.streams.get_mut(&id) {
            self.sets.update(&mut st.sched, st.send.as_ref(), id);
        }
    }

    /// Test-only: each stream's recorded membership is its presence in the sets, and
    /// the sets hold no other stream (the invariant `update_sched`'s comparison needs).
    #[cfg(test)]
    pub(super) fn assert_sched_in_line(&self) {
        for (id, st) in &self.streams {
            let m = st.sched;
            assert_eq!(m.lost, self.sets.retx.contains(id), "retx, {id:?}");
            assert_eq!(m.fresh, self.sets.fresh.contains(id), "fresh, {id:?}");
            assert_eq!(m.blocked, self.sets.blocked.contains(id), "blocked, {id:?}");
        }
        let sets = &self.sets;
        for set in [&sets.retx, &sets.fresh, &sets.blocked] {
            assert!(set.iter().all(|id| self.streams.contains_key(id)));
        }
    }

    /// Checks a peer frame's stream ID and opens peer streams up to it (§3.2, §4.6).
    /// `peer_sends`: the frame is about data the peer sends (STREAM, RESET_STREAM,
    /// STREAM_DATA_BLOCKED), else about data we send (MAX_STREAM_DATA, STOP_SENDING).
    /// Returns whether the stream still exists (a closed one's frames are ignored).
    fn peer_stream(&mut self, id: StreamId, peer_sends: bool) -> Result<bool, TransportError> {
        let local = id.initiator() == self.side;
        if id.dir() == Dir::Uni && local == peer_sends {
            // §19.4-19.13: our send-only stream cannot carry peer data, nor can the
            // peer control our sending on a receive-only one.
            return Err(TransportError::stream_state(
                "frame for the wrong direction of a unidirectional stream",
            ));
        }
        let d = di(id.dir());
        if local {
            if id.index() >= self.next_local[d] {
                return Err(TransportError::stream_state(
                    "frame for a local stream not yet opened",
                ));
            }
        } else if id.index() >= self.next_remote[d] {
            if id.index() >= self.local_max_streams[d] {
                return Err(TransportError::stream_limit("peer exceeded MAX_STREAMS"));
            }
            // §3.2: opening a stream opens all lower-numbered ones of its type.
            for i in self.next_remote[d]..=id.index() {
                let sid = StreamId::new(id.initiator(), id.dir(), i);
                let st = self.new_stream(sid);
                self.streams.insert(sid, st);
            }
            self.next_remote[d] = id.index().saturating_add(1); // below MAX_STREAMS
            self.events.push_back(StreamEvent::Opened { dir: id.dir() });
        }
        Ok(self.streams.contains_key(&id))
    }

    /// Counts newly consumed credit against the connection limit (§4.1).
    fn conn_account(&mut self, grew: u64) -> Result<(), TransportError> {
        self.conn_received = self.conn_received.saturating_add(grew);
        if self.conn_received > self.conn_recv.max {
            return Err(TransportError::flow_control("data beyond MAX_DATA"));
        }
        Ok(())
    }

    fn signal_readable(&mut self, id: StreamId) {
        if let Some(r) = self.streams.get_mut(&id).and_then(|st| st.recv.as_mut()) {
            if r.is_readable() && !r.readable_signalled {
                r.readable_signalled = true;
                self.events.push_back(StreamEvent::Readable { id });
            }
        }
    }

    /// Handles a stream-related frame from the peer (STREAM, RESET_STREAM, STOP_SENDING,
    /// MAX_DATA, MAX_STREAM_DATA, MAX_STREAMS, DATA_BLOCKED, STREAM_DATA_BLOCKED,
    /// STREAMS_BLOCKED); other frames are ignored. Peer violations are errors with the
    /// RFC's code (STREAM_STATE_ERROR, FLOW_CONTROL_ERROR, FINAL_SIZE_ERROR,
    /// STREAM_LIMIT_ERROR).
    pub fn on_frame(&mut self, frame: &Frame<'_>) -> Result<(), TransportError> {
        self.handle_frame(frame)
            .map_err(|e| e.with_frame(frame.type_code()))
    }

    fn handle_frame(&mut self, frame: &Frame<'_>) -> Result<(), TransportError> {
        match *frame {
            Frame::Stream(ref s) => {
                if !self.peer_stream(s.id, true)? {
                    return Ok(());
                }
                let Some(r) = self.streams.get_mut(&s.id).and_then(|st| st.recv.as_mut()) else {
                    return Ok(());
                };
                // §4.1: data past MAX_DATA is refused before any of it (or the gap
                // before it) is buffered, so buffers never exceed the connection window.
                let credit = r.credit_for(s.offset, s.data)?;
                if self.conn_received.saturating_add(credit) > self.conn_recv.max {
                    return Err(TransportError::flow_control("data beyond MAX_DATA"));
                }
                let grew = r.on_data(s.offset, s.data, s.fin)?;
                self.conn_account(grew)?;
                self.release(s.id);
                self.signal_readable(s.id);
                self.maybe_close(s.id);
            }
            Frame::ResetStream {
                id,
                error_code,
                final_size,
            } => {
                if !self.peer_stream(id, true)? {
                    return Ok(());
                }
                let Some(r) = self.streams.get_mut(&id).and_then(|st| st.recv.as_mut()) else {
                    return Ok(());
                };
                let grew = r.on_reset(error_code, final_size)?;
                self.conn_account(grew)?;
                self.stop_pending.remove(&id);
                self.max_stream_data_pending.remove(&id);
                // §4.5: the whole final size counts as consumed once the data is abandoned.
                self.release(id);
                self.signal_readable(id);
                self.maybe_close(id);
            }
            Frame::StopSending { id, error_code } => {
                if !self.peer_stream(id, false)? {
                    return Ok(());
                }
                let Some(s) = self.streams.get_mut(&id).and_then(|st| st.send.as_mut()) else {
                    return Ok(());
                };
                if s.stopped.is_some() || s.reset.is_some() || s.all_acked() {
                    return Ok(());
                }
                s.stopped = Some(error_code);
                self.events
                    .push_back(StreamEvent::Stopped { id, error_code });
                // §3.5: answer with RESET_STREAM, echoing the error code.
                self.do_reset(id, error_code);
            }
            Frame::MaxStreamData { id, max } => {
                if !self.peer_stream(id, false)? {
                    return Ok(());
                }
                if let Some(s) = self.streams.get_mut(&id).and_then(|st| st.send.as_mut()) {
                    // §19.10: only increases count.
                    s.max = s.max.max(max);
                }
                self.update_sched(id);
            }
            Frame::StreamDataBlocked { id, limit } => {
                // Informational (§19.13), but it may open the stream and must be valid.
                self.peer_stream(id, true)?;
                if let Some(r) = self.streams.get_mut(&id).and_then(|st| st.recv.as_mut()) {
                    r.flow.blocked_at = Some(limit);
                    if r.wants_credit() && r.flow.wants_update() {
                        self.max_stream_data_pending.insert(id);
                    }
                }
            }
            Frame::MaxData(max) => self.conn_send_max = self.conn_send_max.max(max),
            Frame::MaxStreams { dir, max } => {
                if max > MAX_STREAM_COUNT {
                    return Err(TransportError::frame_encoding("MAX_STREAMS above 2^60"));
                }
                let m = &mut self.peer_max_streams[di(dir)];
                *m = (*m).max(max);
            }
            Frame::StreamsBlocked { limit, .. } if limit > MAX_STREAM_COUNT => {
                return Err(TransportError::frame_encoding("STREAMS_BLOCKED above 2^60"));
            }
            _ => {}
        }
        Ok(())
    }

    /// Whether a stream with new data is held back by the connection limit alone.
    fn conn_blocked(&self) -> bool {
        self.conn_sent >= self.conn_send_max
            && self.sets.fresh.iter().any(|id| {
                self.streams
                    .get(id)
                    .and_then(|st| st.send.as_ref())
                    .is_some_and(|s| !s.fin_only())
            })
    }

    /// Appends stream-related frames while `buf.len() < max_len`: control frames first,
    /// then lost data, then new data within flow control; records each in `records`.
    pub fn write_frames(
        &mut self,
        now: Instant,
        rtt: Duration,
        buf: &mut Vec<u8>,
        max_len: usize,
        records: &mut Vec<StreamFrameRecord>,
    ) {
        self.write_control(now, rtt, buf, max_len, records);
        self.write_data(true, buf, max_len, records);
        self.write_data(false, buf, max_len, records);
        // Sending may have just hit a limit: report it in the same packet if it fits.
        self.write_blocked(buf, max_len, records);
    }

    fn write_control(
        &mut self,
        now: Instant,
        rtt: Duration,
        buf: &mut Vec<u8>,
        max_len: usize,
        records: &mut Vec<StreamFrameRecord>,
    ) {
        // Credit updates carry the *current* value, recomputed at send time (§4.2, §13.3).
        if self.max_data_pending {
            if self.conn_recv.wants_update() {
                self.conn_recv.update(now, rtt);
            }
            if put(&Frame::MaxData(self.conn_recv.max), buf, max_len) {
                records.push(StreamFrameRecord::MaxData);
                self.max_data_pending = false;
            }
        }
        let mut cursor = StreamId(0);
        while let Some(&id) = self.max_stream_data_pending.range(cursor..).next() {
            cursor = StreamId(id.0.saturating_add(1));
            let Some(r) = self
                .streams
                .get_mut(&id)
                .and_then(|st| st.recv.as_mut())
                .filter(|r| r.wants_credit())
            else {
                self.max_stream_data_pending.remove(&id);
                continue;
            };
            if r.flow.wants_update() {
                r.flow.update(now, rtt);
            }
            let f = Frame::MaxStreamData {
                id,
                max: r.flow.max,
            };
            if put(&f, buf, max_len) {
                records.push(StreamFrameRecord::MaxStreamData { id });
                self.max_stream_data_pending.remove(&id);
            }
        }
        for dir in DIRS {
            let d = di(dir);
            if self.max_streams_pending[d] {
                let limit = [self.params.max_streams_bidi, self.params.max_streams_uni][d];
                let max =
                    self.local_max_streams[d].max(self.remote_closed[d].saturating_add(limit));
                if put(&Frame::MaxStreams { dir, max }, buf, max_len) {
                    self.local_max_streams[d] = max;
                    records.push(StreamFrameRecord::MaxStreams { dir });
                    self.max_streams_pending[d] = false;
                }
            }
        }
        self.write_blocked(buf, max_len, records);
        let mut cursor = StreamId(0);
        while let Some(&id) = self.reset_pending.range(cursor..).next() {
            cursor = StreamId(id.0.saturating_add(1));
            let Some(r) = self
                .streams
                .get(&id)
                .and_then(|st| st.send.as_ref())
                .and_then(|s| s.reset)
                .filter(|r| !r.acked)
            else {
                self.reset_pending.remove(&id);
                continue;
            };
            let f = Frame::ResetStream {
                id,
                error_code: r.code,
                final_size: r.final_size,
            };
            if put(&f, buf, max_len) {
                records.push(StreamFrameRecord::ResetStream { id });
                self.reset_pending.remove(&id);
            }
        }
        let mut cursor = StreamId(0);
        while let Some(&id) = self.stop_pending.range(cursor..).next() {
            cursor = StreamId(id.0.saturating_add(1));
            let Some(code) = self
                .streams
                .get(&id)
                .and_then(|st| st.recv.as_ref())
                .filter(|r| r.peer_may_send())
                .and_then(|r| r.stopped)
            else {
                self.stop_pending.remove(&id);
                continue;
            };
            let f = Frame::StopSending {
                id,
                error_code: code,
            };
            if put(&f, buf, max_len) {
                records.push(StreamFrameRecord::StopSending { id });
                self.stop_pending.remove(&id);
            }
        }
    }

    /// DATA_BLOCKED, STREAM_DATA_BLOCKED and STREAMS_BLOCKED, each once per limit value.
    fn write_blocked(
        &mut self,
        buf: &mut Vec<u8>,
        max_len: usize,
        records: &mut Vec<StreamFrameRecord>,
    ) {
        if self.data_blocked_sent != Some(self.conn_send_max) && self.conn_blocked() {
            let limit = self.conn_send_max;
            if put(&Frame::DataBlocked { limit }, buf, max_len) {
                records.push(StreamFrameRecord::DataBlocked);
                self.data_blocked_sent = Some(limit);
            }
        }
        let mut cursor = StreamId(0);
        while let Some(&id) = self.sets.blocked.range(cursor..).next() {
            cursor = StreamId(id.0.saturating_add(1));
            let st = self.streams.get_mut(&id);
            let Some((s, member)) = st
                .and_then(|st| Some((st.send.as_mut()?, &mut st.sched)))
                .filter(|(s, _)| s.is_blocked() && s.blocked_sent != Some(s.max))
            else {
                self.sets.blocked.remove(&id);
                if let Some(st) = self.streams.get_mut(&id) {
                    st.sched.blocked = false; // the set's invariant (`sched.rs`)
                }
                continue;
            };
            let limit = s.max;
            if put(&Frame::StreamDataBlocked { id, limit }, buf, max_len) {
                s.blocked_sent = Some(limit);
                member.blocked = false; // the set's invariant (`sched.rs`)
                records.push(StreamFrameRecord::StreamDataBlocked { id });
                self.sets.blocked.remove(&id);
            }
        }
        for dir in DIRS {
            let d = di(dir);
            if !self.streams_blocked_pending[d] {
                continue;
            }
            let limit = self.peer_max_streams[d];
            if self.next_local[d] < limit {
                self.streams_blocked_pending[d] = false;
            } else if put(&Frame::StreamsBlocked { dir, limit }, buf, max_len) {
                records.push(StreamFrameRecord::StreamsBlocked { dir });
                self.streams_blocked_sent[d] = Some(limit);
                self.streams_blocked_pending[d] = false;
            }
        }
    }

    /// One pass of STREAM frames, round-robin over the streams with something to send:
    /// retransmissions (`lost`) or new data.
    fn write_data(
        &mut self,
        lost: bool,
        buf: &mut Vec<u8>,
        max_len: usize,
        records: &mut Vec<StreamFrameRecord>,
    ) {
        let mut misses = 0;
        loop {
            let set = if lost {
                &self.sets.retx
            } else {
                &self.sets.fresh
            };
            let cursor = if lost {
                self.retx_cursor
            } else {
                self.fresh_cursor
            };
            if misses >= set.len() || buf.len() >= max_len {
                break;
            }
            let Some(id) = next_after(set, cursor) else {
                break;
            };
            let next_cursor = StreamId(id.0.saturating_add(1));
            if lost {
                self.retx_cursor = next_cursor;
            } else {
                self.fresh_cursor = next_cursor;
            }
            let room = max_len.saturating_sub(buf.len());
            let conn_avail = self.conn_send_max.saturating_sub(self.conn_sent);
            let (limit, lowat) = (self.params.send_buffer, self.params.notsent_lowat);
            let events = &mut self.events;
            let Some(st) = self.streams.get_mut(&id) else {
                // Not reached: the sets hold live streams only (`sched.rs`).
                misses = misses.saturating_add(1);
                continue;
            };
            let sent: Option<Sent> = st.send.as_mut().and_then(|s| {
                if lost {
                    return s.emit_lost(id, room, buf);
                }
                let sent = s.emit_fresh(id, room, conn_avail, buf);
                // With a not-sent limit, a stream that pushed back becomes writable
                // once sending (not only acknowledgement) brings it under the limit.
                if lowat > 0 && s.want_writable && s.reset.is_none() && s.room(limit, lowat) > 0 {
                    s.want_writable = false;
                    events.push_back(StreamEvent::Writable { id });
                }
                sent
            });
            // `update_sched` with the entry at hand (its lookup again was most of it).
            self.sets.update(&mut st.sched, st.send.as_ref(), id);
            match sent {
                Some(f) => {
                    misses = 0;
                    if lost {
                        self.retransmitted = self.retransmitted.saturating_add(f.len);
                    } else {
                        self.conn_sent = self.conn_sent.saturating_add(f.len);
                    }
                    records.push(StreamFrameRecord::of_sent(id, f));
                }
                None => misses = misses.saturating_add(1),
            }
        }
    }

    pub fn on_acked(&mut self, record: &StreamFrameRecord) {
        match *record {
            StreamFrameRecord::Stream {
                id,
                offset,
                len,
                fin,
            } => {
                let Some(st) = self.streams.get_mut(&id) else {
                    return;
                };
                let Some(s) = st.send.as_mut() else {
                    return;
                };
                let freed = s.on_acked(offset, len, fin);
                if freed > 0 && s.want_writable && s.reset.is_none() {
                    s.want_writable = false;
                    self.events.push_back(StreamEvent::Writable { id });
                }
                if s.all_acked() && !s.finished_reported {
                    s.finished_reported = true;
                    self.events.push_back(StreamEvent::Finished { id });
                }
                // `update_sched` with the entry at hand.
                self.sets.update(&mut st.sched, st.send.as_ref(), id);
                if st.is_done() {
                    self.close(id); // `maybe_close`, with the entry at hand
                }
            }
            StreamFrameRecord::ResetStream { id } => {
                if let Some(r) = self
                    .streams
                    .get_mut(&id)
                    .and_then(|st| st.send.as_mut())
                    .and_then(|s| s.reset.as_mut())
                {
                    r.acked = true;
                }
                self.maybe_close(id);
            }
            _ => {}
        }
    }

    /// Re-queues what a lost packet carried, if still needed, to be sent with the
    /// then-current values (§13.3).
    pub fn on_lost(&mut self, record: &StreamFrameRecord) {
        match *record {
            StreamFrameRecord::Stream {
                id,
                offset,
                len,
                fin,
            } => {
                if let Some(s) = self.streams.get_mut(&id).and_then(|st| st.send.as_mut()) {
                    s.on_lost(offset, len, fin);
                }
                self.update_sched(id);
            }
            StreamFrameRecord::ResetStream { id } => {
                let s = self.streams.get(&id).and_then(|st| st.send.as_ref());
                if s.and_then(|s| s.reset).is_some_and(|r| !r.acked) {
                    self.reset_pending.insert(id);
                }
            }
            StreamFrameRecord::StopSending { id } => {
                let r = self.streams.get(&id).and_then(|st| st.recv.as_ref());
                if r.is_some_and(|r| r.stopped.is_some() && r.peer_may_send()) {
                    self.stop_pending.insert(id);
                }
            }
            StreamFrameRecord::MaxData => self.max_data_pending = true,
            StreamFrameRecord::MaxStreamData { id } => {
                let r = self.streams.get(&id).and_then(|st| st.recv.as_ref());
                if r.is_some_and(|r| r.wants_credit()) {
                    self.max_stream_data_pending.insert(id);
                }
            }
            StreamFrameRecord::MaxStreams { dir } => self.max_streams_pending[di(dir)] = true,
            // Blocked frames are re-detected with the current limit if still blocked.
            StreamFrameRecord::DataBlocked => self.data_blocked_sent = None,
            StreamFrameRecord::StreamDataBlocked { id } => {
                if let Some(s) = self.streams.get_mut(&id).and_then(|st| st.send.as_mut()) {
                    s.blocked_sent = None;
                }
                self.update_sched(id);
            }
            StreamFrameRecord::StreamsBlocked { dir } => {
                let d = di(dir);
                if self.next_local[d] >= self.peer_max_streams[d] {
                    self.streams_blocked_sent[d] = None;
                    self.streams_blocked_pending[d] = true;
                }
            }
        }
    }

    pub fn poll_event(&mut self) -> Option<StreamEvent> {
        self.events.pop_front()
    }

    /// Streams held and their unread received bytes (see
    /// [`crate::connection::Footprint`]).
    pub fn footprint(&self) -> (usize, usize) {
        let unread = (self.streams.values())
            .filter_map(|s| s.recv.as_ref())
            .map(RecvStream::buffered)
            .sum();
        (self.streams.len(), unread)
    }

    /// Stream events not yet polled.
    pub fn pending_events(&self) -> usize {
        self.events.len()
    }

    /// Whether [`Self::poll_event`] has an event to give.
    pub fn has_events(&self) -> bool {
        !self.events.is_empty()
    }

    /// Whether `write_frames` has anything to write.
    pub fn has_pending(&self) -> bool {
        let conn_open = self.conn_sent < self.conn_send_max;
        // Side-effect-free reads or-ed together: the order is free, so a sending
        // stream's answer (data within credit) comes first, ahead of the control
        // frames that are rarely due. This runs several times per packet.
        (conn_open && !self.sets.fresh.is_empty())
            || !self.sets.retx.is_empty()
            || self.max_data_pending
            || !self.max_stream_data_pending.is_empty()
            || self.max_streams_pending.contains(&true)
            || self.streams_blocked_pending.contains(&true)
            || !self.sets.blocked.is_empty()
            || !self.reset_pending.is_empty()
            || !self.stop_pending.is_empty()
            || (!conn_open
                && ((self.data_blocked_sent != Some(self.conn_send_max) && self.conn_blocked())
                    || self.sets.fresh.iter().any(|id| {
                        self.streams
                            .get(id)
                            .and_then(|st| st.send.as_ref())
                            .is_some_and(|s| s.fin_only())
                    })))
    }
}
