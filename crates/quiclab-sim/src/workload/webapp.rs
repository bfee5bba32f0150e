//! The client logic of the `search` and `video` workloads, independent of the transport:
//! it decides which fetches (responses of N bytes) to make and when, and measures what
//! seed 003 §6 measures. The transport side (QUIC streams in `webquic.rs`, one
//! multiplexed or several pooled TCP connections in `tcpweb.rs`) carries the fetches
//! and reports their bytes and completions back.
//!
//! - `search` (seed 003 §6.3, "Search Latency is the delay between when a user enters
//!   a search term ... and when all the search-result content is ... delivered to the
//!   client, including images and embedded content"): fetch 0 is the HTML; once it has
//!   arrived, every embedded object is requested at once. Search latency is measured
//!   from the flow's start (connection setup included) to the last object's last byte.
//! - `video` (seed 003 §6.5): a playback buffer of whole chunks. Each chunk has a
//!   video part (`bitrate_mbps`) and an audio part (`audio_kbps`, none if 0), fetched
//!   separately: seed 003 §3, "non-QUIC clients use two TCP connections to the video
//!   server to fetch video and audio data ... each chunk of audio and video
//!   arbitrarily uses one of the two connections", while QUIC sends "the audio and
//!   video streams ... over two streams in a single QUIC connection". Each track
//!   fetches its chunks one at a time, in order (as a DASH player's per-track
//!   scheduler does), and starts its next chunk while it has less than
//!   `buffer_target_s` ahead of the playhead; a chunk counts as buffered once every
//!   track has it. Playback starts once `startup_s` is buffered;
//!   when the playhead reaches the end of the buffer before the end of the video,
//!   playback stalls (a rebuffer event) until `startup_s` (or the rest of the video) is
//!   buffered again. Rebuffer
//!   rate = rebuffer time / (rebuffer time + play time), seed 003 §6.5's definition
//!   ("(Rebuffer Time) / (Rebuffer Time + Video Play Time)").
//!
//! Media time counts whole nanoseconds (integers), so playback is exact and
//! deterministic.

use crate::scenario::{ObjectSize, SizeDist, Workload, MAX_OBJECT_BYTES};
use crate::workload::app::{AppMeasure, MeasureWindow};
use crate::workload::webmeasure::WebMeasure;
use quiclab_proto::{DetRng, Instant};
use std::time::Duration;

/// The object sizes of flow `name`'s search page (`objects` draws from its own stream).
pub fn object_sizes(seed: u64, name: &str, objects: u64, size: &ObjectSize) -> Vec<u64> {
    let mut rng = DetRng::new(crate::net::topology::derive_seed(
        seed,
        &format!("objects:{name}"),
    ));
    (0..objects)
        .map(|_| match size {
            ObjectSize::Bytes(b) | ObjectSize::Dist(SizeDist::Fixed { bytes: b }) => *b,
            ObjectSize::Dist(SizeDist::Lognormal { median, sigma }) => {
                // Box-Muller: one standard normal from two uniforms in (0, 1].
                let u1 = 1.0 - rng.next_f64();
                let u2 = rng.next_f64();
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                let v = (median.ln() + sigma * z).exp().round();
                (v as u64).clamp(1, MAX_OBJECT_BYTES)
            }
        })
        .collect()
}

/// The video player's state.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    Startup,
    /// Playing since `at`, when the playhead was at `from` (media ns).
    Playing {
        at: Instant,
        from: u64,
    },
    /// Stalled with the playhead at `head` (media ns).
    Stalled {
        head: u64,
    },
    Ended,
}

/// One media track (video, audio): its chunks are fetched one at a time, in order.
struct Track {
    /// Bytes of each chunk's part of this track.
    bytes: Vec<u64>,
    /// Chunks received.
    done: usize,
    /// The request index of the chunk in flight.
    in_flight: Option<usize>,
}

struct Video {
    /// Media ns of the first k chunks, k = 0..=chunks.
    prefix: Vec<u64>,
    tracks: Vec<Track>,
    startup: u64,
    target: u64,
    /// Media ns every track has received from the start.
    buffered: u64,
    phase: Phase,
}

enum Kind {
    Search {
        /// Fetch 0 = the HTML, then the objects.
        sizes: Vec<u64>,
        issued: usize,
        completed: usize,
    },
    Video(Video),
}

/// The client of a `search` or `video` flow. Fetch indices are the flow's request
/// indices ([`AppMeasure::requests`]): fetch k is the k-th the client asked for.
pub struct WebClient {
    kind: Kind,
    done: bool,
    /// The last time the client was polled for fetches.
    last_poll: Instant,
}

fn ns(s: f64) -> u64 {
    crate::net::engine::saturating_secs(s).as_nanos() as u64
}

impl WebClient {
    /// The client for a web workload (`None` for other workloads). Object sizes are
    /// drawn from the flow's own stream (`scenario/web.rs`).
    pub fn for_workload(w: &Workload, seed: u64, flow: &str) -> Option<Self> {
        let kind = match w {
            Workload::Search {
                html_size,
                objects,
                object_size,
            } => {
                let mut sizes = vec![*html_size];
                sizes.extend(object_sizes(seed, flow, *objects, object_size));
                Kind::Search {
                    sizes,
                    issued: 0,
                    completed: 0,
                }
            }
            Workload::Video {
                duration_s,
                bitrate_mbps,
                audio_kbps,
                chunk_s,
                startup_s,
                buffer_target_s,
            } => {
                let (total, chunk) = (ns(*duration_s), ns(*chunk_s).max(1));
                let media: Vec<u64> = (0..total.div_ceil(chunk))
                    .map(|k| chunk.min(total - k * chunk))
                    .collect();
                let track = |rate_bps: f64| Track {
                    bytes: media
                        .iter()
                        .map(|&ns| (ns as f64 * rate_bps / 8.0 / 1e9).round().max(1.0) as u64)
                        .collect(),
                    done: 0,
                    in_flight: None,
                };
                let mut tracks = vec![track(bitrate_mbps * 1e6)];
                if *audio_kbps > 0.0 {
                    tracks.push(track(audio_kbps * 1e3));
                }
                let prefix = std::iter::once(0)
                    .chain(media.iter().scan(0, |acc, &m| {
                        *acc += m;
                        Some(*acc)
                    }))
                    .collect();
                Kind::Video(Video {
                    prefix,
                    tracks,
                    startup: ns(*startup_s).min(total),
                    target: ns(*buffer_target_s),
                    buffered: 0,
                    phase: Phase::Startup,
                })
            }
            _ => return None,
        };
        Some(WebClient {
            kind,
            done: false,
            last_poll: Instant::ZERO,
        })
    }

    /// The whole workload is over (the search page arrived, the video played out).
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// The fetches to make now, in order: (request index in `m.requests`, recorded as
    /// sent now; response bytes).
    pub fn poll_fetches(&mut self, now: Instant, m: &mut AppMeasure) -> Vec<(usize, u64)> {
        self.advance(now, m);
        let mut out = Vec::new();
        match &mut self.kind {
            Kind::Search { sizes, issued, .. } => {
                // The HTML first; the objects once it has arrived (`on_complete`).
                let allowed = if *issued == 0 { 1 } else { sizes.len() };
                if *issued < allowed
                    && (*issued == 0 || m.requests.first().is_some_and(|r| r.2.is_some()))
                {
                    out.extend_from_slice(&sizes[*issued..allowed]);
                    *issued = allowed;
                }
            }
            Kind::Video(v) => {
                let head = v.head(now);
                for t in &mut v.tracks {
                    if t.wants_fetch() && v.prefix[t.done].saturating_sub(head) < v.target {
                        t.in_flight = Some(m.requests.len() + out.len());
                        out.push(t.bytes[t.done]);
                    }
                }
            }
        }
        self.last_poll = now;
        out.into_iter()
            .map(|size| {
                m.requests.push((now, None, None));
                (m.requests.len() - 1, size)
            })
            .collect()
    }

    /// `bytes` of fetch `idx` arrived.
    pub fn on_bytes(
        &mut self,
        now: Instant,
        idx: usize,
        bytes: u64,
        m: &mut AppMeasure,
        w: &MeasureWindow,
    ) {
        m.record(now, bytes, w);
        if let Some(r) = m.requests.get_mut(idx) {
            if bytes > 0 {
                r.1.get_or_insert(now);
            }
        }
    }

    /// Fetch `idx` is complete.
    pub fn on_complete(&mut self, now: Instant, idx: usize, m: &mut AppMeasure) {
        // The player first plays up to `now` on what it had before this chunk.
        self.advance(now, m);
        if let Some(r) = m.requests.get_mut(idx) {
            r.1.get_or_insert(now);
            r.2 = Some(now);
        }
        match &mut self.kind {
            Kind::Search {
                sizes, completed, ..
            } => {
                *completed += 1;
                if *completed == sizes.len() {
                    self.done = true;
                    m.done_at.get_or_insert(now);
                    m.web.get_or_insert_with(WebMeasure::default).search_done = Some(now);
                }
            }
            Kind::Video(v) => {
                for t in &mut v.tracks {
                    if t.in_flight == Some(idx) {
                        t.in_flight = None;
                        t.done += 1;
                    }
                }
                let complete = v.tracks.iter().map(|t| t.done).min().unwrap_or(0);
                v.buffered = v.prefix[complete];
            }
        }
        self.advance(now, m);
    }

    /// When the player next changes state or wants a chunk without network input.
    pub fn wakeup(&self) -> Option<Instant> {
        let Kind::Video(v) = &self.kind else {
            return None;
        };
        let Phase::Playing { at, from } = v.phase else {
            return None;
        };
        let empty = at + Duration::from_nanos(v.buffered - from);
        // A track wants its next chunk 1 ns after it holds exactly the target ahead.
        let wants = v
            .tracks
            .iter()
            .filter(|t| t.wants_fetch())
            .map(|t| {
                at + Duration::from_nanos((v.prefix[t.done] - from).saturating_sub(v.target) + 1)
            })
            .min();
        // A time already handled is no wakeup (the caller polls at each wakeup).
        Some(wants.map_or(empty, |t| t.min(empty))).filter(|&t| t > self.last_poll)
    }

    /// Moves the player to `now`.
    fn advance(&mut self, now: Instant, m: &mut AppMeasure) {
        let Kind::Video(v) = &mut self.kind else {
            return;
        };
        let web = m.web.get_or_insert_with(|| WebMeasure {
            is_video: true,
            ..WebMeasure::default()
        });
        let total = v.prefix.last().copied().unwrap_or(0);
        loop {
            match v.phase {
                Phase::Startup if v.buffered >= v.startup => {
                    v.phase = Phase::Playing { at: now, from: 0 };
                    web.playing_from = Some(now);
                    web.playing_since = Some(now);
                }
                Phase::Playing { at, from } => {
                    let empty = at + Duration::from_nanos(v.buffered - from);
                    if empty > now {
                        return;
                    }
                    web.played += Duration::from_nanos(v.buffered - from);
                    web.playing_since = None;
                    if v.buffered >= total {
                        v.phase = Phase::Ended;
                        web.video_ended = true;
                        self.done = true;
                        m.done_at.get_or_insert(empty);
                        return;
                    }
                    v.phase = Phase::Stalled { head: v.buffered };
                    web.rebuffers += 1;
                    web.stalled_since = Some(empty);
                }
                Phase::Stalled { head } if v.buffered - head >= v.startup.min(total - head) => {
                    let since = web.stalled_since.take().unwrap_or(now);
                    web.rebuffer += now.saturating_duration_since(since);
                    v.phase = Phase::Playing {
                        at: now,
                        from: head,
                    };
                    web.playing_since = Some(now);
                }
                _ => return,
            }
        }
    }
}

impl Track {
    /// The track may start its next chunk: none in flight, more to fetch.
    fn wants_fetch(&self) -> bool {
        self.in_flight.is_none() && self.done < self.bytes.len()
    }
}

impl Video {
    /// The playhead at `now`, media ns.
    fn head(&self, now: Instant) -> u64 {
        match self.phase {
            Phase::Startup => 0,
            Phase::Playing { at, from } => {
                from + now.saturating_duration_since(at).as_nanos() as u64
            }
            Phase::Stalled { head } => head,
            Phase::Ended => u64::MAX,
        }
    }
}
