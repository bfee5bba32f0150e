//! ECN for TCP, the parts without connection state: the settings (`[flows.tcp]` keys
//! `ecn` and `ecn_codepoint`), the handshake negotiation of classic ECN (RFC 3168
//! §6.1.1) and Accurate ECN feedback (RFC 9768 §3.1, Table 2), and the handshake
//! encoding of the ACE field (RFC 9768 §3.2.2.1, Tables 3 and 4). The AccECN counters
//! are `accecn.rs`; what a connection sends and how it reacts, `connection/ecn.rs`.
//!
//! The ECN flags are handled as one 3-bit value `(AE, CWR, ECE)`: AE = 4, CWR = 2,
//! ECE = 1 (RFC 9768 Figure 3, the ACE field's bit order).
#![deny(clippy::arithmetic_side_effects)]

use crate::wire::{flags, Header};
use quiclab_proto::Ecn;
use serde::{Deserialize, Serialize};

/// Which ECN feedback this endpoint offers (client) or accepts (server).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum EcnSetting {
    /// No ECN: SYNs without ECN flags, every segment not-ECT (default).
    #[default]
    Off,
    /// Classic ECN (RFC 3168 §6.1): one congestion signal per round trip.
    Classic,
    /// Accurate ECN feedback (RFC 9768), falling back to classic ECN or none when the
    /// peer does not support it (§3.1.2).
    AccEcn,
}

impl EcnSetting {
    pub fn is_off(&self) -> bool {
        *self == EcnSetting::Off
    }
}

/// The ECN-capable codepoint data segments carry once ECN is negotiated.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum EcnCodepoint {
    /// ECT(0), the classic codepoint (RFC 3168).
    #[default]
    Ect0,
    /// ECT(1), the L4S codepoint (RFC 9331): TCP Prague sends it.
    Ect1,
}

impl EcnCodepoint {
    pub fn is_ect0(&self) -> bool {
        *self == EcnCodepoint::Ect0
    }
    pub fn ecn(self) -> Ecn {
        match self {
            EcnCodepoint::Ect0 => Ecn::Ect0,
            EcnCodepoint::Ect1 => Ecn::Ect1,
        }
    }
}

/// The feedback mode of a connection after the handshake.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Feedback {
    /// No ECN (not negotiated, or the peer does not support it).
    #[default]
    NotEcn,
    /// RFC 3168: ECE latched until CWR.
    Classic,
    /// RFC 9768: the ACE counter (and the AccECN option).
    AccEcn,
}

/// AE | CWR | ECE as a 3-bit value.
pub const AE: u8 = 4;
pub const CWR: u8 = 2;
pub const ECE: u8 = 1;

/// The `(AE, CWR, ECE)` bits of a header.
pub fn ecn_bits(h: &Header) -> u8 {
    let mut b = 0;
    if h.ae {
        b |= AE;
    }
    if h.has(flags::CWR) {
        b |= CWR;
    }
    if h.has(flags::ECE) {
        b |= ECE;
    }
    b
}

/// Writes the low three bits of `bits` as `(AE, CWR, ECE)` into a header.
pub fn set_ecn_bits(h: &mut Header, bits: u8) {
    h.ae = bits & AE != 0;
    h.flags &= !(flags::CWR | flags::ECE);
    if bits & CWR != 0 {
        h.flags |= flags::CWR;
    }
    if bits & ECE != 0 {
        h.flags |= flags::ECE;
    }
}

/// The flags of a client's SYN: none, ECN-setup (RFC 3168 §6.1.1: CWR, ECE), or the
/// AccECN request (RFC 9768 §3.1.1: AE, CWR, ECE).
pub fn syn_bits(setting: EcnSetting) -> u8 {
    match setting {
        EcnSetting::Off => 0,
        EcnSetting::Classic => CWR | ECE,
        EcnSetting::AccEcn => AE | CWR | ECE,
    }
}

/// RFC 9768 §3.1.1 Table 2 top block (and Table 3): the `(AE, CWR, ECE)` that feed
/// back an IP-ECN codepoint in the handshake.
pub fn handshake_bits(ecn: Ecn) -> u8 {
    match ecn {
        Ecn::NotEct => CWR,
        Ecn::Ect1 => CWR | ECE,
        Ecn::Ect0 => AE,
        Ecn::Ce => AE | CWR,
    }
}

/// A server's choice on a SYN with `syn` bits that arrived with codepoint `ecn`:
/// the mode and the SYN-ACK's bits (RFC 9768 §3.1.2 Table 2, §3.1.3; RFC 3168
/// §6.1.1).
pub fn server_choice(setting: EcnSetting, syn: u8, ecn: Ecn) -> (Feedback, u8) {
    match (setting, syn) {
        (EcnSetting::Off, _) | (_, 0) => (Feedback::NotEcn, 0),
        // An ECN-setup SYN: classic ECN, SYN-ACK with ECE only.
        (_, 0b011) => (Feedback::Classic, ECE),
        // A classic server reads only CWR and ECE (AE was reserved to it).
        (EcnSetting::Classic, b) if b & (CWR | ECE) == CWR | ECE => (Feedback::Classic, ECE),
        (EcnSetting::Classic, _) => (Feedback::NotEcn, 0),
        // §3.1.3: any other combination is taken as the AccECN request.
        (EcnSetting::AccEcn, _) => (Feedback::AccEcn, handshake_bits(ecn)),
    }
}

/// A client's mode from the SYN-ACK's bits after a SYN with `setting`'s request
/// (RFC 9768 §3.1.2 Table 2, §3.1.3; RFC 3168 §6.1.1).
pub fn client_choice(setting: EcnSetting, syn_ack: u8) -> Feedback {
    match (setting, syn_ack) {
        (EcnSetting::Off, _) => Feedback::NotEcn,
        (_, ECE) => Feedback::Classic,
        (EcnSetting::Classic, _) => Feedback::NotEcn,
        // "Not ECN" (0,0,0) and the broken server reflecting the SYN's flags (1,1,1).
        (EcnSetting::AccEcn, 0 | 0b111) => Feedback::NotEcn,
        // The four top-block answers, and (1,0,1) as if it fed back an unchanged
        // codepoint (§3.1.3).
        (EcnSetting::AccEcn, _) => Feedback::AccEcn,
    }
}

/// RFC 9768 §3.2.2.1 Table 4: what a server in SYN-RECEIVED sets s.cep to from the
/// ACE of the pure ACK of its SYN-ACK; `None` (0b000) means it must not send ECT nor
/// respond to AccECN feedback for the rest of the connection.
pub fn server_cep_from_handshake_ace(ace: u8) -> Option<u64> {
    match ace & 7 {
        0 => None,
        0b110 => Some(6),
        _ => Some(5),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 9768 Table 2, each row, from both ends.
    #[test]
    fn negotiation_matrix_follows_rfc_9768_table_2() {
        use EcnSetting::*;
        use Feedback as F;
        let acc_syn = syn_bits(AccEcn);
        assert_eq!(acc_syn, 0b111);
        // AccECN both ends: the SYN-ACK feeds back the SYN's codepoint (top block).
        for (ecn, bits) in [
            (Ecn::NotEct, 0b010),
            (Ecn::Ect1, 0b011),
            (Ecn::Ect0, 0b100),
            (Ecn::Ce, 0b110),
        ] {
            assert_eq!(server_choice(AccEcn, acc_syn, ecn), (F::AccEcn, bits));
            assert_eq!(client_choice(AccEcn, bits), F::AccEcn);
        }
        // AccECN client, classic server: (0,0,1), classic ECN.
        assert_eq!(
            server_choice(Classic, acc_syn, Ecn::NotEct),
            (F::Classic, ECE)
        );
        assert_eq!(client_choice(AccEcn, ECE), F::Classic);
        // AccECN client, no-ECN server: (0,0,0).
        assert_eq!(server_choice(Off, acc_syn, Ecn::NotEct), (F::NotEcn, 0));
        assert_eq!(client_choice(AccEcn, 0), F::NotEcn);
        // Classic or no-ECN client, AccECN server.
        assert_eq!(
            server_choice(AccEcn, syn_bits(Classic), Ecn::NotEct),
            (F::Classic, ECE)
        );
        assert_eq!(client_choice(Classic, ECE), F::Classic);
        assert_eq!(server_choice(AccEcn, 0, Ecn::NotEct), (F::NotEcn, 0));
        // A broken server reflecting (1,1,1): not ECN; (1,0,1) reserved: AccECN.
        assert_eq!(client_choice(AccEcn, 0b111), F::NotEcn);
        assert_eq!(client_choice(AccEcn, 0b101), F::AccEcn);
        // §3.1.3: other SYN combinations are the AccECN request.
        assert_eq!(server_choice(AccEcn, 0b100, Ecn::NotEct).0, F::AccEcn);
        // A classic client reads a top-block answer as not ECN (RFC 3168 §6.1.1
        // wants ECE without CWR).
        assert_eq!(client_choice(Classic, 0b010), F::NotEcn);
        assert_eq!(client_choice(Off, ECE), F::NotEcn);
    }

    #[test]
    fn handshake_ace_follows_tables_3_and_4() {
        assert_eq!(server_cep_from_handshake_ace(0b010), Some(5));
        assert_eq!(server_cep_from_handshake_ace(0b110), Some(6));
        assert_eq!(server_cep_from_handshake_ace(0b111), Some(5));
        assert_eq!(server_cep_from_handshake_ace(0), None);
    }

    #[test]
    fn settings_parse_as_lowercase_names() {
        #[derive(Deserialize)]
        struct T {
            ecn: EcnSetting,
            cp: EcnCodepoint,
        }
        let t: T = toml::from_str("ecn = \"accecn\"\ncp = \"ect1\"").unwrap();
        assert_eq!((t.ecn, t.cp), (EcnSetting::AccEcn, EcnCodepoint::Ect1));
        assert!(toml::from_str::<T>("ecn = \"on\"\ncp = \"ect0\"").is_err());
    }
}
