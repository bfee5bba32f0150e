//! The ECN codepoint of an IP packet (RFC 3168 §5), as it crosses the sans-IO
//! boundary: each [`crate::Transmit`] says which codepoint to set, and a driver hands
//! each received datagram in with the codepoint it arrived with.

use serde::{Deserialize, Serialize};

/// The two ECN bits of the IP header (the low bits of the IPv4 TOS byte or the IPv6
/// traffic class).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Ecn {
    /// Not-ECT (0b00): the sender does not use ECN.
    #[default]
    NotEct,
    /// ECT(1) (0b01): ECN-capable; L4S senders use it (RFC 9331).
    Ect1,
    /// ECT(0) (0b10): ECN-capable, the classic codepoint (RFC 3168).
    Ect0,
    /// CE (0b11): congestion experienced, set by a router's queue.
    Ce,
}

impl Ecn {
    /// The codepoint of the low two bits of a TOS / traffic-class byte.
    pub fn from_bits(tos: u8) -> Ecn {
        match tos & 0b11 {
            0b00 => Ecn::NotEct,
            0b01 => Ecn::Ect1,
            0b10 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }

    /// The two bits, to OR into a TOS / traffic-class byte.
    pub fn bits(self) -> u8 {
        match self {
            Ecn::NotEct => 0b00,
            Ecn::Ect1 => 0b01,
            Ecn::Ect0 => 0b10,
            Ecn::Ce => 0b11,
        }
    }

    /// Whether the packet was sent ECN-capable (ECT(0), ECT(1) or since marked CE).
    pub fn is_ect(self) -> bool {
        self != Ecn::NotEct
    }
}

/// Whether and how a connection uses ECN (the transport key `ecn`, RFC 9000 §13.4).
/// With `ect0` / `ect1` every packet is sent with that codepoint until ECN
/// validation (RFC 9000 §13.4.2) fails, then not-ECT for the rest of the connection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EcnMode {
    /// Send not-ECT and report no ECN counts (default: simulator results unchanged).
    #[default]
    Off,
    /// Send ECT(0), the classic codepoint (RFC 3168; RFC 9000's recommendation).
    Ect0,
    /// Send ECT(1), the L4S codepoint (RFC 9331).
    Ect1,
}

impl EcnMode {
    /// The codepoint every packet carries while ECN is in use; `None` when off.
    pub fn codepoint(self) -> Option<Ecn> {
        match self {
            EcnMode::Off => None,
            EcnMode::Ect0 => Some(Ecn::Ect0),
            EcnMode::Ect1 => Some(Ecn::Ect1),
        }
    }

    /// `skip_serializing_if`: configs written before the key existed keep their bytes.
    pub fn is_off(&self) -> bool {
        *self == EcnMode::Off
    }
}

/// A path's ECN validation state (RFC 9000 Appendix A.4; qlog `ecn_state_updated`).
/// quiclab marks every packet ECT while the state is not `Failed` (the testing period
/// only decides which packets settle the all-lost / all-CE checks).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EcnState {
    /// The testing period: the first packets sent ECT-marked.
    Testing,
    /// Testing ended; waiting for ACKs to show the marks arrive.
    Unknown,
    /// An ACK showed ECT-marked packets arriving with their marks and valid counts.
    Capable,
    /// Validation failed: not-ECT for the rest of the connection.
    Failed,
}

impl EcnState {
    /// The qlog `ECNState` value.
    pub fn name(self) -> &'static str {
        match self {
            EcnState::Testing => "testing",
            EcnState::Unknown => "unknown",
            EcnState::Capable => "capable",
            EcnState::Failed => "failed",
        }
    }
}

/// Why ECN validation failed (RFC 9000 §13.4.2.1, Appendix A.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EcnFailure {
    /// An ACK newly acknowledged ECT-marked packets without ECN counts (the marks were
    /// bleached on the way, or the peer does not report them).
    MissingCounts,
    /// A count went down from the last validated ACK.
    CountsDecreased,
    /// ECT(x) + CE grew less than the newly acknowledged packets sent with ECT(x).
    UnderReported,
    /// A reported ECT count exceeds the packets we sent with that codepoint (the
    /// network re-marked them).
    Remarked,
    /// Every packet of the testing period was lost or came back CE-marked.
    TestingLostOrCe,
}

#[cfg(test)]
mod tests {
    use super::{Ecn, EcnMode};

    #[test]
    fn mode_parses_the_three_values_and_defaults_off() {
        #[derive(serde::Deserialize)]
        struct T {
            #[serde(default)]
            ecn: EcnMode,
        }
        let parse = |s: &str| toml::from_str::<T>(s).map(|t| t.ecn);
        assert_eq!(parse("").unwrap(), EcnMode::Off);
        assert_eq!(parse("ecn = \"off\"").unwrap(), EcnMode::Off);
        assert_eq!(parse("ecn = \"ect0\"").unwrap(), EcnMode::Ect0);
        assert_eq!(parse("ecn = \"ect1\"").unwrap(), EcnMode::Ect1);
        assert!(parse("ecn = \"ce\"").is_err());
        assert_eq!(EcnMode::Ect1.codepoint(), Some(Ecn::Ect1));
        assert_eq!(EcnMode::Off.codepoint(), None);
    }

    #[test]
    fn bits_round_trip_and_ignore_dscp() {
        for e in [Ecn::NotEct, Ecn::Ect1, Ecn::Ect0, Ecn::Ce] {
            assert_eq!(Ecn::from_bits(e.bits()), e);
            assert_eq!(Ecn::from_bits(0xb8 | e.bits()), e); // DSCP EF set above
        }
        assert!(!Ecn::NotEct.is_ect() && Ecn::Ce.is_ect());
    }
}
