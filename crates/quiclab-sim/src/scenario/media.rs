//! The `media` workload's keys and checks (`workload/media.rs`): interactive media,
//! frames at a fixed rate with a size distribution, carried in DATAGRAM frames or one
//! unidirectional stream per frame, each frame with a deadline.

use super::validate::Check;
use super::{Flow, Scenario, ScenarioError, Workload};
use serde::{Deserialize, Serialize};

/// Bytes of the header that starts each DATAGRAM fragment (frame number, fragment
/// index and count, send time) and each frame's stream (frame number, send time, the
/// indices unused).
pub const MEDIA_HEADER_LEN: usize = 20;
/// The largest frame, bytes (a 4K intra frame is well below).
pub const MAX_FRAME_BYTES: u64 = 16 << 20;
/// The highest frame rate, frames per second.
pub const MAX_FPS: f64 = 1000.0;
/// The most frames one flow may send (the receiver keeps each one's latency).
pub const MAX_FRAMES: f64 = 1e6;

/// How the frames travel.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum MediaMode {
    /// Each frame in DATAGRAM frames (RFC 9221) of at most the path's
    /// `max_datagram_payload`: never retransmitted, a frame missing a fragment is lost.
    #[default]
    Datagram,
    /// One unidirectional stream per frame: retransmitted, so a loss makes a frame late.
    Stream,
}

/// A frame's size: a byte count, or a distribution drawn from the flow's seeded RNG.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum FrameSize {
    /// Every frame has this many bytes.
    Bytes(u64),
    Dist(FrameSizeDist),
}

/// A frame size distribution (`dist` names it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "dist", rename_all = "snake_case", deny_unknown_fields)]
pub enum FrameSizeDist {
    /// Uniform in [min, max] bytes.
    Uniform { min: u64, max: u64 },
    /// A group of pictures: an intra frame of `key_bytes` every `every` frames (the
    /// first one included), `bytes` otherwise.
    Keyframe {
        bytes: u64,
        key_bytes: u64,
        every: u64,
    },
}

impl FrameSize {
    /// The mean frame size in bytes (for the work estimate).
    pub fn mean(&self) -> f64 {
        match self {
            FrameSize::Bytes(b) => *b as f64,
            FrameSize::Dist(FrameSizeDist::Uniform { min, max }) => {
                (*min as f64 + *max as f64) / 2.0
            }
            FrameSize::Dist(FrameSizeDist::Keyframe {
                bytes,
                key_bytes,
                every,
            }) => {
                let n = (*every).max(1) as f64;
                (*key_bytes as f64 + (n - 1.0) * *bytes as f64) / n
            }
        }
    }

    /// The sizes it may take, each at least 1 and at most [`MAX_FRAME_BYTES`].
    fn sizes(&self) -> Vec<u64> {
        match self {
            FrameSize::Bytes(b) => vec![*b],
            FrameSize::Dist(FrameSizeDist::Uniform { min, max }) => vec![*min, *max],
            FrameSize::Dist(FrameSizeDist::Keyframe {
                bytes, key_bytes, ..
            }) => {
                vec![*bytes, *key_bytes]
            }
        }
    }
}

impl Scenario {
    /// A `media` flow: QUIC, rates and sizes the simulator can carry, DATAGRAM support
    /// on both sides in datagram mode.
    pub(super) fn check_media_flow(
        &self,
        c: Check,
        i: usize,
        f: &Flow,
    ) -> Result<(), ScenarioError> {
        let Workload::Media {
            fps,
            ref frame_size,
            deadline_ms,
            duration_s,
            mode,
        } = f.workload
        else {
            return Ok(());
        };
        let key = format!("flows[{i}]");
        if !f.transport.is_quic() {
            return c.bad(format!("{key}.transport"), "a media flow runs over QUIC");
        }
        if !(fps.is_finite() && fps > 0.0 && fps <= MAX_FPS) {
            return c.bad(
                format!("{key}.workload.fps"),
                format!("must be above 0 and at most {MAX_FPS}"),
            );
        }
        if frame_size
            .sizes()
            .iter()
            .any(|s| !(1..=MAX_FRAME_BYTES).contains(s))
        {
            return c.bad(
                format!("{key}.workload.frame_size"),
                format!("frame sizes must be 1 to {MAX_FRAME_BYTES} bytes"),
            );
        }
        match frame_size {
            FrameSize::Dist(FrameSizeDist::Uniform { min, max }) if min > max => {
                return c.bad(
                    format!("{key}.workload.frame_size"),
                    "min must not exceed max",
                );
            }
            FrameSize::Dist(FrameSizeDist::Keyframe { every: 0, .. }) => {
                return c.bad(
                    format!("{key}.workload.frame_size.every"),
                    "must be at least 1",
                );
            }
            _ => {}
        }
        c.millis(format!("{key}.workload.deadline_ms"), deadline_ms)?;
        c.seconds(format!("{key}.workload.duration_s"), duration_s, true)?;
        if fps * duration_s > MAX_FRAMES {
            return c.bad(
                format!("{key}.workload"),
                format!("fps x duration_s is at most {MAX_FRAMES} frames"),
            );
        }
        if mode == MediaMode::Datagram {
            for (server, side) in [(false, "client"), (true, "server")] {
                let t = self.transport(i, server, c.file)?;
                if t.max_datagram_frame_size.unwrap_or(0) == 0 {
                    return c.bad(
                        format!("{key}.{side}.max_datagram_frame_size"),
                        "a media flow in datagram mode needs it on both sides (RFC 9221 §3; 65535 accepts any size)",
                    );
                }
            }
        }
        Ok(())
    }
}
