//! The applications on simulated hosts: a flow's client workload (bulk sender or
//! hq-interop-style requester, or an HTTP/3 page load in `h3app.rs`) and its
//! server (discard receiver and responder).

use crate::net::engine::saturating_secs;
use crate::scenario::Workload;
use crate::workload::datagram::{self, DatagramMeasure, DatagramSender};
use crate::workload::h3app::{PageClient, PageProgress, PageServer};
use crate::workload::media::{MediaMeasure, MediaReceiver, MediaSender};
use quiclab_proto::{Connection, Dir, Instant, StreamError, StreamId};
use std::collections::BTreeMap;
use std::time::Duration;

/// Zero bytes the bulk sender and responder write from.
static CHUNK: [u8; 64 * 1024] = [0u8; 64 * 1024];

/// What a flow measured at the application layer.
#[derive(Clone, Debug, Default)]
pub struct AppMeasure {
    /// Application bytes delivered to the receiving side, per time bin.
    pub bins: BTreeMap<u64, u64>,
    pub delivered: u64,
    /// Delivered within the measurement window.
    pub window_bytes: u64,
    /// Per request: (sent, first response byte, last response byte).
    pub requests: Vec<(Instant, Option<Instant>, Option<Instant>)>,
    /// The workload finished (all bytes delivered / all requests answered).
    pub done_at: Option<Instant>,
    /// Why a transfer ended without its data: the first stream read error (a reset by
    /// the peer, a closed connection). A transfer that ends this way records no TTLB.
    pub aborted: Option<String>,
    /// The `search` / `video` metrics (`webapp.rs`).
    pub web: Option<crate::workload::webmeasure::WebMeasure>,
    /// The `datagram` metrics (`datagram.rs`).
    pub datagram: Option<DatagramMeasure>,
    /// The `media` metrics (`media.rs`).
    pub media: Option<MediaMeasure>,
}

impl AppMeasure {
    /// Why the workload's transfer did not complete, if it did not: a stream aborted, or
    /// the run ended first. A bulk flow without a byte count runs until it is stopped,
    /// so it never counts as incomplete.
    pub fn incomplete(&self, workload: &Workload) -> Option<String> {
        if let Some(why) = &self.aborted {
            return Some(format!("aborted: {why}"));
        }
        match workload {
            Workload::Bulk { bytes: Some(b), .. } if self.done_at.is_none() => Some(format!(
                "not finished when the run ended ({} of {b} bytes delivered)",
                self.delivered
            )),
            Workload::Request { count, .. } => {
                let answered = self.requests.iter().filter(|r| r.2.is_some()).count() as u64;
                (answered < *count).then(|| {
                    format!("not finished when the run ended ({answered} of {count} responses complete)")
                })
            }
            Workload::Page { objects, .. } => {
                let answered = self.requests.iter().filter(|r| r.2.is_some()).count() as u64;
                (answered < objects + 1).then(|| {
                    format!(
                        "page not loaded when the run ended ({answered} of {} responses complete)",
                        objects + 1
                    )
                })
            }
            Workload::Search { objects, .. } => {
                let answered = self.requests.iter().filter(|r| r.2.is_some()).count() as u64;
                (answered < objects + 1).then(|| {
                    format!(
                        "search not loaded when the run ended ({answered} of {} responses complete)",
                        objects + 1
                    )
                })
            }
            Workload::Video { .. } => (!self.web.as_ref().is_some_and(|w| w.video_ended))
                .then(|| "video not played out when the run ended".to_string()),
            Workload::Datagram { .. } if self.done_at.is_none() => {
                Some("not finished when the run ended (datagrams left to send or in flight)".into())
            }
            Workload::Media { .. } if self.done_at.is_none() => {
                Some("not finished when the run ended (frames left to send or in flight)".into())
            }
            Workload::Bulk { .. } | Workload::Datagram { .. } | Workload::Media { .. } => None,
        }
    }
}

/// Measurement settings shared by all flows.
#[derive(Clone, Copy, Debug)]
pub struct MeasureWindow {
    pub from: Instant,
    pub to: Instant,
    pub bin: Duration,
}

impl AppMeasure {
    pub fn record(&mut self, now: Instant, bytes: u64, w: &MeasureWindow) {
        if bytes == 0 {
            return;
        }
        let bin = now.as_nanos() / w.bin.as_nanos().max(1) as u64;
        *self.bins.entry(bin).or_insert(0) += bytes;
        self.delivered += bytes;
        if now >= w.from && now < w.to {
            self.window_bytes += bytes;
        }
    }
}

/// How a stream read left the stream.
#[derive(Clone, Debug, PartialEq)]
enum StreamEnd {
    /// More data may come.
    Open,
    /// The peer's FIN arrived: every byte was delivered.
    Fin,
    /// The stream ended without its data (reset, closed connection): why.
    Aborted(String),
}

/// Reads everything available on `id`; returns the bytes read and how the stream stands.
/// A read error ends the stream as aborted, never as finished, so an aborted transfer
/// cannot record a TTLB. Senders write zero bytes ([`push`]), so a nonzero byte read is
/// data the transport delivered wrong (say, a corrupted datagram it failed to discard):
/// the stream ends as aborted, saying so.
fn drain(conn: &mut Connection, id: StreamId, buf: &mut [u8]) -> (u64, StreamEnd) {
    let mut total = 0;
    loop {
        match conn.read(id, buf) {
            Ok(r) => {
                if let Some(i) = first_nonzero(&buf[..r.bytes]) {
                    let at = total + i as u64;
                    let why = format!("stream {id:?}: byte {at} differs from what was sent");
                    return (total, StreamEnd::Aborted(why));
                }
                total += r.bytes as u64;
                if r.fin {
                    return (total, StreamEnd::Fin);
                }
                if r.bytes == 0 {
                    return (total, StreamEnd::Open);
                }
            }
            Err(StreamError::Blocked) => return (total, StreamEnd::Open),
            Err(e) => return (total, StreamEnd::Aborted(format!("stream {id:?}: {e}"))),
        }
    }
}

/// The index of the first nonzero byte of `data`. Every delivered byte passes here, so
/// the whole slice is OR-folded first (the compiler vectorises the fold, remainder
/// included; a byte-by-byte search was 13% of a bulk simulation's instructions, and
/// searching a packet's last partial 256-byte block byte by byte still ~1.5%) and only
/// data that is not all zeros is searched byte by byte.
fn first_nonzero(data: &[u8]) -> Option<usize> {
    if data.iter().fold(0u8, |acc, &b| acc | b) == 0 {
        return None;
    }
    data.iter().position(|&b| b != 0)
}

/// Writes up to `remaining` zero bytes; returns how many were taken. The stream keeps
/// references to the one static chunk (no copy), so a thousand flows' send buffers cost
/// no memory and packets are filled from cache.
fn push(conn: &mut Connection, id: StreamId, remaining: u64) -> u64 {
    let mut sent = 0;
    while sent < remaining {
        let n = (remaining - sent).min(CHUNK.len() as u64) as usize;
        match conn.write_static(id, &CHUNK[..n]) {
            Ok(0) | Err(_) => break,
            Ok(k) => sent += k as u64,
        }
    }
    sent
}

/// A flow's client side.
pub struct ClientApp {
    workload: Workload,
    stop_at: Option<Instant>,
    // Bulk.
    stream: Option<StreamId>,
    sent: u64,
    finished: bool,
    // Requests: stream -> request index.
    pending: BTreeMap<StreamId, usize>,
    issued: u64,
    next_request_at: Option<Instant>,
    /// The HTTP/3 page load of a `page` workload.
    page: Option<PageClient>,
    /// The sender of a `datagram` workload (boxed: most flows have none).
    datagrams: Option<Box<DatagramSender>>,
    /// The sender of a `media` workload (set by [`ClientApp::with_media_seed`]).
    media: Option<Box<MediaSender>>,
}

impl ClientApp {
    pub fn new(workload: Workload, start: Instant) -> Self {
        let stop_at = match &workload {
            Workload::Bulk { stop_s, .. } => stop_s.map(|s| Instant::ZERO + saturating_secs(s)),
            _ => None,
        };
        let page = match &workload {
            Workload::Page {
                html_size,
                objects,
                object_size,
            } => Some(PageClient::new(*html_size, *objects, *object_size)),
            _ => None,
        };
        let datagrams = match workload {
            Workload::Datagram {
                rate_pps,
                size,
                duration_s,
            } => Some(Box::new(DatagramSender::new(rate_pps, size, duration_s))),
            _ => None,
        };
        let _ = start;
        ClientApp {
            datagrams,
            media: None,
            workload,
            stop_at,
            stream: None,
            sent: 0,
            finished: false,
            pending: BTreeMap::new(),
            issued: 0,
            next_request_at: None,
            page,
        }
    }

    /// A `media` flow's sender, its frame sizes drawn from `seed`; other workloads
    /// are unchanged.
    pub fn with_media_seed(mut self, seed: u64) -> Self {
        if let Workload::Media {
            fps,
            ref frame_size,
            duration_s,
            mode,
            ..
        } = self.workload
        {
            let sender = MediaSender::new(fps, frame_size.clone(), duration_s, mode, seed);
            self.media = Some(Box::new(sender));
        }
        self
    }

    /// Writes the HTTP/3 events of a `page` flow to a qlog file in `dir`, if any.
    pub fn with_h3_qlog(mut self, dir: Option<&std::path::Path>, flow: &str) -> Self {
        if let (Some(p), Some(dir)) = (self.page.as_mut(), dir) {
            crate::workload::h3app::attach_qlog(&mut p.h3, dir, flow, quiclab_proto::Side::Client);
        }
        self
    }

    /// When the application next needs to act without network input.
    pub fn wakeup(&self) -> Option<Instant> {
        if self.finished {
            return None;
        }
        match self.workload {
            Workload::Bulk { .. } => self.stop_at,
            Workload::Request { .. } => self.next_request_at,
            Workload::Datagram { .. } => self.datagrams.as_ref().and_then(|d| d.wakeup()),
            Workload::Media { .. } => self.media.as_ref().and_then(|d| d.wakeup()),
            // Search and video flows run `webquic.rs`, not this app.
            _ => None,
        }
    }

    /// Runs the workload on `conn` at `now`.
    pub fn drive(
        &mut self,
        now: Instant,
        conn: &mut Connection,
        m: &mut AppMeasure,
        w: &MeasureWindow,
        buf: &mut [u8],
    ) {
        if let Some(page) = self.page.as_mut() {
            let mut progress = Vec::new();
            page.drive(now, conn, &mut progress);
            self.finished = page.is_done();
            record_page(now, &progress, m, w);
            return;
        }
        while conn.poll_event().is_some() {}
        // A resuming client sends its requests in 0-RTT before the handshake completes.
        let may_send = conn.is_handshake_complete() || conn.is_zero_rtt_sending();
        if !may_send || conn.is_closed() {
            return;
        }
        match self.workload.clone() {
            Workload::Bulk { bytes, .. } => self.drive_bulk(now, conn, bytes),
            Workload::Request {
                size,
                count,
                parallel,
                think_ms,
            } => self.drive_requests(now, conn, m, w, buf, size, count, parallel, think_ms),
            Workload::Datagram { .. } => {
                let (Some(sender), false) = (self.datagrams.as_mut(), self.finished) else {
                    return;
                };
                if sender.drive(now, conn, m.datagram.get_or_insert_with(Default::default)) {
                    self.finished = true;
                    m.done_at = Some(now);
                }
            }
            Workload::Media { .. } => {
                let (Some(sender), false) = (self.media.as_mut(), self.finished) else {
                    return;
                };
                let measure = m.media.get_or_insert_with(|| media_measure(&self.workload));
                if sender.drive(now, conn, measure) {
                    self.finished = true;
                    m.done_at = Some(now);
                }
            }
            _ => {}
        }
    }

    fn drive_bulk(&mut self, now: Instant, conn: &mut Connection, bytes: Option<u64>) {
        if self.finished {
            return;
        }
        let id = match self.stream {
            Some(id) => id,
            None => match conn.open_stream(Dir::Uni) {
                Some(id) => *self.stream.insert(id),
                None => return,
            },
        };
        let stop = self.stop_at.is_some_and(|t| now >= t);
        let limit = bytes.unwrap_or(u64::MAX);
        if !stop {
            self.sent += push(conn, id, limit - self.sent);
        }
        if stop || self.sent >= limit {
            let _ = conn.finish(id);
            self.finished = true;
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn drive_requests(
        &mut self,
        now: Instant,
        conn: &mut Connection,
        m: &mut AppMeasure,
        w: &MeasureWindow,
        buf: &mut [u8],
        size: u64,
        count: u64,
        parallel: u64,
        think_ms: f64,
    ) {
        for (id, idx) in self.pending.clone() {
            let (n, end) = drain(conn, id, buf);
            m.record(now, n, w);
            let r = &mut m.requests[idx];
            if n > 0 && r.1.is_none() {
                r.1 = Some(now);
            }
            if let StreamEnd::Aborted(why) = &end {
                m.aborted
                    .get_or_insert_with(|| format!("request {idx}: {why}"));
            }
            if end != StreamEnd::Open {
                if end == StreamEnd::Fin {
                    r.2 = Some(now);
                }
                self.pending.remove(&id);
                if think_ms > 0.0 {
                    self.next_request_at = Some(now + saturating_secs(think_ms / 1000.0));
                }
            }
        }
        let thinking = self.next_request_at.is_some_and(|t| now < t);
        while !thinking && self.issued < count && (self.pending.len() as u64) < parallel {
            let Some(id) = conn.open_stream(Dir::Bi) else {
                break;
            };
            let req = format!("GET /{size}\r\n");
            if conn.write(id, req.as_bytes()).is_err() || conn.finish(id).is_err() {
                break;
            }
            self.pending.insert(id, m.requests.len());
            m.requests.push((now, None, None));
            self.issued += 1;
            if think_ms > 0.0 {
                break;
            }
        }
        if !thinking {
            self.next_request_at = None;
        }
        if self.issued == count && self.pending.is_empty() && !self.finished {
            self.finished = true;
            m.done_at = Some(now);
        }
    }

    pub fn is_done(&self) -> bool {
        self.finished
    }
}

/// A `media` flow's empty measure, with the settings its results need.
fn media_measure(w: &Workload) -> MediaMeasure {
    match w {
        Workload::Media {
            deadline_ms,
            duration_s,
            mode,
            ..
        } => MediaMeasure {
            mode: *mode,
            deadline: Duration::from_secs_f64(deadline_ms / 1e3),
            duration_s: *duration_s,
            ..Default::default()
        },
        _ => MediaMeasure::default(),
    }
}

/// Measures what a page load reported: requests sent, bytes, completions.
fn record_page(now: Instant, progress: &[PageProgress], m: &mut AppMeasure, w: &MeasureWindow) {
    for p in progress {
        match p {
            PageProgress::Requested => m.requests.push((now, None, None)),
            PageProgress::Bytes { index, bytes } => {
                m.record(now, *bytes, w);
                if let Some(r) = m.requests.get_mut(*index) {
                    r.1.get_or_insert(now);
                }
            }
            PageProgress::Completed { index } => {
                if let Some(r) = m.requests.get_mut(*index) {
                    r.1.get_or_insert(now);
                    r.2 = Some(now);
                }
            }
            PageProgress::Aborted(why) => {
                m.aborted.get_or_insert_with(|| why.clone());
            }
            PageProgress::Done => m.done_at = Some(now),
        }
    }
}

/// Per-stream state of a server connection.
#[derive(Default)]
struct ServerStream {
    request: Vec<u8>,
    /// Response bytes still to write, once the request is complete.
    respond: Option<u64>,
    /// When the response may be written (the host's `app_delay_ms` after the request
    /// arrived; `host/config.rs`).
    ready_at: Instant,
}

/// A flow's server side: discards uni streams (counting goodput), answers
/// `GET /N\r\n` on bidi streams with N bytes.
#[derive(Default)]
pub struct ServerApp {
    streams: BTreeMap<StreamId, ServerStream>,
    /// A bulk flow's delivered data was all received (FIN).
    bulk_done: bool,
    /// The HTTP/3 server of a `page` workload.
    page: Option<PageServer>,
    /// A `datagram` workload: receive and measure DATAGRAM payloads.
    datagrams: bool,
    /// A `media` workload: its frames' receiver and settings (boxed: most flows have
    /// none).
    media: Option<Box<(MediaReceiver, Workload)>>,
    /// Scratch list of stream ids for [`ServerApp::drive`] (kept to avoid an allocation
    /// per call).
    ids: Vec<StreamId>,
    /// The host's application delay before a response is written (`host/config.rs`;
    /// zero without a host), and the requests it held.
    app_delay: std::time::Duration,
    pub delayed: u64,
}

impl ServerApp {
    /// The server for `workload`; HTTP/3 events of a `page` flow go to a qlog file in
    /// `qlog_dir`, if any.
    pub fn for_workload(
        workload: &Workload,
        qlog_dir: Option<&std::path::Path>,
        flow: &str,
    ) -> Self {
        let mut app = ServerApp {
            datagrams: matches!(workload, Workload::Datagram { .. }),
            media: matches!(workload, Workload::Media { .. })
                .then(|| Box::new((MediaReceiver::default(), workload.clone()))),
            ..Default::default()
        };
        if let Workload::Page { .. } = workload {
            let mut page = PageServer::default();
            if let Some(dir) = qlog_dir {
                crate::workload::h3app::attach_qlog(
                    &mut page.h3,
                    dir,
                    flow,
                    quiclab_proto::Side::Server,
                );
            }
            app.page = Some(page);
        }
        app
    }

    /// Responses wait `delay` after their request arrived (a host's `app_delay_ms`:
    /// the server's handler time).
    pub fn with_app_delay(mut self, delay: std::time::Duration) -> Self {
        self.app_delay = delay;
        self
    }

    /// The earliest time a held response may be written (only with an app delay).
    pub fn wakeup(&self) -> Option<Instant> {
        if self.app_delay.is_zero() {
            return None;
        }
        (self.streams.values())
            .filter(|s| s.respond.is_some())
            .map(|s| s.ready_at)
            .min()
    }

    pub fn drive(
        &mut self,
        now: Instant,
        conn: &mut Connection,
        m: &mut AppMeasure,
        w: &MeasureWindow,
        buf: &mut [u8],
    ) {
        if let Some(page) = self.page.as_mut() {
            page.drive(now, conn);
            return;
        }
        while conn.poll_event().is_some() {}
        if let Some(media) = self.media.as_mut() {
            let (receiver, workload) = &mut **media;
            let measure = m.media.get_or_insert_with(|| media_measure(workload));
            let bytes = receiver.drive(now, conn, measure, buf);
            m.record(now, bytes, w);
            return;
        }
        if self.datagrams {
            let d = m.datagram.get_or_insert_with(Default::default);
            let bytes = datagram::receive(now, conn, d);
            m.record(now, bytes, w);
        }
        while let Some(id) = conn.accept_stream(Dir::Uni) {
            self.streams.insert(id, ServerStream::default());
        }
        while let Some(id) = conn.accept_stream(Dir::Bi) {
            self.streams.insert(id, ServerStream::default());
        }
        // Reuse one list across calls (this runs after every datagram the server gets).
        let mut ids = std::mem::take(&mut self.ids);
        ids.clear();
        ids.extend(self.streams.keys().copied());
        for &id in &ids {
            if id.dir() == Dir::Uni {
                let (n, end) = drain(conn, id, buf);
                m.record(now, n, w);
                match end {
                    StreamEnd::Open => {}
                    StreamEnd::Fin => {
                        self.streams.remove(&id);
                        self.bulk_done = true;
                        m.done_at.get_or_insert(now);
                    }
                    StreamEnd::Aborted(why) => {
                        self.streams.remove(&id);
                        m.aborted.get_or_insert(why);
                    }
                }
                continue;
            }
            let st = self.streams.get_mut(&id).expect("listed");
            if st.respond.is_none() {
                let mut fin = false;
                while let Ok(r) = conn.read(id, buf) {
                    st.request.extend_from_slice(&buf[..r.bytes]);
                    fin = r.fin;
                    if r.fin || r.bytes == 0 {
                        break;
                    }
                }
                if !fin {
                    continue;
                }
                st.respond = Some(parse_get(&st.request).unwrap_or(0));
                st.ready_at = now + self.app_delay;
                if !self.app_delay.is_zero() {
                    self.delayed += 1;
                }
            }
            if now < st.ready_at {
                continue;
            }
            let left = st.respond.expect("set above");
            let sent = push(conn, id, left);
            let left = left - sent;
            st.respond = Some(left);
            if left == 0 {
                let _ = conn.finish(id);
                self.streams.remove(&id);
            }
        }
        self.ids = ids;
    }
}

/// `GET /N\r\n` -> N (hq-interop style with a generated body size).
fn parse_get(req: &[u8]) -> Option<u64> {
    let s = std::str::from_utf8(req).ok()?;
    let path = s.strip_prefix("GET /")?.trim_end();
    path.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::{first_nonzero, parse_get, AppMeasure};
    use crate::scenario::Workload;
    use quiclab_proto::Instant;

    #[test]
    fn first_nonzero_finds_the_first_differing_byte() {
        for len in [0, 1, 255, 256, 257, 1000, 4096] {
            let mut data = vec![0u8; len];
            assert_eq!(first_nonzero(&data), None, "all zeros, {len} bytes");
            for at in [0, 1, 255, 256, 300, 999, 4095] {
                if at >= len {
                    continue;
                }
                data[at] = 7;
                if at + 1 < len {
                    data[len - 1] = 1; // a later nonzero byte must not win
                }
                assert_eq!(first_nonzero(&data), Some(at), "{len} bytes, at {at}");
                data.fill(0);
            }
        }
    }

    #[test]
    fn incomplete_transfers_say_why() {
        let request = Workload::Request {
            size: 10,
            count: 2,
            parallel: 1,
            think_ms: 0.0,
        };
        let t = Some(Instant::ZERO);
        let mut m = AppMeasure {
            requests: vec![(Instant::ZERO, t, t), (Instant::ZERO, t, None)],
            ..Default::default()
        };
        let why = m.incomplete(&request).expect("one response is missing");
        assert!(why.contains("1 of 2 responses"), "{why}");
        m.requests[1].2 = t;
        assert_eq!(m.incomplete(&request), None);
        // An aborted stream is reported even when the other responses completed.
        m.aborted = Some("stream 4: the peer reset the stream (error code 7)".into());
        assert!(m.incomplete(&request).unwrap().starts_with("aborted: "));

        let sized = Workload::Bulk {
            bytes: Some(100),
            stop_s: None,
        };
        let mut b = AppMeasure {
            delivered: 40,
            ..Default::default()
        };
        assert!(b.incomplete(&sized).unwrap().contains("40 of 100 bytes"));
        b.done_at = t;
        assert_eq!(b.incomplete(&sized), None);
        let endless = Workload::Bulk {
            bytes: None,
            stop_s: Some(1.0),
        };
        assert_eq!(AppMeasure::default().incomplete(&endless), None);
    }

    #[test]
    fn parses_requests() {
        assert_eq!(parse_get(b"GET /1000\r\n"), Some(1000));
        assert_eq!(parse_get(b"GET /x\r\n"), None);
        assert_eq!(parse_get(b"PUT /1\r\n"), None);
    }
}
