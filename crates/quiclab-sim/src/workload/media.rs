//! The `media` workload: interactive media, frames at a fixed rate with a size
//! distribution, each with a deadline (keys in `scenario/media.rs`).
//!
//! Datagram mode cuts a frame into RFC 9221 DATAGRAM payloads of at most the path's
//! `max_datagram_payload`, each starting with a [`MEDIA_HEADER_LEN`]-byte header: frame
//! number (8 bytes), fragment index and count (2 each), the frame's send time (8, ns),
//! big-endian. The receiver has a frame when every fragment arrived. Stream mode opens
//! one unidirectional stream per frame, the same header (fragment 0 of 1) then the
//! frame's bytes; the receiver has it at the stream's FIN.
//!
//! A frame's latency is one-way, application to application: from the sender handing
//! it to QUIC (its sender-side queueing included) to the receiving application holding
//! all of it. A frame later than the deadline, or never complete, is a deadline miss.

use crate::output::results::{FlowResult, MediaResult};
use crate::scenario::{FrameSize, FrameSizeDist, MediaMode, MEDIA_HEADER_LEN};
use quiclab_proto::{Connection, DatagramError, DetRng, Dir, Instant, StreamError, StreamId};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Duration;

/// Incomplete frames the receiver tracks at most; past it the oldest is given up
/// (counted lost), so a sender's stream of fragments cannot grow its memory.
pub const MAX_PARTIAL_FRAMES: usize = 1024;

/// Zero bytes the frame bodies are written from (stream mode writes references).
static BODY: [u8; 64 * 1024] = [0u8; 64 * 1024];

/// What the workload measured, for the flow's results. The client fills the sender's
/// counts, the server the deliveries.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MediaMeasure {
    pub mode: MediaMode,
    pub deadline: Duration,
    pub duration_s: f64,
    /// Frames the sender generated.
    pub frames_sent: u64,
    /// Datagram mode: fragments handed to QUIC, and those it refused.
    pub fragments_sent: u64,
    pub fragments_refused: u64,
    /// Complete frames by number, with their latency (the first complete copy).
    pub delivered: BTreeMap<u64, Duration>,
    /// Incomplete frames the receiver gave up on past [`MAX_PARTIAL_FRAMES`].
    pub abandoned: u64,
}

/// The `q`-quantile of sorted `v` by the project's one definition (linear between
/// closest ranks); `None` without samples.
fn quantile(v: &[f64], q: f64) -> Option<f64> {
    (!v.is_empty()).then(|| quiclab_link::quantile::percentile(v, q))
}

impl MediaMeasure {
    /// Writes the media metrics into a flow's result.
    pub fn fill(&self, r: &mut FlowResult) {
        let mut ms: Vec<f64> = self
            .delivered
            .values()
            .map(|d| d.as_secs_f64() * 1e3)
            .collect();
        ms.sort_by(f64::total_cmp);
        let on_time = self
            .delivered
            .values()
            .filter(|&&d| d <= self.deadline)
            .count() as u64;
        r.media = Some(MediaResult {
            mode: match self.mode {
                MediaMode::Datagram => "datagram".into(),
                MediaMode::Stream => "stream".into(),
            },
            frames_sent: self.frames_sent,
            frames_delivered: self.delivered.len() as u64,
            frames_on_time: on_time,
            deadline_misses: self.frames_sent.saturating_sub(on_time),
            received_fps: if self.duration_s > 0.0 {
                on_time as f64 / self.duration_s
            } else {
                0.0
            },
            latency_p50_ms: quantile(&ms, 0.5),
            latency_p99_ms: quantile(&ms, 0.99),
            latency_max_ms: ms.last().copied(),
            fragments_sent: self.fragments_sent,
            fragments_refused: self.fragments_refused,
        });
    }
}

/// A frame's header: frame number, fragment index and count, send time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Header {
    frame: u64,
    index: u16,
    count: u16,
    sent: Instant,
}

impl Header {
    fn encode(&self) -> [u8; MEDIA_HEADER_LEN] {
        let mut h = [0u8; MEDIA_HEADER_LEN];
        h[..8].copy_from_slice(&self.frame.to_be_bytes());
        h[8..10].copy_from_slice(&self.index.to_be_bytes());
        h[10..12].copy_from_slice(&self.count.to_be_bytes());
        h[12..20].copy_from_slice(&self.sent.as_nanos().to_be_bytes());
        h
    }

    /// `None` for a payload too short to carry one or with a fragment count of 0 or an
    /// index past it.
    fn decode(p: &[u8]) -> Option<Header> {
        let h = Header {
            frame: u64::from_be_bytes(p.get(..8)?.try_into().ok()?),
            index: u16::from_be_bytes(p.get(8..10)?.try_into().ok()?),
            count: u16::from_be_bytes(p.get(10..12)?.try_into().ok()?),
            sent: Instant::from_nanos(u64::from_be_bytes(p.get(12..20)?.try_into().ok()?)),
        };
        (h.index < h.count).then_some(h)
    }
}

/// A frame waiting for its stream or for room in the stream's send buffer.
#[derive(Clone, Debug)]
struct PendingFrame {
    header: Header,
    stream: Option<StreamId>,
    /// Header bytes written so far, then body bytes still to write.
    header_written: usize,
    body_left: u64,
}

/// The sending side: `fps` frames per second for `duration_s`, from when the
/// handshake completes.
#[derive(Clone, Debug)]
pub struct MediaSender {
    mode: MediaMode,
    size: FrameSize,
    rng: DetRng,
    interval: Duration,
    count: u64,
    start: Option<Instant>,
    next_at: Option<Instant>,
    issued: u64,
    /// Stream mode: frames not yet fully written, oldest first.
    pending: VecDeque<PendingFrame>,
}

impl MediaSender {
    /// `fps` positive and sizes in range (scenario validation); `seed` draws the sizes.
    pub fn new(fps: f64, size: FrameSize, duration_s: f64, mode: MediaMode, seed: u64) -> Self {
        MediaSender {
            mode,
            size,
            rng: DetRng::new(seed),
            interval: Duration::from_secs_f64(1.0 / fps),
            count: (fps * duration_s).round() as u64,
            start: None,
            next_at: None,
            issued: 0,
            pending: VecDeque::new(),
        }
    }

    /// The size of frame `n`.
    fn frame_bytes(&mut self, n: u64) -> u64 {
        match self.size {
            FrameSize::Bytes(b) => b,
            FrameSize::Dist(FrameSizeDist::Uniform { min, max }) => {
                self.rng.range(min, max.saturating_add(1))
            }
            FrameSize::Dist(FrameSizeDist::Keyframe {
                bytes,
                key_bytes,
                every,
            }) => {
                if n.is_multiple_of(every.max(1)) {
                    key_bytes
                } else {
                    bytes
                }
            }
        }
    }

    /// When the next frame is due (the simulator wakes the client then).
    pub fn wakeup(&self) -> Option<Instant> {
        self.next_at.filter(|_| self.issued < self.count)
    }

    /// Sends the frames due by `now` and writes what stream mode could not; returns
    /// whether the workload is done: every frame sent and nothing queued or in flight.
    pub fn drive(&mut self, now: Instant, conn: &mut Connection, m: &mut MediaMeasure) -> bool {
        let first = *self.start.get_or_insert(now);
        while self.issued < self.count {
            let due = first + self.interval.mul_f64(self.issued as f64);
            if due > now {
                self.next_at = Some(due);
                break;
            }
            let n = self.issued;
            let bytes = self.frame_bytes(n);
            self.issued += 1;
            m.frames_sent += 1;
            let header = Header {
                frame: n,
                index: 0,
                count: 1,
                sent: now,
            };
            match self.mode {
                MediaMode::Datagram => {
                    if !send_fragments(now, conn, header, bytes, m) {
                        return false;
                    }
                }
                MediaMode::Stream => self.pending.push_back(PendingFrame {
                    header,
                    stream: None,
                    header_written: 0,
                    body_left: bytes,
                }),
            }
        }
        self.write_streams(conn);
        self.issued == self.count
            && self.pending.is_empty()
            && conn.datagram_send_queued().0 == 0
            && conn.bytes_in_flight() == 0
    }

    /// Stream mode: opens a stream for each waiting frame (within the peer's limit)
    /// and writes what the send buffers take, finishing complete frames.
    fn write_streams(&mut self, conn: &mut Connection) {
        let mut i = 0;
        while i < self.pending.len() {
            let f = &mut self.pending[i];
            let id = match f.stream {
                Some(id) => id,
                None => match conn.open_stream(Dir::Uni) {
                    Some(id) => *f.stream.insert(id),
                    // The peer's stream limit: later frames wait too.
                    None => return,
                },
            };
            if write_frame(conn, id, f) {
                let _ = conn.finish(id);
                self.pending.remove(i);
            } else {
                i += 1;
            }
        }
    }
}

/// Writes what fits of frame `f` on stream `id`; returns whether all of it is written.
fn write_frame(conn: &mut Connection, id: StreamId, f: &mut PendingFrame) -> bool {
    let header = f.header.encode();
    while f.header_written < MEDIA_HEADER_LEN {
        match conn.write(id, &header[f.header_written..]) {
            Ok(0) | Err(_) => return false,
            Ok(n) => f.header_written += n,
        }
    }
    while f.body_left > 0 {
        let n = f.body_left.min(BODY.len() as u64) as usize;
        match conn.write_static(id, &BODY[..n]) {
            Ok(0) | Err(_) => return false,
            Ok(k) => f.body_left -= k as u64,
        }
    }
    true
}

/// Datagram mode: hands frame `header.frame` of `bytes` bytes to QUIC in fragments;
/// returns false once the connection is closed.
fn send_fragments(
    now: Instant,
    conn: &mut Connection,
    header: Header,
    bytes: u64,
    m: &mut MediaMeasure,
) -> bool {
    let chunk = match conn.max_datagram_payload() {
        Ok(max) if max > MEDIA_HEADER_LEN => (max - MEDIA_HEADER_LEN) as u64,
        Err(DatagramError::Closed) => return false,
        // No room for a fragment: the frame is refused whole.
        _ => {
            m.fragments_refused += 1;
            return true;
        }
    };
    let count = bytes.div_ceil(chunk).max(1);
    let Ok(count) = u16::try_from(count) else {
        m.fragments_refused += 1;
        return true;
    };
    let mut left = bytes;
    for index in 0..count {
        let len = left.min(chunk) as usize;
        left -= len as u64;
        let h = Header {
            index,
            count,
            ..header
        };
        let mut payload = Vec::with_capacity(MEDIA_HEADER_LEN + len);
        payload.extend_from_slice(&h.encode());
        payload.resize(MEDIA_HEADER_LEN + len, 0);
        match conn.send_datagram(now, payload) {
            Ok(()) => m.fragments_sent += 1,
            Err(DatagramError::Closed) => return false,
            Err(_) => m.fragments_refused += 1,
        }
    }
    true
}

/// A frame the receiver has part of.
#[derive(Clone, Debug)]
struct Partial {
    count: u16,
    got: BTreeSet<u16>,
    sent: Instant,
}

/// A frame's stream being read: its header bytes so far.
#[derive(Clone, Debug, Default)]
struct StreamFrame {
    header: Vec<u8>,
}

/// The receiving side: reassembles frames from fragments or streams and records each
/// complete frame's latency. Returns the bytes received (the goodput).
#[derive(Clone, Debug, Default)]
pub struct MediaReceiver {
    partial: BTreeMap<u64, Partial>,
    streams: BTreeMap<StreamId, StreamFrame>,
}

impl MediaReceiver {
    pub fn drive(
        &mut self,
        now: Instant,
        conn: &mut Connection,
        m: &mut MediaMeasure,
        buf: &mut [u8],
    ) -> u64 {
        let mut bytes = 0;
        while let Some(p) = conn.recv_datagram() {
            bytes += p.len() as u64;
            if let Some(h) = Header::decode(&p) {
                self.on_fragment(now, h, m);
            }
        }
        while let Some(id) = conn.accept_stream(Dir::Uni) {
            self.streams.insert(id, StreamFrame::default());
        }
        let ids: Vec<StreamId> = self.streams.keys().copied().collect();
        for id in ids {
            bytes += self.read_stream(now, conn, id, m, buf);
        }
        bytes
    }

    /// One DATAGRAM fragment; completes its frame when it is the last one missing.
    fn on_fragment(&mut self, now: Instant, h: Header, m: &mut MediaMeasure) {
        if m.delivered.contains_key(&h.frame) {
            return; // a duplicate of a complete frame
        }
        let p = self.partial.entry(h.frame).or_insert_with(|| Partial {
            count: h.count,
            got: BTreeSet::new(),
            sent: h.sent,
        });
        if h.count != p.count {
            return; // inconsistent with the frame's first fragment
        }
        p.got.insert(h.index);
        if p.got.len() == usize::from(p.count) {
            let sent = p.sent;
            self.partial.remove(&h.frame);
            m.delivered
                .insert(h.frame, now.saturating_duration_since(sent));
        } else if self.partial.len() > MAX_PARTIAL_FRAMES {
            self.partial.pop_first();
            m.abandoned += 1;
        }
    }

    /// Reads stream `id`; at its FIN the frame is complete.
    fn read_stream(
        &mut self,
        now: Instant,
        conn: &mut Connection,
        id: StreamId,
        m: &mut MediaMeasure,
        buf: &mut [u8],
    ) -> u64 {
        let mut bytes = 0;
        let Some(s) = self.streams.get_mut(&id) else {
            return 0;
        };
        loop {
            match conn.read(id, buf) {
                Ok(r) => {
                    bytes += r.bytes as u64;
                    let need = MEDIA_HEADER_LEN.saturating_sub(s.header.len());
                    s.header.extend_from_slice(&buf[..r.bytes.min(need)]);
                    if r.fin {
                        if let Some(h) = Header::decode(&s.header) {
                            m.delivered
                                .entry(h.frame)
                                .or_insert(now.saturating_duration_since(h.sent));
                        }
                        self.streams.remove(&id);
                        return bytes;
                    }
                    if r.bytes == 0 {
                        return bytes;
                    }
                }
                Err(StreamError::Blocked) => return bytes,
                Err(_) => {
                    // Reset or closed: the frame never completes.
                    self.streams.remove(&id);
                    return bytes;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip_and_reject_bad_indices() {
        let h = Header {
            frame: 7,
            index: 2,
            count: 3,
            sent: Instant::from_micros(1500),
        };
        assert_eq!(Header::decode(&h.encode()), Some(h));
        let bad = Header { index: 3, ..h };
        assert_eq!(Header::decode(&bad.encode()), None);
        assert_eq!(Header::decode(&h.encode()[..19]), None);
    }

    #[test]
    fn a_frame_is_delivered_when_its_last_fragment_arrives_once() {
        let mut r = MediaReceiver::default();
        let mut m = MediaMeasure::default();
        let h = |index| Header {
            frame: 1,
            index,
            count: 3,
            sent: Instant::from_millis(10),
        };
        r.on_fragment(Instant::from_millis(20), h(0), &mut m);
        r.on_fragment(Instant::from_millis(21), h(0), &mut m); // duplicate
        r.on_fragment(Instant::from_millis(22), h(2), &mut m);
        assert!(m.delivered.is_empty());
        r.on_fragment(Instant::from_millis(25), h(1), &mut m);
        assert_eq!(m.delivered.get(&1), Some(&Duration::from_millis(15)));
        r.on_fragment(Instant::from_millis(30), h(1), &mut m);
        assert_eq!(m.delivered.len(), 1);
        assert!(r.partial.is_empty());
    }

    #[test]
    fn incomplete_frames_are_bounded() {
        let mut r = MediaReceiver::default();
        let mut m = MediaMeasure::default();
        for frame in 0..(MAX_PARTIAL_FRAMES as u64 + 500) {
            let h = Header {
                frame,
                index: 0,
                count: 2,
                sent: Instant::ZERO,
            };
            r.on_fragment(Instant::from_millis(1), h, &mut m);
            assert!(r.partial.len() <= MAX_PARTIAL_FRAMES);
        }
        assert_eq!(m.abandoned, 500);
    }

    #[test]
    fn results_count_late_and_missing_frames_as_misses() {
        let mut m = MediaMeasure {
            deadline: Duration::from_millis(100),
            duration_s: 2.0,
            frames_sent: 10,
            ..Default::default()
        };
        for f in 0..8u64 {
            m.delivered.insert(f, Duration::from_millis(20 * (f + 1)));
        }
        let mut r = FlowResult::default();
        m.fill(&mut r);
        let x = r.media.unwrap();
        // Delivered: 20..160 ms; on time: 20..100 (5 frames); 2 never arrived.
        assert_eq!(
            (x.frames_delivered, x.frames_on_time, x.deadline_misses),
            (8, 5, 5)
        );
        assert_eq!(x.received_fps, 2.5);
        // Linear between closest ranks: rank 7·q of 20, 40, .., 160 ms.
        let close = |v: Option<f64>, want: f64| (v.unwrap() - want).abs() < 1e-9;
        assert!(close(x.latency_p50_ms, 90.0), "{:?}", x.latency_p50_ms);
        assert!(close(x.latency_p99_ms, 158.6), "{:?}", x.latency_p99_ms);
    }

    #[test]
    fn sizes_follow_the_distribution() {
        let mut s = MediaSender::new(
            30.0,
            FrameSize::Dist(FrameSizeDist::Keyframe {
                bytes: 1000,
                key_bytes: 9000,
                every: 3,
            }),
            1.0,
            MediaMode::Datagram,
            1,
        );
        let sizes: Vec<u64> = (0..6).map(|n| s.frame_bytes(n)).collect();
        assert_eq!(sizes, [9000, 1000, 1000, 9000, 1000, 1000]);
        let mut u = MediaSender::new(
            30.0,
            FrameSize::Dist(FrameSizeDist::Uniform { min: 10, max: 20 }),
            1.0,
            MediaMode::Datagram,
            1,
        );
        let drawn: BTreeSet<u64> = (0..500).map(|n| u.frame_bytes(n)).collect();
        assert_eq!(drawn.first(), Some(&10));
        assert_eq!(drawn.last(), Some(&20));
        assert_eq!(drawn.len(), 11);
    }
}
