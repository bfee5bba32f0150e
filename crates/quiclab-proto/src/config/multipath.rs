//! The multipath extension's settings (draft-ietf-quic-multipath; the version is named
//! in `wire/frame_mp.rs`).

use serde::{Deserialize, Serialize};

/// Whether we offer multipath, and how many paths we let the peer open. Multipath is
/// on for a connection only when both sides send initial_max_path_id (§2); otherwise
/// the connection is single-path as if this were off.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MultipathConfig {
    /// Offer multipath: send initial_max_path_id (default off).
    pub enabled: bool,
    /// The initial_max_path_id we send: path IDs 0 to this one may be used (default 3,
    /// four paths). At most [`MultipathConfig::MAX_PATH_ID_LIMIT`] (the draft allows
    /// 2^32-1, §2.1): each path costs its state, so this bounds what the peer can make
    /// us hold.
    pub max_path_id: u32,
    /// Which path carries each packet of new stream data (default `min_rtt`; not
    /// serialized at its default, so recorded configs keep their bytes).
    #[serde(skip_serializing_if = "MultipathScheduler::is_default")]
    pub scheduler: MultipathScheduler,
    /// Coupled congestion control over the paths (default `none`: each path's own
    /// controller, uncoupled; not serialized at its default).
    #[serde(skip_serializing_if = "CoupledCongestionControl::is_default")]
    pub coupled: CoupledCongestionControl,
    /// Which path carries the PATH_ACK frames (default `any`; not serialized at its
    /// default).
    #[serde(skip_serializing_if = "AckPath::is_default")]
    pub ack_path: AckPath,
    /// Abandon a path on our own once this many probe timeouts in a row expired on it
    /// (its PTO count, RFC 9002 §6.2), while another path is usable and not failed
    /// (draft-ietf-quic-multipath §3.4: the decision to abandon may result "from implicit
    /// signals such as an idle time-out ... or packet losses"): an endpoint that is not
    /// told its interface went down stops keeping a dead path, path 0 included. At
    /// least 2 (`FAILED_AFTER_PTOS` in `src/multipath_sched/`), when the schedulers
    /// already avoid the path. Default `None`: never (each path's recovery copes); not
    /// serialized at its default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub abandon_after_ptos: Option<u32>,
}

/// Coupled congestion control (issue 33 item 2): the scenario key
/// `multipath = { enabled = true, coupled = "lia" }`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CoupledCongestionControl {
    /// Each path runs the configured controller on its own (draft-ietf-quic-multipath
    /// §5.3 "separate congestion control state is maintained for each path").
    #[default]
    None,
    /// LIA (RFC 6356, `cc/lia.rs`): every path runs NewReno (the configured NewReno
    /// knobs if `congestion_control` is NewReno, else NewReno's defaults: LIA replaces
    /// CUBIC or BBR, which favours the single-path flows it competes with) whose
    /// congestion avoidance increase is coupled across the paths (§3); slow start and
    /// the halving on loss stay per path.
    Lia,
    /// OLIA (Khalili et al., IEEE/ACM ToN 2013; `cc/olia.rs`): as LIA, every path runs
    /// NewReno, with OLIA's coupled increase, which moves window from the paths with
    /// the largest windows to those with the most bytes between losses per RTT².
    Olia,
}

impl CoupledCongestionControl {
    /// Whether the paths' increases are coupled (LIA or OLIA): every path then runs
    /// NewReno.
    pub fn is_coupled(self) -> bool {
        self != CoupledCongestionControl::None
    }
}

/// Which path carries PATH_ACK frames (draft-ietf-quic-multipath §3.1: "PATH_ACK
/// frames ... can be returned on any path"; §5.4 ("Computing Path RTT") notes that an
/// acknowledgment sent on another path delays the RTT sample by the difference).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AckPath {
    /// Any path: the PATH_ACK of every path rides in whichever packet goes next,
    /// whatever its path (the behaviour before this knob).
    #[default]
    Any,
    /// Each path's PATH_ACK on that path only (path 0's on path 0): RTT samples see
    /// the path's own return delay.
    Same,
    /// Every PATH_ACK on the path with the lowest smoothed RTT (among validated, not
    /// abandoned paths): the fastest feedback.
    MinRtt,
}

impl CoupledCongestionControl {
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

impl AckPath {
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

/// The packet scheduler of a multipath connection (`multipath_sched/`): the scenario
/// key `multipath = { enabled = true, scheduler = "round_robin" }`. The draft leaves
/// scheduling to the sender (§5.5 "Packet Scheduling").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MultipathScheduler {
    /// The usable path with the lowest smoothed RTT whose window and pacer allow a
    /// packet; backup paths only when no available path is usable (§3.3).
    #[default]
    MinRtt,
    /// The next usable path after the one that carried the last stream packet.
    RoundRobin,
    /// Every packet of stream data on every usable path (`multipath_sched/redundant.rs`):
    /// the lowest-RTT path with an open window sends it, and a copy waits in each other
    /// eligible path's bounded queue until that path's own window and pacer let it go.
    /// Backup paths get copies only when no available path is usable (§3.3). Costs one
    /// path's worth of capacity per extra path; for latency, not throughput.
    Redundant,
}

impl MultipathScheduler {
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

impl Default for MultipathConfig {
    fn default() -> Self {
        MultipathConfig {
            enabled: false,
            max_path_id: 3,
            scheduler: MultipathScheduler::default(),
            coupled: CoupledCongestionControl::default(),
            ack_path: AckPath::default(),
            abandon_after_ptos: None,
        }
    }
}

impl MultipathConfig {
    /// The largest `max_path_id` accepted: per-path state is kept for at most this
    /// many + 1 paths, whatever the peer sends.
    pub const MAX_PATH_ID_LIMIT: u32 = 255;

    /// The least `abandon_after_ptos` accepted: the PTO count at which the schedulers
    /// treat a path as failed (`FAILED_AFTER_PTOS`, checked equal in
    /// `connection/multipath_failed.rs`).
    pub const MIN_ABANDON_AFTER_PTOS: u32 = 2;

    /// Left out when serialized at its default, so recorded configs keep their bytes.
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }

    /// The initial_max_path_id transport parameter we send, if any.
    pub fn initial_max_path_id(&self) -> Option<u64> {
        self.enabled.then_some(u64::from(self.max_path_id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<MultipathConfig, toml::de::Error> {
        toml::from_str(text)
    }

    #[test]
    fn scheduler_names_parse_and_unknown_ones_are_errors() {
        assert_eq!(parse("").unwrap().scheduler, MultipathScheduler::MinRtt);
        for (name, kind) in [
            ("min_rtt", MultipathScheduler::MinRtt),
            ("round_robin", MultipathScheduler::RoundRobin),
            ("redundant", MultipathScheduler::Redundant),
        ] {
            let c = parse(&format!("enabled = true\nscheduler = \"{name}\"")).unwrap();
            assert_eq!((c.enabled, c.scheduler), (true, kind));
        }
        let e = parse("scheduler = \"fastest\"").unwrap_err().to_string();
        assert!(e.contains("unknown variant `fastest`"), "{e}");
        assert_eq!(parse("").unwrap().coupled, CoupledCongestionControl::None);
        assert_eq!(
            parse("coupled = \"lia\"").unwrap().coupled,
            CoupledCongestionControl::Lia
        );
        assert_eq!(
            parse("coupled = \"olia\"").unwrap().coupled,
            CoupledCongestionControl::Olia
        );
        assert!(parse("coupled = \"balia\"").is_err());
        assert_eq!(parse("").unwrap().ack_path, AckPath::Any);
        for (name, kind) in [
            ("any", AckPath::Any),
            ("same", AckPath::Same),
            ("min_rtt", AckPath::MinRtt),
        ] {
            let c = parse(&format!("ack_path = \"{name}\"")).unwrap();
            assert_eq!(c.ack_path, kind);
        }
        assert!(parse("ack_path = \"slowest\"").is_err());
    }

    #[test]
    fn the_default_scheduler_is_not_serialized() {
        assert!(MultipathConfig::default().is_default());
        let on = MultipathConfig {
            enabled: true,
            ..MultipathConfig::default()
        };
        let json = serde_json::to_string(&on).unwrap();
        assert_eq!(json, r#"{"enabled":true,"max_path_id":3}"#);
        let rr = MultipathConfig {
            scheduler: MultipathScheduler::RoundRobin,
            ..on
        };
        assert!(!rr.is_default());
        let json = serde_json::to_string(&rr).unwrap();
        assert!(json.contains(r#""scheduler":"round_robin""#), "{json}");
        assert_eq!(serde_json::from_str::<MultipathConfig>(&json).unwrap(), rr);
        let lia = MultipathConfig {
            coupled: CoupledCongestionControl::Lia,
            ack_path: AckPath::Same,
            enabled: true,
            ..MultipathConfig::default()
        };
        let json = serde_json::to_string(&lia).unwrap();
        assert!(json.contains(r#""coupled":"lia""#), "{json}");
        assert!(json.contains(r#""ack_path":"same""#), "{json}");
        assert_eq!(serde_json::from_str::<MultipathConfig>(&json).unwrap(), lia);
    }
}
