//! One TCP endpoint's settings (a scenario's `[flows.tcp]` table). Defaults follow
//! Linux where RFCs leave a choice; every deviation from an RFC is named here.

use crate::ecn::{EcnCodepoint, EcnSetting};
use crate::linux_rto::RtoAlgorithm;
use crate::pacing_ratio::PacingRatio;
use crate::prr::Recovery;
use quiclab_proto::cc::CongestionControl;
use quiclab_proto::MAX_BURST_PACKETS;
use serde::{Deserialize, Serialize};

/// TCP settings. Absent keys take the defaults below; unknown keys are errors.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct TcpConfig {
    /// The MSS this endpoint announces (RFC 9293 §3.7.1): MTU - 40 (IPv4 + TCP
    /// headers). Data per segment is the smaller of both sides' MSS minus the option
    /// bytes every segment carries (12 with timestamps), as Linux does.
    pub mss: u16,
    /// Window scaling (RFC 7323 §2); off caps the advertised window at 65535 bytes.
    pub window_scaling: bool,
    /// Timestamps option (RFC 7323 §3) on every segment.
    pub timestamps: bool,
    /// SACK (RFC 2018); off leaves loss recovery to RACK-TLP's timers and the RTO.
    pub sack: bool,
    /// Receive buffer in bytes: the largest window this endpoint advertises (no
    /// auto-tuning; the simulated application reads at once).
    pub receive_buffer: u64,
    /// Send buffer in bytes (what `write` accepts beyond the unacknowledged data).
    pub send_buffer: u64,
    /// Acknowledge at the latest every `ack_every` full-sized segments (Linux: 2).
    pub ack_every: u32,
    /// Delayed ACK timer in ms (Linux: 40 ms; RFC 9293 §3.8.6.3 allows up to 500).
    pub delayed_ack_ms: f64,
    /// Minimum RTO in ms. RFC 6298 §2.4 says 1 s (SHOULD); Linux uses 200 ms
    /// (TCP_RTO_MIN), the default here since the seeds compare against Linux.
    pub min_rto_ms: f64,
    /// Initial RTO in ms (RFC 6298 §2.1: 1 s).
    pub initial_rto_ms: f64,
    /// Congestion controller (the same implementations QUIC uses).
    #[schemars(schema_with = "controller_schema")]
    pub congestion_control: CongestionControl,
    /// TCP Fast Open (RFC 7413): a client asks for a cookie in its SYN (or, holding
    /// one from an earlier connection to the same server, sends it with data in the
    /// SYN); a server issues cookies and accepts data in a SYN with a valid one.
    pub fast_open: bool,
    /// ECN feedback to negotiate: `"off"` (default), `"classic"` (RFC 3168) or
    /// `"accecn"` (RFC 9768, falling back to classic or none with a peer that does
    /// not support it). Independent of `congestion_control`: TCP Prague is `accecn`
    /// with `ecn_codepoint = "ect1"` and the `prague` controller.
    #[serde(skip_serializing_if = "EcnSetting::is_off")]
    pub ecn: EcnSetting,
    /// The ECT codepoint data segments carry once ECN is negotiated: `"ect0"`
    /// (default, classic) or `"ect1"` (L4S, RFC 9331).
    #[serde(skip_serializing_if = "EcnCodepoint::is_ect0")]
    pub ecn_codepoint: EcnCodepoint,
    /// Pace every controller at QUIC's rate, RFC 9002 §7.7's 1.25 · cwnd / SRTT, with
    /// QUIC's pacer (`quiclab_proto::Pacer`). Off (default): paced only when the
    /// controller sets a rate (BBR), as Linux without the fq qdisc. Linux with fq:
    /// `true`.
    #[serde(skip_serializing_if = "is_false")]
    pub pacing: bool,
    /// The pacer's bucket in segments: how many may leave back to back. Default 10,
    /// QUIC's (RFC 9002 §7.7: about the initial window), so an initial window leaves
    /// in one burst; Linux's TSO autosizing sends at least 2 (tcp_min_tso_segs), which
    /// spreads an initial window of 10 over two thirds of the first round trip.
    #[serde(skip_serializing_if = "is_default_pacing_burst")]
    pub pacing_burst: u32,
    /// With `pacing` on, the rate's multiple of cwnd / SRTT: `"rfc9002"` (default),
    /// QUIC's 1.25 throughout; `"linux"`, 2 while cwnd < ssthresh / 2 and 1.2 after
    /// (tcp_pacing_ss_ratio, tcp_pacing_ca_ratio), of max(cwnd, bytes in flight).
    /// Linux: `"linux"`.
    #[serde(skip_serializing_if = "PacingRatio::is_rfc9002")]
    pub pacing_ratio: PacingRatio,
    /// The retransmission timeout: `"rfc6298"` (default) max(SRTT + 4 · RTTVAR,
    /// `min_rto_ms`), or `"linux"` SRTT + max(mdev over the last round trip,
    /// `min_rto_ms`) (`linux_rto.rs`). Both start at `initial_rto_ms` and back off
    /// exponentially. Linux: `"linux"`.
    #[serde(skip_serializing_if = "RtoAlgorithm::is_rfc6298")]
    pub rto: RtoAlgorithm,
    /// Acknowledge each of the first `quick_ack` data segments at once, as Linux's
    /// quick-ACK mode at connection start (tcp_incr_quickack), instead of every
    /// `ack_every`-th. Default 0 (off); Linux: 16 (TCP_MAX_QUICKACKS; fewer only with
    /// a receive window under 32 segments). Linux also re-enters the mode after an
    /// idle period; that is not modelled.
    #[serde(skip_serializing_if = "is_zero")]
    pub quick_ack: u32,
    /// The window during fast recovery: `"window"` (default), the controller's as set
    /// on the loss, or `"prr"`, Proportional Rate Reduction (RFC 6937 as updated by
    /// RFC 9937, `prr.rs`) for controllers with a slow-start threshold (not BBR or
    /// `none`). Linux: `"prr"`.
    #[serde(skip_serializing_if = "Recovery::is_window")]
    pub recovery: Recovery,
    /// F-RTO (RFC 5682 §3, SACK-enhanced, as Linux's tcp_frto = 2): after a timeout,
    /// send new data on the first ACK and undo the timeout if the next ACKs
    /// acknowledge data that was never retransmitted (a delay spike, not a loss).
    /// Needs SACK. Default false; Linux: true.
    #[serde(skip_serializing_if = "is_false")]
    pub frto: bool,
}

/// The pacer's default bucket: quiclab_proto's (10 packets).
pub const DEFAULT_PACING_BURST: u32 = quiclab_proto::DEFAULT_BURST_PACKETS as u32;

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn is_default_pacing_burst(n: &u32) -> bool {
    *n == DEFAULT_PACING_BURST
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mss: 1460,
            window_scaling: true,
            timestamps: true,
            sack: true,
            receive_buffer: 6 * 1024 * 1024,
            send_buffer: 4 * 1024 * 1024,
            ack_every: 2,
            delayed_ack_ms: 40.0,
            min_rto_ms: 200.0,
            initial_rto_ms: 1000.0,
            congestion_control: CongestionControl::default(),
            fast_open: false,
            ecn: EcnSetting::Off,
            ecn_codepoint: EcnCodepoint::Ect0,
            pacing: false,
            pacing_burst: DEFAULT_PACING_BURST,
            pacing_ratio: PacingRatio::Rfc9002,
            rto: RtoAlgorithm::Rfc6298,
            quick_ack: 0,
            recovery: Recovery::Window,
            frto: false,
        }
    }
}

/// A setting that cannot be used, with the key named.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {why}")]
pub struct ConfigError {
    pub key: &'static str,
    pub why: String,
}

/// Most segments `quick_ack` may cover.
pub const MAX_QUICK_ACK: u32 = 1024;

/// Largest receive buffer: 2^30, what window scale 14 can address (RFC 7323 §2.3).
pub const MAX_RECEIVE_BUFFER: u64 = 1 << 30;

impl TcpConfig {
    /// Checks ranges; the connection relies on them.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let err = |key, why: &str| {
            Err(ConfigError {
                key,
                why: why.to_string(),
            })
        };
        if self.mss < 64 {
            return err("mss", "must be at least 64 bytes");
        }
        if self.receive_buffer < u64::from(self.mss) || self.receive_buffer > MAX_RECEIVE_BUFFER {
            return err("receive_buffer", "must be between the MSS and 2^30 bytes");
        }
        if self.send_buffer < u64::from(self.mss) || self.send_buffer > MAX_RECEIVE_BUFFER {
            return err("send_buffer", "must be between the MSS and 2^30 bytes");
        }
        if self.ack_every == 0 || self.ack_every > 64 {
            return err("ack_every", "must be 1 to 64 segments");
        }
        for (key, v, max) in [
            ("delayed_ack_ms", self.delayed_ack_ms, 500.0),
            ("min_rto_ms", self.min_rto_ms, 60_000.0),
            ("initial_rto_ms", self.initial_rto_ms, 60_000.0),
        ] {
            if !(v.is_finite() && v >= 0.0 && v <= max) {
                return Err(ConfigError {
                    key,
                    why: format!("must be 0 to {max} ms"),
                });
            }
        }
        if self.min_rto_ms < 1.0 || self.initial_rto_ms < 1.0 {
            return err("min_rto_ms", "RTOs must be at least 1 ms");
        }
        if self.pacing_burst == 0 || u64::from(self.pacing_burst) > MAX_BURST_PACKETS {
            return err("pacing_burst", "must be 1 to 64 segments");
        }
        if self.quick_ack > MAX_QUICK_ACK {
            return err("quick_ack", "must be 0 to 1024 segments");
        }
        // The controller's own knobs, checked as a QUIC connection checks them.
        if let Err(e) = quiclab_proto::validate_controller(&self.congestion_control) {
            return err(e.key, &e.why);
        }
        if self.ecn.is_off() && !self.ecn_codepoint.is_ect0() {
            return err("ecn_codepoint", "needs ecn = \"classic\" or \"accecn\"");
        }
        // TCP Prague: scalable control needs per-mark feedback (AccECN, RFC 9768) and the
        // L4S identifier (ECT(1), RFC 9331 §4.1); classic ECN gives one signal per RTT.
        let prague = matches!(self.congestion_control, CongestionControl::Prague(_));
        if prague && (self.ecn != EcnSetting::AccEcn || self.ecn_codepoint.is_ect0()) {
            return err(
                "congestion_control",
                "prague needs ecn = \"accecn\" and ecn_codepoint = \"ect1\" (TCP Prague)",
            );
        }
        Ok(())
    }

    /// The window scale this side offers (RFC 7323 §2.3): the smallest shift that
    /// lets the receive buffer be advertised; `None` with scaling off.
    pub fn window_shift(&self) -> Option<u8> {
        self.window_scaling.then(|| {
            let mut s = 0u8;
            while (self.receive_buffer >> s) > 65_535 && s < 14 {
                s += 1;
            }
            s
        })
    }
}

/// The schema of `congestion_control` (docs/schema/): quiclab-proto's table, an
/// `algorithm` and that controller's keys, which quiclab-proto checks when it loads.
fn controller_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "required": ["algorithm"],
        "properties": { "algorithm": { "type": "string" } }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_and_unknown_keys_fail() {
        TcpConfig::default().validate().unwrap();
        let e = toml::from_str::<TcpConfig>("windows_scaling = false").unwrap_err();
        assert!(e.to_string().contains("unknown field"), "{e}");
        let c: TcpConfig = toml::from_str("window_scaling = false\nack_every = 1").unwrap();
        assert!(!c.window_scaling);
        let bad = TcpConfig {
            ack_every: 0,
            ..TcpConfig::default()
        };
        assert_eq!(bad.validate().unwrap_err().key, "ack_every");
    }

    #[test]
    fn ecn_keys_are_skipped_at_their_defaults() {
        #[derive(Serialize)]
        struct Wrap {
            tcp: TcpConfig,
        }
        let plain = toml::to_string(&Wrap {
            tcp: TcpConfig::default(),
        })
        .unwrap();
        assert!(!plain.contains("ecn"), "{plain}");
        let c: TcpConfig = toml::from_str("ecn = \"accecn\"\necn_codepoint = \"ect1\"").unwrap();
        c.validate().unwrap();
        let text = toml::to_string(&Wrap { tcp: c.clone() }).unwrap();
        assert!(text.contains("ecn = \"accecn\"") && text.contains("ecn_codepoint = \"ect1\""));
        let lone: TcpConfig = toml::from_str("ecn_codepoint = \"ect1\"").unwrap();
        assert_eq!(lone.validate().unwrap_err().key, "ecn_codepoint");
    }

    /// The Linux-like knobs: absent from a default config's serialization (so
    /// recorded configs keep their bytes), present when set, range-checked.
    #[test]
    fn linux_knobs_are_skipped_at_their_defaults() {
        #[derive(Serialize)]
        struct Wrap {
            tcp: TcpConfig,
        }
        let plain = toml::to_string(&Wrap {
            tcp: TcpConfig::default(),
        })
        .unwrap();
        for key in [
            "pacing",
            "pacing_burst",
            "pacing_ratio",
            "rto",
            "quick_ack",
            "recovery",
            "frto",
        ] {
            assert!(!plain.contains(&format!("\n{key} =")), "{key} in {plain}");
        }
        let set =
            "pacing = true\npacing_burst = 2\npacing_ratio = \"linux\"\nrto = \"linux\"\nquick_ack = 16\nrecovery = \"prr\"\nfrto = true";
        let c: TcpConfig = toml::from_str(set).unwrap();
        c.validate().unwrap();
        let text = toml::to_string(&Wrap { tcp: c }).unwrap();
        for line in set.lines() {
            assert!(text.contains(line), "{line} not in {text}");
        }
        for (bad, key) in [
            ("pacing_burst = 0", "pacing_burst"),
            ("pacing_burst = 65", "pacing_burst"),
            ("quick_ack = 1025", "quick_ack"),
            // The controller's knobs are checked as QUIC checks them.
            (
                "congestion_control = { algorithm = \"cubic\", emulated_flows = 0 }",
                "congestion_control.emulated_flows",
            ),
            (
                "congestion_control = { algorithm = \"cubic\", beta = 1.5 }",
                "congestion_control.beta",
            ),
        ] {
            let c: TcpConfig = toml::from_str(bad).unwrap();
            assert_eq!(c.validate().unwrap_err().key, key, "{bad}");
        }
    }

    #[test]
    fn prague_needs_accecn_and_ect1() {
        let with = |ecn: &str| {
            toml::from_str::<TcpConfig>(&format!(
                "congestion_control = {{ algorithm = \"prague\" }}\n{ecn}"
            ))
            .unwrap()
            .validate()
        };
        with("ecn = \"accecn\"\necn_codepoint = \"ect1\"").unwrap();
        for bad in [
            "",
            "ecn = \"classic\"\necn_codepoint = \"ect1\"",
            "ecn = \"accecn\"",
        ] {
            assert_eq!(with(bad).unwrap_err().key, "congestion_control", "{bad}");
        }
    }

    #[test]
    fn window_shift_is_the_smallest_that_fits() {
        let c = |b| TcpConfig {
            receive_buffer: b,
            ..TcpConfig::default()
        };
        assert_eq!(c(65_535).window_shift(), Some(0));
        assert_eq!(c(100_000).window_shift(), Some(1));
        assert_eq!(c(6 << 20).window_shift(), Some(7));
        let off = TcpConfig {
            window_scaling: false,
            ..TcpConfig::default()
        };
        assert_eq!(off.window_shift(), None);
    }
}
