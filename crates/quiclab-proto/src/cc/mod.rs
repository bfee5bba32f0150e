//! Congestion control behind a trait, one file per controller (RFC 9002 §7).

mod ack_summary;
mod bbr;
mod careful_resume;
mod coupled;
mod cubic;
mod cubic_multcp;
mod fixed;
mod hystart;
mod lia;
mod new_reno;
mod no_cc;
mod olia;
mod prague;
mod recovery_period;

pub use ack_summary::{AckResponse, AckSummary, AckedPacket, CongestionEvent};
pub use bbr::{Bbr, BbrConfig, BbrConfigError, BbrState};
pub use careful_resume::{
    CarefulResume, CarefulResumeConfig, CarefulResumeConfigError, ClaimError,
    Phase as CarefulResumePhase, PhaseUpdate as CarefulResumeUpdate, SavedPathParams,
    SavedPathStore, StorePolicy, Trigger as CarefulResumeTrigger, UnvalidatedPacing,
};
pub use coupled::Coupling;
pub use cubic::{Cubic, CubicConfig};
pub use fixed::{Fixed, FixedConfig};
pub use hystart::{Hystart, HystartConfig, HystartPhase, SlowStartStep};
pub use lia::{coupling, CoupledPath, LiaCoupling};
pub use new_reno::{NewReno, NewRenoConfig, WindowGrowth};
pub use no_cc::NoCongestionControl;
pub use olia::{olia_increase, InterLoss, OliaIncrease, OliaPath};
pub use prague::{Prague, PragueConfig};

use crate::events::CongestionState;
use crate::recovery::{LostPacket, RateSample, RttEstimator};
use crate::time::Instant;
use std::fmt::Debug;
use std::time::Duration;

/// A congestion controller: window-based (NewReno, CUBIC), or rate- and model-based
/// (BBR), which also set the pacing rate and read delivery-rate samples.
///
/// Call contract. The caller (`path_recovery::Recovery`, one per path; quiclab-tcp's
/// connection) makes two calls:
/// - per send: `on_packet_number` then `on_packet_sent` for each in-flight packet
///   (RFC 9002 A.5 OnPacketSent): a separate event, it happens between ACKs;
/// - per ACK, and per loss detection by timer: [`on_ack`](Self::on_ack) once, with an
///   [`AckSummary`] made after the caller's RTT update, loss detection and rate sample;
///   it returns the [`AckResponse`] the caller acts on (the app-limited mark, the state
///   changes to log, whether the losses began a new episode).
///
/// Between calls the caller reads `window` (bytes in flight may not exceed it) and
/// `pacing_rate` (the pacer's rate; `None` = RFC 9002 §7.7's 1.25 · cwnd / srtt).
///
/// The per-packet steps (`on_packet_acked`, `on_packet_lost`, `on_congestion_event`,
/// `on_rate_sample`, ...) are how a controller is written: `on_ack`'s provided body
/// walks the summary through them in the order the RFCs give (spurious undo, RFC 9438
/// §4.9.2; each acknowledged packet, RFC 9002 A.7 OnPacketAcked; each lost packet and
/// one congestion event, B.8 OnPacketsLost; then the rate sample, draft-ietf-ccwg-bbr
/// §4.1: losses are marked before the per-ACK model update, as in the draft's
/// UpdateOnACK). Layers such as Careful Resume call them on the controller they wrap;
/// nothing outside `cc/` calls them. A window-based controller implements only the
/// methods without a default.
pub trait CongestionController: Debug + Send {
    /// One ACK (or one loss detection by timer) in one call: the steps below in order,
    /// then the controller's answer. See the trait's call contract.
    fn on_ack(&mut self, ack: &AckSummary<'_>) -> AckResponse {
        let now = ack.now;
        if ack.spurious_congestion {
            self.on_spurious_congestion(now);
        }
        let mut response = AckResponse {
            was_slow_start: self.in_slow_start(),
            ..AckResponse::default()
        };
        for p in ack.acked {
            if let Some(mds) = p.max_datagram_size {
                self.on_max_datagram_size(mds);
            }
            self.on_packet_acked(now, p.time_sent, p.bytes, ack.app_limited, ack.rtt);
        }
        // RFC 9002 B.7 ProcessECN: a congestion event like a loss's, before the losses,
        // so that losses in the period it starts do not reduce again.
        if let Some(sent_time) = ack.ce_event {
            self.on_ecn_ce(now, sent_time);
        }
        response.in_recovery_at_loss = self.in_recovery();
        for lost in ack.lost {
            self.on_packet_lost(now, lost);
        }
        if let Some(c) = ack.congestion {
            self.on_congestion_event(now, c.largest_lost_sent_time, c.persistent, c.lost_bytes);
        }
        if let Some(rs) = ack.rate_sample {
            self.on_rate_sample(now, rs, ack.rtt);
            response.mark_app_limited = self.wants_app_limited_mark();
            response.state_changes = std::iter::from_fn(|| self.take_state_change()).collect();
        }
        response
    }
    /// An in-flight packet of `bytes` left; `bytes_in_flight` includes it.
    fn on_packet_sent(&mut self, now: Instant, bytes: u64, bytes_in_flight: u64);
    /// An in-flight packet sent at `sent_time` was acknowledged. `app_limited`: the
    /// sender was not using the window (RFC 9002 §7.8), so the window must not grow.
    fn on_packet_acked(
        &mut self,
        now: Instant,
        sent_time: Instant,
        bytes: u64,
        app_limited: bool,
        rtt: &RttEstimator,
    );
    /// Packets were lost; `largest_lost_sent_time` is the send time of the newest lost
    /// packet (RFC 9002 §7.3.2: one reduction per recovery period). `persistent`: §7.6.
    fn on_congestion_event(
        &mut self,
        now: Instant,
        largest_lost_sent_time: Instant,
        persistent: bool,
        lost_bytes: u64,
    );
    /// Congestion window in bytes.
    fn window(&self) -> u64;
    /// Slow start threshold in bytes (`u64::MAX` while unset).
    fn ssthresh(&self) -> u64;
    fn in_slow_start(&self) -> bool;
    fn name(&self) -> &'static str;
    /// Whether a recovery period is running (RFC 9002 §7.3.2): entered on a congestion
    /// event, left when a packet sent after its start is acknowledged.
    fn in_recovery(&self) -> bool {
        false
    }
    /// One ACK's delivery-rate sample (draft-ietf-ccwg-bbr §4.1.2.3 GenerateRateSample),
    /// after its per-packet and loss calls. Window-based controllers ignore it.
    fn on_rate_sample(&mut self, now: Instant, rs: &RateSample, rtt: &RttEstimator) {
        let _ = (now, rs, rtt);
    }
    /// An in-flight packet was declared lost (draft-ietf-ccwg-bbr §5.5.10.2
    /// HandleLostPacket), before the `on_congestion_event` of the same detection.
    fn on_packet_lost(&mut self, now: Instant, lost: &LostPacket) {
        let _ = (now, lost);
    }
    /// Every packet of the last congestion episode was acknowledged after being
    /// declared lost (RFC 9438 §4.9.2): the reduction may be undone.
    fn on_spurious_congestion(&mut self, now: Instant) {
        let _ = now;
    }
    /// The peer's ECN-CE count grew in an ACK whose largest newly acknowledged packet
    /// was sent at `sent_time` (RFC 9002 §7.1, B.7 ProcessECN): a congestion event. The
    /// loss-based controllers reduce as for a loss, at most once per recovery period
    /// (so once per round trip); nothing is retransmitted. Default: ignored (a
    /// controller without a window: `none`, `fixed`).
    fn on_ecn_ce(&mut self, now: Instant, sent_time: Instant) {
        let _ = (now, sent_time);
    }
    /// PMTU discovery raised the path's maximum datagram size to `mds` (RFC 9002 §7.2:
    /// the minimum window and the window increments are counted in it).
    fn on_max_datagram_size(&mut self, mds: u64) {
        let _ = mds;
    }
    /// The pacing rate in bytes per second, when the controller sets one; `None` leaves
    /// the pacer at RFC 9002 §7.7's 1.25 · cwnd / smoothed_rtt.
    fn pacing_rate(&self) -> Option<u64> {
        None
    }
    /// Whether the connection should mark itself application-limited now, so that the
    /// coming rate samples are not taken as the path's capacity (BBR's ProbeRTT calls
    /// MarkConnectionAppLimited, draft §5.3.4.4). `on_ack` asks after each `on_rate_sample`.
    fn wants_app_limited_mark(&self) -> bool {
        false
    }
    /// The model quantities for qlog `metrics_updated`, for model-based controllers.
    fn model(&self) -> Option<ModelEstimate> {
        None
    }
    /// A scalable (L4S) controller's ECN estimates for qlog `metrics_updated`: Prague's
    /// alpha and last round's CE fraction. `None` for the others.
    fn scalable_ecn(&self) -> Option<ScalableEcnEstimate> {
        None
    }
    /// The next state transition not yet reported (BBR's state machine), oldest first:
    /// `on_ack` drains them after each rate sample into [`AckResponse::state_changes`]
    /// (the connection logs `congestion_state_updated` for each).
    fn take_state_change(&mut self) -> Option<CongestionState> {
        None
    }
    /// The packet number of the in-flight packet whose `on_packet_sent` follows (for
    /// logs naming packets, as Careful Resume's qlog event does). No-op by default.
    fn on_packet_number(&mut self, pn: u64) {
        let _ = pn;
    }
    /// The coupling of the next ACK's congestion avoidance increase (LIA, RFC 6356 §3,
    /// `lia.rs`; or OLIA, `olia.rs`), set by the connection before each ACK on the path;
    /// `None`: uncoupled. Only NewReno applies it (both are defined on Reno's increase);
    /// the default ignores it.
    fn set_coupling(&mut self, coupling: Option<Coupling>) {
        let _ = coupling;
    }
    /// OLIA's l_r (`olia.rs`): the larger of the bytes acknowledged between the last two
    /// congestion events and since the last one. 0 for controllers that do not count it
    /// (only NewReno does).
    fn inter_loss_bytes(&self) -> u64 {
        0
    }
    /// Sets the window (and ssthresh when given) from outside the controller: Careful
    /// Resume does so on leaving its Unvalidated and Safe Retreat phases
    /// (draft-ietf-tsvwg-careful-resume §4.3, §4.5). Returns whether the controller
    /// supports it (window-based ones do; the default does nothing).
    fn set_window(&mut self, cwnd: u64, ssthresh: Option<u64>) -> bool {
        let _ = (cwnd, ssthresh);
        false
    }
    /// The next Careful Resume phase change not yet logged (qlog
    /// `careful_resume_phase_updated`), oldest first; `None` without Careful Resume.
    fn take_careful_resume_update(&mut self) -> Option<CarefulResumeUpdate> {
        None
    }
    /// Careful Resume's phase, when the controller runs it.
    fn careful_resume_phase(&self) -> Option<CarefulResumePhase> {
        None
    }
    /// The state for qlog `congestion_state_updated`. Application-limited is the
    /// connection's knowledge, so it is never reported here.
    fn congestion_state(&self) -> CongestionState {
        if self.in_recovery() {
            CongestionState::Recovery
        } else if self.in_slow_start() {
            CongestionState::SlowStart
        } else {
            CongestionState::CongestionAvoidance
        }
    }
}

/// A model-based controller's path estimates, for logs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ModelEstimate {
    /// Estimated bottleneck bandwidth in bytes per second (BBR.bw).
    pub bandwidth: Option<u64>,
    /// Estimated round-trip propagation delay (BBR.min_rtt).
    pub min_rtt: Option<Duration>,
}

/// A scalable controller's congestion estimates, in millionths (integers, so that logs
/// print them byte-stable).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScalableEcnEstimate {
    /// alpha, the EWMA of the CE-marked fraction per round trip, in [0, 1_000_000].
    pub alpha_ppm: u32,
    /// The CE-marked fraction of the last completed round; `None` before the first.
    pub ce_fraction_ppm: Option<u32>,
}

impl ScalableEcnEstimate {
    /// From fractions in [0, 1] (clamped), rounded to the nearest millionth.
    pub fn new(alpha: f64, ce_fraction: Option<f64>) -> Self {
        let ppm = |f: f64| (f.clamp(0.0, 1.0) * 1e6).round() as u32;
        ScalableEcnEstimate {
            alpha_ppm: ppm(alpha),
            ce_fraction_ppm: ce_fraction.map(ppm),
        }
    }
}

/// Which controller a connection runs; part of the serde transport config.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "algorithm", rename_all = "snake_case", deny_unknown_fields)]
pub enum CongestionControl {
    NewReno(NewRenoConfig),
    /// CUBIC (RFC 9438).
    Cubic(CubicConfig),
    /// BBRv3 (draft-ietf-ccwg-bbr).
    Bbr(BbrConfig),
    /// No congestion control: the window is unlimited (flow control still applies), for
    /// validation experiments.
    None,
    /// A fixed window and optionally a fixed pacing rate, for measurements that need a
    /// known sending schedule (`cc/fixed.rs`).
    Fixed(FixedConfig),
    /// Prague, the L4S scalable controller (draft-briscoe-iccrg-prague-congestion-control);
    /// needs `ecn = "ect1"`.
    Prague(PragueConfig),
}

impl Default for CongestionControl {
    fn default() -> Self {
        CongestionControl::NewReno(NewRenoConfig::default())
    }
}

impl CongestionControl {
    /// A fresh controller for a path whose maximum datagram size is `max_datagram_size`
    /// (randomised choices, BBR's only, from seed 0).
    pub fn build(&self, max_datagram_size: u64) -> Box<dyn CongestionController> {
        self.build_seeded(max_datagram_size, 0)
    }

    /// [`build`](Self::build) with the seed for the controller's randomised choices
    /// (BBR's ProbeBW wait, draft-ietf-ccwg-bbr §5.3.3.5).
    pub fn build_seeded(&self, max_datagram_size: u64, seed: u64) -> Box<dyn CongestionController> {
        match self {
            CongestionControl::Bbr(c) => Box::new(Bbr::new(c.clone(), max_datagram_size, seed)),
            CongestionControl::NewReno(c) => Box::new(NewReno::new(c.clone(), max_datagram_size)),
            CongestionControl::Cubic(c) => Box::new(Cubic::new(c.clone(), max_datagram_size)),
            CongestionControl::None => Box::new(NoCongestionControl),
            CongestionControl::Fixed(c) => Box::new(Fixed::new(c, max_datagram_size)),
            CongestionControl::Prague(c) => Box::new(Prague::new(c.clone(), max_datagram_size)),
        }
    }
}

/// `cc` wrapped in Careful Resume when `cr` is enabled (draft-ietf-tsvwg-careful-resume),
/// else `cc` itself. `cr` must have been validated with the transport config.
pub fn with_careful_resume(
    cc: Box<dyn CongestionController>,
    cr: &CarefulResumeConfig,
    max_datagram_size: u64,
) -> Box<dyn CongestionController> {
    if cr.enabled {
        Box::new(CarefulResume::new(cc, cr.clone(), max_datagram_size))
    } else {
        cc
    }
}

/// RFC 9002 §7.2 initial window in bytes: `packets` * mds if configured, else
/// min(10 * mds, max(2 * mds, 14720)).
fn initial_window(packets: Option<u64>, mds: u64) -> u64 {
    match packets {
        Some(p) => p.saturating_mul(mds),
        None => (10 * mds).min((2 * mds).max(14_720)),
    }
}
