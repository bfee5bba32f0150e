//! The `search` and `video` workloads over QUIC: every fetch of the web client
//! (`webapp.rs`) is a request stream of its own (hq-interop style: `GET /N\r\n`, the
//! server's [`crate::workload::app::ServerApp`] answers N bytes and a FIN), so a loss on one
//! stream delays only that stream (RFC 9000 §2.2: streams are delivered independently).

use crate::workload::app::{AppMeasure, MeasureWindow};
use crate::workload::webapp::WebClient;
use quiclab_proto::{Connection, Dir, Instant, StreamError, StreamId};
use std::collections::{BTreeMap, VecDeque};

/// The client of a QUIC `search` / `video` flow.
pub struct WebQuicClient {
    web: WebClient,
    /// Request stream -> fetch index.
    pending: BTreeMap<StreamId, usize>,
    /// Fetches waiting for stream credit (RFC 9000 §4.6): (index, bytes).
    queue: VecDeque<(usize, u64)>,
    /// The connection closed: nothing more to do (no wakeups).
    closed: bool,
}

impl WebQuicClient {
    pub fn new(web: WebClient) -> Self {
        WebQuicClient {
            web,
            pending: BTreeMap::new(),
            queue: VecDeque::new(),
            closed: false,
        }
    }

    /// When the player next needs to act without network input.
    pub fn wakeup(&self) -> Option<Instant> {
        if self.closed {
            return None;
        }
        self.web.wakeup()
    }

    /// Reads the responses, then opens the streams of new fetches.
    pub fn drive(
        &mut self,
        now: Instant,
        conn: &mut Connection,
        m: &mut AppMeasure,
        w: &MeasureWindow,
        buf: &mut [u8],
    ) {
        while conn.poll_event().is_some() {}
        let may_send = conn.is_handshake_complete() || conn.is_zero_rtt_sending();
        if conn.is_closed() {
            self.closed = true;
        }
        if !may_send || self.closed {
            return;
        }
        let ids: Vec<(StreamId, usize)> = self.pending.iter().map(|(&s, &i)| (s, i)).collect();
        for (id, idx) in ids {
            loop {
                match conn.read(id, buf) {
                    Ok(r) => {
                        self.web.on_bytes(now, idx, r.bytes as u64, m, w);
                        if r.fin {
                            self.pending.remove(&id);
                            self.web.on_complete(now, idx, m);
                            break;
                        }
                        if r.bytes == 0 {
                            break;
                        }
                    }
                    Err(StreamError::Blocked) => break,
                    Err(e) => {
                        self.pending.remove(&id);
                        m.aborted
                            .get_or_insert_with(|| format!("fetch {idx}: stream {id:?}: {e}"));
                        break;
                    }
                }
            }
        }
        if self.web.is_done() {
            return;
        }
        self.queue.extend(self.web.poll_fetches(now, m));
        while let Some(&(idx, size)) = self.queue.front() {
            let Some(id) = conn.open_stream(Dir::Bi) else {
                break;
            };
            let req = format!("GET /{size}\r\n");
            if conn.write(id, req.as_bytes()).is_err() || conn.finish(id).is_err() {
                m.aborted
                    .get_or_insert_with(|| format!("fetch {idx}: could not send the request"));
                break;
            }
            self.queue.pop_front();
            self.pending.insert(id, idx);
        }
    }
}
