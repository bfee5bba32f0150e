//! The metrics of the `search` and `video` workloads (seed 003 §6.3, §6.5) as the
//! client measures them (`webapp.rs`), and how they reach a flow's results.

use crate::output::results::FlowResult;
use quiclab_proto::Instant;
use std::time::Duration;

/// A fetch's times: sent, first byte, last byte (`AppMeasure::requests`).
pub type Requested = (Instant, Option<Instant>, Option<Instant>);

/// What the web workloads measured (kept in [`AppMeasure::web`](crate::workload::app::AppMeasure::web)).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WebMeasure {
    /// Search: when the last object's last byte arrived.
    pub search_done: Option<Instant>,
    /// Video: when playback started.
    pub playing_from: Option<Instant>,
    pub rebuffers: u64,
    /// Rebuffer time of the stalls that ended.
    pub rebuffer: Duration,
    /// Media played before the current playing stretch, and that stretch's start.
    pub played: Duration,
    pub playing_since: Option<Instant>,
    /// A stall in progress, since.
    pub stalled_since: Option<Instant>,
    /// The video's media duration (for the play time at the end).
    pub video_ended: bool,
    pub is_video: bool,
}

impl WebMeasure {
    /// Writes the web metrics into a flow's result, for a run that ended at `end`
    /// (a stall or a playing stretch still going on counts up to `end`).
    /// `requests` are the flow's fetches (sent, first byte, last byte).
    pub fn fill(&self, r: &mut FlowResult, requests: &[Requested], start: Instant, end: Instant) {
        let rel = |t: Instant| t.saturating_duration_since(start).as_secs_f64();
        r.fetch_done_s = Some(requests.iter().map(|q| q.2.map(rel)).collect());
        if !self.is_video {
            r.search_latency_s = self.search_done.map(rel);
            return;
        }
        r.video_startup_s = self.playing_from.map(rel);
        let mut rebuffer = self.rebuffer;
        let mut played = self.played;
        if let Some(s) = self.stalled_since {
            rebuffer += end.saturating_duration_since(s);
        }
        if let Some(s) = self.playing_since {
            played += end.saturating_duration_since(s);
        }
        r.rebuffer_count = Some(self.rebuffers);
        r.rebuffer_s = Some(rebuffer.as_secs_f64());
        r.play_s = Some(played.as_secs_f64());
        let watch = rebuffer + played;
        r.rebuffer_rate = (!watch.is_zero()).then(|| rebuffer.as_secs_f64() / watch.as_secs_f64());
    }
}
